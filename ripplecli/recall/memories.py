"""Reading memories for recall: planner candidates, evidence with sources, vectors for scoring."""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime

from ripplecli.model import offset_of, shown_time
from ripplecli.recall.index import RecallIndex
from ripplecli.recall.planner import Candidate
from ripplecli.store.reads import KeyedReads
from ripplecli.trace import ReplyContext, SourceRef

_TOKEN = re.compile(r"\w+|[^\w\s]")


def count_tokens(text: str) -> int:
    """Word-and-punctuation count: a model-free stand-in for context tokens, the same for every mode."""
    return len(_TOKEN.findall(text))


def candidates(index: RecallIndex, ranked: list[tuple[int, float]]) -> list[Candidate]:
    """Planner view of ranked memories: restatement and cues, in the given order."""
    index.prefetch(mid for mid, _ in ranked)
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


def sources(reads: KeyedReads, ids: list[int]) -> dict[int, list[SourceRef]]:
    """Source turns of each memory, in conversation order, with their session dates."""
    found: dict[int, list[SourceRef]] = defaultdict(list)
    if not ids:
        return found
    rows = reads.sources_of(ids)
    for mid, turn_id, session_id, speaker, text, stamp, said, position, offset in rows:
        shown = shown_time(said, offset_of(offset))
        found[mid].append(SourceRef(turn_id, session_id, speaker, text, _iso(stamp), shown, position))
    return found


SHORT_REPLY_WORDS = 12  # a reply this short ("It is.", "Yes!", "Same here") needs the turn it answers
BARE_REPLY_WORDS = 4  # ... and one this short needs it even when that turn asked nothing
_WORD = re.compile(r"\w+")


def word_count(text: str) -> int:
    """Words in a text (punctuation and emoji left out)."""
    return len(_WORD.findall(text))


def is_short_reply(text: str, previous: str) -> bool:
    """A turn that cannot be read alone: a few words answering the other speaker's question (or any turn)."""
    words = word_count(text)
    return words <= BARE_REPLY_WORDS or (words <= SHORT_REPLY_WORDS and "?" in previous)


def reply_contexts(reads: KeyedReads, ids: list[int], places: list[str]) -> dict[int, ReplyContext]:
    """For memories that are short replies, the other speaker's turn just before them, with the places it names."""
    if not ids:
        return {}
    rows = reads.previous_turns_of(ids)
    found: dict[int, ReplyContext] = {}
    for mid, text, turn_id, speaker, previous in rows:  # the last write per memory is its first source turn
        if is_short_reply(text, previous):
            lowered = previous.lower()
            named = [p for p in places if p in lowered and re.search(rf"\b{re.escape(p)}\b", lowered)]
            found[mid] = ReplyContext(turn_id, speaker, previous, named)
        else:
            found.pop(mid, None)
    return found


@dataclass(frozen=True)
class When:
    """Where a memory sits and its two times: when it was said, and what time its text refers to (if any)."""

    conversation_id: str
    title: str | None
    said_at: str | None
    refers_to: dict[str, str] | None


def whens(index: RecallIndex, ids: list[int]) -> dict[int, When]:
    """Conversation, title, said-at (on the clock where it was said, with its offset when known) and refers-to times
    of each memory (refers-to only when its text says when)."""
    refers, offsets = index.grounded_of(ids), index.said_offsets(ids)
    found = {}
    for mid in ids:
        conversation, said = index.placed.get(mid, ("", None))
        told = refers.get(mid)
        about = {"start": told[0].isoformat(), "end": told[1].isoformat()} if told else None
        shown = shown_time(said, offsets.get(mid))
        found[mid] = When(conversation, index.titles.get(conversation), shown, about)
    return found


def _iso(stamp: datetime | None) -> str | None:
    """A stored time as ISO 8601."""
    return stamp.isoformat() if stamp else None
