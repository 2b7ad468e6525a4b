"""Incremental edges for one new memory at a time: semantic, structural, contiguity (docs/method.md, the graph)."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime

from ripplecli.config import GraphParams


@dataclass(frozen=True)
class CueProfile:
    """The cues of one memory that structural similarity compares."""

    memory_id: int
    conversation_id: str
    session_id: str
    position: int
    persons: frozenset[str]
    locations: frozenset[str]
    time: tuple[datetime, datetime] | None


def weighted_jaccard(a: frozenset[str], b: frozenset[str], weight: Callable[[str], float]) -> float:
    """Overlap of two cue sets where rare cues count more (plain Jaccard when weight is constant)."""
    union = a | b
    if not union:
        return 0.0
    return sum(weight(x) for x in a & b) / sum(weight(x) for x in union)


def time_affinity(a: tuple[datetime, datetime], b: tuple[datetime, datetime], tau_days: float) -> float:
    """1 when intervals overlap, else exp(-gap/τ)."""
    gap = max((b[0] - a[1]).total_seconds(), (a[0] - b[1]).total_seconds(), 0.0)
    return math.exp(-gap / 86400.0 / tau_days)


def structural_score(a: CueProfile, b: CueProfile, weight: Callable[[str], float], params: GraphParams) -> float | None:
    """Σ β_x·u_x / Σ β_x over the cue types both memories have; None when nothing is comparable."""
    parts: list[tuple[float, float]] = []
    if a.persons and b.persons:
        parts.append((params.beta_persons, weighted_jaccard(a.persons, b.persons, weight)))
    if a.locations and b.locations:
        parts.append((params.beta_locations, weighted_jaccard(a.locations, b.locations, weight)))
    if a.time and b.time:
        parts.append((params.beta_time, time_affinity(a.time, b.time, params.tau_days)))
    if not parts:
        return None
    return sum(beta * u for beta, u in parts) / sum(beta for beta, _ in parts)


def keep_strongest(
    scored: Iterable[tuple[int, float]], threshold: float, cap: int, degree: Counter[int]
) -> list[tuple[int, float]]:
    """Candidates at or above the threshold, strongest first, skipping nodes already at the cap."""
    kept = []
    for other, score in sorted(scored, key=lambda pair: (-pair[1], pair[0])):
        if score < threshold or degree[other] >= cap:
            continue
        kept.append((other, score))
        if len(kept) == cap:
            break
    return kept
