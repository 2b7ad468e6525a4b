"""Issue 29, point 1: a chat's identity follows its messages, not its file's name. Every export fixture ingested,
then again renamed, zipped and unzipped, adds nothing; a chat named by its file (WhatsApp, a ChatGPT
conversation without its id, notes) joins the stored chat its messages overlap."""

from __future__ import annotations

import json
import os
import shutil
import zipfile
from pathlib import Path

import duckdb
import pytest
from chats import new_memory, run

from ripplecli.api import Memory
from ripplecli.formats import read_conversations

FIXTURES = Path(__file__).parent / "fixtures" / "formats"
WHATSAPP = FIXTURES / "WhatsApp Chat with Maya.txt"
# Every export fixture, one per file (the Slack export is its folder)
EXPORTS = sorted(p.name for p in FIXTURES.iterdir() if p.suffix in (".json", ".txt", ".md") or p.is_dir())


def _zip(archive: Path, files: dict[str, Path]) -> Path:
    """A zip of the given files (a folder: every file under it), each under its name in the zip."""
    archive.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(archive, "w") as out:
        for inside, source in files.items():
            if source.is_dir():
                for path in sorted(p for p in source.rglob("*") if p.is_file()):
                    out.write(path, f"{inside}/{path.relative_to(source).as_posix()}")
            else:
                out.write(source, inside)
    return archive


def variants(fixture: Path, folder: Path) -> dict[str, Path]:
    """The same export renamed (copied: a new modification time too), zipped as a service or a person would,
    and that zip unpacked into a folder."""
    renamed = folder / "renamed" / (f"export (2){fixture.suffix}" if fixture.is_file() else "workspace backup")
    renamed.parent.mkdir(parents=True)
    if fixture.is_dir():
        shutil.copytree(fixture, renamed)
    else:
        shutil.copy(fixture, renamed)
    zipped = _zip(folder / "export.zip", {f"Export 2024/{fixture.name}": fixture})
    unzipped = folder / "unzipped"
    with zipfile.ZipFile(zipped) as archive:
        archive.extractall(unzipped)
    return {"renamed": renamed, "zipped": zipped, "unzipped": unzipped}


@pytest.mark.parametrize("fixture", EXPORTS)
def test_an_export_renamed_zipped_or_unzipped_adds_nothing(tmp_path, fake_settings, fake_extractor, fixture):
    path = FIXTURES / fixture
    with new_memory(tmp_path / "store", fake_settings) as memory:
        first = memory.ingest(path)
        chats = memory.store.count("conversations")
        again = {name: memory.ingest(copy) for name, copy in variants(path, tmp_path / "copies").items()}
        assert first.new_sources > 0
        assert {name: report.new_sources for name, report in again.items()} == dict.fromkeys(again, 0)
        assert memory.store.count("conversations") == chats and memory.store.count("sources") == first.new_sources


def test_the_same_whatsapp_chat_in_every_form_is_one_conversation(tmp_path, fake_settings, fake_extractor):
    """As the issue found it: the .txt of Android, the iOS zip holding _chat.txt, a renamed file, a zip of another
    name: one conversation, its messages stored once, its title the first file's."""
    forms = [
        WHATSAPP,
        _zip(tmp_path / "ios" / "WhatsApp Chat - Maya.zip", {"_chat.txt": WHATSAPP}),
        _zip(tmp_path / "backup" / "backup.zip", {"_chat.txt": WHATSAPP}),
        tmp_path / "chat with maya.txt",
    ]
    shutil.copy(WHATSAPP, forms[-1])
    with new_memory(tmp_path / "store", fake_settings) as memory:
        reports = [memory.ingest(form) for form in forms]
        chats = memory.store.con.execute("SELECT conversation_id, title FROM conversations").fetchall()
    assert [r.new_sources for r in reports] == [7, 0, 0, 0]
    assert [r.duplicates for r in reports] == [0, 7, 7, 7]
    assert len(chats) == 1 and chats[0][1] == "Maya"


def test_a_chatgpt_conversation_without_an_id_is_stored_once_however_it_comes(
    tmp_path, fake_settings, fake_extractor
):
    noid = FIXTURES / "chatgpt_noid.json"
    (chat,) = read_conversations(noid)
    assert chat.conversation_id == "chatgpt_noid" and chat.named_by_file  # the file's name: no id in it
    with new_memory(tmp_path / "store", fake_settings) as memory:
        memory.ingest(noid)
        zipped = memory.ingest(_zip(tmp_path / "chatgpt-export.zip", {"conversations.json": noid}))
        stored = memory.store.con.execute("SELECT DISTINCT conversation_id FROM sources").fetchall()
    assert (zipped.new_sources, zipped.duplicates) == (0, 4)
    assert stored == [("chatgpt_noid",)]


