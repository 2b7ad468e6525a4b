"""Time questions worked out by date arithmetic: "how many days ago", "how many weeks between A and B", "how many
days before A did I B", "how long had I been A when I B", "which came first, A or B".

Each event the question names is matched to the memory that best carries its words; its day is the time that
memory's words name (its `refers_to`), else the day it was said. "Today" is the day the question is asked. The
answer cites the memories it counted from; when an event matches no memory, there is no answer here (the typed
rules answer as before).
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from ripplecli.answer.base import Answer
from ripplecli.answer.phrases import stem
from ripplecli.answer.spans import said_text, session_stamp, shown_date
from ripplecli.cues import content_tokens, without_relative_times
from ripplecli.extract.timeparse import COUNTS, find_expression
from ripplecli.trace import Evidence

LOOK_AT = 20  # the evidence an event is matched in: the best-ranked memories
MATCH_SHARE = 0.5  # an event's memory carries at least this share of its content words (measured: LME oracle dev)
EVENT_WORDS = 2  # content words an event of a "between" question needs to be matched on its own
DAYS_IN = {"day": 1.0, "week": 7.0, "month": 30.44, "year": 365.25}

_UNIT = r"(?P<unit>days?|weeks?|months?|years?)"
_AGO = re.compile(rf"^\s*how many {_UNIT} ago (?:did|was|were|have|had) (?P<a>.+?)\??\s*$", re.IGNORECASE)
_BETWEEN = re.compile(
    rf"^\s*how many {_UNIT} (?:had |have )?(?:passed |elapsed |went by |were there )?between (?P<a>.+?) and "
    r"(?P<b>.+?)\??\s*$",
    re.IGNORECASE,
)
_BEFORE = re.compile(
    rf"^\s*how many {_UNIT} (?P<dir>before|after) (?P<a>.+?) (?:did|do|was|were|had) (?P<b>.+?)\??\s*$", re.IGNORECASE
)
_TOOK = re.compile(
    rf"^\s*how many {_UNIT} did it take (?:for )?(?:me |us |\w+ )?to (?P<b>.+?) (?:after|since) (?P<a>.+?)\??\s*$",
    re.IGNORECASE,
)
_BEEN = re.compile(
    rf"^\s*how (?:many {_UNIT}|long) (?:had|have) (?:i|we|you) been (?P<a>.+?) when (?P<b>.+?)\??\s*$", re.IGNORECASE
)
_FIRST = re.compile(r"\bfirst\b,?\s*(?:the\s+)?(?P<a>.+?),? or (?:the\s+)?(?P<b>.+?)\??\s*$", re.IGNORECASE)
_SENTENCE = re.compile(r"(?<=[a-z0-9]{2}[.!?])\s+|\n+")  # not after "St." or "Dr."
_MONTH_SLASH_DAY = re.compile(r"\b(?:on )?(?:the )?(?P<month>1[0-2]|0?[1-9])/(?P<day>3[01]|[12]\d|0?[1-9])\b(?!/)")
_ORDER_ASKED = re.compile(r"^\s*(?:which|who|what)\b", re.IGNORECASE)


def chronology_answer(question: str, evidence: list[Evidence], today: datetime | None) -> Answer | None:
    """The answer worked out from the days of the events the question names; None when it is no such question or
    an event is not found in the evidence."""
    top = evidence[:LOOK_AT]
    if match := _AGO.match(question):
        return _ago(match, top, today)
    for pattern in (_BETWEEN, _BEFORE, _TOOK, _BEEN):
        if match := pattern.match(question):
            return _between(match, top)
    if _ORDER_ASKED.match(question) and (match := _FIRST.search(question)):
        return _first(match, top)
    return None


def _ago(match: re.Match[str], evidence: list[Evidence], today: datetime | None) -> Answer | None:
    """ "How many weeks ago did I attend the workshop?": today less the event's day, in the asked unit."""
    found = event(match["a"], evidence)
    if found is None or today is None:
        return None
    day, e = found
    counted = amount((today.date() - day.date()).days, match["unit"])
    if day.date() > today.date() or counted.startswith("0 "):  # "0 months ago": the day found is not the event's
        return None
    span = f"{counted} ago"
    return _answer(span, f"today {shown_date(today)}; {_cite(e, day)}", [e])


def _between(match: re.Match[str], evidence: list[Evidence]) -> Answer | None:
    """The days between the two events the question names, in the asked unit; an event of one word ("between
    adopting Coco and Shadow") is no event to date."""
    if any(len(content_tokens(match[side])) < EVENT_WORDS for side in "ab"):
        return None
    first, second = event(match["a"], evidence), event(match["b"], evidence)
    if first is None or second is None or first[1] is second[1]:
        return None
    days = abs((second[0].date() - first[0].date()).days)
    if days == 0:
        return None
    span = amount(days, match["unit"] or unit_of(days))
    return _answer(span, f"{_cite(first[1], first[0])}; {_cite(second[1], second[0])}", [first[1], second[1]])


