"""The read phase: query cues -> three views -> planner -> diffusion -> assembly, recorded as a typed trace."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any

import numpy as np

from ripplecli.cues import matched_text
from ripplecli.errors import InputError
from ripplecli.recall import memories
from ripplecli.recall.activation import spread
from ripplecli.recall.assembly import (
    DAY_DEMOTION,
    DAY_SHARE,
    FOCUS_DEMOTION,
    PLANNED_KIND,
    RELATIVE_DEMOTION,
    RELATIVE_FEW,
    SEED_DEPTH,
    SEED_FUSION_K,
    SEED_POOL,
    fuse_views,
    merge_support,
    order_by_paper_rho,
    rerank,
    said_first,
    seed_ranking,
    speaker_first,
    speaker_share,
)
from ripplecli.recall.context import Growth, RecallContext, RecallParams, RoundStep
from ripplecli.recall.diffusion import cosine_scorer, diffuse
from ripplecli.recall.index import RecallIndex
from ripplecli.recall.modes import MODES, Mode
from ripplecli.recall.planner import Planner, RulesPlanner, namespaced, question_cues
from ripplecli.recall.query import (
    QueryAnalyzer,
    QueryCues,
    RulesQueryAnalyzer,
    list_kind,
    with_owner,
    without_speakers,
)
from ripplecli.recall.sessions import Sessions, cue_weights, local_ranking, session_view
from ripplecli.recall.to_trace import by_channel, cues_of, seeds_of
from ripplecli.recall.views import Ranked, ViewHits, cue_view, dense_view, lexical_view
from ripplecli.runtime.base import Encoder
from ripplecli.store import passages
from ripplecli.store.db import Store
from ripplecli.store.lookups import SqlReads
from ripplecli.trace import (
    DayFocus,
    Evidence,
    Focus,
    Plan,
    Provenance,
    RecallResult,
    Round,
    SessionRank,
    Support,
    Trace,
    ViewHit,
)

__all__ = ["RecallParams", "Recaller"]  # RecallParams: its knobs, defined beside the context the strategies read

CENTRALITY_DEPTH = 60
ACTIVATION_TOP = 10  # new memories taken from spreading activation (docs/method.md, read phase)
WANTED_TOP = 5  # memories of the wanted kind added as support (dev: 3, 5 and 10 measured the same)
# How a memory shows it is of the kind a question wants (query.ANSWER_KINDS).
WANTED_KINDS: dict[str, Callable[[RecallIndex, int], bool]] = {
    "place": lambda index, mid: bool(index.locations_of.get(mid)),
}
# `ripple+sessions` (every constant chosen on conv-26, conv-30 and conv-41; docs/evaluation.md, "Sessions as units").
SESSION_FROM_SEEDS = 5  # sessions of the anchors and of this many top seeds are read further (session-local)
SESSION_LOCAL_TOP = 2  # memories taken from each such session, ranked by the question's vector and cues
# Session-local recall for list questions only: for every question it cost as much as it found (K = 30 -0.3 pts).
SESSION_LOCAL_LISTS_ONLY = True
SESSION_VIEW_DEPTH = 40  # memories the session view ranks (sessions in order, each by its members' fused rank)
LIST_COVERED = 10  # a list question's sessions count as covered when one of the first this-many seeds is there
LIST_TOP = 3  # items taken from sessions not yet covered, the best one per session (3 > 5 on the tuning set)
LIST_SESSIONS = 3  # a list target is met when the evidence head spans this many sessions
LIST_ROUNDS = 2  # a list question may take a second round while its target is still open
# Short-turn chats: when the question's own nearest memories are short turns (their median at most SHORT_HITS_WORDS
# words over the first SHORT_HITS_TOP), its speaker's name is what matched them ("Omar: stop" for "What should Omar
# avoid eating?"), so the dense view asks with the question's words without the chat speakers' names, plus
# NAME_WEIGHT of the whole question. Chosen on eval/shortturn-tuning.json (0.5 > 0.25 > 0 > 1.0) with LoCoMo's dev
# conversations as the check: their nearest memories are never that short, so LoCoMo keeps the whole question (the
# name-free vector there lost held-out temporal questions whose evidence only the speaker's name brought near).
SHORT_HITS_TOP = 10
SHORT_HITS_WORDS = 6
NAME_WEIGHT = 0.5


class Recaller:
    """Runs the read phase on one store; the encoder comes from a provider so it loads only when needed."""

    def __init__(self, store: Store, encoder: Callable[[], Encoder], on_demand: str = "first"):
        self.store = store
        self.encoder = encoder
        self.on_demand = on_demand  # "first": read on demand for the first question, then load whole; or "always"
        self._index: RecallIndex | None = None

    def index(self, refresh: bool = False, whole: bool = False) -> RecallIndex:
        """The recall maps; `refresh` (once per question) reloads them if the memories changed.

        A one-shot ask reads only what its question touches; a second question in the same process loads the
        maps whole, so a long-lived process answers the rest without SQL round trips. `whole`: a mode that walks
        whole sessions across the store reads them faster from the loaded maps."""
        current = self._index
        if current is None or (refresh and current.version != self.store.version("memories")):
            on_demand = self.on_demand == "always" or (self.on_demand == "first" and not whole)
            current = RecallIndex.open(self.store) if on_demand else self._load_whole()
        elif refresh and current.lazy and self.on_demand == "first":
            current = self._load_whole()
        self._index = current
        return current

    def warm(self) -> None:
        """Load the recall maps whole now (a long-lived process), instead of on its second question."""
        self._index = self._load_whole()

    def _load_whole(self) -> RecallIndex:
        """The recall maps and the vector index in memory, for a process that asks again."""
        self.store.vector_index(whole=True)
        return RecallIndex.load(self.store)

    def recall(
        self,
        question: str,
        params: RecallParams,
        analyzer: QueryAnalyzer | None = None,
        planner: Planner | None = None,
    ) -> RecallResult:
        """Evidence for `question` with the trajectory that found it; analyzer and planner are this call's own."""
        started = time.perf_counter()
        validate(question, params)
        analyzer = analyzer or RulesQueryAnalyzer()
        mode = MODES[params.mode]
        index = self.index(refresh=True, whole=mode.sessions)
        cues = with_owner(analyzer.analyze(question, index, params.as_of or datetime.now()), question, index)
        trace = Trace(cues_of(cues, getattr(analyzer, "last_failure", None)), params.mode)
        if index.count == 0:
            trace.note = "the store holds no memories"
            return RecallResult(question, params.mode, params.k, [], trace, None, time.perf_counter() - started)
        asked = matched_text(cues.text)
        content = without_speakers(asked, index.speakers)  # lexical view's text; the dense view's on short turns
        views, vector = self._views(mode, index, cues, params.k, asked, content)
        index.prefetch(mid for view in views for mid, _ in view.ranked)
        sessions = Sessions(index)
        if mode.sessions:
            by_session, ranked_sessions = session_view(views, sessions, SEED_FUSION_K, SESSION_VIEW_DEPTH)
            views.append(by_session)
            trace.sessions = [
                SessionRank(key, round(score, 4), sessions.members(key)) for key, score in ranked_sessions[:5]
            ]
            index.prefetch(mid for mid, _ in by_session.ranked)
        trace.seeds = {v.view: seeds_of(index, v.top(SEED_DEPTH[v.view])) for v in views}
        fused = fuse_views(views)
        base = seed_ranking(views, fused)
        ctx = RecallContext(
            store=self.store,
            index=index,
            encoder=self.encoder,
            planner=planner or RulesPlanner(),
            params=params,
            cues=cues,
            seeds=base[:SEED_POOL],
            fused=fused,
            vector=vector,
            sessions=sessions,
            kind=list_kind(question) if cues.many and (mode.share or mode.sessions) else None,
        )
        trace.query_cues.kind = ctx.kind
        growth = GROWTH[mode.growth](ctx)
        trace.rounds, trace.support = growth.rounds, growth.shown
        ranked = self._order(mode, base, fused, growth, vector)
        if mode.focus:
            ranked, trace.focus = _focus_on_speaker(ctx, ranked)
            ranked, trace.day = _focus_on_day(ctx, ranked)
        if mode.share and trace.focus is not None:
            ranked, trace.focus.shared = _speaker_share_of(ctx, views, ranked, trace.focus.speaker)
        if mode.focus and trace.day is None:  # last: a question about "yesterday" asks about nothing else
            ranked, trace.day = _relative_time(ctx, ranked)
        if mode.host != "none":
            ranked, trace.support = _host_links(ctx, mode, ranked, growth)
        evidence = self._evidence(ranked[: params.k], growth.support, views, vector)
        trace.evidence = [e.memory_id for e in evidence]
        return RecallResult(question, params.mode, params.k, evidence, trace, None, time.perf_counter() - started)

    # --- first hop -----------------------------------------------------------------------------
    def _vector(self, index: RecallIndex, question: str, content: str) -> np.ndarray:
        """The question's vector; when it names a speaker and its nearest memories are short turns, its words
        without the names with NAME_WEIGHT of the whole question (SHORT_HITS_WORDS)."""
        whole = self.encoder().encode([question])[0]
        if content == question:
            return whole
        nearest = [mid for mid, _ in self.store.vector_index().search(whole, SHORT_HITS_TOP)]
        index.prefetch(nearest)
        if not nearest or median_words(index.texts.get(mid, "") for mid in nearest) > SHORT_HITS_WORDS:
            return whole  # the second encoding is paid only where the name swamps
        blended = self.encoder().encode([content])[0] + NAME_WEIGHT * whole
        return blended / max(float(np.linalg.norm(blended)), 1e-12)

    def _views(
        self, mode: Mode, index: RecallIndex, cues: QueryCues, k: int, asked: str, content: str
    ) -> tuple[list[ViewHits], np.ndarray | None]:
        """The seeding views of this mode, each retrieved deep enough to fill K by fusion, and the question's vector
        (None for a mode that needs none); `asked` is the question's text without its relative time words (the
        dense view's), `content` that without the chat speakers' names too (the lexical view's). The views without
        a vector come first: the encoder may still be loading on its own thread."""
        depth = max(k, 50) + 30
        makers = {
            "lexical": lambda: lexical_view(self.store, content, depth),
            "cue": lambda: cue_view(self.index(), cues, depth),
        }
        made = {name: makers[name]() for name in mode.views if name != "dense"}
        vector = None
        if "dense" in mode.views or mode.growth != "none":
            self.store.vector_index()  # read from disk while the encoder may still be loading
            vector = self._vector(index, asked, content)
            if "dense" in mode.views:
                made["dense"] = dense_view(self.store, vector, depth)
        return [made[name] for name in mode.views], vector

    # --- ordering ------------------------------------------------------------------------------
    def _order(
        self, mode: Mode, base: list[int], fused: dict[int, float], growth: Growth, vector: np.ndarray | None
    ) -> list[int]:
        """Seeds by fused rank (reordered by activation when there is one), support merged below the head."""
        if mode.order == "rho":
            return order_by_paper_rho(self.store, base[:SEED_POOL], fused, growth.support, vector)
        if growth.centrality:
            base = rerank(base, growth.centrality)
        return merge_support(base, growth.support) if growth.support else base

    def _evidence(
        self, ids: list[int], growth: list[Support], views: list[ViewHits], vector: np.ndarray | None
    ) -> list[Evidence]:
        """Evidence objects with restatement, sources, every way each memory was found, and a long memory's passage
        nearest the question (what its tokens count)."""
        index = self.index()
        texts = index.texts
        chosen = passages.best_passages(
            {mid: texts.get(mid, "") for mid in ids}, self.store.vector_index(), self.store.passage_index, vector
        )
        reads = index.reads or SqlReads(self.store)  # a loaded index reads the turns by SQL
        refs = memories.sources(reads, ids)
        contexts = memories.reply_contexts(reads, ids, list(index.location_holders))
        whens = memories.whens(index, ids)
        found_by: dict[int, list[Provenance]] = {}
        for view in views:
            for rank, (mid, score) in enumerate(view.ranked, start=1):
                hit = ViewHit(view.view, rank, round(float(score), 4), rank <= SEED_DEPTH[view.view])
                found_by.setdefault(mid, []).append(hit)
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
                **_passage_fields(chosen.get(mid), texts.get(mid, "")),
                persons=sorted(index.persons_of.get(mid, ())),
                locations=sorted(index.locations_of.get(mid, ())),
                context=contexts.get(mid),
                conversation_id=whens[mid].conversation_id,
                title=whens[mid].title,
                said_at=whens[mid].said_at,
                refers_to=whens[mid].refers_to,
            )
            for rank, mid in enumerate(ids, start=1)
        ]


