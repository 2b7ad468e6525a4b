"""The library face: `Memory.remember`, the compact recall view, and the documented Python example, run as written."""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path

import pytest
from conftest import REPO, SAMPLE_CHATS, use_fake_extractor

from ripplecli.api import Memory, NewTurn, compact_result, naive_utc, next_turn_id
from ripplecli.errors import InputError, StoreError

DAY = datetime(2026, 4, 23, 19, 30)


@pytest.fixture
def memory(fake_memory: Memory) -> Memory:
    """A new store with the fake encoder and extractor (conftest's fake_memory)."""
    return fake_memory


def sources(memory: Memory, conversation: str) -> list[tuple]:
    """(session, turn id, position, session date) of a conversation's stored turns."""
    return memory.store.con.execute(
        "SELECT session_id, turn_id, position, session_ts FROM sources WHERE conversation_id = ? ORDER BY position",
        [conversation],
    ).fetchall()


def test_remember_returns_new_ids_and_numbers_turns_per_session(memory: Memory) -> None:
    assert memory.remember(NewTurn("Alex", "First.", DAY), conversation="c") == [1]
    assert memory.remember([NewTurn("Sam", "Second.", DAY), NewTurn("Alex", "Third.", DAY)], conversation="c") == [2, 3]
    assert memory.remember(NewTurn("Sam", "Elsewhere.", DAY), conversation="c", session="trip") == [4]
    assert [row[:3] for row in sources(memory, "c")] == [
        ("2026-04-23", "D2026-04-23:1", 0),
        ("2026-04-23", "D2026-04-23:2", 1),
        ("2026-04-23", "D2026-04-23:3", 2),
        ("trip", "Dtrip:1", 3),
    ]
    contiguity = memory.store.con.execute("SELECT src, dst FROM edges WHERE channel = 'contiguity' ORDER BY src")
    assert contiguity.fetchall() == [(1, 2), (2, 3)]  # a session continued over calls stays one chain


def test_remember_defaults_to_now_and_the_mcp_conversation(memory: Memory) -> None:
    before = datetime.now().replace(microsecond=0)
    memory.remember(NewTurn("Alex", "Hello there."))
    ((session, turn_id, _, stamp),) = sources(memory, "mcp")
    assert before <= stamp <= datetime.now() and session == stamp.date().isoformat() == turn_id[1:-2]


def test_remember_keeps_utc_for_zoned_times_and_cleans_text(memory: Memory) -> None:
    zoned = datetime.fromisoformat("2026-05-21T01:00:00+02:00")
    memory.remember(NewTurn(" Alex ", "Maya is allergic\x00 to shellfish.", zoned), conversation="c")
    ((session, _, _, stamp),) = sources(memory, "c")
    assert (session, stamp) == ("2026-05-21", datetime(2026, 5, 20, 23, 0))  # the day where it was said, UTC time
    assert memory.store.con.execute("SELECT said_offset FROM sources").fetchone() == (7200,)
    text, speaker = memory.store.con.execute("SELECT text, speaker FROM sources").fetchone()
    assert (text, speaker) == ("Maya is allergic to shellfish.", "Alex")


@pytest.mark.parametrize(
    ("turns", "conversation", "message"),
    [
        ([], "c", "no turns to remember"),
        ([NewTurn("Alex", "  ")], "c", "turn 1: the text is empty"),
        ([NewTurn("Alex", "ok"), NewTurn("", "hi")], "c", "turn 2: the speaker is empty"),
        ([NewTurn("Alex", "ok")] * 51, "c", "at most 50"),
        ([NewTurn("Alex", "ok")], " ", "must not be empty"),
        ([NewTurn("Alex", "a" * 200_001)], "c", "turn 1: the text is 200,001 characters long; ripple takes at most"),
        ([NewTurn("Alex", "ok"), NewTurn("B" * 300_000, "hi")], "c", "turn 2: the speaker is 300,000 characters"),
    ],
)
def test_remember_refuses_bad_turns_and_writes_nothing(memory: Memory, turns, conversation, message) -> None:
    with pytest.raises(InputError, match=message):
        memory.remember(turns, conversation=conversation)
    assert memory.store.count("sources") == 0


