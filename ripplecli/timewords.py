"""The words of time, shared by the write path (time grounding, extract/timeparse.py) and the read path: does a text
state a time, does it name a name? The gates that keep a model from inventing dates and names the words never give."""

from __future__ import annotations

import re
from collections.abc import Iterable

from ripplecli.cues import canonical_name

MONTHS = {
    name: number
    for number, names in enumerate(
        [
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ],
        start=1,
    )
    for name in names
}
_WEEK = "monday tuesday wednesday thursday friday saturday sunday"
WEEKDAYS = {day: number for number, day in enumerate(_WEEK.split())}
SEASON_START = {"spring": 3, "summer": 6, "fall": 9, "autumn": 9, "winter": 12}  # three months each
_NAMES = [n for n in (*MONTHS, *WEEKDAYS, *SEASON_START) if n != "may"]  # "may I…" is no date; "in May", "May 7" below
_WORDS = [
    "today", "tonight", "yesterday", "tomorrow", "ago", "recently", "lately", "since", "until", "weekend",
    "weekends", "week", "weeks", "month", "months", "year", "years", "day", "days", "morning", "afternoon",
    "evening", "night", "noon", "midnight", "christmas", "easter", "holiday", "holidays", "decade", "century",
    "earlier", "later", "soon", "season",
]  # fmt: skip
_TIME = re.compile(
    r"(?<![\w'’])(?:" + "|".join(sorted({*_NAMES, *_WORDS}, key=len, reverse=True)) + r")(?![\w])"
    r"|\b(?:in|of|since|until)\s+may\b|\bmay\s+\d"
    r"|\b(?:1[89]|20)\d{2}\b|\b\d{1,2}(?:st|nd|rd|th)\b|\b\d{1,2}[/.]\d{1,2}\b|\b\d{1,2}(?::\d{2})?\s*[ap]\.?m\b",
    re.I,
)


def states_time(text: str) -> bool:
    """True when the text names a date, a day, a season or a relative time ("last week", "in 2022", "May 7th")."""
    return _TIME.search(text) is not None


def names(text: str, name: str, known: Iterable[str | None] = ()) -> bool:
    """True when the text contains the name as whole words ("Maya's" names Maya; "Mayan" does not) or the name is
    one of `known` (a speaker of the chat, the owner a question's I/me/my stands for): the gate on a model's names."""
    key = canonical_name(name)
    if not key:
        return False
    if any(k and key == canonical_name(k) for k in known):
        return True
    return re.search(rf"(?<!\w){re.escape(key)}(?!\w)", canonical_name(text)) is not None
