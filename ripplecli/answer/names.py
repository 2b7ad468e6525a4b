"""The names a question asks about that the chats found never mention: then no answer is right, by rules or model."""

from __future__ import annotations

import re
from difflib import SequenceMatcher

from ripplecli.answer.phrases import TIME_NAMES
from ripplecli.trace import Evidence

_PROPER = re.compile(r"(?<!^)(?<![a-z]{3}[.?!] )\b[A-Z][a-z]+(?:\s+[A-Z][a-z]+)*\b")  # "Dr. Johnson", "Lebron James"
_QUOTED = re.compile(r"(?:[\"“‘]|(?<!\w)')[^\"”’]*?(?:[\"”’]|'(?!\w)|$)")  # a quoted title
NOT_NAMES = frozenset(TIME_NAMES) | {"i"}
NAME_LIKE = 0.8  # a word this close to a said word is that word misspelt ("Xenoblade", "Xeonoblade")
# A should/would question asks for a judgement the chats support ("Would Melanie enjoy Vivaldi?" over memories of
# Bach and Mozart), not for a thing they name: its names are not checked.
WEIGHED = frozenset({"should"})


def unmentioned_name(asked: str, kind: str, evidence: list[Evidence]) -> str | None:
    """A name the asking sentence gives ("Dr. Johnson", "Shinjuku") that no memory recalled holds, none of its words
    nor one spelt nearly so. Every memory counts (its speaker, words and the turn it answers), not only the best:
    measured on the 140 LongMemEval dev questions, it names 5 of the 15 unanswerable ones and no answerable one,
    where the top 10 alone also fired on a Hawaii question whose Hawaii memory ranked lower."""
    if kind in WEIGHED:
        return None
    words = set(re.findall(r"[a-z]+", _said(evidence)))
    for match in _PROPER.finditer(_QUOTED.sub(" ", asked)):
        named = [w.lower() for w in match.group(0).split() if w.lower() not in NOT_NAMES]
        if named and not any(w in words or _spelt_like(w, words) for w in named):
            return match.group(0)
    return None


def _said(evidence: list[Evidence]) -> str:
    """Everything the memories recalled say, lower-cased: restatements, source turns and speakers, replied-to turns."""
    parts = []
    for e in evidence:
        parts += [e.restatement, *(f"{s.speaker} {s.text}" for s in e.sources)]
        if e.context is not None:
            parts.append(f"{e.context.speaker} {e.context.text}")
    return " ".join(parts).lower()


def _spelt_like(word: str, words: set[str]) -> bool:
    """Whether a said word of the same first letter is spelt nearly as `word`."""
    return any(
        w[0] == word[0] and SequenceMatcher(None, w, word).ratio() >= NAME_LIKE
        for w in words
        if abs(len(w) - len(word)) <= 2
    )