def test_remember_on_a_read_only_store_is_a_clear_error(tmp_path: Path, fake_settings, monkeypatch) -> None:
    use_fake_extractor(monkeypatch)
    with Memory(tmp_path / "store") as writer:
        writer.configure(fake_settings)
        writer.remember(NewTurn("Alex", "First."))
    with Memory(tmp_path / "store", read_only=True) as reader, pytest.raises(StoreError, match="read-only"):
        reader.remember(NewTurn("Alex", "Second."))


def test_next_turn_id_skips_ids_still_taken() -> None:
    assert next_turn_id("s", set()) == "Ds:1"
    assert next_turn_id("s", {"Ds:1", "Ds:3", "Dt:1"}) == "Ds:4"  # after a forget left a hole
    assert naive_utc(datetime.fromisoformat("2026-01-01T00:30:00-01:00")) == datetime(2026, 1, 1, 1, 30)


def test_compact_result_keeps_ids_sources_and_the_trajectory(memory: Memory) -> None:
    memory.remember(
        [NewTurn("Alex", "Maya loves Harbor Grill.", DAY), NewTurn("Sam", "Harbor Grill is by the marina.", DAY)]
    )
    result = memory.recall("Where is Harbor Grill?", k=2)
    brief = compact_result(result)
    assert [e["memory_id"] for e in brief["evidence"]] == [e.memory_id for e in result.evidence]
    assert brief["evidence"][0]["sources"][0] == {
        "turn_id": result.evidence[0].source_turns[0],
        "session_id": "2026-04-23",
        "speaker": result.evidence[0].sources[0].speaker,
        "said_at": "2026-04-23T19:30:00",
    }
    trajectory = brief["trajectory"]
    assert trajectory["seeds"]["dense"] and trajectory["rounds"][0]["anchors"]
    found = {m for ids in trajectory["found_by"].values() for m in ids}
    assert found == {e.memory_id for e in result.evidence}


def test_the_compact_result_is_the_json_document_made_small(memory: Memory) -> None:
    """One vocabulary: every key the MCP result keeps has the name and value `ripple ask --json` gives it."""
    memory.remember([NewTurn("Alex", "Maya loves Harbor Grill.", DAY), NewTurn("Sam", "Maya moved to Lisbon.", DAY)])
    result = memory.recall("Where does Maya like to eat?", k=2, answer="typed")
    brief, document = compact_result(result), result.to_dict()
    for small, full in zip(brief["evidence"], document["evidence"], strict=True):
        assert {k: v for k, v in small.items() if k != "sources"} == {k: full[k] for k in small if k != "sources"}
        assert small["sources"] == [{k: s[k] for k in small["sources"][0]} for s in full["sources"]]
    assert brief["answer"] == {k: document["answer"][k] for k in brief["answer"]}
    cues = brief["trajectory"]["query_cues"]
    assert cues == {k: document["trace"]["query_cues"][k] for k in cues}
    planned = document["trace"]["rounds"][0]["planner"]
    assert brief["trajectory"]["rounds"][0]["anchors"] == [a["id"] for a in planned["anchors"]]


# --- the README, run as a user would -----------------------------------------------------------------
def readme_python(section: str) -> str:
    """The first python code block under a heading of docs/mcp-and-api.md (the README links it)."""
    text = (REPO / "docs" / "mcp-and-api.md").read_text(encoding="utf-8")
    body = text.split(f"## {section}\n", 1)[1].split("\n## ", 1)[0]
    match = re.search(r"```python\n(.*?)```", body, re.S)
    assert match, f"no python example under '## {section}'"
    return match.group(1)


@pytest.mark.slow
def test_readme_python_api_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    """Through the real encoder and spaCy, from a folder that looks like the repository root."""
    (tmp_path / "sample_chats").symlink_to(SAMPLE_CHATS)
    monkeypatch.chdir(tmp_path)
    exec(compile(readme_python("Python API"), "docs/mcp-and-api.md", "exec"), {"__name__": "readme"})
    printed = capsys.readouterr().out
    assert "D2:11" in printed and "activation" in printed  # the graph-only seafood turn, as the page shows
    assert printed.strip().endswith("63 memories")  # the dinner chat's 63 turns, plus one remembered, minus it
    assert (tmp_path / "demo-store" / "ripple.duckdb").exists()
