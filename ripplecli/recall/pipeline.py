"""The read phase: query cues -> three views -> planner -> diffusion -> assembly, recorded as a trace."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ripplecli.errors import InputError
from ripplecli.recall import memories
from ripplecli.recall.activation import spread
from ripplecli.recall.assembly import (
    FOCUS_DEMOTION,
    SEED_DEPTH,
    SEED_POOL,
    focus_speaker,
    fuse_views,
    merge_support,
    rerank,
    rho_order,
    seed_ranking,
    speaker_first,
)
from ripplecli.recall.diffusion import Support, cosine_scorer, diffuse
from ripplecli.recall.index import RecallIndex
from ripplecli.recall.modes import MODES, Mode
from ripplecli.recall.planner import Plan, RulesPlanner
from ripplecli.recall.query import QueryCues, RulesQueryAnalyzer
from ripplecli.recall.tracing import cues_dict, group_support, plan_dict, seed_rows, support_dict
from ripplecli.recall.views import Ranked, ViewHits, cue_view, dense_view, lexical_view
from ripplecli.store.db import Store
from ripplecli.trace import Evidence, RecallResult

CENTRALITY_DEPTH = 60
ACTIVATION_TOP = 10  # new memories taken from spreading activation (DESIGN §6)
WANTED_TOP = 5  # memories of the wanted kind added as support (dev: 3, 5 and 10 measured the same)
# How a memory shows it is of the kind a question wants (query.ANSWER_KINDS).
WANTED_KINDS: dict[str, Callable[[RecallIndex, int], bool]] = {
    "place": lambda index, mid: bool(index.locations_of.get(mid)),
}


@dataclass
class Growth:
    """What an associative step adds: new support, and optionally an activation ranking that reorders seeds."""

    support: list[Support] = field(default_factory=list)
    centrality: Ranked = field(default_factory=list)


@dataclass
class RecallParams:
    """Knobs of one recall; defaults are the measured best."""

    k: int = 30
    mode: str = "ripple"
    rounds: int = 1
    as_of: datetime | None = None


class Recaller:
    """Runs the read phase on one store; the encoder comes from a provider so it loads only when needed."""

    def __init__(self, store: Store, encoder: Callable[[], Any], analyzer=None, planner=None):
        self.store = store
        self.encoder = encoder
        self.analyzer = analyzer or RulesQueryAnalyzer()
        self._index: RecallIndex | None = None
        self.planner = planner or RulesPlanner()

    def index(self, refresh: bool = False) -> RecallIndex:
        """The in-memory recall maps; `refresh` (once per question) reloads them if the memories changed."""
        if self._index is None or (refresh and self._index.version != self.store.version("memories")):
            self._index = RecallIndex.load(self.store)
        return self._index

    def recall(self, question: str, params: RecallParams) -> RecallResult:
        """Evidence for `question` with the trajectory that found it."""
        started = time.perf_counter()
        validate(question, params)
        mode = MODES[params.mode]
        index = self.index(refresh=True)
        cues = self.analyzer.analyze(question, index, params.as_of or datetime.now())
        trace: dict[str, Any] = {"query_cues": cues_dict(cues), "mode": params.mode}
        if getattr(self.analyzer, "last_failure", None):  # the LLM analyzer's dropped names or rules fallback
            trace["query_cues"]["failure"] = self.analyzer.last_failure
        if index.count == 0:
            trace["note"] = "the store holds no memories"
            return RecallResult(question, params.mode, params.k, [], trace, None, time.perf_counter() - started)
        vector = self.encoder().encode([cues.text])[0] if "dense" in mode.views or mode.growth != "none" else None
        views = self._views(mode, cues, vector, params.k)
        trace["seeds"] = {v.view: seed_rows(index, v.top(SEED_DEPTH[v.view])) for v in views}
        fused = fuse_views(views)
        base = seed_ranking(views, fused)
        seeds = base[:SEED_POOL]
        growth = GROWTH[mode.growth](self, cues, seeds, fused, vector, params, trace)
        ranked = self._order(mode, base, fused, growth, vector)
        if mode.focus:
            ranked = self._focus(cues, ranked, trace)
        if mode.host != "none":
            ranked = _host_links(self, mode, ranked, vector, params, growth, trace)
        evidence = self._evidence(ranked[: params.k], growth.support, views)
        trace["evidence"] = [e.memory_id for e in evidence]
        return RecallResult(question, params.mode, params.k, evidence, trace, None, time.perf_counter() - started)

    # --- first hop -----------------------------------------------------------------------------
    def _views(self, mode: Mode, cues: QueryCues, vector, k: int) -> list[ViewHits]:
        """The seeding views of this mode, each retrieved deep enough to fill K by fusion."""
        depth = max(k, 50) + 30
        makers = {
            "dense": lambda: dense_view(self.store, vector, depth),
            "lexical": lambda: lexical_view(self.store, cues.text, depth),
            "cue": lambda: cue_view(self.index(), cues, depth),
        }
        return [makers[name]() for name in mode.views]

    # --- ordering ------------------------------------------------------------------------------
    def _order(self, mode: Mode, base: list[int], fused, growth: Growth, vector):
        """Seeds by fused rank (reordered by activation when there is one), support merged below the head."""
        if mode.order == "rho":
            return rho_order(self.store, base[:SEED_POOL], fused, growth.support, vector)
        if growth.centrality:
            base = rerank(base, growth.centrality)
        return merge_support(base, growth.support) if growth.support else base

    def _focus(self, cues: QueryCues, ranked: list[int], trace: dict[str, Any]) -> list[int]:
        """A question about one speaker of the chat wants what that speaker said."""
        index = self.index()
        speaker = focus_speaker(cues.persons, index.speakers)
        if speaker is None:
            return ranked
        trace["focus"] = {"speaker": speaker, "others_demoted": FOCUS_DEMOTION}
        return speaker_first(ranked, index.speaker_of, speaker)

    def _evidence(self, ids: list[int], growth: list[Support], views: list[ViewHits]) -> list[Evidence]:
        """Evidence objects with restatement, sources and every way each memory was found."""
        index = self.index()
        texts = index.texts
        refs = memories.sources(self.store, ids)
        contexts = memories.reply_contexts(self.store, ids, list(index.location_holders))
        found_by: dict[int, list[dict[str, Any]]] = {}
        for view in views:
            for rank, (mid, score) in enumerate(view.ranked, start=1):
                found_by.setdefault(mid, []).append(
                    {
                        "view": view.view,
                        "rank": rank,
                        "score": round(float(score), 4),
                        "seed": rank <= SEED_DEPTH[view.view],
                    }
                )
        for s in growth:
            found_by.setdefault(s.memory_id, []).append(s.provenance())
        return [
            Evidence(
                memory_id=mid,
                restatement=texts.get(mid, ""),
                score=0.0,
                rank=rank,
                source_turns=[r.turn_id for r in refs.get(mid, [])],
                sources=refs.get(mid, []),
                provenance=found_by.get(mid, []),
                tokens=memories.count_tokens(texts.get(mid, "")),
                persons=sorted(index.persons_of.get(mid, ())),
                locations=sorted(index.locations_of.get(mid, ())),
                context=contexts.get(mid),
            )
            for rank, mid in enumerate(ids, start=1)
        ]


def validate(question: str, params: RecallParams) -> None:
    """Bad arguments are one clear line, before any work."""
    if not question or not question.strip():
        raise InputError("the question is empty")
    if params.k < 1:
        raise InputError(f"--k must be at least 1 (got {params.k})")
    if params.rounds < 0:
        raise InputError(f"--rounds must be 0 or more (got {params.rounds})")
    if params.mode not in MODES:
        raise InputError(f"unknown mode '{params.mode}' (choose from: {', '.join(MODES)})")


# --- growth strategies ---------------------------------------------------------------------------
def grow_none(recaller: Recaller, cues, seeds, fused, vector, params, trace) -> Growth:
    """Seeds only."""
    return Growth()


def grow_locality(recaller: Recaller, cues, seeds, fused, vector, params, trace) -> Growth:
    """±1 contiguous memories of the top 3 seeds: the locality baseline the graph must beat."""
    top = sorted(seeds, key=lambda m: -fused.get(m, 0.0))[:3]
    found = []
    for anchor in top:
        found += diffuse(recaller.store, [anchor], "contiguity", None, set(seeds), hops=1, top=2)
    trace["support"] = {"contiguity": [support_dict(s) for s in found]}
    return Growth(found)


def grow_expand(recaller: Recaller, cues, seeds, fused, vector, params, trace) -> Growth:
    """Undirected 2-hop expansion from the top 3 seeds by edge weight, no target."""
    top = sorted(seeds, key=lambda m: -fused.get(m, 0.0))[:3]
    found = []
    for channel in ("semantic", "structural", "contiguity"):
        found += diffuse(recaller.store, top, channel, None, set(seeds), hops=2, top=5)
    trace["support"] = {"expand": [support_dict(s) for s in found]}
    return Growth(found)


def grow_ripple(recaller: Recaller, cues, seeds, fused, vector, params, trace, one_round=None) -> Growth:
    """Planner-guided associative recall: spreading activation from the anchors and target cues."""
    growth = _rounds(recaller, cues, seeds, fused, vector, params, trace, one_round or _ripple_round)
    return _with_wanted_kind(recaller, cues, seeds, fused, growth, trace)


def _with_wanted_kind(recaller: Recaller, cues: QueryCues, seeds, fused, growth: Growth, trace) -> Growth:
    """A question that asks for a kind of memory (places) gets more of that kind, from other sessions too."""
    holds = WANTED_KINDS.get(cues.wants or "")
    if holds is None:  # no kind asked for, or one this store cannot tell (an analyzer's own kinds)
        return growth
    index = recaller.index()
    speaker = focus_speaker(cues.persons, index.speakers)
    taken = set(seeds) | {s.memory_id for s in growth.support}
    found = [
        Support(m, cues.wants, score, [m])
        for m, score in sorted(fused.items(), key=lambda pair: (-pair[1], pair[0]))
        if m not in taken and holds(index, m) and speaker in (None, index.speaker_of.get(m))
    ][:WANTED_TOP]
    rows = [support_dict(s, index.texts.get(s.memory_id, "")) for s in found]
    trace.setdefault("support", {})[f"wanted {cues.wants}"] = rows
    growth.support += found
    return growth


def grow_paper(recaller: Recaller, cues, seeds, fused, vector, params, trace) -> Growth:
    """The paper's literal per-channel 2-hop diffusion, target-scored, top 5 per channel."""
    return _rounds(recaller, cues, seeds, fused, vector, params, trace, _paper_round)


