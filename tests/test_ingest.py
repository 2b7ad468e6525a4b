"""The write phase through the API with the fake encoder and a trivial extractor: idempotence, appends, atomicity."""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta
from pathlib import Path
from typing import ClassVar

import pytest

from ripplecli.api import Memory
from ripplecli.cues import canonical_name, content_tokens
from ripplecli.errors import InputError
from ripplecli.graph.build import GraphBuilder
from ripplecli.model import MemoryDraft, Window, WindowTurn

TABLES = (
    "conversations",
    "sources",
    "memories",
    "provenance",
    "vectors",
    "memory_persons",
    "memory_locations",
    "memory_cues",
    "cue_forms",
    "edges",
    "ingest_runs",
    "failures",
)
_CAPITAL = re.compile(r"\b(in|at)?\s*([A-Z][a-z]+)")


class FakeExtractor:
    """One draft per non-context turn with cues read off capitals, so write-phase tests need no spaCy."""

    name = "fake"

    def extract(self, window: Window) -> list[MemoryDraft]:
        """Drafts for the turns this window owns."""
        return [self.draft(placed) for placed in window.turns if not placed.is_context]

    @staticmethod
    def draft(placed: WindowTurn) -> MemoryDraft:
        """Speaker and capitalised words as persons, capitalised words after in/at as locations."""
        turn = placed.turn
        found = _CAPITAL.findall(turn.text)[1:]  # the first capital starts the sentence
        persons = [canonical_name(turn.speaker)] + [canonical_name(w) for prep, w in found if not prep]
        locations = [canonical_name(w) for prep, w in found if prep]
        day = placed.timestamp.replace(hour=0, minute=0, second=0) if placed.timestamp else None
        concepts = content_tokens(turn.text)[:4]
        return MemoryDraft(
            restatement=f"{turn.speaker}: {turn.text}",
            source_turns=[turn.turn_id],
            persons=list(dict.fromkeys(persons)),
            locations=list(dict.fromkeys(locations)),
            time_start=day,
            time_end=day + timedelta(hours=23, minutes=59, seconds=59) if day else None,
            concepts=concepts,
            concept_forms={c: [c] for c in concepts},
            extractor="fake",
        )


def use_fake_extractor(monkeypatch: pytest.MonkeyPatch) -> type[FakeExtractor]:
    """Serve FakeExtractor under the default extractor name (other test modules call this from their fixture)."""
    from ripplecli.extract.base import EXTRACTORS

    monkeypatch.setitem(EXTRACTORS, "rules", f"{__name__}:FakeExtractor")
    return FakeExtractor


@pytest.fixture
def fake_extractor(monkeypatch: pytest.MonkeyPatch) -> type[FakeExtractor]:
    """The fake extractor for this module's tests."""
    return use_fake_extractor(monkeypatch)


def new_memory(path: Path, settings) -> Memory:
    """An empty store configured for the fake encoder."""
    memory = Memory(path)
    memory.configure(settings)
    return memory


def counts(memory: Memory) -> dict[str, int]:
    """Row count of every table: the fingerprint of a store's state."""
    return {table: memory.store.count(table) for table in TABLES}


def session(number: int, turns: list[tuple[str, str]], day: datetime | None = None) -> dict:
    """A native-format session with explicit turn ids."""
    when = day or datetime(2023, 5, number, 18, 0)
    return {
        "id": f"s{number}",
        "timestamp": when.isoformat(),
        "turns": [{"id": f"D{number}:{i}", "speaker": s, "text": t} for i, (s, t) in enumerate(turns, start=1)],
    }


CHAT_1 = [
    ("Ana", "I went hiking with Maya in Denver yesterday."),
    ("Ben", "Nice, how was the weather up there?"),
    ("Ana", "Cold but sunny, Maya loved it."),
]
CHAT_2 = [
    ("Ben", "My sister Lena starts her new job on Monday."),
    ("Ana", "Tell Lena good luck from me!"),
    ("Ben", "Will do, she is nervous about the commute to Boulder."),
    ("Ana", "Boulder is not far, she will be fine."),
]
CHAT_3 = [("Ana", "Maya and I booked a cabin in Aspen for June."), ("Ben", "Aspen in June sounds lovely.")]


def write_chat(path: Path, sessions: list[dict], conversation_id: str = "ana-ben") -> Path:
    """A native chat file."""
    path.write_text(json.dumps({"conversation_id": conversation_id, "sessions": sessions}), encoding="utf-8")
    return path