def test_a_renamed_newer_export_joins_the_chat_it_continues(tmp_path, fake_settings, fake_extractor):
    later = "14/02/2024, 08:00 - Maya: Pepper chewed my running shoes.\n14/02/2024, 08:03 - Alex: Oh no!\n"
    newer = tmp_path / "maya-2024-02.txt"
    newer.write_text(WHATSAPP.read_text() + later)
    with new_memory(tmp_path / "store", fake_settings) as memory:
        memory.ingest(WHATSAPP)
        report = memory.ingest(newer)
        chats = memory.store.con.execute("SELECT conversation_id, count(*) FROM sources GROUP BY 1").fetchall()
    assert (report.new_sources, report.duplicates) == (2, 7)
    assert len(chats) == 1 and chats[0][1] == 9


def test_one_shared_message_does_not_make_two_chats_one(tmp_path, fake_settings, fake_extractor):
    """A message sent to two chats at the same minute ("Happy new year!") is stored once; the second chat, named
    by its file and sharing nothing else, stays a chat of its own."""
    first = tmp_path / "WhatsApp Chat with Ana.txt"
    first.write_text("31/12/2023, 23:59 - Ana: Happy new year!\n01/01/2024, 00:01 - Ana: See you at lunch.\n")
    second = tmp_path / "WhatsApp Chat with Ben.txt"
    second.write_text(
        "31/12/2023, 23:59 - Ana: Happy new year!\n01/01/2024, 00:05 - Ben: Thanks, you too!\n"
        "01/01/2024, 00:06 - Ben: Brunch tomorrow?\n01/01/2024, 00:07 - Ana: Yes, at ten.\n"
    )
    with new_memory(tmp_path / "store", fake_settings) as memory:
        memory.ingest(first)
        report = memory.ingest(second)
        chats = dict(memory.store.con.execute("SELECT conversation_id, count(*) FROM sources GROUP BY 1").fetchall())
    assert (report.new_sources, report.duplicates) == (3, 1)
    assert len(chats) == 2 and sorted(chats.values()) == [2, 3]


def test_the_same_chat_twice_in_one_folder_is_stored_once(tmp_path, fake_settings, fake_extractor):
    folder = tmp_path / "exports"
    (folder / "phone").mkdir(parents=True)
    shutil.copy(WHATSAPP, folder / "WhatsApp Chat with Maya.txt")
    shutil.copy(WHATSAPP, folder / "phone" / "_chat.txt")  # the iOS zip, unpacked beside the Android file
    with new_memory(tmp_path / "store", fake_settings) as memory:
        report = memory.ingest(folder)
        chats = memory.store.con.execute("SELECT conversation_id, count(*) FROM sources GROUP BY 1").fetchall()
    assert (report.new_sources, report.duplicates) == (7, 7)
    assert len(chats) == 1 and chats[0][1] == 7


@pytest.mark.parametrize("schema_version", [3, 4])
def test_a_store_from_before_message_keys_migrates_and_knows_its_messages(
    tmp_path, fake_settings, fake_extractor, schema_version
):
    store = tmp_path / "store"
    with new_memory(store, fake_settings) as memory:
        memory.ingest(WHATSAPP)
        memory.ingest(FIXTURES / "notes_plain.txt")
        keys = memory.store.con.execute("SELECT source_id, message_key FROM sources ORDER BY 1").fetchall()
    con = duckdb.connect(str(store / "ripple.duckdb"))  # what schema 3 or 4 wrote: no message keys
    con.execute("DROP INDEX sources_hash")  # DuckDB alters no table an index depends on
    con.execute("DROP INDEX sources_turn")
    con.execute("ALTER TABLE sources DROP COLUMN message_key")
    if schema_version == 3:  # nor the offsets of where turns were said
        con.execute("ALTER TABLE sources DROP COLUMN said_offset")
        con.execute("ALTER TABLE memories DROP COLUMN said_offset")
    con.execute("DROP TABLE passages")  # nor schema 6's passages
    con.execute("DELETE FROM schema_migrations WHERE version > ?", [schema_version])
    con.execute("CREATE INDEX sources_hash ON sources (content_hash)")
    con.execute("CREATE INDEX sources_turn ON sources (conversation_id, turn_id)")
    con.close()
    renamed = tmp_path / "chat.txt"
    shutil.copy(WHATSAPP, renamed)
    note = tmp_path / "todo copy.txt"
    shutil.copy(FIXTURES / "notes_plain.txt", note)
    os.utime(note, (1_800_000_000, 1_800_000_000))  # another day: a note's identity is its text
    with Memory(store) as memory:
        assert memory.store.con.execute("SELECT source_id, message_key FROM sources ORDER BY 1").fetchall() == keys
        assert memory.ingest(renamed).new_sources == 0 and memory.ingest(note).new_sources == 0


