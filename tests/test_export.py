"""Take your data elsewhere: export one JSONL document, import it into an empty store, byte-identical round trip."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest
from chats import CHAT_1, CHAT_2, CHAT_3, counts, new_memory, run, session, stored_counts, write_chat

from ripplecli.api import Memory


@pytest.fixture
def store(tmp_path, fake_settings, fake_extractor) -> Path:
    """Two conversations through the fake encoder."""
    with new_memory(tmp_path / "store", fake_settings) as memory:
        memory.ingest(write_chat(tmp_path / "a.json", [session(1, CHAT_1), session(2, CHAT_2)]))
        memory.ingest(write_chat(tmp_path / "b.json", [session(3, CHAT_3)], "ana-cal"))
    return tmp_path / "store"


def export(store: Path, out: Path, *extra: str) -> bytes:
    """`ripple export --out` and the file's bytes."""
    result = run("export", "--store", str(store), "--out", str(out), *extra)
    assert result.exit_code == 0, result.output
    return out.read_bytes()


@pytest.mark.parametrize("vectors", [True, False])
def test_export_import_export_is_byte_identical(store, tmp_path, vectors):
    extra = ("--with-vectors",) if vectors else ()
    first = export(store, tmp_path / "one.jsonl", *extra)
    imported = run("import", str(tmp_path / "one.jsonl"), "--store", str(tmp_path / "copy"), "--json")
    assert imported.exit_code == 0, imported.output
    assert json.loads(imported.stdout)["memory"] == 9
    assert export(tmp_path / "copy", tmp_path / "two.jsonl", *extra) == first
    with Memory(store, read_only=True) as a, Memory(tmp_path / "copy", read_only=True) as b:
        assert counts(a) == counts(b)
        assert a.doctor() | {"store": ""} == b.doctor() | {"store": ""}
        question = "who went hiking in Denver?"
        assert [e.memory_id for e in a.recall(question).evidence] == [e.memory_id for e in b.recall(question).evidence]


def test_the_document_shape(store, tmp_path):
    lines = export(store, tmp_path / "out.jsonl", "--with-vectors").decode().splitlines()
    records = [json.loads(line) for line in lines]
    assert records[0]["kind"] == "meta" and records[0]["meta"]["encoder_name"] == "fake-bow"
    kinds = [r["kind"] for r in records[1:]]
    assert kinds == sorted(kinds, key=["conversation", "run", "source", "memory", "cue_form", "edge", "vector"].index)
    memory = next(r for r in records if r["kind"] == "memory")
    assert set(memory["cues"]) == {"persons", "locations", "concepts"} and memory["sources"] == [1]
    assert stat.S_IMODE((tmp_path / "out.jsonl").stat().st_mode) == 0o600
    stdout = run("export", "--store", str(store))
    assert stdout.exit_code == 0 and stdout.stdout.splitlines()[1:] == [
        line for line in lines[1:] if '"kind":"vector"' not in line
    ]


def test_import_refuses_a_non_empty_store(store, tmp_path):
    export(store, tmp_path / "out.jsonl")
    before = stored_counts(store)
    result = run("import", str(tmp_path / "out.jsonl"), "--store", str(store))
    assert result.exit_code == 2 and len(result.stderr.strip().splitlines()) == 1
    assert "is not empty (9 memories, 9 sources)" in result.stderr
    assert stored_counts(store) == before


@pytest.mark.parametrize(
    "damage, message",
    [
        (lambda lines: lines[:-2], "truncated or edited export"),
        (lambda lines: ["{not json", *lines[1:]], "not JSON"),
        # json.loads' plain ValueError (no .msg) and RecursionError were tracebacks
        (lambda lines: [lines[0], '{"kind": "memory", "memory_id": ' + "1" * 5000 + "}", *lines[1:]], "not JSON"),
        (lambda lines: [lines[0], "[" * 100_000, *lines[1:]], "not JSON"),
        (lambda lines: lines[1:], "not a ripple export"),
        (lambda lines: [lines[0], '{"kind": "mystery"}', *lines[1:]], "unknown record kind 'mystery'"),
        (lambda lines: [], "empty file"),
    ],
)
def test_a_damaged_export_is_one_line_and_writes_nothing(store, tmp_path, damage, message):
    lines = export(store, tmp_path / "out.jsonl").decode().splitlines()
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(damage(lines)) + "\n", encoding="utf-8")
    result = run("import", str(bad), "--store", str(tmp_path / "copy"))
    assert result.exit_code == 2 and message in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert stored_counts(tmp_path / "copy")["memories"] == 0


def test_export_to_a_missing_folder_is_one_line(store, tmp_path):
    result = run("export", "--store", str(store), "--out", str(tmp_path / "nowhere" / "x.jsonl"))
    assert result.exit_code == 2 and "does not exist" in result.stderr
    missing = run("import", str(tmp_path / "absent.jsonl"), "--store", str(tmp_path / "copy"))
    assert missing.exit_code == 2 and "no such file" in missing.stderr
