"""Reading memories for recall: planner candidates, evidence with sources, vectors for scoring."""

from __future__ import annotations

import re
from collections import defaultdict

from ripplecli.recall.index import RecallIndex
from ripplecli.recall.planner import Candidate
from ripplecli.store.db import Store
from ripplecli.trace import SourceRef

_TOKEN = re.compile(r"\w+|[^\w\s]")


def count_tokens(text: str) -> int:
    """Word-and-punctuation count: a model-free stand-in for context tokens, the same for every mode."""
    return len(_TOKEN.findall(text))


def candidates(index: RecallIndex, ranked: list[tuple[int, float]]) -> list[Candidate]:
    """Planner view of ranked memories: restatement and cues, in the given order."""
    return [
        Candidate(
            mid,
            score,
            index.texts[mid],
            set(index.persons_of.get(mid, ())),
            set(index.locations_of.get(mid, ())),
            set(index.concepts_of.get(mid, ())),
        )
        for mid, score in ranked
        if mid in index.texts
    ]


def sources(store: Store, ids: list[int]) -> dict[int, list[SourceRef]]:
    """Source turns of each memory, in conversation order, with their session dates."""
    found: dict[int, list[SourceRef]] = defaultdict(list)
    if not ids:
        return found
    rows = store.con.execute(
        "SELECT p.memory_id, s.turn_id, s.session_id, s.speaker, s.text, s.session_ts FROM provenance p "
        "JOIN sources s USING (source_id) WHERE p.memory_id IN (SELECT unnest($1)) ORDER BY s.position",
        [ids],
    ).fetchall()
    for mid, turn_id, session_id, speaker, text, stamp in rows:
        found[mid].append(SourceRef(turn_id, session_id, speaker, text, stamp.isoformat() if stamp else None))
    return found
