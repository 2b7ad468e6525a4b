"""Totals across memories: "How much did I spend on A and B in total?", "How many hours have I spent … in all?".

Each amount of the asked kind (money, or the unit the question counts in) that a sentence of the asker's own
("I", "my") carrying the question's words states is counted once (an amount repeated is the same amount), and
the answer is their sum, citing every memory it added up.
"""

from __future__ import annotations

import re

from ripplecli.answer.base import Answer
from ripplecli.answer.phrases import stem
from ripplecli.cues import content_tokens
from ripplecli.trace import Evidence

LOOK_AT = 20  # the evidence amounts are gathered from
_TOTAL = re.compile(r"\b(?:in total|total|altogether|combined|in all|all together)\b", re.IGNORECASE)
_MONEY_ASKED = re.compile(r"\b(?:spen[dt]|cost|costs|money|raised?|paid|pay|price|dollars?)\b|\$", re.IGNORECASE)
_BOTH = re.compile(r"^\s*how much did (?:i|we) spend on .+\band\b", re.IGNORECASE)  # "on car wash and parking"
_FIRST_PERSON = re.compile(r"\b(?:I|I'm|I've|my|me|we|our)\b")
_MONEY = re.compile(r"\$\s?(\d[\d,]*(?:\.\d+)?)")
_COUNTED_IN = re.compile(r"\bhow many (\w+)", re.IGNORECASE)
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
GENERIC = frozenset(
    "total spend spent spending money much many cost costs raise raised pay paid price dollars altogether combined"
    " far".split()
)


def total_answer(question: str, evidence: list[Evidence]) -> Answer | None:
    """The sum of the amounts the evidence states for a "in total" question; None when it asks no total or
    fewer than two amounts are found."""
    money = _MONEY_ASKED.search(question) is not None
    if not _TOTAL.search(question) and not (money and _BOTH.search(question)):
        return None
    unit = None if money else _unit(question)
    if not money and unit is None:
        return None
    cues = {stem(t) for t in content_tokens(question)} - {stem(w) for w in GENERIC | {unit or ""}}
    found: dict[float, Evidence] = {}
    for e in evidence[:LOOK_AT]:
        for sentence in _SENTENCE.split(" ".join(s.text for s in e.sources) or e.restatement):
            if sentence.rstrip().endswith("?") or not _FIRST_PERSON.search(sentence):
                continue  # the asker's own amounts ("I paid $40"), not a reply's suggestions ("about $25")
            if not cues & {stem(t) for t in content_tokens(sentence)}:
                continue
            for value in _amounts(sentence, unit):
                found.setdefault(value, e)
    if len(found) < 2:
        return None
    total = sum(found)
    span = f"${_shown(total)}" if money else f"{_shown(total)} {unit}"
    parts = " + ".join(f"{'$' if money else ''}{_shown(v)} [m{e.memory_id}]" for v, e in found.items())
    cited = list(dict.fromkeys(e.memory_id for e in found.values()))
    return Answer("typed", f"{span} — added up: {parts}", cited, type="how-many", span=span)


def _unit(question: str) -> str | None:
    """The plural noun a "how many" question counts in ("hours", "days")."""
    match = _COUNTED_IN.search(question)
    return match.group(1).lower() if match and match.group(1).lower().endswith("s") else None


def _amounts(sentence: str, unit: str | None) -> list[float]:
    """The money amounts, or the counts of the unit, a sentence states."""
    if unit is None:
        return [float(m.group(1).replace(",", "")) for m in _MONEY.finditer(sentence)]
    pattern = rf"\b(\d+(?:\.\d+)?)\s+(?:{re.escape(unit)}|{re.escape(unit.rstrip('s'))})\b"
    return [float(m.group(1)) for m in re.finditer(pattern, sentence, re.IGNORECASE)]


def _shown(value: float) -> str:
    """A total as written: 3,750 or 12.5."""
    return f"{value:,.0f}" if value == int(value) else f"{value:,.2f}"
