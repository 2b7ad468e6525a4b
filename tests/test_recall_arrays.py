"""Recall's keyed reads from the arrays a writer saves: the same answers as SQL, used only while current."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest
from conftest import SAMPLE_CHATS, opened_read_only

from ripplecli.api import Memory, NewTurn
from ripplecli.recall.index import RecallIndex
from ripplecli.recall.pipeline import Recaller
from ripplecli.store.db import RECALL_DIR, Store
from ripplecli.store.lookups import SqlReads
from ripplecli.store.reads import CUE_COLUMNS
from ripplecli.store.recall_arrays import RecallArrays, Strings

AS_OF = datetime(2026, 6, 1)
QUESTIONS = [
    "Should Alex take Maya to Harbor Grill?",
    "Why is Jordan running the Lakeshore 10K?",
    "Where did Alex and Maya go in April 2026?",
    "What did Nora decide in March 2026?",
]


def test_every_read_answers_what_its_sql_twin_answers(sample_store: Path) -> None:
    store = opened_read_only(sample_store)
    arrays, sql = store.recall_arrays(), SqlReads(store)
    assert arrays is not None and arrays.count == sql.count > 100
    ids = [*range(-1, arrays.count + 3), 10**9]
    names = ("restatements_of", "memory_rows_of", "cue_sets_of", "first_speakers_of", "placed_of", "grounded_of")
    for name in (*names, "said_offsets_of"):
        assert getattr(arrays, name)(ids) == getattr(sql, name)(ids), name
    neighbours, expected = arrays.contiguity_of(ids), sql.contiguity_of(ids)
    assert neighbours == expected and all(list(neighbours[k]) == list(expected[k]) for k in expected)  # set order
    for table in CUE_COLUMNS:
        values = [*sql.cue_values(table), "no such value", "", "é"]
        assert arrays.cue_values(table) == sql.cue_values(table)
        assert arrays.cues_of(table, ids) == sql.cues_of(table, ids)
        assert arrays.holders_of(table, values) == sql.holders_of(table, values)
    cues = [*sql.cue_values("memory_cues"), "zzz"]
    assert arrays.holder_counts(cues) == sql.holder_counts(cues)
    forms = [row[0] for row in store.con.execute("SELECT form FROM cue_forms").fetchall()] + ["nope"]
    assert arrays.forms_of(forms) == sql.forms_of(forms)
    for start, end in [(datetime(2026, 3, 1), datetime(2026, 4, 30)), (datetime(1, 1, 1), datetime(9999, 1, 1))]:
        assert arrays.grounded_within(start, end) == sql.grounded_within(start, end)
        assert arrays.said_within(start, end) == sql.said_within(start, end)
    store.close()


@pytest.mark.parametrize("mode", ["ripple", "seeds", "ripple-paper", "seeds+contiguity+focus"])
def test_recall_from_the_arrays_is_recall_from_sql(sample_store: Path, mode: str, monkeypatch) -> None:
    memory = Memory(sample_store, read_only=True, create=False)
    results = {}
    for source in ("arrays", "sql"):
        if source == "sql":
            monkeypatch.setattr(Store, "recall_arrays", lambda self: None)
        results[source] = []
        for question in QUESTIONS:
            memory._recaller = Recaller(memory.store, lambda: memory.encoder, on_demand="always")
            result = memory.recall(question, k=10, mode=mode, as_of=AS_OF, answer="none")
            assert memory._recaller._index.lazy
            results[source].append((repr(result.evidence), repr(result.trace)))
    assert results["arrays"] == results["sql"]
    memory.close()


def test_an_ask_on_current_arrays_reads_no_cue_table(sample_store: Path, monkeypatch) -> None:
    def no_sql(*args, **kwargs):
        raise AssertionError("an ask on current arrays must not read the cue tables by SQL")

    for name in ("cues_of", "cue_sets_of", "holders_of", "contiguity_of", "memory_rows_of", "forms_of"):
        monkeypatch.setattr(SqlReads, name, no_sql)
    memory = Memory(sample_store, read_only=True, create=False)
    result = memory.recall(QUESTIONS[0], k=10, as_of=AS_OF, answer="none")
    assert result.evidence and isinstance(memory._recaller._index.reads, RecallArrays)
    memory.close()


def test_arrays_are_used_only_while_they_hold_the_committed_memories(fake_memory: Memory) -> None:
    fake_memory.ingest(SAMPLE_CHATS / "dinner.json")
    assert fake_memory.store.recall_arrays() is None  # committed past them: SQL until the writer closes
    fake_memory.close()
    memory = Memory(fake_memory.path)
    arrays = memory.store.recall_arrays()
    assert arrays is not None and arrays.count == memory.store.count("memories")
    memory.remember(NewTurn("Alex", "The Harbor Grill closed for good in May.", AS_OF), conversation="news")
    assert memory.store.recall_arrays() is None
    result = memory.recall("Harbor Grill closed for good", k=5, mode="seeds", as_of=AS_OF, answer="none")
    assert "closed for good" in result.evidence[0].restatement  # read by SQL meanwhile
    memory.close()
    reopened = opened_read_only(fake_memory.path)
    assert reopened.recall_arrays().count == arrays.count + 1  # type: ignore[union-attr]
    reopened.close()


def test_forgotten_text_leaves_the_arrays(sample_store: Path) -> None:
    memory = Memory(sample_store)
    memory.remember(NewTurn("Alex", "The zanzibarquux code is 4417.", AS_OF), conversation="secret")
    memory.close()
    assert any(b"zanzibarquux" in p.read_bytes() for p in (sample_store / RECALL_DIR).iterdir())
    memory = Memory(sample_store)
    memory.forget(conversation="secret")
    memory.close()
    assert not any(b"zanzibarquux" in p.read_bytes() for p in (sample_store / RECALL_DIR).iterdir())


def test_damaged_arrays_fall_back_to_sql_and_the_next_writer_rebuilds_them(sample_store: Path) -> None:
    (sample_store / RECALL_DIR / "recall.bin").write_bytes(b"not the arrays")
    store = opened_read_only(sample_store)
    assert store.recall_arrays() is None
    index = RecallIndex.open(store)
    assert isinstance(index.reads, SqlReads) and index.texts.get(1)
    store.close()
    Store.open(sample_store, create=False).close()
    store = opened_read_only(sample_store)
    assert store.recall_arrays() is not None
    store.close()


def test_an_empty_store_saves_empty_arrays(tmp_path: Path) -> None:
    Store.open(tmp_path / "empty").close()
    store = opened_read_only(tmp_path / "empty")
    arrays = store.recall_arrays()
    assert arrays is not None and arrays.count == 0
    assert arrays.restatements_of([1]) == {} and arrays.holders_of("memory_cues", ["x"]) == {}
    assert (
        arrays.said_within(datetime(1, 1, 1), datetime(9999, 1, 1)) == [] and arrays.cue_values("memory_persons") == []
    )
    store.close()


def test_strings_find_bisects_by_code_point() -> None:
    values = sorted(["", "a", "ab", "b", "é", "z", "ß", "中", "\U0001f600"])
    strings = Strings(*Strings.pack(values))
    assert [strings[i] for i in range(len(strings))] == values
    assert all(strings.find(value) == i for i, value in enumerate(values))
    assert strings.find("aa") == -1 and strings.find("\U0001f601") == -1
    assert Strings(*Strings.pack([])).find("a") == -1
