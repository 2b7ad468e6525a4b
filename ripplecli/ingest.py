"""The write phase: formats -> windows -> extractor -> encoder -> store + graph, one transaction per conversation
(per batch of BATCH_TURNS turns for a long one)."""

from __future__ import annotations

import hashlib
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path

import numpy as np

from ripplecli.config import Settings
from ripplecli.cues import canonical_name
from ripplecli.early_encoding import EarlyEncoder, EncodingAhead
from ripplecli.errors import InputError
from ripplecli.graph.build import GraphBuilder, MemoryCues
from ripplecli.model import (
    Conversation,
    IngestReport,
    MemoryDraft,
    NewMemory,
    PendingTurn,
    Session,
    Turn,
    Window,
    said_time,
)
from ripplecli.owner import ASSISTANT, OWNER, claim_owner, default_owner_name, owner_speaker, with_owner
from ripplecli.runtime import heap
from ripplecli.store import passages, queries
from ripplecli.store.db import Store
from ripplecli.store.identity import Repeats
from ripplecli.store.passages import Passage

Progress = Callable[[int, int], None]


@dataclass
class FileSummary:
    """What ingest needs of a whole file before it reads it chunk by chunk: how many conversations and turns it
    holds, and the conversations that decide the owner's name (ripplecli.owner; all of them for a file read whole)."""

    conversations: int
    turns: int
    witnesses: list[Conversation]


@dataclass
class _FileState:
    """A file's ingest across its chunks: progress, and which chat each message of the file went to so far."""

    total: int  # turns to write, less the stored ones found so far
    done: int = 0
    planned: dict[int, str] = field(default_factory=dict)  # message key -> the chat of this file it goes to
    claimed: set[int] = field(default_factory=set)  # messages with their own time an earlier chat of this file stores
    saved: float = field(default_factory=time.perf_counter)  # when the vector index was last saved
    unsaved: bool = False  # whether a batch was written since


# A conversation's new turns are written in batches of at most this many, each in its own transaction: a batch's
# graph candidates (nearest vectors, cue holders) are searched among the batch too, so a 10,000-message export in
# one batch cost quadratically more per turn than a LoCoMo conversation (300-700 turns) does.
BATCH_TURNS = 500
# A chat whose id comes from its file's name (a WhatsApp chat, a ChatGPT conversation without its id) joins the
# stored chat that holds the most of its messages when that is at least this many of them (all of them, for a chat
# of fewer): one shared "ok" at the same minute does not make two chats one.
JOIN_SHARED = 3
# Encode a batch's restatements on a second thread while the extractor parses it (ripplecli/early_encoding.py);
# bench/ingest.py --sequential turns it off to measure what it saves.
ENCODE_AHEAD = True
# The vector index is saved whole (an atomic rewrite of every vector) at most this often during an ingest, and at
# its end: saved after every batch, an archive of 20,000 short conversations rewrote a growing index 20,000 times.
# A kill in between costs a rebuild of the index from the committed vectors when the store is next opened.
SAVE_VECTORS_SECONDS = 60.0


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


Keyed = tuple[Conversation, dict[str, int]]  # a chat and its turns' message keys, by turn id


def message_keys(conv: Conversation) -> dict[str, int]:
    """turn id -> the message's identity (ripplecli.store.identity): its said-at time (the message's own, else its
    session's; none for notes, dated by their file), its text and its repeat number in the chat."""
    repeats = Repeats()
    return {
        turn.turn_id: repeats.key(None if conv.keyed_by_text else said_time(turn, session)[0], turn.text)
        for session in conv.sessions
        for turn in session.turns
    }


def _join_target(
    conv: Conversation, keys: dict[str, int], holders: dict[int, set[str]], planned: dict[int, str]
) -> str:
    """The id a chat is stored under: its own, unless the file named it and another chat (stored, or earlier in
    this file) holds JOIN_SHARED of its messages (all of them, when it has fewer) and its own id holds none."""
    own = conv.conversation_id
    if not conv.named_by_file:
        return own
    distinct = set(keys.values())
    shared: Counter[str] = Counter()
    for key in distinct:
        shared.update(holders.get(key, set()) | ({planned[key]} if key in planned else set()))
    if not shared or own in shared:
        return own
    best, count = min(shared.items(), key=lambda item: (-item[1], item[0]))
    return best if count >= min(JOIN_SHARED, len(distinct)) else own


