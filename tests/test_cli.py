"""The CLI shell: one-line errors with the right exit codes, the store untouched by bad input, the fuzz corpus."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from chats import CHAT_1, new_memory, one_error_line, run, session, stored_counts, write_chat

from ripplecli.api import Memory

FUZZ = Path(__file__).parent / "fuzz"


def _write(path: Path, data: bytes | str) -> Path:
    """A file with exactly these contents."""
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


BAD_INPUTS = {
    "malformed.json": b'{"sessions": [',
    "empty.json": b"",
    "latin1.json": '{"sessions": [{"turns": [{"speaker": "Zoë", "text": "hé"}]}]}'.encode("latin-1"),
    "no_speaker.json": b'{"sessions": [{"turns": [{"text": "hi"}]}]}',
    "no_sessions.json": b'{"conversation_id": "x"}',
    "speaker_number.json": b'{"sessions": [{"turns": [{"speaker": 3, "text": "hi"}]}]}',
    "sessions_string.json": b'{"sessions": "today"}',
}


@pytest.mark.parametrize("name", sorted(BAD_INPUTS))
def test_bad_file_is_one_line_exit_2_and_store_unchanged(store, tmp_path, name):
    before = stored_counts(store)
    bad = _write(tmp_path / name, BAD_INPUTS[name])
    result = run("ingest", str(bad), "--store", str(store))
    assert result.exit_code == 2
    assert name in one_error_line(result)
    assert stored_counts(store) == before


def test_directory_unknown_format_and_missing_file(store, tmp_path):
    before = stored_counts(store)
    good = write_chat(tmp_path / "good.json", [session(3, CHAT_1)], "other")
    (tmp_path / "folder").mkdir()
    cases = [
        (["ingest", str(tmp_path / "folder")], "folder: is a directory"),
        (["ingest", "--format", "nope", str(good)], "unknown --format 'nope' (choose from: auto, chatgpt"),
        (["ingest", "--format", "nope", str(tmp_path / "absent.json")], "unknown --format 'nope'"),
        (["ingest", str(tmp_path / "absent.json")], "absent.json: no such file"),
        (["ingest", str(good), str(tmp_path / "absent.json")], "absent.json"),
    ]
    for args, expected in cases:
        result = run(*args, "--store", str(store))
        assert result.exit_code == 2 and expected in one_error_line(result), args
    assert stored_counts(store) == before


def test_ingest_prints_a_summary_and_json(store, tmp_path):
    chat = write_chat(tmp_path / "more.json", [session(3, CHAT_1)], "other")
    result = run("ingest", str(chat), "--store", str(store), "--json")
    assert result.exit_code == 0, result.output
    (report,) = json.loads(result.stdout)
    assert report["memories"] == 3 and report["file"] == str(chat)
    again = run("ingest", str(chat), "--store", str(store))
    assert again.exit_code == 0 and "ingest summary" in again.stdout


@pytest.mark.parametrize(
    "args, expected",
    [
        (["ask", ""], "the question is empty"),
        (["ask", "   "], "the question is empty"),
        (["ask", "hiking", "--k", "0"], "--k must be at least 1"),
        (["ask", "hiking", "--rounds", "-1"], "--rounds must be 0 or more"),
        (["ask", "hiking", "--mode", "nope"], "unknown --mode 'nope'"),
        (["ask", "hiking", "--as-of", "last tuesday"], "--as-of"),
    ],
)
def test_bad_ask_arguments_are_exit_2(store, args, expected):
    result = run(*args, "--store", str(store))
    assert result.exit_code == 2
    assert expected in one_error_line(result)


def test_ask_on_a_missing_store_is_one_line(tmp_path):
    result = run("ask", "anything", "--store", str(tmp_path / "nowhere"))
    assert result.exit_code == 2
    assert "no ripple store here" in one_error_line(result)
    assert not (tmp_path / "nowhere").exists()
    stats = run("graph", "stats", "--store", str(tmp_path / "nowhere"))
    assert stats.exit_code == 2 and "no ripple store here" in one_error_line(stats)


def test_ask_on_an_empty_store_says_so(tmp_path):
    Memory(tmp_path / "empty").close()
    result = run("ask", "where did Ana go hiking?", "--store", str(tmp_path / "empty"), "--no-answer")
    assert result.exit_code == 0
    assert "no evidence found" in result.stdout
    as_json = run("ask", "where did Ana go hiking?", "--store", str(tmp_path / "empty"), "--json")
    assert as_json.exit_code == 0 and json.loads(as_json.stdout)["evidence"] == []


def test_ask_finds_evidence_with_the_fake_encoder(store):
    result = run("ask", "hiking in Denver", "--store", str(store), "--no-answer", "--json")
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document["evidence"] and "hiking" in document["evidence"][0]["restatement"]
    plain = run("ask", "hiking in Denver", "--store", str(store), "--no-answer", "--no-trace")
    assert plain.exit_code == 0 and "D1:1" in plain.stdout


def test_graph_stats_json_and_table(store):
    result = run("graph", "stats", "--store", str(store), "--json")
    assert result.exit_code == 0
    stats = json.loads(result.stdout)
    assert stats["memories"] == 7 and stats["encoder"]["name"] == "fake-bow"
    table = run("graph", "stats", "--store", str(store))
    assert table.exit_code == 0 and "memories" in table.stdout and "thresholds" in table.stdout


def test_help_lists_the_commands():
    result = run("--help")
    assert result.exit_code == 0
    assert all(command in result.stdout for command in ("ingest", "ask", "graph", "eval"))
    assert run("ingest", "--help").exit_code == 0 and run("ask", "--help").exit_code == 0


def _stored_elsewhere(path: Path, seen: dict[tuple[str, str], str]) -> bool:
    """Whether an ok file reuses a (conversation, turn id) an earlier ok file stored with other content (an export's
    message with its own time is not a clash: it is counted as edited and keeps the stored text)."""
    from ripplecli.formats import read_conversations
    from ripplecli.ingest import turn_hash

    turns = {
        (c.conversation_id, t.turn_id): (turn_hash(c.conversation_id, s, t), t.said_at is not None)
        for c in read_conversations(path)
        for s in c.sessions
        for t in s.turns
    }
    clash = any(key in seen and seen[key] != digest and not said for key, (digest, said) in turns.items())
    if not clash:
        seen.update({key: digest for key, (digest, _) in turns.items() if key not in seen})
    return clash


def test_every_fuzz_file_through_ingest_into_one_store(tmp_path, fake_settings, fake_extractor):
    with new_memory(tmp_path / "store", fake_settings) as memory:
        memory.ingest(write_chat(tmp_path / "seed.json", [session(1, CHAT_1)]))
    store, seen, clashes = str(tmp_path / "store"), {}, []
    for path in sorted(p for p in FUZZ.iterdir() if p.name.startswith(("ok_", "bad_"))):
        before = stored_counts(tmp_path / "store")
        result = run("ingest", str(path), "--store", store)
        if path.name.startswith("ok_") and not _stored_elsewhere(path, seen):
            assert result.exit_code == 0, f"{path.name}: {result.stderr}"
            assert stored_counts(tmp_path / "store")["ingest_runs"] == before["ingest_runs"] + 1
            continue
        assert result.exit_code == 2, path.name
        line = one_error_line(result)
        assert path.name in line and stored_counts(tmp_path / "store") == before, path.name
        if path.name.startswith("ok_"):  # same conversation and turn ids as an earlier ok file, other text
            assert "already stored with different content" in line
            clashes.append(path.name)
    clashing = ("chatgpt", "locomo", "claude", "telegram")  # fuzz files of a format reuse one conversation's ids
    assert set(clashes) <= {p.name for p in FUZZ.glob("ok_*") if any(name in p.name for name in clashing)}
