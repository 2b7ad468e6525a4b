"""A one-shot ask reads only what its question touches (the on-demand recall index), with the same results."""

from __future__ import annotations

import subprocess
import sys
from datetime import datetime

import pytest
from conftest import SAMPLE_CHATS

from ripplecli.api import Memory, NewTurn
from ripplecli.recall.index import RecallIndex, StoreMap
from ripplecli.recall.pipeline import Recaller

QUESTIONS = [
    "Should Alex take Maya to Harbor Grill?",
    "Why is Jordan running the Lakeshore 10K?",
    "What did Nora decide about the apartment?",
    "Where did Alex and Maya go in April 2026?",
    "What did Sam say about the marina?",
]
AS_OF = datetime(2026, 6, 1)


@pytest.fixture
def memory(fake_memory: Memory) -> Memory:
    """The sample chats in a store with the fake encoder and extractor."""
    for path in sorted(SAMPLE_CHATS.glob("*.json")):
        fake_memory.ingest(path)
    return fake_memory


def recall_with(memory: Memory, on_demand: str, question: str, mode: str):
    """One recall through a fresh recaller with the given index policy."""
    memory._recaller = Recaller(memory.store, lambda: memory.encoder, on_demand=on_demand)
    return memory.recall(question, k=10, mode=mode, as_of=AS_OF)


@pytest.mark.parametrize("mode", ["ripple", "seeds", "seeds+contiguity+focus", "ripple-paper", "ripple+sessions"])
def test_on_demand_index_gives_the_same_evidence_and_trace(memory: Memory, mode: str) -> None:
    for question in QUESTIONS:
        whole, on_demand = recall_with(memory, "never", question, mode), recall_with(memory, "always", question, mode)
        assert [e.memory_id for e in on_demand.evidence] == [e.memory_id for e in whole.evidence]
        assert repr(on_demand.evidence) == repr(whole.evidence)
        assert repr(on_demand.trace) == repr(whole.trace)


def test_an_ask_reads_only_what_its_question_touches(memory: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_whole_load(store):
        raise AssertionError("a one-shot ask must not load the whole recall index")

    monkeypatch.setattr(RecallIndex, "load", classmethod(lambda cls, store: no_whole_load(store)))
    total = memory.store.count("memories")
    recall_with(memory, "first", "Should Alex take Maya to Harbor Grill?", "seeds")
    index = memory._recaller._index
    assert index.lazy and index.count == total
    assert isinstance(index.texts, StoreMap) and 0 < index.texts.fetched < total
    assert isinstance(index.holders, StoreMap) and index.holders.fetched < 10  # the question's cues, not the vocabulary
    assert all(m.queries <= 6 for m in vars(index).values() if isinstance(m, StoreMap))  # batches, not a query per key


def test_a_second_question_in_one_process_loads_the_index_whole(memory: Memory) -> None:
    memory.recall(QUESTIONS[0], k=5)
    assert memory._recaller._index.lazy
    memory.recall(QUESTIONS[1], k=5)
    assert not memory._recaller._index.lazy


def test_a_mode_that_walks_sessions_loads_the_index_whole(memory: Memory) -> None:
    memory.recall(QUESTIONS[0], k=5, mode="ripple+sessions")
    assert not memory._recaller._index.lazy  # its walks cover whole sessions: cheaper from the loaded maps


def test_the_on_demand_index_follows_new_and_forgotten_memories(memory: Memory) -> None:
    recall_with(memory, "always", "Harbor Grill", "seeds")
    recaller, before = memory._recaller, memory._recaller._index
    memory.remember(NewTurn("Alex", "The Harbor Grill closed for good in May.", AS_OF), conversation="news")
    added = memory.recall("Harbor Grill closed for good", k=30, mode="seeds", as_of=AS_OF)
    assert recaller._index is not before and recaller._index.version != before.version
    new = [e.memory_id for e in added.evidence if "closed for good" in e.restatement]
    assert new
    memory.forget(*new)
    memory._recaller = recaller  # forget drops the recaller; keep this one to see that its index is reopened
    gone = memory.recall("Harbor Grill closed for good", k=30, mode="seeds", as_of=AS_OF)
    assert not {e.memory_id for e in gone.evidence} & set(new)
    assert recaller._index.texts.get(new[0]) is None


def test_store_map_fetches_missing_keys_once_in_one_batch() -> None:
    asked: list[list[int]] = []

    def fetch(keys: list[int]) -> dict[int, str]:
        asked.append(keys)
        return {k: str(k) for k in keys if k % 2}

    mapping = StoreMap(fetch)
    mapping.prefetch([1, 2, 3, 3])
    assert asked == [[1, 2, 3]]
    assert mapping.get(1) == "1" and mapping.get(2) is None and 3 in mapping and asked == [[1, 2, 3]]
    assert mapping[5] == "5" and asked[-1] == [5] and mapping.queries == 2
    with pytest.raises(TypeError):
        list(mapping)


def imported_by(code: str) -> set[str]:
    """The ripplecli and rich modules a fresh interpreter has loaded after running `code`."""
    shown = "import sys; print(' '.join(m for m in sys.modules if m.startswith(('ripplecli', 'rich'))))"
    done = subprocess.run([sys.executable, "-c", f"{code}\n{shown}"], capture_output=True, text=True, check=True)
    return set(done.stdout.split())


HELP = (
    "import contextlib, io, ripplecli.cli\n"
    "with contextlib.suppress(SystemExit), contextlib.redirect_stdout(io.StringIO()):\n"
    "    ripplecli.cli.app(['--help'])"
)


def test_help_loads_no_answer_eval_or_render_code() -> None:
    loaded = imported_by(HELP)
    assert "ripplecli.cli.ask" in loaded  # its docstring is the help's line for it
    assert not {m for m in loaded if m.startswith(("ripplecli.answer", "ripplecli.eval", "ripplecli.recall."))} - {
        "ripplecli.recall.modes"  # the mode names for help
    }
    assert not {"ripplecli.cli.render", "rich.progress", "numpy"} & loaded


def test_an_ask_without_an_answer_loads_no_answer_rules() -> None:
    loaded = imported_by("import ripplecli.cli, ripplecli.api, ripplecli.recall.pipeline")
    assert "ripplecli.recall.pipeline" in loaded
    assert not {"ripplecli.answer.typed", "ripplecli.answer.extractive", "ripplecli.answer.spans"} & loaded
