"""A heavy user's archive as downloaded (issue 28 point 4): a zipped ChatGPT or Telegram export is streamed from its
zip member, never read whole; a damaged member is one line with the store unchanged; a zip in a folder is read."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest
from chats import counts, new_memory, one_error_line, run, stored_counts
from test_stream import chatgpt_export, ingest_process, stored

from ripplecli.api import read_export
from ripplecli.errors import InputError
from ripplecli.formats import bundle, stream
from ripplecli.formats.load import Member, read_input
from ripplecli.ingest import file_hash

FIXTURES = Path(__file__).parent / "fixtures" / "formats"


@pytest.fixture
def always_stream(monkeypatch):
    """Every JSON file counts as big, and chunks are a few turns, so small zips take the streamed path."""
    monkeypatch.setattr(stream, "STREAM_BYTES", 0)
    monkeypatch.setattr("ripplecli.formats.load.STREAM_BYTES", 0)
    monkeypatch.setattr(stream, "CHUNK_TURNS", 3)


def write_zip(path: Path, files: dict[str, str | bytes], method: int = zipfile.ZIP_DEFLATED) -> Path:
    """A zip of `files` (path in the zip -> text or bytes)."""
    with zipfile.ZipFile(path, "w", method) as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return path


def chatgpt_zip(path: Path, conversations: int = 4, turns: int = 4, method: int = zipfile.ZIP_DEFLATED) -> Path:
    """A ChatGPT export as downloaded: conversations.json beside the files ripple passes over."""
    files: dict[str, str | bytes] = {
        "conversations.json": json.dumps(chatgpt_export(conversations, turns)),
        "chat.html": "<html></html>",
        "message_feedback.json": "[]",
        "file-abc.png": b"\x89PNG",
    }
    return write_zip(path, files, method)


def streamed(reading) -> list:
    """Every conversation a streamed reading gives, chunk by chunk."""
    assert reading.stream is not None and reading.conversations == []
    return [conversation for chunk in reading.stream.chunks() for conversation in chunk]


def test_a_zipped_chatgpt_export_streams_as_its_file_reads(tmp_path, always_stream):
    """The member read record by record gives what the same file unzipped gives, and the zip lists its files."""
    plain = tmp_path / "conversations.json"
    plain.write_text(json.dumps(chatgpt_export(4, 4)), encoding="utf-8")
    reading = read_input(chatgpt_zip(tmp_path / "export.zip"), stream=True)
    assert streamed(reading) == read_input(plain).conversations
    assert reading.stream.turns == 16 and reading.stream.conversations == 4 and reading.stream.format == "chatgpt"
    assert Member("conversations.json", "chatgpt") in reading.members
    assert Member("file-abc.png", None, "not .json, .txt or .md") in reading.members


def test_the_member_is_unpacked_in_pieces_never_whole(tmp_path, always_stream, monkeypatch):
    """Every read of the streamed member asks for a bounded piece (no read() of the whole member), check and chunks."""
    sizes: list[int] = []
    real = zipfile.ZipExtFile.read

    def counted(self, n=-1):
        if self.name == "conversations.json":
            sizes.append(n)
        return real(self, n)

    monkeypatch.setattr(zipfile.ZipExtFile, "read", counted)
    monkeypatch.setattr(zipfile.ZipFile, "read", lambda *_: pytest.fail("a member was read whole"))
    path = write_zip(tmp_path / "export.zip", {"conversations.json": json.dumps(chatgpt_export(30, 6, words=40))})
    assert len(streamed(read_input(path, stream=True))) == 30
    assert sizes and all(0 <= n <= 1 << 20 for n in sizes)  # read(0): a seek past the byte-order mark


def test_a_zip_read_whole_gives_the_same_conversations(tmp_path, always_stream):
    """Without `stream` (read_chat), the zip's members are still read one by one from the file, as before."""
    path = chatgpt_zip(tmp_path / "export.zip")
    assert read_input(path).conversations == streamed(read_input(path, stream=True))


def test_a_small_zip_is_read_whole(tmp_path):
    """Below STREAM_BYTES a zipped export is read whole, as it always was."""
    reading = read_input(chatgpt_zip(tmp_path / "export.zip"), stream=True)
    assert reading.stream is None and len(reading.conversations) == 4


def test_declared_sizes_over_the_bundle_limit_are_refused_before_reading(tmp_path, monkeypatch):
    """The zip's directory says how big its chat files unpack: over the limit, nothing is unpacked."""
    monkeypatch.setattr(bundle, "MAX_BUNDLE_BYTES", 1 << 20)
    path = write_zip(tmp_path / "bomb.zip", {"conversations.json": "[" + " " * (2 << 20) + "]"})
    monkeypatch.setattr(zipfile.ZipFile, "open", lambda *_, **__: pytest.fail("a member was unpacked"))
    with pytest.raises(InputError, match=r"^bomb.zip: holds more than 1 MB of chat files$"):
        read_input(path, stream=True)