def merged(keyed: list[Keyed]) -> list[Keyed]:
    """Chats under the same id read as one, in order of first appearance: a later one adds the turns the earlier
    ones lack (by message key and by turn id), its sessions merged by id (each keeps its time and offset), the first
    title kept."""
    by_id: dict[str, Keyed] = {}
    for conv, keys in keyed:
        if conv.conversation_id not in by_id:
            by_id[conv.conversation_id] = (conv, dict(keys))
            continue
        first, known = by_id[conv.conversation_id]
        sessions = {s.session_id: replace(s, turns=list(s.turns)) for s in first.sessions}
        seen = set(known.values())
        for session in conv.sessions:
            for turn in session.turns:
                key = keys[turn.turn_id]
                if key in seen or turn.turn_id in known:
                    continue
                sessions.setdefault(session.session_id, replace(session, turns=[]))
                sessions[session.session_id].turns.append(turn)
                known[turn.turn_id] = key
                seen.add(key)
        title = first.title or conv.title
        by_id[conv.conversation_id] = (replace(first, sessions=list(sessions.values()), title=title), known)
    return list(by_id.values())


def _unnamed_assistant(conversation_id: str, session: Session, turn: Turn) -> str | None:
    """The identity an assistant's turn had when ChatGPT and Claude exports stored their assistant as `assistant`,
    so re-ingesting such an export into an older store is not taken for an edit of every reply."""
    if turn.role != ASSISTANT or turn.speaker == ASSISTANT:
        return None
    return turn_hash(conversation_id, session, replace(turn, speaker=ASSISTANT))


