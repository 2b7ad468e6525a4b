"""The write phase through the API with the fake encoder and a trivial extractor: idempotence, appends, atomicity."""

from __future__ import annotations

import json
from typing import ClassVar

import pytest
from chats import CHAT_1, CHAT_2, counts, new_memory, session, write_chat, write_two_conversations
from conftest import FakeExtractor

from ripplecli.api import Memory
from ripplecli.errors import InputError
from ripplecli.graph.build import GraphBuilder
from ripplecli.model import MemoryDraft, Window


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
    real_add_edges = memory.store.add_edges

    def build(self, new, *args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 2:
            snapshot.update(counts(memory))
            if target == "graph":
                raise RuntimeError("injected graph failure")
        return real_build(self, new, *args, **kwargs)

    def add_edges(edges, *args, **kwargs):
        if calls["n"] == 2:
            raise RuntimeError("injected insert failure")
        return real_add_edges(edges, *args, **kwargs)

    patch.setattr(GraphBuilder, "build", build)
    if target == "insert":
        patch.setattr(memory.store, "add_edges", add_edges)


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
    from ripplecli.registry import EXTRACTORS

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