def damaged_zip(path: Path) -> Path:
    """A zip whose stored conversations.json has one byte changed: its CRC no longer matches."""
    chatgpt_zip(path, method=zipfile.ZIP_STORED)
    raw = bytearray(path.read_bytes())
    at = raw.index(b"Message 3 of chat 3")
    raw[at] = ord("m")
    path.write_bytes(bytes(raw))
    return path


@pytest.mark.parametrize("stream_it", [True, False])
def test_a_damaged_member_is_one_line(tmp_path, always_stream, stream_it):
    """A bad CRC is found in the check (the member is read to its end) and named, streamed or read whole."""
    with pytest.raises(InputError, match=r"^export.zip: conversations.json: cannot be unpacked \(Bad CRC-32"):
        reading = read_input(damaged_zip(tmp_path / "export.zip"), stream=stream_it)
        streamed(reading)


def test_a_cut_deflate_stream_is_one_line(tmp_path, always_stream):
    """A member whose compressed bytes are garbled part way is refused as it is unpacked."""
    path = write_zip(tmp_path / "export.zip", {"conversations.json": json.dumps(chatgpt_export(40, 6, words=30))})
    info = zipfile.ZipFile(path).getinfo("conversations.json")
    raw = bytearray(path.read_bytes())
    start = info.header_offset + 30 + len(info.filename) + len(info.extra)
    middle = start + info.compress_size // 2
    raw[middle : middle + 64] = b"\xff" * 64
    path.write_bytes(bytes(raw))
    with pytest.raises(InputError, match=r"^export.zip: conversations.json: (cannot be unpacked|is not)"):
        streamed(read_input(path, stream=True))


def test_a_truncated_zip_is_one_line(tmp_path, always_stream):
    """A download cut short has no directory: refused as no readable zip."""
    path = chatgpt_zip(tmp_path / "export.zip")
    path.write_bytes(path.read_bytes()[:-200])
    with pytest.raises(InputError, match=r"^export.zip: is not a readable zip"):
        read_input(path, stream=True)


def test_a_damaged_member_leaves_the_store_unchanged(tmp_path, fake_settings, fake_extractor, always_stream):
    """Through the CLI: one error line, exit 2, and the store as it was."""
    store = tmp_path / "store"
    with new_memory(store, fake_settings) as memory:
        memory.ingest(FIXTURES / "chatgpt.json")
        before = counts(memory)
    result = run("ingest", str(damaged_zip(tmp_path / "export.zip")), "--store", str(store))
    assert result.exit_code == 2 and "cannot be unpacked (Bad CRC-32" in one_error_line(result), result.output
    assert stored_counts(store) == before


def test_a_zip_in_a_folder_is_read(tmp_path, always_stream):
    """`folder/export.zip` is read as part of the folder, its conversations.json streamed from it."""
    folder = tmp_path / "downloads"
    folder.mkdir()
    chatgpt_zip(folder / "export.zip")
    (folder / "notes.md").write_text("# Trip\n\nWe booked the train to Porto for May.\n", encoding="utf-8")
    reading = read_input(folder, stream=True)
    conversations = streamed(reading)
    assert len(conversations) == 5  # the notes file first, then the export's 4
    assert Member("export.zip/conversations.json", "chatgpt") in reading.members
    assert Member("export.zip/chat.html", None, "not .json, .txt or .md") in reading.members

    def by_id(found: list) -> list:
        return sorted(found, key=lambda c: c.conversation_id)

    assert by_id(read_input(folder).conversations) == by_id(conversations)


def test_a_folder_hashes_the_zip_in_it(tmp_path):
    """A rerun on the folder is the same file only while the zip in it is (a changed export is read again)."""
    folder = tmp_path / "downloads"
    folder.mkdir()
    chatgpt_zip(folder / "export.zip")
    first = file_hash(folder)
    chatgpt_zip(folder / "export.zip", conversations=5)
    assert file_hash(folder) != first


def test_a_folder_of_only_a_zip_of_media_says_so(tmp_path):
    """A zip holding no chat file: the folder holds no chat export."""
    folder = tmp_path / "downloads"
    folder.mkdir()
    write_zip(folder / "photos.zip", {"a.png": b"\x89PNG"})
    with pytest.raises(InputError, match=r"^downloads: holds no \.json, \.txt or \.md file"):
        read_input(folder)


def telegram_zip(path: Path) -> Path:
    """A Telegram account export as zipped from its DataExport folder."""
    files = {"DataExport/result.json": (FIXTURES / "telegram_full.json").read_text(), "DataExport/css/style.css": ""}
    return write_zip(path, files)


def test_a_zipped_telegram_account_streams_with_the_owner_named(tmp_path, always_stream):
    """A Telegram account's result.json streams from the zip, personal_information read beside its chats."""
    reading = read_input(telegram_zip(tmp_path / "Telegram.zip"), stream=True)
    assert reading.stream.format == "telegram"
    assert streamed(reading) == read_input(FIXTURES / "telegram_full.json").conversations