def _passage_fields(chosen: tuple[passages.Passage, int] | None, text: str) -> dict[str, Any]:
    """A memory's passage fields of its Evidence: a long memory's passage nearest the question (what its tokens
    count) and how many it has; a short one counts its whole text."""
    if chosen is None:
        return {"tokens": memories.count_tokens(text), "passage": None, "passages": 1, "passage_text": None}
    passage, count = chosen
    return {
        "tokens": memories.count_tokens(passage.text),
        "passage": passage.ordinal + 1,
        "passages": count,
        "passage_text": passage.text,
    }


def _focus_on_speaker(ctx: RecallContext, ranked: list[int]) -> tuple[list[int], Focus | None]:
    """A question about one speaker of the chat wants what that speaker said."""
    speaker = ctx.focus_speaker()
    if speaker is None:
        return ranked, None
    return speaker_first(ranked, ctx.index.speaker_of, speaker), Focus(speaker, FOCUS_DEMOTION)


def _focus_on_day(ctx: RecallContext, ranked: list[int]) -> tuple[list[int], DayFocus | None]:
    """A question naming a day in full wants what was said that day (on the speakers' clocks)."""
    span = ctx.cues.said_on
    said = set(ctx.index.said_within(*span)) if span else set()
    return _said_then(ctx, ranked, span, said, DAY_DEMOTION)


