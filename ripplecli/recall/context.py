"""What one recall hands its growth strategies: `RecallContext` in, `Growth` (support + its trace part) out."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from ripplecli.recall.assembly import focus_speaker
from ripplecli.recall.index import RecallIndex
from ripplecli.recall.planner import Planner
from ripplecli.recall.query import QueryCues
from ripplecli.recall.sessions import Sessions
from ripplecli.recall.views import Ranked
from ripplecli.store.db import Store
from ripplecli.trace import Plan, Round, Support, SupportByChannel

if TYPE_CHECKING:
    import numpy as np

    from ripplecli.runtime.base import Encoder


# A list question's items are near both the question and the kind of item it names: "What books has Melanie read?"
# ranks the speaker's memories by the question's vector plus half the vector of "books" (tuning conversations:
# 0.25, 0.5, 1 and 2 found the same two more multi-hop evidence sets at K = 30; 0.5 was best at K = 10).
KIND_WEIGHT = 0.5


@dataclass
class RecallParams:
    """Knobs of one recall; defaults are the measured best."""

    k: int = 30
    mode: str = "ripple"
    rounds: int = 1
    as_of: datetime | None = None


@dataclass(kw_only=True)
class RecallContext:
    """Everything a growth strategy reads: the store and its maps, the question, its seeds, this call's planner."""

    store: Store
    index: RecallIndex
    encoder: Callable[[], Encoder]  # loads the encoder only when a strategy needs a new vector
    planner: Planner
    params: RecallParams
    cues: QueryCues
    seeds: list[int]  # the first hop, best first
    fused: dict[int, float]  # every view's hits fused (RRF)
    vector: np.ndarray | None  # the question's vector, when the mode encodes it
    sessions: Sessions = None  # type: ignore[assignment]  # session membership, walked as strategies ask for it
    kind: str | None = None  # a list question's kind of item ("books"), when it names one (query.list_kind)
    _kind_vector: np.ndarray | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self.sessions is None:
            self.sessions = Sessions(self.index)

    def question_vector(self) -> np.ndarray:
        """The question's vector, for a strategy of a mode that encodes it (every mode that grows or has a dense
        view does: Recaller._views)."""
        if self.vector is None:
            raise RuntimeError("this recall mode did not encode the question")
        return self.vector

    def kind_vector(self) -> np.ndarray | None:
        """The question's vector plus KIND_WEIGHT times its kind word's: what a list's items are near (or None)."""
        if self.kind is None or self.vector is None:
            return None
        if self._kind_vector is None:
            self._kind_vector = self.vector + KIND_WEIGHT * self.encoder().encode([self.kind])[0]
        return self._kind_vector

    def by_fused(self, ids: list[int]) -> list[int]:
        """`ids` by fused score, best first."""
        return sorted(ids, key=lambda m: -self.fused.get(m, 0.0))

    def text(self, memory_id: int) -> str:
        """A memory's restatement."""
        return self.index.texts.get(memory_id, "")

    def focus_speaker(self) -> str | None:
        """The chat speaker the question is about, if it is about one."""
        return focus_speaker(self.cues.persons, self.index.speakers, self.cues.focus)

    def shown(self, found: list[Support]) -> list[Support]:
        """The support with its restatements, as the trace shows it."""
        for s in found:
            s.text = self.text(s.memory_id)
        return found


@dataclass
class Growth:
    """What an associative step adds, and its part of the trace."""

    support: list[Support] = field(default_factory=list)
    centrality: Ranked = field(default_factory=list)  # an activation ranking that reorders the seeds
    rounds: list[Round] | None = None  # planner-guided strategies: one record per round
    shown: SupportByChannel | None = None  # support found outside planner rounds, per channel


RoundStep = Callable[[RecallContext, Plan, set[int]], Growth]  # one round of a planner-guided strategy
