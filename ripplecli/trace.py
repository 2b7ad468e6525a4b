"""The recall trajectory as typed data: built by the read phase, rendered by cli/, returned by the API.

Every type has `to_dict()`, which writes the `ripple ask --json` document (docs/json.md); optional keys appear only
when they say something, as they always have.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from datetime import datetime
from typing import Any

Row = dict[str, Any]  # one JSON object of the --json document


def iso_times(span: tuple[datetime, datetime] | None) -> list[str] | None:
    """A time range as the trace writes it: ISO start and end (the read phase works with datetimes)."""
    return [t.isoformat() for t in span] if span else None


def _flat(item: Any, optional: tuple[str, ...] = ()) -> Row:
    """A type's fields in declared order (the --json key order); `optional` keys only when truthy.

    Shallow: a type with nested trace types overrides those keys (`|` keeps each key where it was declared)."""
    return {f.name: value for f in fields(item) if (value := getattr(item, f.name)) or f.name not in optional}


def _rows(items: list[Any]) -> list[Row]:
    """`to_dict()` of each item."""
    return [item.to_dict() for item in items]


@dataclass
class SourceRef:
    """A raw turn a memory came from, with the date of its session and when the message itself was sent."""

    turn_id: str
    session_id: str
    speaker: str
    text: str
    timestamp: str | None  # the session's date-time
    said_at: str | None = None  # the message's own time (the session's when the export has none)
    position: int | None = None  # the turn's place in its conversation (exports' turn ids are not numbered)

    def to_dict(self) -> Row:
        """The `sources` entry."""
        return _flat(self)


@dataclass
class ReplyContext:
    """The turn a short reply answers ("isn't Ridgeline in Denver?" for "It is."): shown and read with it."""

    turn_id: str
    speaker: str
    text: str
    locations: list[str] = field(default_factory=list)  # known places the turn names, case-folded

    def to_dict(self) -> Row:
        """The evidence's `context` object."""
        return _flat(self)


@dataclass
class ViewHit:
    """Found by a seeding view (dense, lexical, cue) at a rank; `seed` when within the view's first hop."""

    view: str
    rank: int
    score: float
    seed: bool

    @property
    def finder(self) -> str:
        """What found it."""
        return self.view

    def to_dict(self) -> Row:
        """The `provenance` entry."""
        return _flat(self)


@dataclass
class ChannelHit:
    """Found along the graph: a channel, the path from an anchor, the edge weights (and CABLE's query)."""

    channel: str
    path: list[int]
    weights: list[float]
    score: float
    query: str = ""

    @property
    def finder(self) -> str:
        """What found it."""
        return self.channel

    def to_dict(self) -> Row:
        """The `provenance` entry."""
        return _flat(self, optional=("query",))


Provenance = ViewHit | ChannelHit


@dataclass
class Support:
    """A memory found from an anchor: the path taken and how well it matches the missing-support target."""

    memory_id: int
    channel: str
    score: float
    path: list[int] = field(default_factory=list)  # anchor, hop, ..., memory
    weights: list[float] = field(default_factory=list)  # edge weight per hop
    via_cues: list[str] = field(default_factory=list)  # spreading activation: the cues that carried it
    query: str = ""  # CABLE: the antecedent query that created the edge it came along
    text: str = ""  # the memory's restatement, as the trace shows it

    def provenance(self) -> ChannelHit:
        """How the evidence list records this way of finding the memory."""
        return ChannelHit(self.channel, self.path, self.weights, round(self.score, 4), self.query)

    @property
    def strength(self) -> float:
        """Product of edge weights along the path: stronger paths win ties."""
        product = 1.0
        for weight in self.weights:
            product *= weight
        return product

    def to_dict(self) -> Row:
        """One support row of the trace."""
        data: Row = {
            "id": self.memory_id,
            "channel": self.channel,
            "score": round(float(self.score), 5),
            "path": self.path,
            "weights": [round(w, 3) for w in self.weights],
            "text": self.text,
        }
        if self.via_cues:
            data["via_cues"] = self.via_cues
        if self.query:
            data["query"] = self.query
        return data


SupportByChannel = dict[str, list[Support]]


def _support_dict(grouped: SupportByChannel) -> dict[str, list[Row]]:
    """Support rows per channel."""
    return {channel: _rows(found) for channel, found in grouped.items()}