def test_telegram_is_recognised_from_the_head_of_the_file(tmp_path, monkeypatch):
    """Detection stops after SAMPLE_BYTES: what follows the chats (here even broken JSON) is not read to tell it."""
    data = json.loads((FIXTURES / "telegram_full.json").read_text())
    text = json.dumps({**data, "padding": ["x" * 100] * 8_000})
    path = write_zip(tmp_path / "Telegram.zip", {"result.json": text[:-50]})
    monkeypatch.setattr(stream, "SAMPLE_BYTES", 200_000)
    sample = stream._sample(stream.Source(path, "result.json"), "result.json")
    assert isinstance(sample, dict) and "chats" in sample and len(sample["chats"]["list"]) == 1


def test_an_explicit_format_streams_the_zip_too(tmp_path, always_stream):
    """--format chatgpt on the zip: the same stream."""
    reading = read_input(chatgpt_zip(tmp_path / "export.zip"), "chatgpt", stream=True)
    assert len(streamed(reading)) == 4


def test_a_zip_with_two_exports_streams_the_bigger(tmp_path, always_stream):
    """The biggest file streams; the other (a second account's export) is read whole and comes first."""
    files = {"ana/conversations.json": json.dumps(chatgpt_export(2, 4)), "ben/conversations.json": "[]"}
    files["ben/conversations.json"] = json.dumps(chatgpt_export(3, 4))
    reading = read_input(write_zip(tmp_path / "two.zip", files), stream=True)
    assert reading.stream.source.member == "ben/conversations.json"
    assert [c.conversation_id for c in streamed(reading)] == ["conv-0", "conv-1", "conv-0", "conv-1", "conv-2"]


def test_a_big_claude_export_in_a_zip_is_read_whole(tmp_path, always_stream):
    """A format that does not stream (Claude) in a zip is read whole as before."""
    path = write_zip(tmp_path / "claude.zip", {"conversations.json": (FIXTURES / "claude.json").read_text()})
    reading = read_input(path, stream=True)
    assert reading.stream is None and reading.conversations == read_input(FIXTURES / "claude.json").conversations


@pytest.mark.parametrize("suffix", [".md", ".txt"])
def test_a_big_text_file_opening_with_a_bracket_is_read_as_text(tmp_path, always_stream, suffix):
    """Fixed: a big note or chat whose first line opens with "[" was taken for JSON and refused as broken JSON."""
    path = tmp_path / f"journal{suffix}"
    path.write_text("[draft] Plans for the spring\n\nWe booked the train to Porto for May.\n" * 3, encoding="utf-8")
    reading = read_input(path, stream=True)
    assert reading.stream is None and reading.conversations


def test_a_streamed_zip_ingest_stores_what_a_whole_ingest_does(tmp_path, fake_settings, fake_extractor, always_stream):
    """Chunk by chunk from the zip, the store ends as the unzipped file's whole read leaves it; a rerun adds none."""
    path = chatgpt_zip(tmp_path / "export.zip", conversations=5)
    whole, streamed_store = tmp_path / "whole", tmp_path / "streamed"
    with new_memory(whole, fake_settings) as memory:
        expected = memory.ingest_conversations(read_input(path).conversations, label=str(path))
        expected_counts = counts(memory)
    with new_memory(streamed_store, fake_settings) as memory:
        report = memory.ingest(path, stream=read_export(path).stream)
        assert counts(memory) == expected_counts
        again = memory.ingest(path, stream=read_export(path).stream)
    assert (report.new_sources, report.memories) == (20, expected.memories)
    assert (again.new_sources, again.duplicates) == (0, 20)


@pytest.mark.slow
def test_a_killed_zip_ingest_resumes_with_nothing_lost_or_doubled(tmp_path):
    """kill -9 during a real ingest streamed from a zip, then the same command: every turn stored once."""
    path = write_zip(tmp_path / "export.zip", {"conversations.json": json.dumps(chatgpt_export(6, 6, words=8))})
    store = tmp_path / "killed"
    assert ingest_process(path, store, kill_at=3, where="after commit") == -9
    _, partial = stored(store)
    assert 0 < len(partial) < 36
    assert ingest_process(path, store) == 0
    _, turns = stored(store)
    assert len(turns) == len(set(turns)) == 36


def test_a_big_export_in_a_folder_streams_too(tmp_path, always_stream):
    """An unzipped export folder's conversations.json streams as the zipped one does (a folder was read whole)."""
    folder = tmp_path / "export"
    folder.mkdir()
    (folder / "conversations.json").write_text(json.dumps(chatgpt_export(4, 4)), encoding="utf-8")
    (folder / "chat.html").write_text("<html></html>", encoding="utf-8")
    reading = read_input(folder, stream=True)
    assert streamed(reading) == read_input(folder).conversations and reading.stream.source.member == ""