GROWTH: dict[str, Callable[..., Growth]] = {
    "none": grow_none,
    "locality": grow_locality,
    "expand": grow_expand,
    "ripple": grow_ripple,
    "paper": grow_paper,
    "ripple+cable": lambda *args: _grow_cable(*args, channel="antecedent"),
    "ripple+cable-nosub": lambda *args: _grow_cable(*args, channel="antecedent-nosub"),
}


def _grow_cable(recaller, cues, seeds, fused, vector, params, trace, channel: str) -> Growth:
    """Ripple plus the antecedent channel (CABLE) diffused from the same anchors."""
    from ripplecli.recall.cable import with_antecedents

    return grow_ripple(recaller, cues, seeds, fused, vector, params, trace, with_antecedents(_ripple_round, channel))


def _host_links(recaller, mode: Mode, ranked: list[int], vector, params, growth: Growth, trace) -> list[int]:
    """CABLE host mode: antecedent neighbours of the results replace the lowest-ranked ones."""
    from ripplecli.recall.cable import host_cable

    ranked, picks = host_cable(recaller.store, ranked, vector, params.k, mode.host)
    texts = recaller.index().texts
    trace["support"] = {mode.host: [support_dict(s, texts.get(s.memory_id, "")) for s in picks]}
    growth.support += picks
    return ranked


