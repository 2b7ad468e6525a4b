"""Query cues by lookup in the store's own cue vocabulary: no NLP model on the query path (docs/method.md)."""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Protocol

from ripplecli.cues import (
    RELATIVE_TIMES,
    STOPWORDS,
    canonical_name,
    content_tokens,
    match_cues,
    matched_text,
    says_relative_time,
    tokenize,
)
from ripplecli.owner import asks_what_you_said, first_person_at
from ripplecli.recall.index import RecallIndex

MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
MONTHS.update({name.lower(): i for i, name in enumerate(calendar.month_abbr) if name})
_MONTH_YEAR = re.compile(r"\b(" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\.?,?\s+(\d{4})\b", re.I)
_YEAR = re.compile(r"\b(19\d{2}|20\d{2})\b")
# "in May", "during early June": a month without its year is the latest one on or before the question's date.
_BARE_MONTH = re.compile(
    r"\b(?:in|during)\s+(?:early\s+|late\s+|mid-?\s*)?(" + "|".join(n for n in calendar.month_name if n) + r")\b",
    re.I,
)
_MONTH_NAMES = "|".join(sorted(MONTHS, key=len, reverse=True))
# A day named in full, "25 May, 2022", "8th December 2023" or "October 13, 2023": the day something was said.
_DAY = re.compile(
    rf"\b(?P<d1>\d{{1,2}})(?:st|nd|rd|th)?\s+(?P<m1>{_MONTH_NAMES})\.?,?\s*(?P<y1>\d{{4}})\b"
    rf"|\b(?P<m2>{_MONTH_NAMES})\.?\s+(?P<d2>\d{{1,2}})(?:st|nd|rd|th)?,?\s*(?P<y2>\d{{4}})\b",
    re.I,
)
# What kind of memory answers the question. Only places are listed: on dev, "who" (memories naming a person) and
# "when" (memories with a grounded time) as wanted kinds changed nothing; places lifted multi-hop full@30 +2.1 pts.
ANSWER_KINDS = {
    "place": re.compile(
        r"\b(where|cit(?:y|ies)|countr(?:y|ies)|states?|places?|locations?|visit(?:ed)?|travel\w*|been to)\b", re.I
    ),
}
# A question that wants several items of one kind ("What books has Melanie read?", "names of John's dogs"): its
# answer is spread over sessions, so recall looks for more of the same kind in sessions not yet covered.
LIST_QUESTION = re.compile(
    r"^\s*(?:in\s+)?(?:what|which)\s+(?:(?:kinds?|types?|sorts?)\s+of\s+)?(?:\w+\s+)?"
    r"(?!(?:is|was|does|has|this|thus)\b)\w+s\s+(?:has|have|had|does|do|did|is|are|was|were|would|might|could)\b"
    r"|\bnames\s+of\b|\bwhat\s+are\s+some\b|\bin\s+what\s+ways\b",
    re.I,
)
# The kind of item a list question wants: "books" in "What books has Melanie read?", "children" in "names of John's
# children", "martial arts" in "What martial arts has John done?".
LIST_KIND = re.compile(
    r"^\s*(?:in\s+)?(?:what|which)\s+(?:(?:kinds?|types?|sorts?)\s+of\s+)?((?:\w+\s+)?\w+s)\s+"
    r"(?:has|have|had|does|do|did|is|are|was|were|would|might|could)\b"
    r"|\bnames\s+of\s+(?:[\w']+\s+)?(\w+)|\bwhat\s+are\s+some\s+(\w+)",
    re.I,
)


@dataclass
class QueryCues:
    """c_q: what the question is about, as the store knows it."""

    text: str
    keywords: list[str] = field(default_factory=list)
    persons: list[str] = field(default_factory=list)
    locations: list[str] = field(default_factory=list)
    concepts: list[str] = field(default_factory=list)
    time_range: tuple[datetime, datetime] | None = None
    wants: str | None = None  # the kind of memory that answers it ("place"), from ANSWER_KINDS
    owner: str | None = None  # the store owner, when the question says I/me/my (and `text` then names them)
    focus: str | None = None  # the speaker whose own words answer it, when the question says so ("what did I…")
    many: bool = False  # it asks for several items of one kind (LIST_QUESTION)
    said_on: tuple[datetime, datetime] | None = None  # the day(s) it names in full: what was said then (said_on)
    relative: bool = False  # its time range is read from a word relative to its date ("yesterday", "last week")


class QueryAnalyzer(Protocol):
    """Turns a question into query cues."""

    def analyze(self, question: str, index: RecallIndex, as_of: datetime) -> QueryCues: ...


def ngrams(tokens: list[str], max_n: int = 4) -> list[str]:
    """Every contiguous token n-gram up to `max_n`."""
    return [" ".join(tokens[i : i + n]) for n in range(1, max_n + 1) for i in range(len(tokens) - n + 1)]


def _interval(unit: str, anchor: datetime) -> tuple[datetime, datetime]:
    """The whole day/week/month/year containing `anchor`."""
    day = anchor.replace(hour=0, minute=0, second=0, microsecond=0)
    if unit == "day":
        start, end = day, day + timedelta(days=1)
    elif unit == "week":
        start = day - timedelta(days=day.weekday())
        end = start + timedelta(days=7)
    elif unit == "month":
        start = day.replace(day=1)
        end = (start + timedelta(days=32)).replace(day=1)
    else:
        start = day.replace(month=1, day=1)
        end = start.replace(year=start.year + 1)
    return start, end - timedelta(seconds=1)


def _shift(unit: str, anchor: datetime, steps: int) -> datetime:
    """Move `anchor` by whole units (months and years by calendar)."""
    if unit == "day":
        return anchor + timedelta(days=steps)
    if unit == "week":
        return anchor + timedelta(weeks=steps)
    if unit == "month":
        month = anchor.month - 1 + steps
        return anchor.replace(year=anchor.year + month // 12, month=month % 12 + 1, day=1)
    return anchor.replace(year=anchor.year + steps, day=1)


def unpossessive(token: str) -> str:
    """ "caroline's" -> "caroline": a name in the possessive is still the name ("What are Caroline's plans?")."""
    return token[:-2] if token.endswith("'s") and len(token) > 2 else token


def without_speakers(text: str, speakers: set[str]) -> str:
    """The question with the chat speakers' names taken out, for the dense and lexical views: every memory starts
    with its speaker's name, so in a chat of short turns the name alone outranked every content match (the focus
    still reads the name from the question's persons). The text itself when nothing else is left."""
    rest = text
    for name in sorted(speakers, key=len, reverse=True):
        words = r"\s+".join(re.escape(word) for word in name.split())
        rest = re.sub(rf"(?<!\w){words}(?:['’]s)?(?!\w)", " ", rest, flags=re.IGNORECASE)
    rest = " ".join(rest.split())
    return rest if content_tokens(rest) else text


def answer_kind(question: str) -> str | None:
    """ "Which cities has Jon visited?" wants memories that name a place."""
    return next((kind for kind, pattern in ANSWER_KINDS.items() if pattern.search(question)), None)


def wants_many(question: str) -> bool:
    """ "What activities does Melanie partake in?" wants a list, not one memory."""
    return LIST_QUESTION.search(question) is not None


def list_kind(question: str) -> str | None:
    """ "What books has Melanie read?" -> "books": the kind of item a list question wants, when it says."""
    match = LIST_KIND.search(question)
    return next((g.lower() for g in match.groups() if g), None) if match else None


def time_range(question: str, as_of: datetime) -> tuple[datetime, datetime] | None:
    """ "in May 2023", "in 2022", "last week", "in May" (the latest May)... resolved against the question's date; None
    otherwise (also when the range falls off the calendar: "next week" as of 9999-12-31)."""
    try:
        return _time_range(question, as_of)
    except (OverflowError, ValueError):
        return None


def _time_range(question: str, as_of: datetime) -> tuple[datetime, datetime] | None:
    """`time_range` without the calendar-edge guard."""
    lowered = question.lower()
    match = _MONTH_YEAR.search(question)
    if match:
        return _interval("month", datetime(int(match.group(2)), MONTHS[match.group(1).lower()], 1))
    for phrase, (unit, steps) in RELATIVE_TIMES.items():
        if re.search(rf"\b{phrase}\b", lowered):
            return _interval(unit, _shift(unit, as_of, steps))
    year = _YEAR.search(question)
    if year:
        return _interval("year", datetime(int(year.group(1)), 1, 1))
    bare = _BARE_MONTH.search(question)
    if bare:
        month = MONTHS[bare.group(1).lower()]
        return _interval("month", datetime(as_of.year - (month > as_of.month), month, 1))
    return None


def reads_relative(question: str) -> bool:
    """Whether the question's time range is read from a word relative to its date ("What did Alex do yesterday?")."""
    return _MONTH_YEAR.search(question) is None and says_relative_time(question)


def said_on(question: str) -> tuple[datetime, datetime] | None:
    """ "What did Nate do for Joanna on 25 May, 2022?": the whole day (from the first to the last day named) whose
    memories were said then; None when the question names no day in full or a day off the calendar."""
    days = []
    for match in _DAY.finditer(question):
        first = bool(match["d1"])
        day, month, year = (match[f"{part}{1 if first else 2}"] for part in ("d", "m", "y"))
        try:
            days.append(datetime(int(year), MONTHS[month.lower()], int(day)))
        except ValueError:
            continue
    if not days:
        return None
    return min(days), max(days) + timedelta(days=1) - timedelta(seconds=1)


def with_owner(cues: QueryCues, question: str, index: RecallIndex) -> QueryCues:
    """ "What did I ask…": I/me/my are the store's owner, a person of the question, and the speaker it is about.

    The owner is the focus unless the question names another speaker first ("What did Claude tell me…")."""
    if index.owner is None:
        return cues
    at = first_person_at(question)
    if at is None:
        return cues
    owner = canonical_name(index.owner)
    cues.owner = index.owner
    cues.text = as_owner(cues.text, index.owner)
    if asks_what_you_said(question):  # the addressee's words are asked for: the asker is no focus
        return cues
    cues.persons = sorted({*cues.persons, owner})
    lowered = question.casefold()
    named = {p: lowered.find(p) for p in cues.persons if p in index.speakers and p != owner}
    before = [p for p, position in named.items() if 0 <= position < at]
    if not before:
        cues.focus = owner
    elif len(before) == 1:
        cues.focus = before[0]
    return cues


class RulesQueryAnalyzer:
    """Names, places and concepts matched against what the store recorded at ingest."""

    name = "rules"

    def analyze(self, question: str, index: RecallIndex, as_of: datetime) -> QueryCues:
        worded = matched_text(question)  # "yesterday" is the time range below
        tokens = content_tokens(worded)
        words = [t for t in tokenize(question) if t not in STOPWORDS]
        raw_grams = {canonical_name(g) for g in ngrams(words) + ngrams([unpossessive(t) for t in words])}
        persons = sorted(raw_grams & (set(index.person_holders) | index.speakers))
        return QueryCues(
            text=question.strip(),
            keywords=tokens[:6],
            persons=persons,
            locations=sorted(raw_grams & set(index.location_holders)),
            concepts=match_cues(worded, index.forms),
            time_range=time_range(question, as_of),
            wants=answer_kind(question),
            many=wants_many(question),
            said_on=said_on(question),
            relative=reads_relative(question),
        )


def as_owner(question: str, owner: str) -> str:
    """The question with I/me/my written as the owner's name, as the memories' restatements are."""
    from ripplecli.pronouns import resolve_references

    return resolve_references(question, owner, None)