def _relative_time(ctx: RecallContext, ranked: list[int]) -> tuple[list[int], DayFocus | None]:
    """A question about "yesterday" or "last week" (read against its date) wants what was said then, or tells of
    then, on the speakers' clocks: not a memory that says "yesterday" about another day. A few such memories all
    come first (RELATIVE_FEW)."""
    span, index = ctx.cues.time_range if ctx.cues.relative else None, ctx.index
    then = {*index.said_within(*span), *index.grounded_within(*span)} if span else set()
    demotion = RELATIVE_DEMOTION if len(then) <= RELATIVE_FEW else DAY_DEMOTION
    return _said_then(ctx, ranked, span, then, demotion)


def _said_then(
    ctx: RecallContext, ranked: list[int], span: tuple[datetime, datetime] | None, said: set[int], demotion: float
) -> tuple[list[int], DayFocus | None]:
    """What was said (or told of) at the question's time first, unless nothing was or too much to tell apart."""
    if span is None or not said or len(said) > DAY_SHARE * ctx.index.count:
        return ranked, None
    return said_first(ranked, said, demotion), DayFocus([t.isoformat() for t in span], demotion, len(said))


def _speaker_share_of(
    ctx: RecallContext, views: list[ViewHits], ranked: list[int], speaker: str
) -> tuple[list[int], list[int]]:
    """The focus speaker's own memories nearest the question by its vector get a share of the evidence list."""
    dense = next((v for v in views if v.view == "dense"), None)
    own = [m for m, _ in dense.ranked if ctx.index.speaker_of.get(m) == speaker] if dense else []
    kind = ctx.kind_vector()
    if kind is not None and own:  # a list question: the speaker's memories nearest the question and its kind of item
        scores = ctx.store.vector_index().get_vectors(own) @ kind
        own = [own[i] for i in np.argsort(-scores, kind="stable")]
    return speaker_share(ranked, own)