def _rounds(recaller, cues, seeds, fused, vector, params, trace, one_round) -> Growth:
    """Plan, diffuse, add support; stop on STOP, no anchors, no new support or the round budget."""
    index = recaller.index()
    evidence = list(seeds)
    growth = Growth()
    trace["rounds"] = []
    for number in range(params.rounds):
        ranked = sorted(evidence, key=lambda m: -fused.get(m, 0.0))
        plan = recaller.planner.plan(
            cues, memories.candidates(index, [(m, fused.get(m, 0.0)) for m in ranked]), index.speakers
        )
        record: dict[str, Any] = {"round": number + 1, "planner": plan_dict(plan, index)}
        trace["rounds"].append(record)
        if not plan.proceed or not plan.anchors:
            record["stopped"] = plan.stop_reason or "no anchors"
            break
        step = one_round(recaller, cues, plan, set(evidence), vector, index.speakers)
        new = step.support
        record["support"] = group_support(new, index)
        growth.centrality = growth.centrality or step.centrality  # the first round's view of the question
        if not new:
            record["stopped"] = "no new support"
            break
        growth.support += new
        evidence += [s.memory_id for s in new if s.memory_id not in evidence]
    return growth


def _ripple_round(recaller, cues, plan: Plan, evidence: set[int], vector, speakers) -> Growth:
    """Spreading activation from the question's cues and the anchors: new support, and a centrality ranking."""
    missing = [c for c in plan.missing if ":" not in c]
    restart_cues = dict.fromkeys([*cues.concepts, *missing], 1.0)
    anchors = {a: 1.0 for a in plan.anchors}
    activated = spread(recaller.index(), restart_cues, anchors, set(), top=CENTRALITY_DEPTH)
    new = [a for a in activated if a.memory_id not in evidence][:ACTIVATION_TOP]
    support = [
        Support(a.memory_id, "activation", a.mass, [*a.via_anchors[:1], a.memory_id], [], a.via_cues) for a in new
    ]
    return Growth(support, [(a.memory_id, a.mass) for a in activated])


