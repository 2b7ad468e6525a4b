"""Reading memories for recall: planner candidates, evidence with sources, vectors for scoring."""

from __future__ import annotations

import re
from collections import defaultdict

from ripplecli.recall.index import RecallIndex
from ripplecli.recall.planner import Candidate
from ripplecli.store.db import Store
from ripplecli.trace import ReplyContext, SourceRef

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


SHORT_REPLY_WORDS = 12  # a reply this short ("It is.", "Yes!", "Same here") needs the turn it answers
BARE_REPLY_WORDS = 4  # ... and one this short needs it even when that turn asked nothing
_WORD = re.compile(r"\w+")


def is_short_reply(text: str, previous: str) -> bool:
    """A turn that cannot be read alone: a few words answering the other speaker's question (or any turn)."""
    words = len(_WORD.findall(text))
    return words <= BARE_REPLY_WORDS or (words <= SHORT_REPLY_WORDS and "?" in previous)


def reply_contexts(store: Store, ids: list[int], places: list[str]) -> dict[int, ReplyContext]:
    """For memories that are short replies, the other speaker's turn just before them, with the places it names."""
    if not ids:
        return {}
    rows = store.con.execute(
        "SELECT p.memory_id, s.text, prev.turn_id, prev.speaker, prev.text FROM provenance p "
        "JOIN sources s USING (source_id) JOIN sources prev ON prev.conversation_id = s.conversation_id "
        "AND prev.session_id = s.session_id AND prev.position = s.position - 1 AND prev.speaker <> s.speaker "
        "WHERE p.memory_id IN (SELECT unnest($1)) ORDER BY s.position DESC",
        [ids],
    ).fetchall()
    found: dict[int, ReplyContext] = {}
    for mid, text, turn_id, speaker, previous in rows:  # the last write per memory is its first source turn
        if is_short_reply(text, previous):
            lowered = previous.lower()
            named = [p for p in places if p in lowered and re.search(rf"\b{re.escape(p)}\b", lowered)]
            found[mid] = ReplyContext(turn_id, speaker, previous, named)
        else:
            found.pop(mid, None)
    return found
