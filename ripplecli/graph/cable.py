"""CABLE write side (docs/method.md, CABLE): antecedent links that reach what direct similarity cannot.

Per memory: antecedent queries (step 1, ripplecli.graph.antecedents); B = its 15 nearest older memories,
H = the 15 nearest older memories of each query, candidates H \\ B (step 2); verification (step 3,
ripplecli.graph.verifiers); a directed edge older → newer in channel `antecedent`, weight = the verifier's
score, at most `cap` per memory (step 4). Each batch is written in one transaction together with the list of
memories it processed (`cable_done`), so an interrupted run leaves the store consistent and a re-run resumes.
"""

from __future__ import annotations

import json
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from functools import partial
from operator import gt
from typing import Any

import numpy as np

from ripplecli.cues import canonical_name
from ripplecli.graph.antecedents import (
    AntecedentQuery,
    MemoryView,
    about_self,
    focus_cues,
    low_information,
)
from ripplecli.graph.verifiers import Candidate, RulesVerifier, concept_words, rare_shared
from ripplecli.model import Edge
from ripplecli.protocols import LLM, Encoder, VectorIndex
from ripplecli.registry import QUERIERS, VERIFIERS
from ripplecli.runtime.llm import take_failures
from ripplecli.store import queries
from ripplecli.store.db import Store

CHANNELS = {True: "antecedent", False: "antecedent-nosub"}  # the ablation lives beside the real links
RARE_MIN = 3  # a concept held by this many memories still counts as rare in a small store
EXACT_LIMIT = 256  # neighbours fetched in one batched ANN call before filtering to older memories
BACKFILL_BATCH = 100

Progress = Callable[[int, int], None]


@dataclass
class CableParams:
    """How links are built; recorded in the store's meta (`cable`) the first time links are written."""

    top: int = 15  # |B| and |H| per query
    cap: int = 3  # in-degree cap per memory
    subtract: bool = True  # candidates H \\ B (False: H, the ablation)
    margin: float = 0.0  # rules verifier: cos(q, candidate) - cos(q, memory); dev: larger margins kept fewer
    # same-question pairs, not more (0.25 kept none of 32), so the query must fit the candidate at least as well
    floor: float = 0.55  # rules verifier: cos(q, candidate); dev: same-question share 3.2 % -> 3.8 % above it
    rare_share: float = 0.05  # rules verifier: a shared concept held by ≤ 5 % of the memories (dev: ~30 of 600
    # memories; same-question share of candidate pairs 0.4 % without the rule, 2.8 % with it)
    querier: str = "rules"
    verifier: str = "rules"
    rules: int = 2  # version of the rules above: links built by older rules are redone (see `pending`)

    @property
    def channel(self) -> str:
        """The edge channel of this variant."""
        return CHANNELS[self.subtract]


@dataclass
class CableReport:
    """What one linking run did."""

    memories: int = 0
    skipped: int = 0
    candidates: int = 0
    edges: int = 0
    failures: int = 0
    seconds: float = 0.0
    samples: list[dict[str, Any]] = field(default_factory=list)

    def add(self, other: CableReport) -> None:
        """Accumulate a batch's figures."""
        for name in ("memories", "skipped", "candidates", "edges", "failures", "seconds"):
            setattr(self, name, getattr(self, name) + getattr(other, name))


