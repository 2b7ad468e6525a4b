"""Anchor-local diffusion along one channel at a time: ≤ h hops, target-scored, top n (docs/method.md)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from typing import TYPE_CHECKING

from ripplecli.store.db import Store
from ripplecli.store.queries import edges_touching
from ripplecli.trace import Support

if TYPE_CHECKING:
    import numpy as np

Scorer = Callable[[list[int]], dict[int, float]]


def neighbours(store: Store, nodes: set[int], channel: str) -> dict[int, list[tuple[int, float]]]:
    """Edges of one channel touching `nodes`, traversable both ways."""
    found: dict[int, list[tuple[int, float]]] = defaultdict(list)
    for src, dst, weight, _info in edges_touching(store, nodes, channel):
        found[src].append((dst, weight))
        found[dst].append((src, weight))
    return found


def reachable(store: Store, anchors: list[int], channel: str, hops: int) -> dict[int, Support]:
    """Best path to every memory within `hops` of an anchor: fewest hops, then strongest weights."""
    best: dict[int, Support] = {a: Support(a, channel, 0.0, [a], []) for a in anchors}
    frontier = set(anchors)
    for _ in range(hops):
        adjacency = neighbours(store, frontier, channel)
        reached: dict[int, Support] = {}
        for node in sorted(frontier):
            here = best[node]
            for other, weight in adjacency.get(node, []):
                if other in best:
                    continue
                candidate = Support(other, channel, 0.0, [*here.path, other], [*here.weights, weight])
                current = reached.get(other)
                if current is None or candidate.strength > current.strength:
                    reached[other] = candidate
        best.update(reached)
        frontier = set(reached)
        if not frontier:
            break
    return {m: s for m, s in best.items() if m not in anchors}


def cosine_scorer(store: Store, target: np.ndarray) -> Scorer:
    """Scores candidates by the cosine of their stored vectors to a target vector (the semantic channel's way)."""

    def score(ids: list[int]) -> dict[int, float]:
        if not ids:
            return {}
        return dict(zip(ids, (store.vector_index().get_vectors(ids) @ target).tolist(), strict=True))

    return score


def diffuse(
    store: Store,
    anchors: list[int],
    channel: str,
    scorer: Scorer | None,
    exclude: set[int],
    hops: int = 2,
    top: int = 5,
) -> list[Support]:
    """Top memories of one channel near the anchors, not yet evidence; scored by the target (or path strength)."""
    candidates = {m: s for m, s in reachable(store, anchors, channel, hops).items() if m not in exclude}
    scores = scorer(sorted(candidates)) if scorer else {m: s.strength for m, s in candidates.items()}
    for mid, support in candidates.items():
        support.score = float(scores.get(mid, 0.0))
    ranked = sorted(candidates.values(), key=lambda s: (-s.score, len(s.path), -s.strength, s.memory_id))
    return ranked[:top]
