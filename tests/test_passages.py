"""Long turns read whole: passages cut from long memories, their vectors mapping back, best-passage scoring, the
token budget counting the passage, old stores migrated and repaired by `ripple doctor --repair`."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest
from chats import new_memory, run, session, write_chat

from ripplecli.api import Memory
from ripplecli.recall.memories import count_tokens
from ripplecli.store import passages
from ripplecli.store.db import DB_FILE, Store
from ripplecli.store.passages import OVERLAP_WORDS, SLOTS, STRIDE_WORDS, WINDOW_WORDS, cut, later

FILLER = "the weather report said clouds would gather over the hills by noon and clear away after tea"


def long_text(words: int, tail: str = "") -> str:
    """`words` words of filler, then `tail`."""
    pool = FILLER.split()
    return " ".join(pool[i % len(pool)] for i in range(words)) + (f" {tail}" if tail else "")


TAIL = "my saxophone teacher Marguerite lives in Lisbon"
LONG_TURN = long_text(500, TAIL)


def long_chat(path: Path) -> Path:
    """A chat whose assistant answer is 500 words of filler ending with what a question asks about."""
    turns = [
        ("Ana", "Can you tell me about the weather today?"),
        ("Bot", LONG_TURN),
        ("Ana", "Thanks, that helps a lot."),
        ("Ana", "I bought new shoes for the trip."),
    ]
    return write_chat(path / "chat.json", [session(1, turns)])


@pytest.fixture
def long_store(tmp_path: Path, fake_settings, fake_extractor) -> Path:
    """A store of the long chat built with the fake encoder."""
    with new_memory(tmp_path / "store", fake_settings) as memory:
        memory.ingest(long_chat(tmp_path))
    return tmp_path / "store"


def test_a_short_memory_is_one_passage():
    assert cut("Ana: hello there") == [passages.Passage(0, 0, 2, "Ana: hello there")]
    assert later("Ana: " + long_text(WINDOW_WORDS)) == []


def test_a_long_memory_is_cut_into_overlapping_windows_each_with_its_speaker():
    text = "Bot: " + long_text(500)
    windows = cut(text)
    assert [w.ordinal for w in windows] == list(range(len(windows))) and len(windows) == 4
    assert all(w.text.startswith("Bot: ") for w in windows)
    assert all(w.end_word - w.first_word <= WINDOW_WORDS for w in windows)
    assert windows[1].first_word == STRIDE_WORDS and windows[0].end_word - windows[1].first_word == OVERLAP_WORDS
    assert windows[-1].end_word == 500  # every word is read
    assert later(text) == windows[1:]


def test_labels_map_back_to_their_memory():
    assert passages.of_label(passages.label(12345, 7)) == (12345, 7)
    assert passages.label(3, SLOTS - 1) < passages.label(4, 0)


def test_ingest_stores_the_later_passages_of_long_memories(long_store):
    store = Store.open(long_store, read_only=True)
    try:
        rows = store.con.execute("SELECT memory_id, ordinal FROM passages ORDER BY ordinal").fetchall()
        long_id = store.con.execute("SELECT memory_id FROM memories WHERE restatement LIKE 'Bot:%'").fetchone()[0]
        assert rows == [(long_id, n) for n in range(1, len(cut("Bot: " + LONG_TURN)))]
        assert store.passage_index().count == len(rows)
    finally:
        store.close()


def test_a_long_memory_is_scored_by_its_best_passage_and_its_tokens_are_the_passages(long_store):
    with Memory(long_store) as memory:
        result = memory.recall("Who is my saxophone teacher Marguerite in Lisbon?", k=3, mode="dense")
    top = result.evidence[0]
    assert top.restatement.startswith("Bot:")
    windows = cut(top.restatement)
    assert (top.passage, top.passages) == (len(windows), len(windows))
    assert top.tokens == count_tokens(windows[-1].text) < count_tokens(top.restatement)
    data = result.to_dict()["evidence"][0]
    assert (data["passage"], data["passages"], data["tokens"]) == (top.passage, top.passages, top.tokens)


def test_the_trace_names_the_matched_passage(long_store):
    shown = run("ask", "Who is my saxophone teacher Marguerite in Lisbon?", "--store", str(long_store), "--no-answer")
    assert shown.exit_code == 0, shown.output
    assert f"¶{len(cut('Bot: ' + LONG_TURN))} of {len(cut('Bot: ' + LONG_TURN))}" in shown.output


def test_forget_removes_a_memorys_passages(long_store):
    with Memory(long_store) as memory:
        long_id = memory.store.con.execute("SELECT memory_id FROM passages LIMIT 1").fetchone()[0]
        memory.forget(long_id)
        assert memory.store.count("passages") == 0 and memory.store.passage_index().count == 0


def test_a_store_from_before_passages_migrates_and_doctor_repair_encodes_them(long_store):
    con = duckdb.connect(str(long_store / DB_FILE))  # as an older ripple left it: schema 5, no passages
    con.execute("DROP TABLE passages")
    con.execute("DELETE FROM schema_migrations WHERE version = 6")
    con.close()
    for name in ("passages.hnsw", "passages.hnsw.meta.json"):
        (long_store / name).unlink(missing_ok=True)
    result = run("doctor", "--store", str(long_store), "--json")
    found = {c["check"]: c for c in json.loads(result.stdout)["checks"]}
    assert result.exit_code == 0 and found["passages"]["status"] == "stale"
    assert "1 long memory has no passage vectors" in found["passages"]["detail"]
    with Memory(long_store) as memory:  # asked before the repair: the first passage is what the memory reads
        before = memory.recall("Who is my saxophone teacher Marguerite in Lisbon?", k=3, mode="dense")
    assert all(e.passage in (None, 1) for e in before.evidence)
    repaired = run("doctor", "--repair", "--store", str(long_store), "--json")
    report = json.loads(repaired.stdout)
    assert repaired.exit_code == 0 and any("encoded 3 passages of 1 long memory" in r for r in report["repaired"])
    assert {c["check"]: c["status"] for c in report["checks"]}["passages"] == "ok"
    with Memory(long_store) as memory:
        after = memory.recall("Who is my saxophone teacher Marguerite in Lisbon?", k=3, mode="dense")
    assert after.evidence[0].passage == after.evidence[0].passages == 4


def test_the_heap_is_given_back_on_glibc():
    import platform

    from ripplecli.runtime.heap import give_back

    assert give_back() == (platform.system() == "Linux" and platform.libc_ver()[0] == "glibc")


def test_an_import_encodes_the_passages_again(long_store, tmp_path):
    with Memory(long_store) as memory:
        memory.export(tmp_path / "export.jsonl")
    with Memory(tmp_path / "copy") as copy:
        copy.import_(tmp_path / "export.jsonl")
        assert copy.store.count("passages") == len(cut("Bot: " + LONG_TURN)) - 1


def test_the_real_encoder_finds_a_long_answers_last_passage(tmp_path, fake_extractor):
    """Through all-MiniLM-L6-v2: what only the end of a 500-word answer says is found, by its last passage."""
    from ripplecli.config import Settings

    with new_memory(tmp_path / "store", Settings()) as memory:
        memory.ingest(long_chat(tmp_path))
        found = memory.recall("Where does my saxophone teacher live?", k=2, mode="dense")
    top = found.evidence[0]
    assert top.restatement.startswith("Bot:") and top.passage == top.passages == 4
    assert "Lisbon" in (top.passage_text or "")