def write_two_conversations(path: Path) -> Path:
    """One file holding two conversations (two write batches)."""
    documents = [
        {"conversation_id": "first", "sessions": [session(1, CHAT_1), session(2, CHAT_2)]},
        {"conversation_id": "second", "sessions": [session(1, CHAT_3), session(2, CHAT_1)]},
    ]
    path.write_text(json.dumps(documents), encoding="utf-8")
    return path


def test_ingest_writes_one_memory_per_turn_with_provenance(tmp_path, fake_settings, fake_extractor):
    chat = write_chat(tmp_path / "chat.json", [session(1, CHAT_1), session(2, CHAT_2)])
    with new_memory(tmp_path / "store", fake_settings) as memory:
        report = memory.ingest(chat)
        assert (report.new_sources, report.memories, report.duplicates) == (7, 7, 0)
        assert counts(memory)["provenance"] == 7
        rows = memory.store.con.execute(
            "SELECT m.restatement, s.text FROM memories m JOIN provenance p USING (memory_id) "
            "JOIN sources s USING (source_id) ORDER BY memory_id"
        ).fetchall()
        assert all(restatement.endswith(text) for restatement, text in rows)
        assert memory.store.get_meta("encoder_name") == "fake-bow"


def test_reingest_same_file_adds_nothing(tmp_path, fake_settings, fake_extractor):
    chat = write_chat(tmp_path / "chat.json", [session(1, CHAT_1), session(2, CHAT_2)])
    with new_memory(tmp_path / "store", fake_settings) as memory:
        memory.ingest(chat)
        before = counts(memory)
        again = memory.ingest(chat)
        after = counts(memory)
    assert (again.new_sources, again.memories, again.edges, again.duplicates) == (0, 0, {}, 7)
    assert after == {**before, "ingest_runs": before["ingest_runs"] + 1}


def test_extra_session_appends_only_its_turns(tmp_path, fake_settings, fake_extractor):
    first = write_chat(tmp_path / "a.json", [session(1, CHAT_1)])
    longer = write_chat(tmp_path / "b.json", [session(1, CHAT_1), session(2, CHAT_2)])
    with new_memory(tmp_path / "store", fake_settings) as memory:
        memory.ingest(first)
        report = memory.ingest(longer)
        assert (report.new_sources, report.memories, report.duplicates) == (4, 4, 3)
        new_turns = memory.store.con.execute(
            "SELECT turn_id, position FROM sources WHERE run_id = ? ORDER BY position", [report.run_id]
        ).fetchall()
    assert new_turns == [("D2:1", 3), ("D2:2", 4), ("D2:3", 5), ("D2:4", 6)]


def test_turns_appended_to_a_stored_session_continue_its_contiguity(tmp_path, fake_settings, fake_extractor):
    first = write_chat(tmp_path / "a.json", [session(1, CHAT_1[:2])])
    longer = write_chat(tmp_path / "b.json", [session(1, CHAT_1)])
    with new_memory(tmp_path / "store", fake_settings) as memory:
        memory.ingest(first)
        memory.ingest(longer)
        chain = memory.store.con.execute(
            "SELECT src, dst FROM edges WHERE channel = 'contiguity' ORDER BY dst"
        ).fetchall()
    assert chain == [(1, 2), (2, 3)]


def test_changed_turn_content_is_refused_and_nothing_written(tmp_path, fake_settings, fake_extractor):
    chat = write_chat(tmp_path / "chat.json", [session(1, CHAT_1)])
    edited = [(speaker, text) for speaker, text in CHAT_1]
    edited[1] = ("Ben", "Nice, was it raining?")
    changed = write_chat(tmp_path / "changed.json", [session(1, edited), session(2, CHAT_2)])
    with new_memory(tmp_path / "store", fake_settings) as memory:
        memory.ingest(chat)
        before = counts(memory)
        with pytest.raises(InputError, match=r"^changed\.json: conversation ana-ben: turn D1:2 is already stored"):
            memory.ingest(changed)
        assert counts(memory) == before


@pytest.mark.parametrize("target", ["graph", "insert"])
def test_failure_mid_ingest_keeps_the_last_committed_batch(tmp_path, fake_settings, fake_extractor, target):
    chat = write_two_conversations(tmp_path / "two.json")
    with new_memory(tmp_path / "clean", fake_settings) as memory:
        memory.ingest(chat)
        uninterrupted = counts(memory)
    snapshot: dict[str, int] = {}
    with new_memory(tmp_path / "store", fake_settings) as memory, pytest.MonkeyPatch.context() as patch:
        _fail_on_second_batch(patch, memory, target, snapshot)
        with pytest.raises(RuntimeError, match="injected"):
            memory.ingest(chat)
        patch.undo()
        assert snapshot and counts(memory) == snapshot
        assert snapshot["sources"] == 7 and snapshot["ingest_runs"] == 0
    with Memory(tmp_path / "store") as memory:
        assert memory.store.vector_index().count == snapshot["vectors"]
        memory.ingest(chat)
        assert counts(memory) == uninterrupted
        assert memory.store.vector_index().count == uninterrupted["vectors"]