@dataclass
class Cues:
    """The question's cues as the trace shows them (times as ISO strings)."""

    text: str
    keywords: list[str]
    persons: list[str]
    locations: list[str]
    concepts: list[str]
    time_range: list[str] | None
    wants: str | None
    failure: str | None = None  # the LLM analyzer's dropped names or its fallback to the rules
    owner: str | None = None  # the store's owner, when the question says I/me/my
    focus: str | None = None  # the speaker the question's words point to ("What did I ask…": the owner)
    many: bool = False  # a list question: it wants several items of one kind
    kind: str | None = None  # the kind of item a list question names ("books"), when recall uses it
    said_on: list[str] | None = None  # the day a question names in full ("on 25 May, 2022"), start and end

    def to_dict(self) -> Row:
        """The `query_cues` object."""
        return _flat(self, optional=("failure", "owner", "focus", "many", "kind", "said_on"))


@dataclass
class Seed:
    """A first-hop memory of one view."""

    id: int
    score: float
    text: str

    def to_dict(self) -> Row:
        """One seed row."""
        return _flat(self)


@dataclass
class Anchor:
    """A memory the planner grows the evidence from."""

    id: int
    text: str

    def to_dict(self) -> Row:
        """One anchor row."""
        return _flat(self)


@dataclass
class Target:
    """The missing-support target: a memory-style fact sentence and the cues the evidence still lacks."""

    restatement: str
    persons: list[str] = field(default_factory=list)
    locations: list[str] = field(default_factory=list)
    concepts: list[str] = field(default_factory=list)
    time_range: list[str] | None = None  # ISO start and end
    wants: str | None = None  # the kind of memory still wanted ("place"): more of it from other sessions
    many: bool = False  # a list question: more of the same kind from sessions not yet covered

    def to_dict(self) -> Row:
        """The planner's `target` object."""
        return _flat(self, optional=("many",))


@dataclass
class Plan:
    """The planner's decision for one round: go on from these anchors toward the target, or stop (and why)."""

    decision: str  # continue | stop
    stop_reason: str | None
    anchors: list[Anchor]
    target: Target | None
    covered: list[str] = field(default_factory=list)  # the question's cues the anchors carry
    missing: list[str] = field(default_factory=list)  # those they do not
    failure: str | None = None  # an LLM planner fell back to the rules

    @property
    def proceed(self) -> bool:
        """Whether recall goes on this round."""
        return self.decision == "continue"

    @property
    def anchor_ids(self) -> list[int]:
        """The anchors' memory ids, in order."""
        return [anchor.id for anchor in self.anchors]

    def to_dict(self) -> Row:
        """The round's `planner` object."""
        return _flat(self) | {"anchors": _rows(self.anchors), "target": self.target.to_dict() if self.target else None}


@dataclass
class Round:
    """One planner round: the plan, the support it found per channel, and why it stopped."""

    round: int
    planner: Plan
    support: SupportByChannel | None = None  # None: the round stopped before diffusing
    stopped: str | None = None

    def to_dict(self) -> Row:
        """One `rounds` entry."""
        data: Row = {"round": self.round, "planner": self.planner.to_dict()}
        if self.support is not None:
            data["support"] = _support_dict(self.support)
        if self.stopped:
            data["stopped"] = self.stopped
        return data


@dataclass
class SessionRank:
    """A session ranked as a unit by the session view: its key (first memory id), score and memories."""

    session: int
    score: float
    members: list[int]

    def to_dict(self) -> Row:
        """One `sessions` row."""
        return _flat(self)


@dataclass
class Focus:
    """A question about one speaker of the chat: what the others said ranks `others_demoted`× further down."""

    speaker: str
    others_demoted: float
    shared: list[int] = field(default_factory=list)  # the speaker's memories nearest the question, moved up

    def to_dict(self) -> Row:
        """The `focus` object."""
        return _flat(self, optional=("shared",))


@dataclass
class DayFocus:
    """A question naming a day in full, or a time relative to its date ("yesterday"): what was said on other days
    (for the relative time: neither said nor telling of then) ranks `others_demoted`× further down."""

    said_on: list[str]
    others_demoted: float
    memories: int  # how many memories were said then

    def to_dict(self) -> Row:
        """The `day` object."""
        return _flat(self)


