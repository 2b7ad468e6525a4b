"""A heavy user's archive (issue 28 point 4): big exports read a record at a time, ingested chunk by chunk, with no
turn limit, and a rerun after kill -9 adding exactly the rest."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from chats import counts, new_memory

from ripplecli.api import Memory, read_export
from ripplecli.errors import InputError
from ripplecli.formats import stream
from ripplecli.formats.load import read_input

FIXTURES = Path(__file__).parent / "fixtures" / "formats"
REPO = Path(__file__).resolve().parent.parent
STREAMED = ["chatgpt.json", "chatgpt_edited.json", "chatgpt_noid.json", "chatgpt_tree.json", "telegram_full.json"]


@pytest.fixture
def always_stream(monkeypatch):
    """Every JSON file counts as big, and chunks are a few turns, so the fixtures take the streamed path."""
    monkeypatch.setattr(stream, "STREAM_BYTES", 0)
    monkeypatch.setattr(stream, "CHUNK_TURNS", 3)


def chatgpt_export(conversations: int, turns: int, words: int = 12) -> list[dict]:
    """A ChatGPT conversations.json of `conversations` linear threads, `turns` messages each."""
    exports = []
    for number in range(conversations):
        mapping = {"root": {"id": "root", "message": None, "parent": None, "children": ["m0"]}}
        for index in range(turns):
            role = "user" if index % 2 == 0 else "assistant"
            text = f"Message {index} of chat {number} about the garden in Lisbon " + "and more " * words
            message = {
                "id": f"m{index}",
                "author": {"role": role},
                "create_time": 1_700_000_000 + 3_600 * number + 30 * index,
                "content": {"content_type": "text", "parts": [text.strip()]},
                "recipient": "all",
            }
            parent = "root" if index == 0 else f"m{index - 1}"
            children = [f"m{index + 1}"] if index + 1 < turns else []
            mapping[f"m{index}"] = {"id": f"m{index}", "message": message, "parent": parent, "children": children}
        exports.append(
            {"title": f"Chat {number}", "create_time": 1_700_000_000 + 3_600 * number, "mapping": mapping,
             "current_node": f"m{turns - 1}", "conversation_id": f"conv-{number}"}
        )  # fmt: skip
    return exports


def write_json(path: Path, data: object) -> Path:
    """`data` as a JSON file."""
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


@pytest.mark.parametrize("name", STREAMED)
def test_a_streamed_export_reads_as_the_whole_file_does(name, always_stream):
    """Record by record and in chunks, the same conversations (ids, turns, owners, skipped by reason) as read whole."""
    whole = read_input(FIXTURES / name).conversations
    reading = read_input(FIXTURES / name, stream=True)
    assert reading.stream is not None and reading.conversations == []
    chunks = list(reading.stream.chunks())
    assert [c for chunk in chunks for c in chunk] == whole
    assert reading.stream.turns == sum(c.turn_count for c in whole)
    assert reading.stream.conversations == len(whole)


def test_small_files_and_other_shapes_are_read_whole(monkeypatch):
    """Below STREAM_BYTES nothing changes; a single Telegram chat (no account list) is read whole even when big."""
    assert read_input(FIXTURES / "chatgpt.json", stream=True).stream is None
    monkeypatch.setattr(stream, "STREAM_BYTES", 0)
    assert read_input(FIXTURES / "telegram_chat.json", stream=True).stream is None
    assert read_input(FIXTURES / "native.json", stream=True).stream is None


def test_detection_reads_only_the_first_conversation(tmp_path, always_stream, monkeypatch):
    """A ChatGPT list is recognised from its first element: the sample stops there (the rest may even be broken)."""
    path = tmp_path / "conversations.json"
    text = json.dumps(chatgpt_export(3, 4))
    path.write_text(text[:-1] + ', {"broken": ', encoding="utf-8")
    assert stream._sample(stream.Source(path), path.name) == chatgpt_export(1, 4)
    with pytest.raises(InputError, match=r"^conversations.json: is not valid JSON"):
        read_input(path, stream=True)


@pytest.mark.parametrize(
    ("mangle", "message"),
    [
        (lambda e: e[1].update(conversation_id="conv-0"), r'\[1\]: duplicate conversation id "conv-0" \(first at'),
        (lambda e: e[2].update(mapping=[]), r"\[2\]\.mapping: must be an object, got an array"),
    ],
)
def test_a_bad_record_is_one_line_naming_where(tmp_path, always_stream, mangle, message):
    """A shape error in a streamed file names its path (without the line a whole read adds), before any write."""
    exports = chatgpt_export(3, 4)
    mangle(exports)
    path = write_json(tmp_path / "conversations.json", exports)
    with pytest.raises(InputError, match=r"^conversations.json: " + message):
        read_input(path, stream=True)


def test_a_telegram_account_streams_its_chats_with_the_owner_named(tmp_path, always_stream):
    """personal_information is read beside the streamed chats, wherever it sits in the file."""
    data = json.loads((FIXTURES / "telegram_full.json").read_text())
    moved = {key: value for key, value in data.items() if key != "personal_information"}
    moved["personal_information"] = data["personal_information"]  # after the chats
    path = write_json(tmp_path / "result.json", moved)
    streamed = [c for chunk in read_input(path, stream=True).stream.chunks() for c in chunk]
    assert streamed == read_input(FIXTURES / "telegram_full.json").conversations


def test_a_streamed_ingest_stores_what_a_whole_ingest_does(tmp_path, fake_settings, fake_extractor, always_stream):
    """Chunk by chunk (joins, owners, duplicates and progress across chunks) the store ends as a whole read's."""
    path = write_json(tmp_path / "conversations.json", chatgpt_export(5, 4))
    whole, streamed = tmp_path / "whole", tmp_path / "streamed"
    with new_memory(whole, fake_settings) as memory:
        expected = memory.ingest_conversations(read_input(path).conversations, label=str(path))
        expected_counts = counts(memory)
    seen: list[tuple[int, int]] = []
    with new_memory(streamed, fake_settings) as memory:
        reading = read_export(path)
        assert reading.stream is not None
        report = memory.ingest(path, stream=reading.stream, progress=lambda d, t: seen.append((d, t)))
        assert counts(memory) == expected_counts
        again = memory.ingest(path, stream=read_export(path).stream)
    assert (report.new_sources, report.memories, report.owner) == (20, expected.memories, expected.owner) == (
        20, expected.memories, "User"
    )  # fmt: skip
    assert report.conversations == 5 and report.skipped_by_reason == expected.skipped_by_reason
    assert seen[-1] == (20, 20) and all(done <= total for done, total in seen)
    assert (again.new_sources, again.duplicates) == (0, 20)


