"""The write phase: formats -> windows -> extractor -> encoder -> store + graph, one transaction per conversation
(per batch of BATCH_TURNS turns for a long one)."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

from ripplecli.config import Settings
from ripplecli.cues import canonical_name
from ripplecli.early_encoding import EarlyEncoder, EncodingAhead
from ripplecli.errors import InputError
from ripplecli.graph.build import GraphBuilder, MemoryCues
from ripplecli.model import Conversation, IngestReport, MemoryDraft, NewMemory, PendingTurn, Session, Turn, Window
from ripplecli.owner import ASSISTANT, OWNER, default_owner_name, owner_speaker, with_owner
from ripplecli.store import queries
from ripplecli.store.db import Store

Progress = Callable[[int, int], None]

# A conversation's new turns are written in batches of at most this many, each in its own transaction: a batch's
# graph candidates (nearest vectors, cue holders) are searched among the batch too, so a 10,000-message export in
# one batch cost quadratically more per turn than a LoCoMo conversation (300-700 turns) does.
BATCH_TURNS = 500
# Encode a batch's restatements on a second thread while the extractor parses it (ripplecli/early_encoding.py);
# bench/ingest.py --sequential turns it off to measure what it saves.
ENCODE_AHEAD = True


def turn_hash(conversation_id: str, session: Session, turn: Turn) -> str:
    """Identity of a raw turn: re-ingesting the same turn is recognised and skipped. A turn with its own time
    (an export's message) is who said what under its id; its session's start is left out, because a newer export
    of the same day may start earlier or later. An owner's turn is identified by its role, not the name it is
    stored under, so renaming `me` between two exports does not make the same message new."""
    speaker = "\x00owner" if turn.role == OWNER else turn.speaker
    if turn.said_at is not None:
        payload = "\x1f".join(["said", conversation_id, session.session_id, turn.turn_id, speaker, turn.text])
    else:
        stamp = session.timestamp.isoformat() if session.timestamp else ""
        payload = "\x1f".join([conversation_id, session.session_id, turn.turn_id, speaker, turn.text, stamp])
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def _unnamed_assistant(conversation_id: str, session: Session, turn: Turn) -> str | None:
    """The identity an assistant's turn had when ChatGPT and Claude exports stored their assistant as `assistant`,
    so re-ingesting such an export into an older store is not taken for an edit of every reply."""
    if turn.role != ASSISTANT or turn.speaker == ASSISTANT:
        return None
    return turn_hash(conversation_id, session, replace(turn, speaker=ASSISTANT))


def file_hash(path: Path) -> str:
    """Content hash of an ingested file (for an export folder, of the chat files in it that ripple reads, in path
    order: not its photos and videos), recorded with its run."""
    from ripplecli.formats.load import is_chat_member

    digest = hashlib.sha256()
    files = [path]
    if path.is_dir():
        files = sorted(p for p in path.rglob("*") if p.is_file() and is_chat_member(p.relative_to(path).as_posix()))
    for file in files:
        digest.update(file.relative_to(path).as_posix().encode() if file != path else b"")
        with file.open("rb") as handle:
            for block in iter(lambda handle=handle: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()


def _starts(pending: list[PendingTurn]) -> range:
    """Where each batch of a conversation's new turns begins."""
    return range(0, len(pending), BATCH_TURNS)


def new_windows(
    conv: Conversation, pending: list[PendingTurn], speakers: list[str], known: list[str], settings: Settings
) -> list[Window]:
    """The extraction windows over a batch of new turns, in their sessions, each knowing every speaker of the chat."""
    from ripplecli.extract.windows import make_windows

    new_sessions: dict[str, Session] = {}
    for p in pending:
        session = new_sessions.setdefault(p.session.session_id, Session(p.session.session_id, p.session.timestamp, []))
        session.turns.append(p.turn)
    fresh = Conversation(conv.conversation_id, list(new_sessions.values()), conv.title)
    return list(make_windows(fresh, settings.window_turns, settings.window_overlap, known, speakers=speakers))


class Ingestor:
    """Runs the write phase against one open store."""

    def __init__(
        self,
        store: Store,
        settings: Settings,
        encoder,
        extractor,
        progress: Progress | None = None,
        linker=None,
        owner: str | None = None,
    ):
        self.store = store
        self.owner = owner  # the name the owner's turns are stored under (None: the name the export gives them)
        self.linker = linker  # CABLE (ripplecli.graph.cable), run after each batch is committed
        self.settings = settings
        self.encoder = encoder
        self.extractor = extractor
        self.progress = progress or (lambda done, total: None)
        self.graph = GraphBuilder(store, settings.graph)
        self._persons: dict[str, None] | None = None  # persons in the store, read once, extended after each batch

    def ingest(self, conversations: Sequence[Conversation], label: str, content_hash: str) -> IngestReport:
        """Ingest parsed conversations; every check runs before the first write."""
        started = time.perf_counter()
        report = IngestReport(file=label, conversations=len(conversations))
        report.skipped = sum(conv.skipped for conv in conversations)
        if owner_speaker(conversations) is not None:
            report.owner = self.owner or default_owner_name(conversations)
            conversations = [with_owner(c, report.owner) for c in conversations]
        conversations = [self._as_stored(conv) for conv in conversations]
        plans = [(conv, self._pending(conv, Path(label).name, report)) for conv in conversations]
        total = sum(len(p) for _, p in plans)
        report.duplicates = sum(c.turn_count for c, _ in plans) - total - report.edited if plans else 0
        report.run_id = self.store.next_id("ingest_runs", "run_id")
        batches = [(conv, pending[at : at + BATCH_TURNS]) for conv, pending in plans for at in _starts(pending)]
        done = 0
        self.progress(0, total)
        with EarlyEncoder(self.encoder, self.extractor, enabled=ENCODE_AHEAD) as early:
            ahead = {0: self._encode_ahead(early, *batches[0])} if batches else {}
            for number, (conv, batch) in enumerate(batches):
                if number + 1 < len(batches):  # queued behind this batch's encoding: the encoder never waits
                    ahead[number + 1] = self._encode_ahead(early, *batches[number + 1])
                self._ingest_batch(conv, batch, report, early, ahead.pop(number))
                done += len(batch)
                self.progress(done, total)
        report.seconds = time.perf_counter() - started
        with self.store.transaction():
            self._record_run(report, content_hash)
        if report.memories:
            self.store.refresh_lexical_index()
        return report

    def _as_stored(self, conv: Conversation) -> Conversation:
        """A newer export of a chat that is stored under another id of its family (a WhatsApp export that lost its
        oldest messages names another first message) goes to that conversation: the one of the family that already
        holds the most of its messages. A chat of the same name that shares no message stays a chat of its own."""
        if not conv.same_chat_prefix:
            return conv
        turn_ids = [t.turn_id for s in conv.sessions for t in s.turns]
        holders = [cid for cid, _ in queries.conversations_holding(self.store, conv.same_chat_prefix, turn_ids)]
        if not holders or conv.conversation_id in holders:
            return conv
        return replace(conv, conversation_id=holders[0])

    def _pending(self, conv: Conversation, source: str, report: IngestReport) -> list[PendingTurn]:
        """Turns of `conv` not stored yet. A stored turn id with other content is refused, naming the file; but an
        export's message (it has its own time) edited since it was stored keeps its stored text and is counted as
        `edited`, so one edit does not refuse a whole newer export."""
        flat = [(s, t, turn_hash(conv.conversation_id, s, t)) for s in conv.sessions for t in s.turns]
        stored = queries.turn_hashes(self.store, conv.conversation_id)
        next_position = queries.next_position(self.store, conv.conversation_id)
        pending = []
        for session, turn, digest in flat:
            known = stored.get(turn.turn_id)
            if known == digest or (known and known == _unnamed_assistant(conv.conversation_id, session, turn)):
                continue
            if known is not None and turn.said_at is not None:
                report.edited += 1
                continue
            if known is not None:
                raise InputError(
                    f"{source}: conversation {conv.conversation_id}: turn {turn.turn_id} is already stored with "
                    "different content (forget it first, or give the turn another id)"
                )
            pending.append(PendingTurn(session, turn, next_position + len(pending), digest))
        return pending

    def _encode_ahead(
        self, early: EarlyEncoder, conv: Conversation, pending: list[PendingTurn]
    ) -> EncodingAhead | None:
        """Start encoding a batch's restatements before its extraction (they depend only on turns and speakers)."""
        speakers = self._speakers(conv)
        return early.submit(lambda: new_windows(conv, pending, speakers, speakers, self.settings))

    def _ingest_batch(
        self,
        conv: Conversation,
        pending: list[PendingTurn],
        report: IngestReport,
        early: EarlyEncoder,
        foreseen: EncodingAhead | None,
    ) -> None:
        """Extract, encode, link and write one conversation's new turns in one transaction."""
        speakers = self._speakers(conv)
        drafts = self._extract(conv, pending, speakers)
        vectors = early.vectors(foreseen, [d.restatement for d in drafts])
        first_id = self.store.next_id("memories", "memory_id")
        ids = list(range(first_id, first_id + len(drafts)))
        positions = {p.turn.turn_id: p for p in pending}
        cues = [self._memory_cues(conv, mid, d, positions) for mid, d in zip(ids, drafts, strict=True)]
        index = self.store.vector_index()
        index.add(ids, vectors)
        own = {conv.conversation_id: {canonical_name(s) for s in speakers}}
        try:
            graph = self.graph.build(cues, vectors, index, own)
            failures = self._take_failures()
            with self.store.transaction():
                self._record_conversation(conv, speakers)
                self._write(conv, pending, ids, drafts, vectors, cues, graph.edges, report.run_id)
                self._write_failures(failures, report)
        except BaseException:
            self.store.drop_vector_index()
            raise
        self._stored_persons().update(dict.fromkeys(p for d in drafts for p in d.persons))
        self.store.save_vector_index()
        if self.linker is not None:  # its own transaction: a kill here leaves the batch pending for `link cable`
            linked = self.linker.link(ids, report.run_id)
            report.edges[self.linker.params.channel] = report.edges.get(self.linker.params.channel, 0) + linked.edges
        report.new_sources += len(pending)
        report.memories += len(drafts)
        for channel, count in graph.counts().items():
            report.edges[channel] = report.edges.get(channel, 0) + count

    def _take_failures(self) -> list[dict]:
        """Windows an extractor could not handle itself (an LLM falling back to the rules), to record."""
        from ripplecli.runtime.llm import take_failures

        return take_failures(self.extractor)

    def _write_failures(self, failures: list[dict], report: IngestReport) -> None:
        """Rows of the `failures` table; fallbacks and gate rejections (not trims) count in the report."""
        self.store.add_failures(report.run_id, failures)
        report.failures += sum(f["stage"] == "extract" for f in failures)
        report.rejected += sum(f["stage"] == "extract:gate" for f in failures)

    def _speakers(self, conv: Conversation) -> list[str]:
        """Speakers stored for this conversation, then new ones: a batch of new turns alone may miss some."""
        stored = queries.conversation_speakers(self.store, conv.conversation_id)
        return list(dict.fromkeys([*stored, *conv.speakers]))

    def _record_conversation(self, conv: Conversation, speakers: list[str]) -> None:
        """The conversation row: its speaker list extended with speakers first seen in this batch, its newest title."""
        self.store.upsert_conversation(conv.conversation_id, speakers, conv.title)

    def _extract(self, conv: Conversation, pending: list[PendingTurn], speakers: list[str]) -> list[MemoryDraft]:
        """Run the extractor over windows of the new turns only, each knowing every speaker of the chat."""
        known = list(dict.fromkeys([*speakers, *self._stored_persons()]))  # names spaCy misses are still found
        windows = new_windows(conv, pending, speakers, known, self.settings)
        if hasattr(self.extractor, "extract_many"):
            per_window = self.extractor.extract_many(windows)
        else:
            per_window = [self.extractor.extract(w) for w in windows]
        return [draft for drafts in per_window for draft in drafts]

    def _stored_persons(self) -> dict[str, None]:
        """Persons already in the store (an ordered set), read once per ingest rather than once per conversation."""
        if self._persons is None:
            self._persons = dict.fromkeys(queries.stored_persons(self.store))
        return self._persons

    @staticmethod
    def _memory_cues(conv: Conversation, mid: int, draft: MemoryDraft, positions) -> MemoryCues:
        """Place a draft in its conversation: session and position of its first source turn."""
        first = positions[draft.source_turns[0]]
        return MemoryCues(
            memory_id=mid,
            conversation_id=conv.conversation_id,
            session_id=first.session.session_id,
            position=first.position,
            persons=draft.persons,
            locations=draft.locations,
            time_start=draft.time_start,
            time_end=draft.time_end,
            time_grounded=draft.time_grounded,
        )

    def _write(self, conv, pending, ids, drafts, vectors, cues, edges, run_id) -> None:
        """Store the batch's sources, memories (with provenance and cues), vectors and edges (inside one
        transaction); a memory sits where its first source turn does."""
        source_ids = self.store.add_turns(conv.conversation_id, pending, run_id)
        positions = {p.turn.turn_id: p for p in pending}
        memories = []
        for mid, draft, cue in zip(ids, drafts, cues, strict=True):
            first = positions[draft.source_turns[0]]
            memories.append(
                NewMemory(
                    memory_id=mid,
                    conversation_id=cue.conversation_id,
                    session_id=cue.session_id,
                    position=cue.position,
                    session_ts=first.session.timestamp,
                    said_at=first.said_at,
                    sources=[source_ids[turn_id] for turn_id in draft.source_turns],
                    draft=draft,
                )
            )
        self.store.add_memories(memories, run_id)
        self.store.add_vectors(ids, vectors)
        self.store.bump("vectors")
        self.store.bump("memories")
        self.store.add_edges(edges)

    def _record_run(self, report: IngestReport, content_hash: str) -> None:
        """The ingest_runs row: file, hash, counts, timing."""
        self.store.record_run(report, content_hash)