def median_words(restatements: Iterable[str]) -> float:
    """Median word count of memories' texts, their speaker's name left out."""
    return float(np.median([memories.word_count(text.split(": ", 1)[-1]) for text in restatements]))


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


# --- growth strategies: RecallContext in, Growth (support and its trace part) out ---------------------
def grow_none(ctx: RecallContext) -> Growth:
    """Seeds only."""
    return Growth()


def grow_locality(ctx: RecallContext) -> Growth:
    """±1 contiguous memories of the top 3 seeds: the locality baseline the graph must beat."""
    found: list[Support] = []
    for anchor in ctx.by_fused(ctx.seeds)[:3]:
        found += diffuse(ctx.store, [anchor], "contiguity", None, set(ctx.seeds), hops=1, top=2)
    return Growth(found, shown={"contiguity": found})


def grow_expand(ctx: RecallContext) -> Growth:
    """Undirected 2-hop expansion from the top 3 seeds by edge weight, no target."""
    top = ctx.by_fused(ctx.seeds)[:3]
    found: list[Support] = []
    for channel in ("semantic", "structural", "contiguity"):
        found += diffuse(ctx.store, top, channel, None, set(ctx.seeds), hops=2, top=5)
    return Growth(found, shown={"expand": found})


def grow_ripple(ctx: RecallContext, one_round: RoundStep | None = None) -> Growth:
    """Planner-guided associative recall: spreading activation from the anchors and target cues."""
    return _with_wanted_kind(ctx, _rounds(ctx, one_round or _ripple_round))