def test_no_turn_limit_on_a_file(tmp_path, fake_settings, fake_extractor, always_stream):
    """The 100,000-turns-per-file bound is gone: `ingest --help` no longer states it, and the api has none."""
    from ripplecli import api

    assert not hasattr(api, "MAX_TURNS_PER_FILE") and not hasattr(api, "check_turn_count")
    from chats import run

    assert "100,000" not in run("ingest", "--help").stdout


KILLING_INGEST = """
import os, signal, sys
import ripplecli.formats.stream as stream
import ripplecli.ingest as ingest
stream.STREAM_BYTES = 0
stream.CHUNK_TURNS = 8
kill_at, where = int(os.environ.get("KILL_AT", "0")), os.environ.get("KILL_WHERE", "")
seen = {"batches": 0}
if where == "after commit":
    batch = ingest.Ingestor._ingest_batch
    def counted(self, *args, **kwargs):
        batch(self, *args, **kwargs)
        seen["batches"] += 1
        if seen["batches"] == kill_at:
            os.kill(os.getpid(), signal.SIGKILL)
    ingest.Ingestor._ingest_batch = counted
elif where == "mid batch":
    from ripplecli.store.db import Store
    add = Store.add_memories
    def killing(self, *args, **kwargs):
        seen["batches"] += 1
        if seen["batches"] == kill_at:
            os.kill(os.getpid(), signal.SIGKILL)
        return add(self, *args, **kwargs)
    Store.add_memories = killing
from ripplecli.cli import main
sys.argv = ["ripple", *sys.argv[1:]]
main()
"""


def ingest_process(path: Path, store: Path, kill_at: int = 0, where: str = "") -> int:
    """A real `ripple ingest` (real encoder, spaCy, store) of a file streamed in chunks; SIGKILLed at `where`."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "KILL_AT": str(kill_at), "KILL_WHERE": where}
    command = [sys.executable, "-c", KILLING_INGEST, "ingest", str(path), "--store", str(store), "--me", "Robin"]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=900).returncode


def stored(store: Path) -> tuple[dict[str, int], list[tuple[str, str]]]:
    """Every table's row count, and each stored turn (conversation, turn id) in order."""
    with Memory(store, read_only=True) as memory:
        rows = memory.store.con.execute("SELECT conversation_id, turn_id FROM sources ORDER BY source_id").fetchall()
        return counts(memory), [tuple(row) for row in rows]


@pytest.mark.slow
@pytest.mark.parametrize("where", ["after commit", "mid batch"])
def test_a_killed_streamed_ingest_resumes_with_nothing_lost_or_doubled(tmp_path, where):
    """kill -9 during a real ingest of a big export read in chunks, then the same command again: the store holds
    every turn once, as one uninterrupted ingest leaves it."""
    path = write_json(tmp_path / "conversations.json", chatgpt_export(6, 6, words=8))
    reference = tmp_path / "reference"
    assert ingest_process(path, reference) == 0
    expected_counts, expected_turns = stored(reference)
    store = tmp_path / "killed"
    assert ingest_process(path, store, kill_at=3, where=where) == -9
    _, partial = stored(store)
    assert 0 < len(partial) < len(expected_turns)
    assert ingest_process(path, store) == 0
    resumed_counts, resumed_turns = stored(store)
    assert sorted(resumed_turns) == sorted(expected_turns) and len(set(resumed_turns)) == len(resumed_turns) == 36
    assert {k: v for k, v in resumed_counts.items() if k != "ingest_runs"} == {
        k: v for k, v in expected_counts.items() if k != "ingest_runs"
    }