def _fail_on_second_batch(patch, memory: Memory, target: str, snapshot: dict[str, int]) -> None:
    """Raise in the graph builder, or in the edge insert inside the transaction, of the second conversation."""
    calls = {"n": 0}
    real_build = GraphBuilder.build
    real_insert = memory.store.insert

    def build(self, new, *args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 2:
            snapshot.update(counts(memory))
            if target == "graph":
                raise RuntimeError("injected graph failure")
        return real_build(self, new, *args, **kwargs)

    def insert(table, rows, **kwargs):
        if table == "edges" and calls["n"] == 2:
            raise RuntimeError("injected insert failure")
        return real_insert(table, rows, **kwargs)

    patch.setattr(GraphBuilder, "build", build)
    if target == "insert":
        patch.setattr(memory.store, "insert", insert)


def test_ingest_run_is_recorded_with_its_counts(tmp_path, fake_settings, fake_extractor):
    chat = write_chat(tmp_path / "chat.json", [session(1, CHAT_1), session(2, CHAT_2)])
    with new_memory(tmp_path / "store", fake_settings) as memory:
        report = memory.ingest(chat)
        memory.ingest(chat)
        rows = memory.store.con.execute(
            "SELECT run_id, file, file_hash, new_sources, duplicates, memories, edges, failures, status "
            "FROM ingest_runs ORDER BY run_id"
        ).fetchall()
    assert len(rows) == 2
    run_id, file, digest, new_sources, duplicates, memories, edges, failures, status = rows[0]
    assert (run_id, file, new_sources, duplicates, memories, failures, status) == (1, str(chat), 7, 0, 7, 0, "done")
    assert len(digest) == 64 and json.loads(edges) == report.edges and report.edges["contiguity"] == 5
    assert rows[1][3:6] == (0, 7, 0)


def test_ingest_conversations_api_and_progress(tmp_path, fake_settings, fake_extractor):
    from ripplecli.formats import read_conversations

    chat = write_two_conversations(tmp_path / "two.json")
    seen: list[tuple[int, int]] = []
    with new_memory(tmp_path / "store", fake_settings) as memory:
        report = memory.ingest_conversations(read_conversations(chat), progress=lambda d, t: seen.append((d, t)))
    assert report.conversations == 2 and report.memories == 12
    assert seen == [(0, 12), (7, 12), (12, 12)]


def test_settings_are_fixed_once_memories_exist(tmp_path, fake_settings, fake_extractor):
    from ripplecli.errors import StoreError

    chat = write_chat(tmp_path / "chat.json", [session(1, CHAT_1)])
    with new_memory(tmp_path / "store", fake_settings) as memory:
        memory.ingest(chat)
        with pytest.raises(StoreError, match="settings are fixed"):
            memory.configure(fake_settings)
    with Memory(tmp_path / "store") as memory:
        assert memory.settings.encoder_backend == "fake"


class SpeakerRecorder(FakeExtractor):
    """Remembers the speakers each window was given."""

    seen: ClassVar[list[list[str]]] = []

    def extract(self, window: Window) -> list[MemoryDraft]:
        """Record, then extract as the fake does."""
        SpeakerRecorder.seen.append(list(window.speakers))
        return super().extract(window)


def test_appended_turns_keep_every_speaker_of_the_conversation(tmp_path, fake_settings, monkeypatch):
    from ripplecli.extract.base import EXTRACTORS

    monkeypatch.setitem(EXTRACTORS, "rules", f"{__name__}:SpeakerRecorder")
    SpeakerRecorder.seen = []
    first = write_chat(tmp_path / "a.json", [session(1, CHAT_1)])
    later = write_chat(tmp_path / "b.json", [session(2, [("Ana", "Still thinking about Denver."), ("Cy", "Hi all!")])])
    with new_memory(tmp_path / "store", fake_settings) as memory:
        memory.ingest(first)
        memory.ingest(later)
        (speakers,) = memory.store.con.execute("SELECT speakers FROM conversations").fetchone()
    assert speakers == ["Ana", "Ben", "Cy"]
    assert SpeakerRecorder.seen == [["Ana", "Ben"], ["Ana", "Ben", "Cy"]]