def grow_sessions(ctx: RecallContext) -> Growth:
    """Ripple with sessions as units: session-local recall, and list questions reaching uncovered sessions."""
    return _with_wanted_kind(ctx, _rounds(ctx, _sessions_round, lists=True))


def _with_wanted_kind(ctx: RecallContext, growth: Growth) -> Growth:
    """A question that asks for a kind of memory (places) gets more of that kind, from other sessions too.

    The kind comes from the question's words, else from a planner that judged it still missing (the model planner)."""
    planned = (r.planner.target.wants for r in growth.rounds or [] if r.planner.target)
    wants = ctx.cues.wants or next((w for w in planned if w), None)
    holds = WANTED_KINDS.get(wants or "")
    if wants is None or holds is None:  # no kind asked for, or one this store cannot tell (an analyzer's own kinds)
        return growth
    index = ctx.index
    speaker = ctx.focus_speaker()
    taken = set(ctx.seeds) | {s.memory_id for s in growth.support}
    channel = wants if ctx.cues.wants else PLANNED_KIND  # a kind only a model planner asked for ranks last
    found = [
        Support(m, channel, score, [m])
        for m, score in sorted(ctx.fused.items(), key=lambda pair: (-pair[1], pair[0]))
        if m not in taken and holds(index, m) and speaker in (None, index.speaker_of.get(m))
    ][:WANTED_TOP]
    growth.shown = {**(growth.shown or {}), f"wanted {wants}": ctx.shown(found)}
    growth.support += found
    return growth


def grow_channel_diffusion(ctx: RecallContext) -> Growth:
    """The paper's literal per-channel 2-hop diffusion, target-scored, top 5 per channel."""
    return _rounds(ctx, _paper_round)


def _grow_cable(channel: str) -> Callable[[RecallContext], Growth]:
    """Ripple plus the antecedent channel (CABLE) diffused from the same anchors."""

    def grow(ctx: RecallContext) -> Growth:
        from ripplecli.recall.cable import with_antecedents

        return grow_ripple(ctx, with_antecedents(_ripple_round, channel))

    return grow


GROWTH: dict[str, Callable[[RecallContext], Growth]] = {
    "none": grow_none,
    "locality": grow_locality,
    "expand": grow_expand,
    "ripple": grow_ripple,
    "ripple+sessions": grow_sessions,
    "paper": grow_channel_diffusion,
    "ripple+cable": _grow_cable("antecedent"),
    "ripple+cable-nosub": _grow_cable("antecedent-nosub"),
}


