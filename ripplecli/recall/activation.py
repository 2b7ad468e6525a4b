"""Spreading activation: personalised PageRank over the memory–cue graph plus contiguity links (DESIGN §6).

Run on the local subgraph reachable from the restart set (its cues, their memories, those memories' cues
and contiguity neighbours), never on the whole store, so its cost does not grow with the store.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np
from scipy import sparse

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


def informative_cues(index: RecallIndex, cues: set[str], max_df: float) -> set[str]:
    """Cues rare enough to carry information (held by at most max_df · N memories, and at least 5 allowed)."""
    limit = max(5.0, max_df * index.count)
    return {cue for cue in cues if 0 < index.cue_frequency(cue) <= limit}


def _holders_of(index: RecallIndex, cues: set[str]) -> dict[int, set[str]]:
    """Memories holding any of the cues, with which ones."""
    found: dict[int, set[str]] = defaultdict(set)
    for cue in cues:
        for mid in index.holders.get(cue, ()):
            found[mid].add(cue)
    return found


def local_graph(index: RecallIndex, restart_cues: set[str], anchors: set[int], max_df: float) -> CueGraph:
    """Two bipartite steps out from the restart set, with informative cues only."""
    seeds = _holders_of(index, restart_cues)  # the question's own cues spread even when common
    first = set(seeds) | anchors
    around = {mid: index.concepts_of.get(mid, set()) for mid in first}
    keep = informative_cues(index, set().union(*around.values()) if around else set(), max_df)
    second = _holders_of(index, keep)
    memory_cues: dict[int, set[str]] = defaultdict(set)
    for mapping in (seeds, second):
        for mid, cues in mapping.items():
            memory_cues[mid] |= cues
    for mid in first:
        memory_cues[mid] |= around.get(mid, set()) & keep
    pairs = sorted({(min(a, b), max(a, b)) for a in list(memory_cues) for b in index.neighbours.get(a, ())})
    for src, dst in pairs:
        memory_cues.setdefault(src, set())
        memory_cues.setdefault(dst, set())
    return CueGraph(dict(memory_cues), pairs)


def personalised_pagerank(
    graph: CueGraph, restart: dict[str, float], damping: float = 0.85, iterations: int = 25
) -> dict[str, float]:
    """PageRank with restarts on the given nodes ("m:<id>" memory nodes, "c:<cue>" cue nodes)."""
    names = [f"m:{m}" for m in graph.memory_cues] + sorted({f"c:{c}" for cs in graph.memory_cues.values() for c in cs})
    index = {name: i for i, name in enumerate(names)}
    rows, cols = [], []
    for mid, cues in graph.memory_cues.items():
        for cue in cues:
            rows += [index[f"m:{mid}"], index[f"c:{cue}"]]
            cols += [index[f"c:{cue}"], index[f"m:{mid}"]]
    for src, dst in graph.contiguity:
        rows += [index[f"m:{src}"], index[f"m:{dst}"]]
        cols += [index[f"m:{dst}"], index[f"m:{src}"]]
    n = len(names)
    if n == 0:
        return {}
    adjacency = sparse.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(n, n))
    out_degree = np.asarray(adjacency.sum(axis=1)).ravel()
    transition = sparse.diags(1.0 / np.maximum(out_degree, 1.0)) @ adjacency
    start = np.zeros(n)
    for name, weight in restart.items():
        if name in index:
            start[index[name]] += weight
    if start.sum() == 0:
        return {}
    start /= start.sum()
    rank = start.copy()
    for _ in range(iterations):
        rank = (1 - damping) * start + damping * (transition.T @ rank)
    return {name: float(rank[i]) for i, name in enumerate(names)}


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
    restart = {f"c:{c}": w for c, w in restart_cues.items()} | {f"m:{m}": w for m, w in anchors.items()}
    ranks = personalised_pagerank(graph, restart)
    reached = sorted(
        ((int(name[2:]), mass) for name, mass in ranks.items() if name.startswith("m:")),
        key=lambda pair: (-pair[1], pair[0]),
    )
    anchor_cues = {a: graph.memory_cues.get(a, set()) for a in anchors}
    neighbours = defaultdict(set)
    for src, dst in graph.contiguity:
        neighbours[src].add(dst)
        neighbours[dst].add(src)
    found = []
    for mid, mass in reached:
        if mid in exclude or mass <= 0:
            continue
        cues = graph.memory_cues.get(mid, set())
        via_cues = sorted(cues & (set(restart_cues) | set().union(*anchor_cues.values())))
        via_anchors = sorted(a for a, ac in anchor_cues.items() if cues & ac or mid in neighbours[a])
        found.append(Activation(mid, mass, via_cues, via_anchors))
        if len(found) == top:
            break
    return found