class CableLinker:
    """Builds antecedent links for given memories of one open store."""

    def __init__(self, store: Store, encoder: Encoder, params: CableParams | None = None, llm: LLM | None = None):
        self.store = store
        self.encoder = encoder
        self.params = params or CableParams()
        model = None if llm is None else lambda: llm  # none: a querier or verifier that needs one is an InputError
        self.querier = QUERIERS.create(self.params.querier, model)
        self.verifier = VERIFIERS.create(self.params.verifier, model)
        if isinstance(self.verifier, RulesVerifier):  # its thresholds are part of the recorded parameters
            self.verifier = RulesVerifier(self.params.margin, self.params.floor)

    # --- entry points ----------------------------------------------------------------------------
    def link(self, ids: Sequence[int], run_id: int = 0) -> CableReport:
        """Links into `ids` (already stored, vectors indexed), written with their done-marks in one transaction."""
        started = time.perf_counter()
        report = CableReport()
        views = load_views(self.store, sorted(ids))
        edges = self._edges(views, report)
        failures = self._failures()
        with self.store.transaction():
            self._write(views, edges, failures, run_id)
        report.edges, report.failures = len(edges), len(failures)
        report.seconds = time.perf_counter() - started
        return report

    def pending(self) -> list[int]:
        """Memories this variant has not processed yet (a reused id of a forgotten memory counts as new).

        Links built with other parameters are all redone, so a store never mixes two settings silently."""
        recorded = self.store.get_meta(f"cable:{self.params.channel}")
        if recorded is not None and recorded != asdict(self.params):
            return queries.memory_ids(self.store)
        return queries.cable_pending(self.store, self.params.channel)

    def backfill(self, progress: Progress | None = None, batch: int = BACKFILL_BATCH) -> CableReport:
        """Process every pending memory in batches, each committed on its own: an interrupted run resumes."""
        todo = self.pending()
        report = CableReport()
        tick = progress or (lambda done, total: None)
        tick(0, len(todo))
        for start in range(0, len(todo), batch):
            report.add(self.link(todo[start : start + batch]))
            tick(min(start + batch, len(todo)), len(todo))
        return report

    # --- steps -----------------------------------------------------------------------------------
    def _edges(self, views: list[MemoryView], report: CableReport) -> list[tuple[Edge, dict[str, Any]]]:
        """Queries, B and H, subtraction, verification and the cap for each memory."""
        speakers = store_speakers(self.store)
        frequency = cue_frequency(self.store, {c for v in views for c in v.cues})
        asked: dict[int, list[AntecedentQuery]] = {}
        for view in views:
            if low_information(view, speakers) or not about_self(view):  # nothing of its speaker's to explain
                report.skipped += 1
                continue
            made = self.querier.queries(view, focus_cues(view, frequency, speakers))
            if made:
                asked[view.memory_id] = made
        report.memories += len(views)
        found = self._search(views, asked)
        rarity = self._rarity(views, speakers)
        best = {mid: self._best_candidates(mid, queries, found) for mid, queries in asked.items()}
        wanted = sorted({other for candidates in best.values() for other in candidates})
        others = {v.memory_id: v for v in load_views(self.store, wanted)}  # one query for the whole batch
        edges = []
        for view in views:
            if best.get(view.memory_id):
                edges += self._verified(view, best[view.memory_id], others, speakers, rarity, report)
        return edges

    def _rarity(self, views: list[MemoryView], speakers: set[str]) -> tuple[dict[str, int], int]:
        """How many memories hold each concept word of the batch, and the most a rare one may have."""
        words = {w for v in views for w in concept_words(v, speakers)}
        limit = max(RARE_MIN, int(self.params.rare_share * self.store.count("memories")))
        return concept_frequency(self.store, words), limit

    def _search(self, views: list[MemoryView], asked: dict[int, list[AntecedentQuery]]) -> dict[str, Any]:
        """Own and query vectors, and the top older memories of each, from the ANN index."""
        index = self.store.vector_index()
        ids = [v.memory_id for v in views if v.memory_id in asked]
        texts = [q.text for mid in ids for q in asked[mid]]
        if not ids:
            return {"own": {}, "queries": {}, "vectors": {}}
        own = index.get_vectors(ids)
        encoded = np.asarray(self.encoder.encode(texts), dtype=np.float32)
        owners = [mid for mid in ids for _ in asked[mid]]
        hits = older_neighbours(index, np.vstack([own, encoded]), [*ids, *owners], self.params.top)
        by_query: dict[int, list[tuple[np.ndarray, list[tuple[int, float]]]]] = defaultdict(list)
        for row, mid in enumerate(owners):
            by_query[mid].append((encoded[row], hits[len(ids) + row]))
        return {
            "own": {mid: hits[i] for i, mid in enumerate(ids)},
            "queries": by_query,
            "vectors": {mid: own[i] for i, mid in enumerate(ids)},
        }

    def _best_candidates(self, mid: int, queries, found) -> dict[int, tuple[AntecedentQuery, float, float]]:
        """Candidates H \\ B, each with the query that reached it best, its match and the memory's own match."""
        direct = {m for m, _ in found["own"][mid]} if self.params.subtract else set()
        best: dict[int, tuple[AntecedentQuery, float, float]] = {}
        for query, (vector, hits) in zip(queries, found["queries"][mid], strict=True):
            own_match = float(vector @ found["vectors"][mid])
            for other, sim in hits:
                if other not in direct and (other not in best or sim > best[other][1]):
                    best[other] = (query, sim, own_match)
        return self._beyond_direct(mid, best, found) if self.params.subtract else best

    def _verified(
        self,
        view: MemoryView,
        best: dict[int, tuple[AntecedentQuery, float, float]],
        others: dict[int, MemoryView],
        speakers: set[str],
        rarity: tuple[dict[str, int], int],
        report: CableReport,
    ) -> list[tuple[Edge, dict[str, Any]]]:
        """The candidates verified, strongest `cap` kept."""
        mid = view.memory_id
        usable = [o for o in sorted(best) if o in others and not low_information(others[o], speakers)]
        frequency, limit = rarity
        candidates = [  # small talk explains nothing either
            Candidate(others[o], *best[o], rare_shared(view, others[o], best[o][0], frequency, limit, speakers))
            for o in usable
        ]
        report.candidates += len(candidates)
        verdicts = self.verifier.verify(view, candidates, speakers)
        accepted = sorted(
            ((c, v) for c, v in zip(candidates, verdicts, strict=True) if v.accepted),
            key=lambda pair: (-pair[1].score, pair[0].memory.memory_id),
        )[: self.params.cap]
        return [(Edge(c.memory.memory_id, mid, self.params.channel, v.score), _info(c, v, self)) for c, v in accepted]

    def _beyond_direct(self, mid: int, best: dict[int, Any], found: dict[str, Any]) -> dict[int, Any]:
        """Drop candidates tied with B's weakest member: direct similarity reaches them as well."""
        own = found["own"][mid]
        if len(own) < self.params.top or not best:
            return best
        weakest = min(s for _, s in own)
        ids = sorted(best)
        sims = self.store.vector_index().get_vectors(ids) @ found["vectors"][mid]
        return {o: best[o] for o, sim in zip(ids, sims.tolist(), strict=True) if sim < weakest - 1e-6}

    def _failures(self) -> list[dict[str, Any]]:
        """Model calls that fell back to the rules since the last batch."""
        return take_failures(self.querier, self.verifier)

    def _write(self, views: list[MemoryView], edges, failures: list[dict[str, Any]], run_id: int) -> None:
        """Replace the batch's incoming links of this variant and mark the batch done (caller's transaction)."""
        ids = [v.memory_id for v in views]
        channel = self.params.channel
        self.store.delete_incoming(channel, ids)
        infos = [json.dumps(info, ensure_ascii=False, sort_keys=True) for _, info in edges]
        self.store.add_edges([e for e, _ in edges], infos)
        per_memory = Counter(e.dst for e, _ in edges)
        self.store.replace_cable_done(channel, ids, [v.run_id for v in views], [per_memory.get(i, 0) for i in ids])
        self.store.set_meta(f"cable:{channel}", asdict(self.params))
        self.store.add_failures(run_id, failures)


