"""What an answerer returns, and how it reaches a local model without holding the whole store."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

NOT_FOUND = "not found in your chats"


@dataclass
class Answer:
    """One answer: the line a person reads, the bare span it rests on, and the memories it cites."""

    method: str  # typed | extractive | llm
    text: str  # the answer with speaker, date and citations, as shown
    citations: list[int] = field(default_factory=list)
    type: str | None = None  # the question's type (when, where, who, how-many, which, yes-no, why, should, what)
    span: str | None = None  # the answer itself ("7 May 2023", "Denver"): what the evaluation scores
    found: bool = True  # False: the evidence does not answer, `text` says so and shows the closest evidence
    note: str | None = None
    fallback: str | None = None  # why the requested method was replaced (a model that failed or is missing)
    dropped_citations: list[int] = field(default_factory=list)
    seconds: float = 0.0  # time the answerer took (the recall's own time is RecallResult.seconds)

    @property
    def scored(self) -> str:
        """The text an answer metric compares with a gold answer: the span when there is one."""
        return self.span if self.span is not None else self.text

    def to_dict(self) -> dict[str, Any]:
        """The `answer` object of `ripple ask --json`."""
        return asdict(self)


@dataclass
class ModelProvider:
    """The local model as an answerer needs it: whether one is configured, and a loader (ModelError if unusable)."""

    configured: bool
    load: Callable[[], Any]


NO_MODEL = ModelProvider(False, lambda: None)


@dataclass
class AnswerStream:
    """Where a model's answer goes while it is written: `started(model, prompt tokens)`, then each piece."""

    started: Callable[[str, int], None]
    token: Callable[[str], None]
    finished: Callable[[], None] = lambda: None
