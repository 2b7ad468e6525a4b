"""Builds the edges of a batch of new memories against the store, one memory at a time in id order."""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from ripplecli.config import GraphParams
from ripplecli.graph.edges import CueProfile, keep_strongest, structural_score
from ripplecli.model import Edge
from ripplecli.store import queries
from ripplecli.store.db import Store


@dataclass
class MemoryCues:
    """What the graph needs of a memory: its place in the chat and its raw cues."""

    memory_id: int
    conversation_id: str
    session_id: str
    position: int
    persons: list[str]
    locations: list[str]
    time_start: object
    time_end: object
    time_grounded: bool


@dataclass
class BatchGraph:
    """Edges of a batch plus what it cost, for the ingest summary."""

    edges: list[Edge] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        """Edges per channel."""
        return dict(Counter(edge.channel for edge in self.edges))


def profile(m: MemoryCues, speakers: set[str], paper: bool) -> CueProfile:
    """Cue profile: the paper's literal cues, or discriminative ones (no chat speakers, grounded time only)."""
    persons = frozenset(m.persons) if paper else frozenset(p for p in m.persons if p not in speakers)
    has_time = m.time_start is not None and m.time_end is not None and (paper or m.time_grounded)
    return CueProfile(
        memory_id=m.memory_id,
        conversation_id=m.conversation_id,
        session_id=m.session_id,
        position=m.position,
        persons=persons,
        locations=frozenset(m.locations),
        time=(m.time_start, m.time_end) if has_time else None,  # type: ignore[arg-type]  # has_time: both set
    )


