"""CABLE read side (docs/method.md, CABLE): antecedent links used by a host retriever and as a diffusion channel.

Host mode (`dense+cable`, `seeds+cable`): the host's top 3 results with cos(q, s) ≥ 0.3 are seeds; their
one-hop antecedent neighbours (both directions) not yet retrieved are candidates when the link is strong
(weight ≥ 0.6) and the neighbour itself fits the question (cos(q, c) ≥ 0.35); they are scored by Σ cos(c, s)
over the seeds they link to; greedy picks skip near-duplicates (max cos to a pick ≥ 0.9); at most
max(1, K // 6) picks replace the lowest-ranked host results, and none when nothing passes. Picks sit at
every 6th place (6, 12, ...) and each is chosen from the seeds ranked above it, so the list at K is a prefix
of the list at any larger K: recall@10 of a K = 50 run is exactly what `ask --k 10` returns (the evaluation
asks once at K = 50).

`ripple+cable`: the antecedent channel diffuses from the planner's anchors, scored against the
missing-support target; its top 5 that pass the host-mode gates (link weight, cosine to the target) join
the ripple support *after* it (assembly.TRAILING_CHANNELS), so they never push ripple's own support down.
"""

from __future__ import annotations

import json

import numpy as np

from ripplecli.protocols import VectorIndex
from ripplecli.recall.context import Growth, RecallContext, RoundStep
from ripplecli.recall.diffusion import cosine_scorer, diffuse, edges_touching
from ripplecli.store.db import Store
from ripplecli.trace import Plan, Support

LINKED_MODES = {  # recall modes that read antecedent links, and the channel (variant) each reads
    "dense+cable": "antecedent",
    "seeds+cable": "antecedent",
    "ripple+cable": "antecedent",
    "ripple+cable-nosub": "antecedent-nosub",
}
SEED_MIN_COS = 0.3
TOP_SEEDS = 3  # only the host's first results vouch for a neighbour: lower ones are too often off-question
PICK_MIN_WEIGHT = 0.6  # edge weight = cos(query, antecedent); dev: weaker edges were mostly shared-topic pairs
PICK_MIN_COS = 0.35  # cos(question, pick): a pick must be about the question too, not only near a seed
NEAR_DUPLICATE = 0.9
SLOT_EVERY = 6  # budget max(1, K // 6): 1 pick at K = 10, 5 at K = 30
DIFFUSION_TOP = 5
DIFFUSION_HOPS = 1


