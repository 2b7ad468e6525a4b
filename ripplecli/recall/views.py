"""The three first-hop views: dense (hnswlib), lexical (BM25) and cue-index matching."""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass

import numpy as np

from ripplecli.recall.index import RecallIndex
from ripplecli.recall.query import QueryCues
from ripplecli.store import passages
from ripplecli.store.db import Store

Ranked = list[tuple[int, float]]


@dataclass
class ViewHits:
    """One view's ranked memories (best first) with its score per memory."""

    view: str
    ranked: Ranked

    def top(self, n: int) -> Ranked:
        """The first n hits."""
        return self.ranked[:n]


def dense_view(store: Store, query_vector: np.ndarray, depth: int) -> ViewHits:
    """Nearest restatements by cosine similarity, a long memory scored by its best passage (store/passages.py)."""
    hits = store.vector_index().search(query_vector, depth)
    if not store.count("passages"):
        return ViewHits("dense", hits)
    best = dict(hits)
    for passage_label, score in store.passage_index().search(query_vector, depth):
        mid, _ = passages.of_label(passage_label)
        best[mid] = max(score, best.get(mid, -1.0))
    return ViewHits("dense", sorted(best.items(), key=lambda pair: (-pair[1], pair[0]))[:depth])


def lexical_view(store: Store, question: str, depth: int) -> ViewHits:
    """BM25 over restatements, with the same tokens as ingest."""
    return ViewHits("lexical", store.lexical_index().search(question, depth))


def cue_view(index: RecallIndex, cues: QueryCues, depth: int, max_share: float = 0.2) -> ViewHits:
    """Memories sharing the question's rare cues (concepts, persons, places, time), scored by summed IDF."""
    hits: dict[str, list[int]] = {}
    for prefix, values, name in (
        ("cue", cues.concepts, "holders"),
        ("person", cues.persons, "person_holders"),
        ("location", cues.locations, "location_holders"),
    ):
        holders = getattr(index, name)
        index.prefetch((), **{name: values})  # no ids: only the named map
        for value in values:
            hits[f"{prefix}:{value}"] = holders.get(value, [])
    if cues.time_range:
        hits["time"] = index.grounded_within(*cues.time_range)
    said = cues.said_on or cues.time_range  # what was said on the day it names, else within its time range
    if said:
        hits["said"] = index.said_within(*said)
    total = max(index.count, 1)
    scores: dict[int, float] = defaultdict(float)
    for members in hits.values():
        if not members or len(members) > max_share * total:  # too common to say anything, even alone
            continue
        weight = math.log(1.0 + total / len(members))
        for mid in set(members):
            scores[mid] += weight
    ranked = sorted(scores.items(), key=lambda pair: (-pair[1], -pair[0]))
    return ViewHits("cue", ranked[:depth])


def rrf(lists: list[tuple[Ranked, float]], k: float = 60.0) -> dict[int, float]:
    """Reciprocal-rank fusion: Σ weight / (k + rank) over the lists a memory appears in."""
    fused: dict[int, float] = defaultdict(float)
    for ranked, weight in lists:
        for rank, (mid, _score) in enumerate(ranked, start=1):
            fused[mid] += weight / (k + rank)
    return dict(fused)
