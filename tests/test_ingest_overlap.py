"""Encoding ahead of extraction on a second thread: the store is exactly what one-after-the-other ingest writes."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from chats import new_memory, write_two_conversations
from conftest import SAMPLE_CHATS, FakeEncoder, FakeExtractor

import ripplecli.ingest
from ripplecli.api import Memory
from ripplecli.model import Window

# Every table a write touches, each in a fixed order, without the columns that record when.
CONTENT = {
    "conversations": "SELECT conversation_id, speakers, title FROM conversations ORDER BY 1",
    "sources": "SELECT * EXCLUDE (run_id) FROM sources ORDER BY source_id",
    "memories": "SELECT * EXCLUDE (created, run_id) FROM memories ORDER BY memory_id",
    "provenance": "SELECT * FROM provenance ORDER BY ALL",
    "vectors": "SELECT * FROM vectors ORDER BY memory_id",
    "memory_persons": "SELECT * FROM memory_persons ORDER BY ALL",
    "memory_locations": "SELECT * FROM memory_locations ORDER BY ALL",
    "memory_cues": "SELECT * FROM memory_cues ORDER BY ALL",
    "cue_forms": "SELECT * FROM cue_forms ORDER BY ALL",
    "edges": "SELECT * FROM edges ORDER BY ALL",
}


def content(memory: Memory) -> dict[str, list[tuple]]:
    """What a store holds, table by table."""
    return {table: memory.store.con.execute(sql).fetchall() for table, sql in CONTENT.items()}


class ForeseeingExtractor(FakeExtractor):
    """The fake extractor, also telling its restatements before extracting, as the rules one does."""

    def restatements(self, windows: Sequence[Window]) -> list[str]:
        """The fake's restatement of every turn a window owns."""
        return [self.draft(p).restatement for w in windows for p in w.turns if not p.is_context]


class MisforeseeingExtractor(FakeExtractor):
    """Foresees restatements the drafts then do not have: their vectors must not be used."""

    def restatements(self, windows: Sequence[Window]) -> list[str]:
        """Not what it will write."""
        return [f"guess {p.turn.text}" for w in windows for p in w.turns if not p.is_context]


class ThreadRecorder(FakeEncoder):
    """The fake encoder, noting which thread encoded which texts."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[tuple[str, list[str]]] = []

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Record, then encode."""
        self.calls.append((threading.current_thread().name, list(texts)))
        return super().encode(texts)


class SharingRecorder(ThreadRecorder):
    """An encoder that can share the cores: notes whether the ingest's own thread was busy at each call."""

    def __init__(self) -> None:
        super().__init__()
        self.caller_busy: list[bool] = []
        self.waits: list[bool] = []

    def encode_sharing(self, texts: Sequence[str], others_busy: threading.Event) -> np.ndarray:
        """Record the flag as the batch starts, wait to see it cleared (the ingest waits for these vectors)."""
        self.caller_busy.append(others_busy.is_set())
        self.waits.append(not others_busy.is_set() or _cleared(others_busy))
        return self.encode(texts)


def _cleared(flag: threading.Event, seconds: float = 60.0) -> bool:
    """Whether `flag` is cleared within `seconds`."""
    import time

    deadline = time.monotonic() + seconds
    while flag.is_set() and time.monotonic() < deadline:
        time.sleep(0.005)
    return not flag.is_set()


def build(folder: Path, chat: Path, settings, extractor: type, monkeypatch) -> tuple[dict, ThreadRecorder]:
    """A store of `chat` ingested with `extractor` (batches of 3 turns), its content and the encoder's calls."""
    from ripplecli.registry import EXTRACTORS

    monkeypatch.setitem(EXTRACTORS, "rules", f"{__name__}:{extractor.__name__}")
    monkeypatch.setattr(ripplecli.ingest, "BATCH_TURNS", 3)
    encoder = ThreadRecorder()
    with new_memory(folder, settings) as memory:
        memory.encoder = encoder
        memory.ingest(chat)
        return content(memory), encoder