def budget(k: int) -> int:
    """Host-mode replacements at K: scales with K, never half the list."""
    return max(1, k // SLOT_EVERY)


def slots(k: int) -> list[int]:
    """0-based places the picks take: every SLOT_EVERY-th place (the last place when K < SLOT_EVERY)."""
    if k < SLOT_EVERY:
        return [k - 1]
    return [SLOT_EVERY * (j + 1) - 1 for j in range(budget(k))]


def antecedent_edges(store: Store, nodes: set[int], channel: str) -> dict[int, list[tuple[int, float, str]]]:
    """Antecedent edges touching `nodes`, both directions, with the query that created each."""
    found: dict[int, list[tuple[int, float, str]]] = {}
    for src, dst, weight, info in edges_touching(store, nodes, channel):
        query = _query_of(info)
        found.setdefault(src, []).append((dst, weight, query))
        found.setdefault(dst, []).append((src, weight, query))
    return found


def _query_of(info: str | None) -> str:
    """The antecedent query recorded on an edge."""
    try:
        return str(json.loads(info or "{}").get("query", ""))
    except (ValueError, AttributeError):
        return ""


def host_cable(
    store: Store, ranked: list[int], vector: np.ndarray, k: int, channel: str = "antecedent"
) -> tuple[list[int], list[Support]]:
    """The host ranking with antecedent picks in its replacement slots; returns the list and the picks."""
    host = list(dict.fromkeys(ranked))
    index = store.vector_index()
    top = host[: min(k, TOP_SEEDS)]  # only the first results may vouch for a neighbour
    seeds = {m for m, cos in cosine_scorer(store, vector)(top).items() if cos >= SEED_MIN_COS}
    edges = strong_edges(antecedent_edges(store, seeds, channel))
    linked = {c for s in seeds for c, _, _ in edges.get(s, [])}
    vectors = _vectors(index, seeds | linked)
    edges = {s: [e for e in edges.get(s, []) if float(vectors[e[0]] @ vector) >= PICK_MIN_COS] for s in seeds}
    out: list[int] = []
    picks: list[Support] = []
    rest = iter(host)
    places = set(slots(k))
    for place in range(k):
        pick = _pick(out, picks, seeds, edges, vectors) if place in places else None
        if pick is not None:
            picks.append(pick)
            out.append(pick.memory_id)
            continue
        nxt = next((m for m in rest if m not in out), None)
        if nxt is None:
            break
        out.append(nxt)
    taken = set(out)
    return out + [m for m in host if m not in taken], picks


def strong_edges(edges: dict[int, list[tuple[int, float, str]]]) -> dict[int, list[tuple[int, float, str]]]:
    """Only links the verifier was confident about may displace a host result."""
    return {s: [e for e in links if e[1] >= PICK_MIN_WEIGHT] for s, links in edges.items()}


def _vectors(index: VectorIndex, ids: set[int]) -> dict[int, np.ndarray]:
    """Stored vectors by id."""
    order = sorted(ids)
    return dict(zip(order, index.get_vectors(order), strict=True)) if order else {}


def _pick(out, picks, seeds, edges, vectors) -> Support | None:
    """The best antecedent neighbour of the seeds placed so far: Σ cos over linked seeds, no near-duplicate."""
    placed = set(out)
    scores: dict[int, float] = {}
    best_seed: dict[int, tuple[float, int, float, str]] = {}
    for seed in (m for m in out if m in seeds):
        for other, weight, query in edges.get(seed, []):
            if other in placed:
                continue
            sim = float(vectors[other] @ vectors[seed])
            scores[other] = scores.get(other, 0.0) + sim
            if other not in best_seed or sim > best_seed[other][0]:
                best_seed[other] = (sim, seed, weight, query)
    chosen = [vectors[p.memory_id] for p in picks]
    for other in sorted(scores, key=lambda m: (-scores[m], m)):
        if chosen and max(float(vectors[other] @ v) for v in chosen) >= NEAR_DUPLICATE:
            continue
        _, seed, weight, query = best_seed[other]
        return Support(other, "antecedent", scores[other], [seed, other], [weight], [], query)
    return None


def diffusion_support(
    store: Store,
    anchors: list[int],
    target: np.ndarray,
    exclude: set[int],
    channel: str = "antecedent",
) -> list[Support]:
    """The antecedent channel from the anchors: top 5 by cosine to the target, gated like host mode, with queries."""
    found = diffuse(
        store, anchors, channel, cosine_scorer(store, target), exclude, hops=DIFFUSION_HOPS, top=DIFFUSION_TOP
    )
    found = [s for s in found if s.score >= PICK_MIN_COS and min(s.weights, default=0.0) >= PICK_MIN_WEIGHT]
    edges = antecedent_edges(store, {s.path[-2] for s in found if len(s.path) > 1}, channel)
    queries = {(a, b): q for a, links in edges.items() for b, _, q in links}
    return [
        Support(s.memory_id, "antecedent", s.score, s.path, s.weights, [], queries.get((s.path[-2], s.memory_id), ""))
        for s in found
    ]


def with_antecedents(base_round: RoundStep, channel: str) -> RoundStep:
    """A recall round that also diffuses along the antecedent channel (ranked after ripple's own support: assembly)."""

    def one_round(ctx: RecallContext, plan: Plan, evidence: set[int]) -> Growth:
        step = base_round(ctx, plan, evidence)
        target = ctx.encoder().encode([plan.target.restatement])[0] if plan.target else ctx.question_vector()
        taken = evidence | {s.memory_id for s in step.support}
        step.support += diffusion_support(ctx.store, plan.anchor_ids, target, taken, channel)
        return step

    return one_round