def _host_links(
    ctx: RecallContext, mode: Mode, ranked: list[int], growth: Growth
) -> tuple[list[int], dict[str, list[Support]]]:
    """CABLE host mode: antecedent neighbours of the results replace the lowest-ranked ones."""
    from ripplecli.recall.cable import host_cable

    ranked, picks = host_cable(ctx.store, ranked, ctx.question_vector(), ctx.params.k, mode.host)
    growth.support += picks
    return ranked, {mode.host: ctx.shown(picks)}


def _rounds(ctx: RecallContext, one_round: RoundStep, lists: bool = False) -> Growth:
    """Plan, diffuse, add support; stop on STOP, no anchors, no new support or the round budget.

    With `lists`, a list question whose target is still open after the asked rounds gets one more (LIST_ROUNDS)."""
    index = ctx.index
    evidence = list(ctx.seeds)
    rounds: list[Round] = []
    growth = Growth(rounds=rounds)
    lists = lists and ctx.cues.many and ctx.params.rounds > 0
    budget = max(ctx.params.rounds, LIST_ROUNDS) if lists else ctx.params.rounds
    for number in range(budget):
        ranked = ctx.by_fused(evidence)
        plan = ctx.planner.plan(
            ctx.cues, memories.candidates(index, [(m, ctx.fused.get(m, 0.0)) for m in ranked]), index.speakers
        )
        record = Round(number + 1, plan)
        rounds.append(record)
        if not plan.proceed or not plan.anchors:
            record.stopped = plan.stop_reason or "no anchors"
            break
        step = one_round(ctx, plan, set(evidence))
        new = ctx.shown(step.support)
        record.support = by_channel(new)
        growth.centrality = growth.centrality or step.centrality  # the first round's view of the question
        if not new:
            record.stopped = "no new support"
            break
        growth.support += new
        evidence += [s.memory_id for s in new if s.memory_id not in evidence]
        if lists and number + 1 >= ctx.params.rounds:  # past the asked rounds: only an open list target goes on
            record.stopped = _list_stop(ctx, evidence, number + 1 >= budget)
            if record.stopped:
                break
    return growth


def _list_stop(ctx: RecallContext, evidence: list[int], last: bool) -> str | None:
    """Why a list question stops after this round (None: its target is still open and a round is left)."""
    spanned = len({ctx.sessions.of(m) for m in evidence[: SEED_POOL + ACTIVATION_TOP]})
    if spanned >= LIST_SESSIONS:
        return f"list target met: items from {spanned} sessions"
    return "round budget spent with the list target open" if last else None


def _ripple_round(ctx: RecallContext, plan: Plan, evidence: set[int]) -> Growth:
    """Spreading activation from the question's cues and the anchors: new support, and a centrality ranking."""
    missing = [c for c in plan.missing if ":" not in c]
    restart_cues = dict.fromkeys([*ctx.cues.concepts, *missing], 1.0)
    anchors = {a: 1.0 for a in plan.anchor_ids}
    activated = spread(ctx.index, restart_cues, anchors, set(), top=CENTRALITY_DEPTH)
    new = [a for a in activated if a.memory_id not in evidence][:ACTIVATION_TOP]
    support = [
        Support(a.memory_id, "activation", a.mass, [*a.via_anchors[:1], a.memory_id], [], a.via_cues) for a in new
    ]
    return Growth(support, [(a.memory_id, a.mass) for a in activated])


def _sessions_round(ctx: RecallContext, plan: Plan, evidence: set[int]) -> Growth:
    """A ripple round, then the rest of the sessions already reached and, for a list, sessions not yet reached."""
    step = _ripple_round(ctx, plan, evidence)
    taken = evidence | {s.memory_id for s in step.support}
    if ctx.cues.many or not SESSION_LOCAL_LISTS_ONLY:
        step.support += _session_local(ctx, plan, taken)
    if plan.target and plan.target.many:
        step.support += _list_items(ctx, taken | {s.memory_id for s in step.support})
    return step


