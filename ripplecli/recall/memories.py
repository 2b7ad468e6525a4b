"""Reading memories for recall: planner candidates, evidence with sources, vectors for scoring."""

from __future__ import annotations

import re
from collections import defaultdict

from ripplecli.recall.planner import Candidate
from ripplecli.store.db import Store
from ripplecli.trace import SourceRef

_TOKEN = re.compile(r"\w+|[^\w\s]")


def count_tokens(text: str) -> int:
    """Word-and-punctuation count: a model-free stand-in for context tokens, the same for every mode."""
    return len(_TOKEN.findall(text))


def candidates(store: Store, ranked: list[tuple[int, float]]) -> list[Candidate]:
    """Planner view of ranked memories: restatement, cues and degree, in the given order."""
    ids = [mid for mid, _ in ranked]
    if not ids:
        return []
    rows = store.con.execute(
        "SELECT memory_id, restatement, persons, locations FROM memories WHERE memory_id IN (SELECT unnest($1))",
        [ids],
    ).fetchall()
    concepts: dict[int, set[str]] = defaultdict(set)
    for mid, cue in store.con.execute(
        "SELECT memory_id, cue FROM memory_cues WHERE memory_id IN (SELECT unnest($1))", [ids]
    ).fetchall():
        concepts[mid].add(cue)
    info = {r[0]: r for r in rows}
    score = dict(ranked)
    return [
        Candidate(mid, score[mid], info[mid][1], set(info[mid][2]), set(info[mid][3]), concepts[mid])
        for mid in ids
        if mid in info
    ]


def restatements(store: Store, ids: list[int]) -> dict[int, str]:
    """Restatement per memory id."""
    if not ids:
        return {}
    rows = store.con.execute(
        "SELECT memory_id, restatement FROM memories WHERE memory_id IN (SELECT unnest($1))", [ids]
    ).fetchall()
    return dict(rows)


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
