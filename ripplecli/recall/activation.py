"""Spreading activation: personalised PageRank over the memory–cue graph plus contiguity links (docs/method.md).

Run on the local subgraph reachable from the restart set (its cues, their memories, those memories' cues
and contiguity neighbours), never on the whole store, so its cost does not grow with the store.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Set
from dataclasses import dataclass, field

import numpy as np

from ripplecli.recall.index import RecallIndex


@dataclass
class Activation:
    """A memory reached by spreading activation, with what carried the mass to it."""

    memory_id: int
    mass: float
    via_cues: list[str] = field(default_factory=list)
    via_anchors: list[int] = field(default_factory=list)


@dataclass
class CueGraph:
    """The local bipartite subgraph: memory–cue incidences and memory–memory contiguity pairs."""

    memory_cues: dict[int, set[str]]
    contiguity: list[tuple[int, int]]


HOLDER_CAP = 400  # keeps activation local in a large store: a cue spreads to at most this many memories
NODE_BUDGET = 2000  # memories in the local graph; a whole dev conversation (≤ 700) never reaches it


def informative_cues(index: RecallIndex, cues: set[str], max_df: float) -> set[str]:
    """Cues rare enough to carry information (held by at most max_df · N memories, at least 5, at most the cap)."""
    limit = min(max(5.0, max_df * index.count), HOLDER_CAP)
    index.prefetch(frequencies=cues)
    return {cue for cue in cues if 0 < index.cue_frequency(cue) <= limit}


def nearest_holders(holders: list[int], near: set[int], cap: int) -> list[int]:
    """At most `cap` holders, nearest the anchors by id (ids follow ingest order: same chat, nearby in time)."""
    if len(holders) <= cap:
        return holders
    ids = np.asarray(holders, dtype=np.int64)
    distance = np.min(np.abs(ids[:, None] - np.fromiter(near, np.int64)[None, :]), axis=1) if near else -ids
    return ids[np.argsort(distance, kind="stable")[:cap]].tolist()


def _holders_of(
    index: RecallIndex, cues: list[str], near: set[int], room: int, taken: Set[int] = frozenset()
) -> dict[int, set[str]]:
    """Memories holding the cues, in the given cue order, adding at most `room` memories not already `taken`."""
    found: dict[int, set[str]] = defaultdict(set)
    added = 0
    index.prefetch(holders=cues)
    for cue in cues:
        for mid in nearest_holders(index.holders.get(cue, []), near, HOLDER_CAP):
            if mid in found or mid in taken:
                found[mid].add(cue)
            elif added < room:
                found[mid].add(cue)
                added += 1
    return found


def local_graph(index: RecallIndex, restart_cues: set[str], anchors: set[int], max_df: float) -> CueGraph:
    """Two bipartite steps out from the restart set, with informative cues only, within the node budget."""
    seeds = _holders_of(index, sorted(restart_cues), anchors, NODE_BUDGET)  # the question's own cues, even common
    first = set(seeds) | anchors
    index.prefetch(concepts_of=first)
    around = {mid: index.concepts_of.get(mid, set()) for mid in first}
    keep = informative_cues(index, set().union(*around.values()) if around else set(), max_df)
    rarest_first = sorted(keep, key=lambda cue: (index.cue_frequency(cue), cue))
    second = _holders_of(index, rarest_first, anchors, NODE_BUDGET - len(first), taken=first)
    memory_cues: dict[int, set[str]] = defaultdict(set)
    for mapping in (seeds, second):
        for mid, cues in mapping.items():
            memory_cues[mid] |= cues
    for mid in first:
        memory_cues[mid] |= around.get(mid, set()) & keep
    index.prefetch(neighbours=memory_cues)
    pairs = [(a, b) for a in list(memory_cues) for b in index.neighbours.get(a, ()) if a < b or b not in memory_cues]
    for src, dst in pairs:
        memory_cues.setdefault(src, set())
        memory_cues.setdefault(dst, set())
    return CueGraph(dict(memory_cues), pairs)


def personalised_pagerank(
    graph: CueGraph,
    restart_cues: dict[str, float],
    restart_memories: dict[int, float],
    damping: float = 0.85,
    iterations: int = 25,
) -> tuple[list[int], np.ndarray]:
    """PageRank with restarts on the given cues and memories; returns memory ids and their mass."""
    memories = list(graph.memory_cues)
    cues = sorted({c for cs in graph.memory_cues.values() for c in cs})
    position = {m: i for i, m in enumerate(memories)}
    cue_position = {c: len(memories) + j for j, c in enumerate(cues)}
    n = len(memories) + len(cues)
    if n == 0:
        return [], np.zeros(0)
    # cues in sorted order: a set's order follows the process's string hashing, and the sums below would round
    # differently from run to run, reordering memories of equal mass
    pairs = [(position[m], cue_position[c]) for m, cs in graph.memory_cues.items() for c in sorted(cs)]
    pairs += [(position[a], position[b]) for a, b in graph.contiguity]
    ends = np.array(pairs, dtype=np.int64).reshape(-1, 2)
    sources = np.concatenate([ends[:, 0], ends[:, 1]])  # undirected: each link spreads both ways
    targets = np.concatenate([ends[:, 1], ends[:, 0]])
    out_degree = np.maximum(np.bincount(sources, minlength=n), 1).astype(float)
    start = np.zeros(n)
    for cue, weight in restart_cues.items():
        if cue in cue_position:
            start[cue_position[cue]] += weight
    for mid, weight in restart_memories.items():
        if mid in position:
            start[position[mid]] += weight
    if start.sum() == 0:
        return [], np.zeros(0)
    start /= start.sum()
    rank = start.copy()
    for _ in range(iterations):  # sparse power iteration without scipy, whose import costs ~0.15 s per cold ask
        spread_mass = np.bincount(targets, weights=(rank / out_degree)[sources], minlength=n)
        rank = (1 - damping) * start + damping * spread_mass
    return memories, rank[: len(memories)]


def spread(
    index: RecallIndex,
    restart_cues: dict[str, float],
    anchors: dict[int, float],
    exclude: set[int],
    top: int = 10,
    max_df: float = 0.05,
) -> list[Activation]:
    """The `top` memories by activation mass that are not already evidence, with what reached them."""
    graph = local_graph(index, set(restart_cues), set(anchors), max_df)
    memories, mass = personalised_pagerank(graph, restart_cues, anchors)
    order = np.lexsort((np.array(memories, dtype=np.int64), -mass)) if memories else np.empty(0, dtype=np.intp)
    anchor_cues = {a: graph.memory_cues.get(a, set()) for a in anchors}
    neighbours = index.neighbours
    carriers = set(restart_cues) | set().union(*anchor_cues.values())
    found = []
    for i in order:
        mid, weight = memories[i], float(mass[i])
        if mid in exclude or weight <= 0:
            continue
        cues = graph.memory_cues.get(mid, set())
        via_anchors = sorted(a for a, ac in anchor_cues.items() if cues & ac or mid in neighbours.get(a, ()))
        found.append(Activation(mid, weight, sorted(cues & carriers), via_anchors))
        if len(found) == top:
            break
    index.prefetch(a.memory_id for a in found)
    return found