def file_hash(path: Path) -> str:
    """Content hash of an ingested file (for an export folder, of the chat files in it that ripple reads, in path
    order, a zip in it too: not its photos and videos), recorded with its run."""
    from ripplecli.formats.bundle import is_read_file

    digest = hashlib.sha256()
    files = [path]
    if path.is_dir():
        files = sorted(p for p in path.rglob("*") if p.is_file() and is_read_file(p.relative_to(path).as_posix()))
    for file in files:
        digest.update(file.relative_to(path).as_posix().encode() if file != path else b"")
        with file.open("rb") as handle:
            for block in iter(partial(handle.read, 1 << 20), b""):
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
        session = new_sessions.setdefault(p.session.session_id, replace(p.session, turns=[]))
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
        default_owner: str | None = None,
    ):
        self.store = store
        self.owner = owner  # the owner's name, given (`me`): their turns are stored under it
        self.default_owner = default_owner  # without `owner`, the name for them (None: the name the export gives)
        # (conversation, turn) -> the name a turn of a chat whose owner `me` named carried before it was the owner's
        self._named_owner: dict[tuple[str, str], str] = {}
        self._by_name: set[str] = set()  # chats whose export names no owner
        self.linker = linker  # CABLE (ripplecli.graph.cable), run after each batch is committed
        self.settings = settings
        self.encoder = encoder
        self.extractor = extractor
        self.progress = progress or (lambda done, total: None)
        self.graph = GraphBuilder(store, settings.graph)
        self._persons: dict[str, None] | None = None  # persons in the store, read once, extended after each batch

    def ingest(self, conversations: Sequence[Conversation], label: str, content_hash: str) -> IngestReport:
        """Ingest parsed conversations; every check runs before the first write."""
        whole = FileSummary(len(conversations), sum(c.turn_count for c in conversations), list(conversations))
        return self.ingest_chunks([conversations], label, content_hash, whole)

    def ingest_chunks(
        self, chunks: Iterable[Sequence[Conversation]], label: str, content_hash: str, whole: FileSummary
    ) -> IngestReport:
        """Ingest a file's conversations a chunk at a time (a big export read record by record), each chunk planned
        as a file of its own would be, batches committed one by one: a rerun after a kill adds only the rest. The
        file was checked whole before (`whole`: its counts, and the conversations that decide the owner's name)."""
        started = time.perf_counter()
        report = IngestReport(file=label, conversations=whole.conversations)
        reasons: Counter[str] = Counter()
        report.run_id = self.store.next_id("ingest_runs", "run_id")
        state = _FileState(total=whole.turns)
        with EarlyEncoder(self.encoder, self.extractor, enabled=ENCODE_AHEAD) as early:
            for conversations in chunks:
                for conv in conversations:
                    reasons.update(conv.skipped)
                self._ingest_chunk(conversations, whole, report, state, early)
        report.skipped, report.skipped_by_reason = sum(reasons.values()), dict(reasons.most_common())
        report.seconds = time.perf_counter() - started
        if state.unsaved:
            self.store.save_vector_index()
        with self.store.transaction():
            self._record_run(report, content_hash)
        if report.memories:
            self.store.refresh_lexical_index()
        return report

    def _ingest_chunk(
        self,
        conversations: Sequence[Conversation],
        whole: FileSummary,
        report: IngestReport,
        state: _FileState,
        early: EarlyEncoder,
    ) -> None:
        """Plan a chunk's conversations (joins, owners, the turns not stored yet), then write them batch by batch."""
        keyed = [(conv, message_keys(conv)) for conv in conversations]
        holders = queries.message_holders(self.store, [key for _, keys in keyed for key in keys.values()])
        # Chats go under the ids they are stored by first, so an owner `me` names is known by the stored id.
        keyed = [(self._claim_owner(conv, report), keys) for conv, keys in self._joined(keyed, holders, state.planned)]
        if owner_speaker([conv for conv, _ in keyed]) is not None:
            report.owner = self.owner or self.default_owner or default_owner_name(whole.witnesses)
            keyed = [(with_owner(conv, report.owner), keys) for conv, keys in keyed]
        edited = report.edited
        label = Path(report.file).name
        plans = [(conv, self._pending(conv, keys, holders, state.claimed, label, report)) for conv, keys in keyed]
        total = sum(len(p) for _, p in plans)
        duplicates = sum(c.turn_count for c in conversations) - total - (report.edited - edited)
        report.duplicates += duplicates
        state.total -= duplicates + report.edited - edited  # what is left to write shrinks as stored turns are found
        batches = [(conv, pending[at : at + BATCH_TURNS]) for conv, pending in plans for at in _starts(pending)]
        self.progress(state.done, state.total)
        ahead = {0: self._encode_ahead(early, *batches[0])} if batches else {}
        for number, (conv, batch) in enumerate(batches):
            if number + 1 < len(batches):  # queued behind this batch's encoding: the encoder never waits
                ahead[number + 1] = self._encode_ahead(early, *batches[number + 1])
            self._ingest_batch(conv, batch, report, early, ahead.pop(number))
            heap.give_back()  # the batch's parses are freed: the next batch's peak starts low
            state.done += len(batch)
            self._save_vectors(state)
            self.progress(state.done, state.total)

    def _save_vectors(self, state: _FileState) -> None:
        """Save the vector index after a batch when SAVE_VECTORS_SECONDS passed since it was saved: a kill before
        the next save leaves the saved index behind the committed vectors, and the next open rebuilds it from them."""
        now = time.perf_counter()
        state.unsaved = now - state.saved < SAVE_VECTORS_SECONDS
        if not state.unsaved:
            self.store.save_vector_index()
            state.saved = now

    def _joined(self, keyed: list[Keyed], holders: dict[int, set[str]], planned: dict[int, str]) -> list[Keyed]:
        """The file's chats under the ids they are stored by: a chat named by its file joins the chat (stored, or
        earlier in this file) that holds enough of its messages, keeping that chat's title; chats that end up
        under one id are read as one. `planned`: message key -> the chat of this file it goes to, so far."""
        resolved: list[Keyed] = []
        for conv, keys in keyed:
            target = _join_target(conv, keys, holders, planned)
            if target != conv.conversation_id:
                conv = replace(conv, conversation_id=target, title=None)
            for key in keys.values():
                planned.setdefault(key, target)
            resolved.append((conv, keys))
        return merged(resolved)

    def _claim_owner(self, conv: Conversation, report: IngestReport) -> Conversation:
        """A chat whose export names no owner takes the person `me` names as its owner; one whose people `me` names
        none of is listed on the report (and stored without an owner)."""
        if not conv.owner_by_name:
            return conv
        self._by_name.add(conv.conversation_id)
        claimed = claim_owner(conv, self.owner)
        if claimed is None:
            report.no_owner.append({"chat": conv.title or conv.conversation_id, "people": conv.speakers})
            return conv
        for session in claimed.sessions:
            for turn in session.turns:
                if turn.role == OWNER:
                    self._named_owner[conv.conversation_id, turn.turn_id] = turn.speaker
        return claimed

    def _as_other_owner(self, conv: Conversation, session: Session, turn: Turn) -> str | None:
        """The identity a turn of a chat whose owner `me` names had if it was stored with another owner (before
        `me` named one, or with `me` naming someone else): the same message, not an edit of it."""
        if conv.conversation_id not in self._by_name:
            return None
        if turn.role != OWNER:
            return turn_hash(conv.conversation_id, session, replace(turn, role=OWNER))
        speaker = self._named_owner.get((conv.conversation_id, turn.turn_id), turn.speaker)
        return turn_hash(conv.conversation_id, session, replace(turn, speaker=speaker, role=""))

    def _pending(
        self,
        conv: Conversation,
        keys: dict[str, int],
        holders: dict[int, set[str]],
        claimed: set[int],
        source: str,
        report: IngestReport,
    ) -> list[PendingTurn]:
        """Turns of `conv` not stored yet. A message stored already is a duplicate whatever file it came in: in
        this chat by its time and text, anywhere in the store when it has its own time (`claimed`: or in a chat
        this file stores first). A stored turn id with other content is refused, naming the file; but an export's
        message (it has its own time) edited since it was stored keeps its stored text and is counted as
        `edited`, so one edit does not refuse a whole newer export."""
        flat = [(s, t, turn_hash(conv.conversation_id, s, t)) for s in conv.sessions for t in s.turns]
        stored = queries.turn_hashes(self.store, conv.conversation_id)
        next_position = queries.next_position(self.store, conv.conversation_id)
        pending: list[PendingTurn] = []
        for session, turn, digest in flat:
            key = keys[turn.turn_id]
            timed = turn.said_at is not None and not conv.keyed_by_text
            if conv.conversation_id in holders.get(key, ()) or (timed and (key in holders or key in claimed)):
                continue
            known = stored.get(turn.turn_id)
            if known == digest or (known and known == _unnamed_assistant(conv.conversation_id, session, turn)):
                continue
            if known is not None and known == self._as_other_owner(conv, session, turn):
                continue
            if known is not None and turn.said_at is not None:
                report.edited += 1
                continue
            if known is not None:
                raise InputError(
                    f"{source}: conversation {conv.conversation_id}: turn {turn.turn_id} is already stored with "
                    "different content (forget it first, or give the turn another id)"
                )
            pending.append(PendingTurn(session, turn, next_position + len(pending), digest, key))
            if timed:
                claimed.add(key)
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
        long, passage_vectors = self._passages(ids, drafts)
        own = {conv.conversation_id: {canonical_name(s) for s in speakers}}
        try:
            graph = self.graph.build(cues, vectors, index, own)
            failures = self._take_failures()
            with self.store.transaction():
                self._record_conversation(conv, speakers)
                self._write(conv, pending, ids, drafts, vectors, cues, graph.edges, report.run_id)
                self.store.add_passages(long, passage_vectors)
                self._write_failures(failures, report)
        except BaseException:
            self.store.drop_vector_index()
            raise
        self._stored_persons().update(dict.fromkeys(p for d in drafts for p in d.persons))
        if self.linker is not None:  # its own transaction: a kill here leaves the batch pending for `link cable`
            linked = self.linker.link(ids, report.run_id)
            report.edges[self.linker.params.channel] = report.edges.get(self.linker.params.channel, 0) + linked.edges
        report.new_sources += len(pending)
        report.memories += len(drafts)
        for channel, count in graph.counts().items():
            report.edges[channel] = report.edges.get(channel, 0) + count

    def _passages(self, ids: list[int], drafts: list[MemoryDraft]) -> tuple[list[tuple[int, Passage]], np.ndarray]:
        """The later passages of the batch's long memories, encoded and added to the passage index (store/passages):
        the encoder reads a memory's first ~190 words only."""
        long = passages.cut_all((mid, d.restatement) for mid, d in zip(ids, drafts, strict=True))
        if not long:
            return [], np.zeros((0, self.store.encoder_dim), dtype=np.float32)
        vectors = np.asarray(self.encoder.encode([p.text for _, p in long]), dtype=np.float32)
        self.store.passage_index().add([passages.label(mid, p.ordinal) for mid, p in long], vectors)
        return long, vectors

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
                    said_offset=first.said_offset,
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