def _question_weights(ctx: RecallContext) -> dict[str, float]:
    """IDF weights of the question's discriminating cues (not the chat's own speakers)."""
    return cue_weights(ctx.index, question_cues(ctx.cues, ctx.index.speakers))


def _session_local(ctx: RecallContext, plan: Plan, taken: set[int]) -> list[Support]:
    """The rest of each session the anchors and top seeds sit in, ranked by the question's vector and cues.

    A question about one speaker reads that speaker's turns only. Each session's best comes before any second best."""
    if not SESSION_LOCAL_TOP:
        return []
    weights = _question_weights(ctx)
    speaker = ctx.focus_speaker()
    picks: list[tuple[int, float, Support]] = []
    seen: set[int] = set()
    for start in dict.fromkeys([*plan.anchor_ids, *ctx.seeds[:SESSION_FROM_SEEDS]]):
        key = ctx.sessions.of(start)
        if key in seen:
            continue
        seen.add(key)
        ranked = _session_ranking(ctx, start, taken, speaker, weights)[:SESSION_LOCAL_TOP]
        picks += [(place, -score, Support(m, "session", score, [start, m])) for place, (m, score) in enumerate(ranked)]
    return [support for *_, support in sorted(picks, key=lambda p: (p[0], p[1], p[2].memory_id))]


def _session_ranking(
    ctx: RecallContext, start: int, taken: set[int], speaker: str | None, weights: dict[str, float]
) -> Ranked:
    """The rest of `start`'s session not yet taken (the focus speaker's turns only), ranked by the question."""
    rest = [m for m in ctx.sessions.members(start) if m not in taken and speaker in (None, ctx.index.speaker_of.get(m))]
    kind = ctx.kind_vector()
    return local_ranking(ctx.store, ctx.index, rest, kind if kind is not None else ctx.vector, weights)


def _list_items(ctx: RecallContext, taken: set[int]) -> list[Support]:
    """A list question: the best item of each session the first hop reached but its top seeds did not.

    Sessions come from the views' hits (bounded); each is read like a session-local one (the speaker's turns, by
    the question's vector and cues), and its best memory stands for it; the best sessions win."""
    covered = {ctx.sessions.of(m) for m in ctx.seeds[:LIST_COVERED]}
    speaker = ctx.focus_speaker()
    weights = _question_weights(ctx)
    best: list[tuple[float, int, int]] = []
    for m in sorted(ctx.fused, key=lambda mid: (-ctx.fused[mid], mid)):
        key = ctx.sessions.of(m)
        if key in covered:
            continue
        covered.add(key)
        ranked = _session_ranking(ctx, m, taken, speaker, weights)[:1]
        best += [(-score, mid, key) for mid, score in ranked]
    return [Support(mid, "list", -neg, [mid]) for neg, mid, _ in sorted(best)[:LIST_TOP]]


def _paper_round(ctx: RecallContext, plan: Plan, evidence: set[int]) -> Growth:
    """Semantic channel scored by the target sentence's vector, structural by the target cues."""
    store = ctx.store
    target_vector = ctx.encoder().encode([plan.target.restatement])[0] if plan.target else ctx.question_vector()
    by_vector = cosine_scorer(store, target_vector)
    by_cues = _cue_scorer(ctx.index, plan)
    found: list[Support] = []
    channels = {"semantic": by_vector, "structural": by_cues, "contiguity": by_vector, "antecedent": by_vector}
    for channel, scorer in channels.items():
        found += diffuse(store, plan.anchor_ids, channel, scorer, evidence, hops=2, top=5)
    return Growth(found)


def _cue_scorer(index: RecallIndex, plan: Plan):
    """Share of the target's cues a candidate carries."""
    t = plan.target
    wanted = namespaced(t.concepts, t.persons, t.locations) if t else set()

    def score(ids: list[int]) -> dict[int, float]:
        if not wanted:
            return dict.fromkeys(ids, 0.0)
        return {
            c.memory_id: len(c.cues & wanted) / len(wanted) for c in memories.candidates(index, [(i, 0.0) for i in ids])
        }

    return score
