"""The recall trajectory as data: rendered by cli/, serialised by --json, returned by the API."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ripplecli.answer.base import Answer


@dataclass
class SourceRef:
    """A raw turn a memory came from, with the date of its session."""

    turn_id: str
    session_id: str
    speaker: str
    text: str
    timestamp: str | None


@dataclass
class ReplyContext:
    """The turn a short reply answers ("isn't Ridgeline in Denver?" for "It is."): shown and read with it."""

    turn_id: str
    speaker: str
    text: str
    locations: list[str] = field(default_factory=list)  # known places the turn names, case-folded


@dataclass
class Evidence:
    """One ranked memory in the final evidence list, with every way it was found."""

    memory_id: int
    restatement: str
    score: float
    rank: int
    source_turns: list[str]
    sources: list[SourceRef] = field(default_factory=list)
    provenance: list[dict[str, Any]] = field(default_factory=list)  # {"view"|"channel", "rank", "anchor", ...}
    tokens: int = 0
    persons: list[str] = field(default_factory=list)  # as the store keeps them: case-folded
    locations: list[str] = field(default_factory=list)
    context: ReplyContext | None = None  # set when the memory is a short reply to another speaker's turn


@dataclass
class RecallResult:
    """What `ripple ask` returns: the evidence, the trajectory that found it, and an optional answer."""

    question: str
    mode: str
    k: int
    evidence: list[Evidence]
    trace: dict[str, Any] = field(default_factory=dict)
    answer: Answer | None = None
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        """The JSON document of `ripple ask --json`."""
        return asdict(self)