@dataclass
class Trace:
    """How the evidence was found: cues, seeds per view, planner rounds, support, focus, the evidence ids."""

    query_cues: Cues
    mode: str
    note: str | None = None  # why there is nothing to show (an empty store)
    seeds: dict[str, list[Seed]] | None = None
    rounds: list[Round] | None = None  # planner-guided modes only
    support: SupportByChannel | None = None  # support found outside planner rounds (locality, host links, kinds)
    focus: Focus | None = None
    day: DayFocus | None = None  # the day focus, when the question names a day in full
    evidence: list[int] | None = None
    sessions: list[SessionRank] | None = None  # the session view's best sessions, when the mode has it
    llm_calls: list[Row] | None = None  # the local model's calls (CallLog.to_list), when there were any

    def to_dict(self) -> Row:
        """The `trace` object of `ripple ask --json`."""
        data: Row = {"query_cues": self.query_cues.to_dict(), "mode": self.mode}
        if self.note is not None:
            data["note"] = self.note
        if self.seeds is not None:
            data["seeds"] = {view: _rows(rows) for view, rows in self.seeds.items()}
        if self.sessions is not None:
            data["sessions"] = _rows(self.sessions)
        if self.rounds is not None:
            data["rounds"] = _rows(self.rounds)
        if self.support is not None:
            data["support"] = _support_dict(self.support)
        if self.focus is not None:
            data["focus"] = self.focus.to_dict()
        if self.day is not None:
            data["day"] = self.day.to_dict()
        if self.evidence is not None:
            data["evidence"] = self.evidence
        if self.llm_calls:
            data["llm_calls"] = self.llm_calls
        return data


@dataclass
class Evidence:
    """One ranked memory in the final evidence list, with every way it was found."""

    memory_id: int
    restatement: str
    score: float
    rank: int
    source_turns: list[str]
    sources: list[SourceRef] = field(default_factory=list)
    provenance: list[Provenance] = field(default_factory=list)
    tokens: int = 0  # of the passage the question matched, when the memory is long (`passage`)
    passage: int | None = None  # a long memory: which of its `passages` (word windows, from 1) the question matched
    passages: int = 1
    passage_text: str | None = None  # that passage: its speaker's name, then its words
    persons: list[str] = field(default_factory=list)  # as the store keeps them: case-folded
    locations: list[str] = field(default_factory=list)
    context: ReplyContext | None = None  # set when the memory is a short reply to another speaker's turn
    conversation_id: str = ""
    title: str | None = None  # the conversation's title, when its export has one
    said_at: str | None = None  # when the memory was said
    refers_to: dict[str, str] | None = None  # {"start", "end"}: the time its text names; None when it names none

    def to_dict(self) -> Row:
        """One `evidence` entry."""
        return _flat(self) | {
            "sources": _rows(self.sources),
            "provenance": _rows(self.provenance),
            "context": self.context.to_dict() if self.context else None,
        }


@dataclass
class Answer:
    """One answer: the line a person reads, the bare span it rests on, and the memories it cites."""

    method: str  # typed | extractive | llm
    text: str  # the answer with speaker, date and citations, as shown
    citations: list[int] = field(default_factory=list)
    type: str | None = None  # the question's type (when, where, who, how-many, how, which, yes-no, why, should, what)
    span: str | None = None  # the answer itself ("7 May 2023", "Denver"): what the evaluation scores
    found: bool = True  # False: the evidence does not answer, `text` says so and shows the closest evidence
    sure: bool = True  # False: no span of the asked kind (a reason, an amount, a name…); `text` shows the closest
    note: str | None = None
    fallback: str | None = None  # why the requested method was replaced (a model that failed or is missing)
    dropped_citations: list[int] = field(default_factory=list)
    seconds: float = 0.0  # time the answerer took (the recall's own time is RecallResult.seconds)

    @property
    def scored(self) -> str:
        """The text an answer metric compares with a gold answer: the span when there is one."""
        return self.span if self.span is not None else self.text

    def to_dict(self) -> Row:
        """The `answer` object of `ripple ask --json`."""
        return asdict(self)


@dataclass
class RecallResult:
    """What `ripple ask` returns: the evidence, the trajectory that found it, and an optional answer."""

    question: str
    mode: str
    k: int
    evidence: list[Evidence]
    trace: Trace
    answer: Answer | None = None
    seconds: float = 0.0

    def to_dict(self) -> Row:
        """The JSON document of `ripple ask --json`."""
        return _flat(self) | {
            "evidence": _rows(self.evidence),
            "trace": self.trace.to_dict(),
            "answer": self.answer.to_dict() if self.answer else None,
        }