# --- helpers ---------------------------------------------------------------------------------------
def _info(candidate: Candidate, verdict: Any, linker: CableLinker) -> dict[str, Any]:
    """What the trace shows of an edge: the query that found it and why it was accepted."""
    return {
        "query": candidate.query.text,
        "relation": candidate.query.relation,
        "reason": verdict.reason,
        "querier": linker.params.querier,
        "verifier": linker.params.verifier,
    }


def older_neighbours(
    index: VectorIndex, vectors: np.ndarray, owners: list[int], top: int
) -> list[list[tuple[int, float]]]:
    """For each row, its `top` nearest memories with a smaller id than its owner (memory id order is age)."""
    live = np.array(sorted(index.ids()), dtype=np.int64)
    newer = [len(live) - int(np.searchsorted(live, owner)) for owner in owners]
    k = min(len(live), top + max(newer, default=0))
    if k <= EXACT_LIMIT:
        found = index.search_many(vectors, k)
        return [[(m, s) for m, s in hits if m < owner][:top] for hits, owner in zip(found, owners, strict=True)]
    older = [partial(gt, owner) for owner in owners]  # m -> owner > m
    return [index.search(v, top, allowed=below) for v, below in zip(vectors, older, strict=True)]


def load_views(store: Store, ids: list[int]) -> list[MemoryView]:
    """MemoryViews of these ids (speaker = the speaker of the first source turn), in id order."""
    if not ids:
        return []
    rows = queries.memory_views(store, ids)
    cues: dict[int, list[str]] = defaultdict(list)
    for mid, cue in queries.concept_cues_of(store, ids):
        cues[mid].append(cue)
    return [
        MemoryView(mid, conv, speaker, text, list(persons), cues.get(mid, []), stamp, run)
        for mid, conv, speaker, text, persons, stamp, run in rows
    ]