class GraphBuilder:
    """Incremental edge construction with a bounded candidate pool per new memory (no pairwise pass)."""

    def __init__(self, store: Store, params: GraphParams):
        self.store = store
        self.params = params
        self.paper = params.structural_scoring == "paper"

    def build(self, new: Sequence[MemoryCues], vectors: np.ndarray, index, speakers: dict[str, set[str]]) -> BatchGraph:
        """Edges for `new` (already added to `index`), each linked only to memories older than itself."""
        graph = BatchGraph()
        if not new:
            return graph
        ann = self._ann_candidates(new, vectors, index)
        cue_pool = self._cue_candidates(new, speakers)
        profiles = self._profiles(new, ann, cue_pool, speakers)
        weight = self._cue_weight(new) if not self.paper else (lambda _cue: 1.0)
        degree = self._degrees({c for pool in ann.values() for c, _ in pool} | set().union(*cue_pool.values()))
        for memory in new:
            mid = memory.memory_id
            semantic = keep_strongest(
                ann[mid], self.params.semantic_threshold, self.params.semantic_cap, degree["semantic"]
            )
            graph.edges += self._link(mid, semantic, "semantic", degree)
            pool = {c for c, _ in ann[mid]} | cue_pool[mid]
            scored = self._structural(profiles[mid], pool, profiles, weight)
            structural = keep_strongest(
                scored, self.params.structural_threshold, self.params.structural_cap, degree["structural"]
            )
            graph.edges += self._link(mid, structural, "structural", degree)
        graph.edges += self._contiguity(new)
        return graph

    @staticmethod
    def _link(mid: int, kept: list[tuple[int, float]], channel: str, degree) -> list[Edge]:
        """Edges older → newer, counting degree on both ends so caps hold as the batch grows."""
        edges = []
        for other, score in kept:
            degree[channel][other] += 1
            degree[channel][mid] += 1
            edges.append(Edge(src=other, dst=mid, channel=channel, weight=round(float(score), 6)))
        return edges

    def _ann_candidates(self, new, vectors, index) -> dict[int, list[tuple[int, float]]]:
        """Top-k semantic neighbours of each new memory among memories older than it."""
        k = min(self.params.candidate_pool + len(new), index.count)
        ids = [m.memory_id for m in new]
        hits = index.search_older(vectors, ids, k, self.params.candidate_pool) if k else [[] for _ in new]
        return dict(zip(ids, hits, strict=True))

    def _cue_candidates(self, new, speakers) -> dict[int, set[int]]:
        """Up to `candidate_pool` most recent older memories sharing a person or location cue."""
        keys = {(kind, value) for m in new for kind, value in self._cue_keys(m, speakers)}
        holders = self._holders(keys)
        for m in new:
            for key in self._cue_keys(m, speakers):
                holders[key].append(m.memory_id)
        pools: dict[int, set[int]] = {}
        for m in new:
            found: set[int] = set()
            for key in self._cue_keys(m, speakers):
                older = [i for i in holders.get(key, []) if i < m.memory_id]
                found.update(sorted(older, reverse=True)[: self.params.candidate_pool])
            pools[m.memory_id] = set(sorted(found, reverse=True)[: self.params.candidate_pool])
        return pools

    def _cue_keys(self, m: MemoryCues, speakers) -> list[tuple[str, str]]:
        """The person/location cues of a memory that the cue index is looked up by."""
        own = speakers.get(m.conversation_id, set())
        persons = m.persons if self.paper else [p for p in m.persons if p not in own]
        return [("person", p) for p in persons] + [("location", loc) for loc in m.locations]

    def _holders(self, keys: set[tuple[str, str]]) -> dict[tuple[str, str], list[int]]:
        """Stored memories per cue (most recent 200 each), from the person/location indexes."""
        holders: dict[tuple[str, str], list[int]] = defaultdict(list)
        for kind in ("person", "location"):
            values = sorted(v for k, v in keys if k == kind)
            if not values:
                continue
            for value, mid in queries.recent_holders(self.store, kind, values, 200):
                holders[(kind, value)].append(mid)
        return holders

    def _profiles(self, new, ann, cue_pool, speakers) -> dict[int, CueProfile]:
        """Cue profiles of the batch and of every stored candidate, loaded in one query."""
        profiles = {m.memory_id: profile(m, speakers.get(m.conversation_id, set()), self.paper) for m in new}
        wanted = ({c for pool in ann.values() for c, _ in pool} | set().union(*cue_pool.values())) - set(profiles)
        if wanted:
            for row in queries.cue_rows(self.store, sorted(wanted)):
                stored = MemoryCues(*row)
                profiles[stored.memory_id] = profile(stored, speakers.get(stored.conversation_id, set()), self.paper)
        return profiles

    def _cue_weight(self, new) -> Callable[[str], float]:
        """IDF of person/location cues over the store plus this batch: a cue everyone shares weighs ~0."""
        counts: Counter[str] = Counter()
        for m in new:
            counts.update(set(m.persons) | set(m.locations))
        total = self.store.count("memories") + len(new)
        cues = sorted(counts)
        if cues:
            counts.update(dict(queries.person_location_counts(self.store, cues)))
        return lambda cue: math.log(1.0 + total / max(counts.get(cue, 1), 1))

    def _structural(self, own: CueProfile, pool: set[int], profiles, weight) -> list[tuple[int, float]]:
        """Structural scores of the candidate pool; pairs with no comparable cue get none."""
        scored = []
        for other in pool:
            score = structural_score(own, profiles[other], weight, self.params) if other in profiles else None
            if score is not None:
                scored.append((other, score))
        return scored

    def _degrees(self, nodes: set[int]) -> dict[str, Counter[int]]:
        """Current semantic/structural degree of stored nodes, so per-node caps hold incrementally."""
        degree: dict[str, Counter[int]] = defaultdict(Counter)
        if nodes:
            for channel, node, count in queries.degrees(self.store, nodes):
                degree[channel][node] = count
        return degree

    def _contiguity(self, new: Sequence[MemoryCues]) -> list[Edge]:
        """Each memory linked to the one before it in the same session: the "what happened next" link."""
        by_session: dict[tuple[str, str], list[MemoryCues]] = defaultdict(list)
        for m in new:
            by_session[(m.conversation_id, m.session_id)].append(m)
        edges = []
        for (conversation, session), members in by_session.items():
            members.sort(key=lambda m: (m.position, m.memory_id))
            previous = self._last_stored(conversation, session, members[0].position)
            for m in members:
                if previous is not None and previous != m.memory_id:
                    edges.append(Edge(src=previous, dst=m.memory_id, channel="contiguity", weight=1.0))
                previous = m.memory_id
        return edges

    def _last_stored(self, conversation: str, session: str, before: int) -> int | None:
        """The stored memory just before `before` in a session (when a session is appended to)."""
        return queries.last_memory_before(self.store, conversation, session, before)