def test_an_imported_store_knows_its_messages(tmp_path, fake_settings, fake_extractor):
    with new_memory(tmp_path / "store", fake_settings) as memory:
        memory.ingest(WHATSAPP)
        memory.export(tmp_path / "store.jsonl")
    assert "message_key" not in (tmp_path / "store.jsonl").read_text()  # derived, so not exported
    result = run("import", str(tmp_path / "store.jsonl"), "--store", str(tmp_path / "copy"))
    assert result.exit_code == 0, result.stderr
    shutil.copy(WHATSAPP, tmp_path / "renamed.txt")
    with Memory(tmp_path / "copy") as memory:  # the store's settings came with it
        assert memory.ingest(tmp_path / "renamed.txt").new_sources == 0


def test_ingest_json_reports_a_renamed_export_as_duplicates(tmp_path, fake_settings, fake_extractor):
    store = tmp_path / "store"
    with new_memory(store, fake_settings) as memory:
        memory.ingest(WHATSAPP)
    shutil.copy(WHATSAPP, tmp_path / "Maya.txt")
    result = run("ingest", str(tmp_path / "Maya.txt"), "--store", str(store), "--json")
    assert result.exit_code == 0, result.output
    (report,) = json.loads(result.stdout)
    assert (report["new_sources"], report["duplicates"]) == (0, 7)


def test_a_message_exported_in_two_zones_is_one_message(tmp_path, fake_settings, fake_extractor):
    """A message's key is the instant it was said (said_at in UTC), not the clock of the device that exported it."""
    turns = [("Ana", "The ferry leaves at nine."), ("Ben", "I'll be there at half past eight.")]

    def export(name: str, stamps: list[str]) -> Path:
        said = [{"speaker": s, "text": t, "said_at": at} for (s, t), at in zip(turns, stamps, strict=True)]
        path = tmp_path / name
        path.write_text(json.dumps({"sessions": [{"turns": said}]}))  # no conversation id: named by its file
        return path

    california = export("phone.json", ["2026-03-10T20:00:00-07:00", "2026-03-10T20:05:00-07:00"])
    berlin = export("laptop.json", ["2026-03-11T04:00:00+01:00", "2026-03-11T04:05:00+01:00"])
    with new_memory(tmp_path / "store", fake_settings) as memory:
        memory.ingest(california)
        report = memory.ingest(berlin)
        rows = memory.store.con.execute("SELECT DISTINCT conversation_id, said_offset FROM sources").fetchall()
    assert (report.new_sources, report.duplicates) == (0, 2)
    assert rows == [("phone", -7 * 3600)]  # one chat, said where the first export said it was


def test_chats_read_as_one_keep_where_their_sessions_were_said(tmp_path, fake_settings, fake_extractor):
    """Two copies of a chat in one file, named by it, are one chat whose sessions keep their UTC offsets."""

    def sitting(number: int, texts: list[str]) -> dict:
        stamp = f"2026-03-1{number}T20:00:00-07:00"
        return {"id": f"s{number}", "timestamp": stamp, "turns": [{"speaker": "Ana", "text": t} for t in texts]}

    first = {"sessions": [sitting(0, ["Ferry at nine.", "Bring the tent.", "And the stove."])]}
    later = {"sessions": [*first["sessions"], sitting(1, ["We made it."])]}
    path = tmp_path / "trip.json"
    path.write_text(json.dumps([first, later]))
    with new_memory(tmp_path / "store", fake_settings) as memory:
        report = memory.ingest(path)
        rows = memory.store.con.execute("SELECT DISTINCT conversation_id, said_offset FROM sources").fetchall()
    assert (report.new_sources, report.duplicates) == (4, 3)
    assert len(rows) == 1 and rows[0][1] == -7 * 3600