def store_speakers(store: Store) -> set[str]:
    """Canonical names of every chat's speakers: sharing them says nothing about two memories."""
    return {canonical_name(name) for name in store.people()[0]}


def cue_frequency(store: Store, cues: set[str]) -> dict[str, int]:
    """How many memories hold each cue."""
    if not cues:
        return {}
    return {cue: int(n) for cue, n in queries.concept_cue_counts(store, sorted(cues))}


def concept_frequency(store: Store, words: set[str]) -> dict[str, int]:
    """How many memories' texts contain each word (as a substring: "new" counts "news" too, so rare is strict).

    Counted in the text, not in the cues: a word rare among cues ("new" of "new website") is common in speech."""
    if not words:
        return {}
    return {word: int(n) for word, n in queries.word_counts(store, sorted(words))}


# --- figures for `ripple graph stats` ----------------------------------------------------------------
def antecedent_stats(store: Store, channel: str = "antecedent") -> dict[str, Any] | None:
    """Edges, memories with ≥ 1, in/out degree, and how many edges join memories outside each other's top-15."""
    pairs = queries.edge_pairs(store, channel)
    if not pairs:
        return None
    into, out = Counter(d for _, d in pairs), Counter(s for s, _ in pairs)
    outside_dst, outside_both = _outside_top(store, pairs, CableParams().top)
    return {
        "edges": len(pairs),
        "memories_with_antecedent": len(into),
        "memories_as_antecedent": len(out),
        "mean_in_degree": round(len(pairs) / len(into), 3),
        "max_in_degree": max(into.values()),
        "mean_out_degree": round(len(pairs) / len(out), 3),
        "max_out_degree": max(out.values()),
        "in_degree_cap": (store.get_meta(f"cable:{channel}") or {}).get("cap"),
        "share_outside_dst_top": round(outside_dst / len(pairs), 4),
        "share_outside_both_tops": round(outside_both / len(pairs), 4),
    }


def _outside_top(store: Store, pairs: list[tuple[int, int]], top: int) -> tuple[int, int]:
    """Edges whose source is not in the target's top older memories, and those where neither is in the other's."""
    index = store.vector_index()
    dsts = sorted({d for _, d in pairs})
    srcs = sorted({s for s, _ in pairs})
    older = dict(zip(dsts, older_neighbours(index, index.get_vectors(dsts), dsts, top), strict=True))
    anywhere = dict(zip(srcs, index.search_many(index.get_vectors(srcs), top + 1), strict=True))
    outside_dst = sum(s not in {m for m, _ in older[d]} for s, d in pairs)
    outside_both = sum(
        s not in {m for m, _ in older[d]} and d not in {m for m, _ in anywhere[s] if m != s} for s, d in pairs
    )
    return outside_dst, outside_both