def test_encoding_ahead_writes_the_store_sequential_ingest_writes(tmp_path, fake_settings, monkeypatch):
    chat = write_two_conversations(tmp_path / "two.json")
    sequential, plain = build(tmp_path / "seq", chat, fake_settings, FakeExtractor, monkeypatch)
    ahead, early = build(tmp_path / "ahead", chat, fake_settings, ForeseeingExtractor, monkeypatch)
    assert ahead == sequential
    assert len(sequential["memories"]) == 12  # two conversations, four batches of at most 3 turns
    assert {name for name, _ in plain.calls} == {threading.main_thread().name}
    assert all(name.startswith("ripple-encode") for name, _ in early.calls)
    assert [texts for _, texts in early.calls] == [texts for _, texts in plain.calls]  # each batch once


def test_an_encoder_that_shares_the_cores_is_told_when_the_ingest_only_waits(tmp_path, fake_settings, monkeypatch):
    from ripplecli.registry import EXTRACTORS

    chat = write_two_conversations(tmp_path / "two.json")
    sequential, _ = build(tmp_path / "seq", chat, fake_settings, FakeExtractor, monkeypatch)  # batches of 3 turns
    monkeypatch.setitem(EXTRACTORS, "rules", f"{__name__}:ForeseeingExtractor")
    encoder = SharingRecorder()
    with new_memory(tmp_path / "sharing", fake_settings) as memory:
        memory.encoder = encoder
        memory.ingest(chat)
        assert content(memory) == sequential
    assert encoder.calls and all(name.startswith("ripple-encode") for name, _ in encoder.calls)
    assert all(encoder.waits)  # every batch saw the ingest's thread go from parsing to waiting


def test_wrongly_foreseen_restatements_are_encoded_again(tmp_path, fake_settings, monkeypatch):
    chat = write_two_conversations(tmp_path / "two.json")
    sequential, _ = build(tmp_path / "seq", chat, fake_settings, FakeExtractor, monkeypatch)
    misread, encoder = build(tmp_path / "mis", chat, fake_settings, MisforeseeingExtractor, monkeypatch)
    assert misread == sequential
    redone = [texts for name, texts in encoder.calls if name == threading.main_thread().name]
    assert redone and all(not text.startswith("guess") for texts in redone for text in texts)


def test_an_encoder_failure_ahead_fails_the_ingest_and_writes_nothing(tmp_path, fake_settings, monkeypatch):
    from ripplecli.registry import EXTRACTORS

    monkeypatch.setitem(EXTRACTORS, "rules", f"{__name__}:ForeseeingExtractor")
    chat = write_two_conversations(tmp_path / "two.json")

    class Broken(FakeEncoder):
        def encode(self, texts):
            raise RuntimeError("encoder broke")

    with new_memory(tmp_path / "store", fake_settings) as memory:
        memory.encoder = Broken()
        with pytest.raises(RuntimeError, match="encoder broke"):
            memory.ingest(chat)
        assert memory.store.count("memories") == 0 and memory.store.count("sources") == 0


@pytest.mark.slow
def test_rules_extractor_foresees_its_restatements_and_the_real_store_is_unchanged(tmp_path, monkeypatch):
    """Real spaCy and MiniLM: the sample chats ingested with and without encoding ahead give the same store."""
    from ripplecli.extract.rules import RulesExtractor
    from ripplecli.extract.windows import make_windows
    from ripplecli.formats import read_conversations

    windows = [w for chat in SAMPLE_CHATS.glob("*.json") for c in read_conversations(chat) for w in make_windows(c)]
    extractor = RulesExtractor()
    assert extractor.restatements(windows) == [d.restatement for per in extractor.extract_many(windows) for d in per]
    stores = {}
    for overlap in (True, False):
        if not overlap:  # an extractor that cannot foresee (the model one) is encoded after extraction
            monkeypatch.delattr(RulesExtractor, "restatements")
        with Memory(tmp_path / f"store-{overlap}") as memory:
            for chat in sorted(SAMPLE_CHATS.glob("*.json")):
                memory.ingest(chat)
            stores[overlap] = content(memory)
    assert stores[True] == stores[False]
    assert len(stores[True]["memories"]) > 20
