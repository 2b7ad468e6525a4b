"""Plain data shared by every stage of the pipeline: formats -> extract -> store -> recall."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta, timezone


@dataclass(frozen=True)
class Turn:
    """One raw utterance as it appeared in a chat; `turn_id` is unique within its conversation."""

    turn_id: str
    speaker: str
    text: str
    # The message's own time, when the export has one: naive UTC when the export gives its zone (`offset` then says
    # where it was said), else the naive wall-clock time the export wrote.
    said_at: datetime | None = None
    role: str = ""  # "owner" (the store's owner wrote it), "assistant" (an AI assistant), "" (unknown / a person)
    offset: timedelta | None = None  # said_at's UTC offset where it was said, when the export gives a zone


@dataclass
class Session:
    """A contiguous sitting of a conversation; `timestamp` is naive UTC when `offset` gives its zone, else naive
    local wall-clock time, or None."""

    session_id: str
    timestamp: datetime | None
    turns: list[Turn] = field(default_factory=list)
    offset: timedelta | None = None  # the timestamp's UTC offset, when the export gives a zone


def wall_clock(moment: datetime | None, offset: timedelta | None) -> datetime | None:
    """The time a clock showed where something was said: a UTC instant moved by its offset, a time without a zone
    as it is (ripple takes it as that place's wall-clock time). Days, and "yesterday" in a turn, are read on it."""
    return moment + offset if moment is not None and offset is not None else moment


def shown_time(moment: datetime | None, offset: timedelta | None) -> str | None:
    """A stored time as ripple shows it (in --json too): a UTC instant as the wall-clock time where it was said
    with its offset ("2026-03-10T20:00:00-07:00", the same instant), a time without a zone as it is."""
    if moment is None:
        return None
    if offset is None:
        return moment.isoformat()
    return moment.replace(tzinfo=UTC).astimezone(timezone(offset)).isoformat()


def offset_of(seconds: int | None) -> timedelta | None:
    """A stored `said_offset` (seconds east of UTC) as a timedelta; None when the zone is unknown."""
    return None if seconds is None else timedelta(seconds=seconds)


def said_time(turn: Turn, session: Session) -> tuple[datetime | None, timedelta | None]:
    """When a turn was said and the UTC offset there: the message's own time, else its session's (all that older
    formats record)."""
    if turn.said_at is not None:
        return turn.said_at, turn.offset
    return session.timestamp, session.offset


def said_wall_clock(turn: Turn, session: Session) -> datetime | None:
    """When a turn was said, on the clock where it was said: its own time, else its session's."""
    return wall_clock(*said_time(turn, session))


@dataclass
class Conversation:
    """A chat history between a fixed set of speakers, split into sessions."""

    conversation_id: str
    sessions: list[Session] = field(default_factory=list)
    title: str | None = None  # the export's own title, shown beside the id
    # Messages the reader left out, by reason ("system line": 3, "other branch": 13), for the summary and --json.
    skipped: dict[str, int] = field(default_factory=dict)
    # The id is made from the file's name (a WhatsApp chat's, a ChatGPT conversation without its id), not given by
    # the export: such a chat joins a stored one its messages overlap, whatever the file is called (see ingest).
    named_by_file: bool = False
    # Its turns are one text's paragraphs dated by the file (notes): their identity is their text, not their time.
    keyed_by_text: bool = False
    # The export does not say which of its people is the owner (a group chat, a Slack workspace, a Discord channel):
    # `me`, when it names one of them, does. `aliases` are other names a reader knows them by (a Slack user's real
    # name and handle), folded with owner.name_key, each mapped to the speaker name their turns carry.
    owner_by_name: bool = False
    aliases: dict[str, str] = field(default_factory=dict)

    @property
    def speakers(self) -> list[str]:
        """Distinct speakers in order of first appearance."""
        seen: dict[str, None] = {}
        for session in self.sessions:
            for turn in session.turns:
                seen.setdefault(turn.speaker, None)
        return list(seen)

    @property
    def turn_count(self) -> int:
        """Number of turns over all sessions."""
        return sum(len(s.turns) for s in self.sessions)

    def with_turns(self) -> Conversation | None:
        """The conversation without its sessions that have no turns; None when none has any."""
        sessions = [session for session in self.sessions if session.turns]
        return replace(self, sessions=sessions) if sessions else None


@dataclass(frozen=True)
class WindowTurn:
    """A turn placed in its session, as an extractor sees it."""

    turn: Turn
    session_id: str
    timestamp: datetime | None
    is_context: bool = False  # overlap turn: context only, already extracted by the previous window


@dataclass
class Window:
    """Contiguous turns handed to an extractor, with who is talking in the conversation."""

    conversation_id: str
    speakers: list[str]
    turns: list[WindowTurn]
    known_persons: list[str] = field(default_factory=list)


@dataclass
class MemoryDraft:
    """A memory unit m = (r, P, L, T) plus provenance and cue concepts, before it gets an id and a vector."""

    restatement: str
    source_turns: list[str]
    persons: list[str] = field(default_factory=list)
    locations: list[str] = field(default_factory=list)
    time_start: datetime | None = None
    time_end: datetime | None = None
    time_grounded: bool = False  # True when T comes from an expression in the text, not the session date
    concepts: list[str] = field(default_factory=list)
    concept_forms: dict[str, list[str]] = field(default_factory=dict)  # concept -> surface forms seen
    extractor: str = "rules"


@dataclass
class PendingTurn:
    """A turn not yet in the store, with where it sits in its conversation."""

    session: Session
    turn: Turn
    position: int
    content_hash: str
    message_key: int | None = None  # its identity by time and text (ripplecli.store.identity)

    @property
    def said_at(self) -> datetime | None:
        """When it was said: the message's own time, else its session's (all that older formats record)."""
        return said_time(self.turn, self.session)[0]

    @property
    def said_offset(self) -> int | None:
        """The UTC offset, in seconds, of where it was said (of `said_at`), when the export gave a zone."""
        offset = said_time(self.turn, self.session)[1]
        return None if offset is None else int(offset.total_seconds())


@dataclass(frozen=True)
class NewMemory:
    """A memory ready to store: its id, its place (the session and position of its first source turn), when that
    turn was said, the source rows it was drawn from, and what the extractor wrote."""

    memory_id: int
    conversation_id: str
    session_id: str
    position: int
    session_ts: datetime | None
    said_at: datetime | None
    sources: list[int]
    draft: MemoryDraft
    said_offset: int | None = None  # seconds east of UTC where its first source turn was said, when known


@dataclass(frozen=True)
class Edge:
    """A weighted link from the older memory to the newer one; `channel` names the kind."""

    src: int
    dst: int
    channel: str
    weight: float


@dataclass
class IngestReport:
    """What one ingest did, for the summary table and the ingest_runs row."""

    file: str
    conversations: int = 0
    new_sources: int = 0
    duplicates: int = 0
    skipped: int = 0  # messages the reader left out (tool calls, hidden or media-only messages)
    skipped_by_reason: dict[str, int] = field(default_factory=dict)  # the same, by why ("system line": 3)
    edited: int = 0  # export messages whose text changed since they were stored (the stored text is kept)
    memories: int = 0
    edges: dict[str, int] = field(default_factory=dict)
    failures: int = 0
    rejected: int = 0  # fields and memories of the model's output its gates did not keep (each one a failures row)
    seconds: float = 0.0
    run_id: int = 0
    owner: str | None = None  # the name the owner's turns were stored under, when the file marks any
    # Chats whose export names no owner and whose people `me` is none of: {"chat": title or id, "people": [...]}
    no_owner: list[dict] = field(default_factory=list)
