"""The extractive answer: the evidence sentences that best cover the question's words (the earlier default)."""

from __future__ import annotations

import re

from ripplecli.answer.base import Answer
from ripplecli.cues import content_tokens
from ripplecli.trace import Evidence

_SENTENCE = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])")  # Chinese and Japanese end sentences without a space
MAX_SENTENCES = 3
LOOK_AT = 8


def extractive_answer(question: str, evidence: list[Evidence]) -> Answer:
    """Up to three evidence sentences that cover most question words, each cited by memory id; never new text."""
    wanted = set(content_tokens(question))
    pool = []
    for e in evidence[:LOOK_AT]:
        for sentence in _SENTENCE.split(e.restatement):
            words = set(content_tokens(sentence))
            if words & wanted:
                pool.append((e, sentence.strip(), words & wanted))
    chosen: list[tuple[Evidence, str]] = []
    covered: set[str] = set()
    while pool and len(chosen) < MAX_SENTENCES:
        best = max(pool, key=lambda item: (len(item[2] - covered), -item[0].rank))
        if not best[2] - covered:
            break
        chosen.append((best[0], best[1]))
        covered |= best[2]
        pool.remove(best)
    if not chosen:
        return Answer("extractive", "", found=False, note="no evidence sentence matches")
    text = " ".join(f"{sentence} [m{e.memory_id}]" for e, sentence in chosen)
    return Answer("extractive", text, [e.memory_id for e, _ in chosen])
