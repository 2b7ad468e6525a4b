"""Sessions as units of recall: the rest of a session the evidence already reached, and sessions it has not.

A session is what its contiguity links join (consecutive turns of one chat session), so nothing here reads the
store: membership is walked from the in-memory links, only over the sessions a question touches.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

from ripplecli.recall.index import RecallIndex
from ripplecli.recall.planner import namespaced
from ripplecli.recall.views import Ranked, ViewHits, rrf
from ripplecli.store.db import Store

SESSION_CUE_WEIGHT = 0.1  # a shared rare question cue against the cosine, per cue (IDF-normalised)


class Sessions:
    """Session membership of the memories one recall touches, walked from contiguity links and kept for the call."""

    def __init__(self, index: RecallIndex):
        self.index = index
        self._of: dict[int, int] = {}
        self._members: dict[int, list[int]] = {}

    def of(self, memory_id: int) -> int:
        """The session key (its first memory id) of a memory."""
        if memory_id not in self._of:
            self._walk(memory_id)
        return self._of[memory_id]

    def members(self, memory_id: int) -> list[int]:
        """Every memory of the memory's session, in id order."""
        return self._members[self.of(memory_id)]

    def _walk(self, start: int) -> None:
        """Collect the connected contiguity component of `start`."""
        seen, todo = {start}, [start]
        neighbours = self.index.neighbours
        while todo:
            self.index.prefetch(neighbours=todo)  # an on-demand index reads each step of the walk in one query
            frontier, todo = todo, []
            for current in frontier:
                for nxt in neighbours.get(current, ()):
                    if nxt not in seen:
                        seen.add(nxt)
                        todo.append(nxt)
        key = min(seen)
        self._members[key] = sorted(seen)
        for mid in seen:
            self._of[mid] = key


def cue_weights(index: RecallIndex, cues: Iterable[str]) -> dict[str, float]:
    """IDF of each question cue in the cue namespace (concepts bare, persons and places prefixed), 0..1."""
    total = max(index.count, 1)
    holders = {
        "person": index.person_holders,
        "location": index.location_holders,
    }
    weights: dict[str, float] = {}
    for cue in cues:
        kind, _, value = cue.partition(":")
        held = holders[kind].get(value, []) if value and kind in holders else index.holders.get(cue, [])
        if held:
            weights[cue] = math.log(1.0 + total / len(held)) / math.log(1.0 + total)
    return weights


def memory_cues(index: RecallIndex, memory_id: int) -> set[str]:
    """A memory's cues in the planner's namespace."""
    return namespaced(
        index.concepts_of.get(memory_id, ()), index.persons_of.get(memory_id, ()), index.locations_of.get(memory_id, ())
    )


def local_ranking(
    store: Store, index: RecallIndex, ids: list[int], vector: np.ndarray | None, weights: dict[str, float]
) -> Ranked:
    """Memories of a session ranked by the question: cosine to its vector plus the rare question cues they share."""
    if not ids:
        return []
    cosine = store.vector_index().get_vectors(ids) @ vector if vector is not None else np.zeros(len(ids))
    scored = [
        (mid, float(c) + SESSION_CUE_WEIGHT * sum(weights.get(cue, 0.0) for cue in sorted(memory_cues(index, mid))))
        for mid, c in zip(ids, cosine, strict=True)
    ]
    return sorted(scored, key=lambda pair: (-pair[1], pair[0]))


def session_view(views: list[ViewHits], sessions: Sessions, k: float, depth: int) -> tuple[ViewHits, Ranked]:
    """Sessions ranked as units by what the dense and lexical views found in them; their memories in that order.

    A session's score sums its memories' reciprocal ranks in each view, so a session holding several fair matches
    outranks one holding a single good one. Returns the memory ranking and the session ranking (key, score)."""
    score: dict[int, float] = {}
    for view in views:
        if view.view not in ("dense", "lexical"):
            continue
        for mid, value in rrf([(view.ranked, 1.0)], k).items():
            key = sessions.of(mid)
            score[key] = score.get(key, 0.0) + value
    ranked_sessions = sorted(score.items(), key=lambda pair: (-pair[1], pair[0]))
    within = rrf([(v.ranked, 1.0) for v in views if v.view in ("dense", "lexical")], k)
    hits: Ranked = []
    for key, value in ranked_sessions:
        members = [m for m in sessions.members(key) if m in within]
        hits += [(m, value) for m in sorted(members, key=lambda m: (-within[m], m))]
        if len(hits) >= depth:
            break
    return ViewHits("session", hits[:depth]), ranked_sessions