def _first(match: re.Match[str], evidence: list[Evidence]) -> Answer | None:
    """ "Which came first, A or B?": the option whose event has the earlier day."""
    options = [match["a"].strip(" ,"), match["b"].strip(" ,")]
    found = [event(option, evidence) for option in options]
    if found[0] is None or found[1] is None or found[0][1] is found[1][1] or found[0][0].date() == found[1][0].date():
        return None
    order = sorted(zip(options, found, strict=True), key=lambda pair: pair[1][0])  # type: ignore[index]
    (option, (day, e)), (_, (later_day, later)) = order  # type: ignore[misc]
    return _answer(option, f"{_cite(e, day)}; then {_cite(later, later_day)}", [e, later])


def event(phrase: str, evidence: list[Evidence]) -> tuple[datetime, Evidence] | None:
    """The day of the event a phrase names and the memory that tells of it: the sentence carrying most of its words
    (at least MATCH_SHARE of them; earlier rank breaks ties), dated by the time that sentence names, else by the
    day the memory was said (a memory's first stated time may be of another event: "this weekend")."""
    wanted = {stem(t) for t in content_tokens(without_relative_times(phrase))}
    if not wanted:
        return None
    best: tuple[tuple[float, bool], datetime | None, Evidence] | None = None
    for e in evidence:
        for sentence in _SENTENCE.split(said_text(e)):
            carried = len(wanted & {stem(t) for t in content_tokens(sentence)}) / len(wanted)
            if carried < MATCH_SHARE or (best is not None and carried < best[0][0]):
                continue
            named = stated_day(_without(sentence, phrase), e)
            key = (carried, named is not None)  # of two sentences as close, the one that says when
            if best is None or key > best[0]:
                best = (key, named, e)
    if best is None:
        return None
    day = best[1] or memory_day(best[2])
    return (day, best[2]) if day is not None else None


def stated_day(sentence: str, e: Evidence) -> datetime | None:
    """The day a sentence names ("last Sunday", "on February 26th", "on 3/8"), read against the day it was said."""
    said = session_stamp(e)
    if said is not None and (back := _span_back(sentence)) is not None:
        return said - timedelta(days=back)
    if named := find_expression(sentence, said):
        return named[1][0].replace(tzinfo=None)
    slash = _MONTH_SLASH_DAY.search(sentence)
    if slash is None or said is None:
        return None
    try:
        day = datetime(said.year, int(slash["month"]), int(slash["day"]))
    except ValueError:
        return None
    return day if day <= said else day.replace(year=said.year - 1)


def _without(sentence: str, phrase: str) -> str:
    """The sentence without the weekday or holiday words the event's own name holds ("Sunday mass", "Black
    Friday"): they name the event, not the day it was on."""
    for word in re.findall(r"[A-Za-z]+", phrase):
        if word.lower() in _DAY_WORDS:
            sentence = re.sub(rf"\b{word}\b(?=\s+[a-z])", "", sentence, flags=re.IGNORECASE)
    return sentence


_DAY_WORDS = frozenset("monday tuesday wednesday thursday friday saturday sunday".split())


def _span_back(sentence: str) -> float | None:
    """Days back from the day said that a sentence counts: "two weeks ago" (that day, not the whole week), or the
    start of a doing still going on: "I've been taking lessons for six weeks now"."""
    match = _AGO_SAID.search(sentence) or (_BEEN_FOR.search(sentence) if _HAVE_BEEN.search(sentence) else None)
    if match is None:
        return None
    count = COUNTS[match["count"].lower()][0] if not match["count"].isdigit() else int(match["count"])
    return count * DAYS_IN[match["unit"].lower()]


_COUNT = rf"(?P<count>\d+|{'|'.join(sorted(COUNTS, key=len, reverse=True))})"
_AGO_SAID = re.compile(rf"\b{_COUNT}\s+(?P<unit>day|week|month|year)s?\s+ago\b", re.IGNORECASE)
_BEEN_FOR = re.compile(
    rf"\bfor (?:about |almost |nearly |over |around |roughly )?{_COUNT}\s+(?P<unit>day|week|month|year)s?\b",
    re.IGNORECASE,
)
_HAVE_BEEN = re.compile(r"\b(?:i've|i have|we've|we have) been\b", re.IGNORECASE)


def memory_day(e: Evidence) -> datetime | None:
    """The day a memory tells of when its sentence names none: the time the memory names, else the day said."""
    if e.refers_to:
        return datetime.fromisoformat(e.refers_to["start"]).replace(tzinfo=None)
    return session_stamp(e)


def amount(days: int, unit: str) -> str:
    """Days in the asked unit, rounded: "3 weeks", "1 month"."""
    base = unit.lower().rstrip("s")
    count = round(days / DAYS_IN[base]) if base != "day" else days
    return f"{count} {base}{'' if count == 1 else 's'}"


def unit_of(days: int) -> str:
    """The unit a person would say a span in when the question names none ("how long ago")."""
    return "days" if days < 14 else "weeks" if days < 60 else "months" if days < 730 else "years"


def _cite(e: Evidence, day: datetime) -> str:
    """ "6 May 2023: “I went rafting yesterday” [m12]"."""
    text = " ".join(e.restatement.split())
    return f"{shown_date(day)}: “{text[:120]}{'…' if len(text) > 120 else ''}” [m{e.memory_id}]"


def _answer(span: str, shown: str, cited: list[Evidence]) -> Answer:
    """The answer line: the worked-out span, then the days it was counted from."""
    citations = list(dict.fromkeys(e.memory_id for e in cited))
    return Answer("typed", f"{span} — worked out from {shown}", citations, type="when", span=span)