def _paper_round(recaller, cues, plan: Plan, evidence: set[int], vector, speakers) -> Growth:
    """Semantic channel scored by the target sentence's vector, structural by the target cues."""
    store = recaller.store
    target_vector = recaller.encoder().encode([plan.target.restatement])[0] if plan.target else vector
    by_vector = cosine_scorer(store, target_vector)
    by_cues = _cue_scorer(recaller.index(), plan)
    found = []
    channels = {"semantic": by_vector, "structural": by_cues, "contiguity": by_vector, "antecedent": by_vector}
    for channel, scorer in channels.items():
        found += diffuse(store, plan.anchors, channel, scorer, evidence, hops=2, top=5)
    return Growth(found)


def _cue_scorer(index: RecallIndex, plan: Plan):
    """Share of the target's cues a candidate carries."""
    wanted = set(question_cues_from_target(plan))

    def score(ids: list[int]) -> dict[int, float]:
        if not wanted:
            return dict.fromkeys(ids, 0.0)
        return {
            c.memory_id: len(c.cues & wanted) / len(wanted) for c in memories.candidates(index, [(i, 0.0) for i in ids])
        }

    return score


def question_cues_from_target(plan: Plan) -> list[str]:
    """The target's cues in the planner's namespace."""
    if not plan.target:
        return []
    t = plan.target
    return [*t.concepts, *(f"person:{p}" for p in t.persons), *(f"location:{x}" for x in t.locations)]
