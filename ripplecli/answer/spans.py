"""Answer spans read out of a memory's words: a time written as a date, places, counts, durations, polarity."""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from ripplecli.extract.timeparse import COUNTS, MONTHS, WEEKDAYS, find_expression
from ripplecli.trace import Evidence

_DURATION = re.compile(
    r"\b(?:since\s+(?:(?:19|20)\d\d|[A-Z][a-z]+(?:\s+(?:19|20)\d\d)?)"
    r"|(?:\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|a few|a couple of|several)"
    r"(?:\s+|-)(?:years?|months?|weeks?|days?|hours?|minutes?))\b",
)
_SINGLE = frozenset({"a", "an", "one", "1"})
NUMBER_WORDS = [w for w in COUNTS if " " not in w and w not in ("a", "an", "one", "few")] + [  # "the one who"
    *"thirteen fourteen sixteen seventeen eighteen nineteen thirty forty fifty sixty seventy eighty ninety".split(),
    *"hundred thousand dozen dozens hundreds".split(),
]
_NUMBER = rf"(?:\d[\d,.]*|{'|'.join(NUMBER_WORDS)})"
_COUNT = re.compile(rf"\b(?:{_NUMBER}(?:(?:\s+|-){_NUMBER})*|once|twice)\b", re.IGNORECASE)  # "four hundred"
_MONTH_DAY = re.compile(rf"\b(?:{'|'.join(m for m in MONTHS if len(m) > 3)})\b", re.IGNORECASE)
_YEAR = re.compile(r"\b(?:19|20)\d\d\b")
_SEASONS = {3: "spring", 6: "summer", 9: "autumn", 12: "winter"}
NEGATIVE = frozenset(
    """allergic allergy reaction swelling swollen sick ill hurt pain injured injury hate hated dislike disliked
    bad worse worst terrible awful horrible never not no can't cannot couldn't don't didn't won't wouldn't
    isn't wasn't avoid avoided afraid scared worried expensive broke broken problem problems passed
    cancelled canceled refused quit lost fail failed sad upset angry difficult hard rough dangerous serious
    epipen""".split()
)
STRONG_NEGATIVE = frozenset("allergic allergy sick hurt injured hate hated dangerous serious".split())
POSITIVE = frozenset(
    """love loved loves like liked likes enjoy enjoyed enjoys great perfect lovely worth amazing good best
    favorite favourite excited happy fun wonderful recommend recommended beautiful incredible fine yes""".split()
)
STOP_EDGE = frozenset(
    """a an the and or but so to of in on at for with by from that this these those it its is are was were be
    been i you he she they we my your his her their our me him them us also just really very about as up
    thanks thank ok okay oh well yes yeah yep sure wow hey hi too own""".split()  # and a reply's openers: "Thanks, …"
)


def shown_date(stamp: datetime | None) -> str:
    """A day as a person writes it: 7 May 2023."""
    return f"{stamp.day} {stamp:%B %Y}" if stamp else ""


_DAY_NAMES = list(WEEKDAYS)
_RELATIVE_DAY = re.compile(
    r"\b(?:(?P<past>last|this past|past)|(?P<next>next|this coming|coming))\s+"
    r"(?P<day>mon|tues?|wed|thu(?:rs?)?|fri|sat|sun)(?:day|nesday|urday|sday)?\b",
    re.IGNORECASE,
)
_ON_DAY = re.compile(rf"^(?:on\s+)?(?:{'|'.join(_DAY_NAMES)})$", re.IGNORECASE)
_UNITS_AGO = re.compile(
    rf"\b(?P<count>\d+|{'|'.join(w for w in COUNTS if len(w) > 3 or w == 'two')})\s+(?P<unit>weeks|weekends)\s+ago\b",
    re.IGNORECASE,
)


def relative_day(said: str, stamp: datetime | None) -> tuple[int, int, str] | None:
    """A day named by its weekday or counted in weeks from the day it was said, written the way people date it:
    "last Fri" said on 15 July 2023 → "the Friday before 15 July 2023", "two weeks ago" → "two weeks before …";
    with where it starts and ends in the words. None without a session date."""
    if stamp is None:
        return None
    day = _RELATIVE_DAY.search(said)
    ago = _UNITS_AGO.search(said)
    first = min((m for m in (day, ago) if m), key=lambda m: m.start(), default=None)
    if first is None:
        return None
    if first is ago:
        written = f"{first.group('count')} {first.group('unit').lower()} before {shown_date(stamp)}"
        return first.start(), first.end(), written
    name = next(d for d in _DAY_NAMES if d.startswith(first.group("day").lower()[:3])).title()
    return first.start(), first.end(), f"the {name} {'before' if first.group('past') else 'after'} {shown_date(stamp)}"


def time_span(said: str, stamp: datetime | None) -> str:
    """The first time the words state, resolved against the session date and written for a person ("" if none)."""
    found = find_expression(said, stamp)
    named = relative_day(said, stamp)
    if named is not None and (found is None or _first_and_whole(named, said.find(found[0]), len(found[0]))):
        return named[2]
    if found is None:
        return ""
    phrase, (start, end) = found
    if _ON_DAY.match(phrase) and stamp is not None and start.date() != stamp.date():  # "on Friday": that weekday
        return f"the {start:%A} {'before' if start < stamp else 'after'} {shown_date(stamp)}"
    if start.date() == end.date() and _MONTH_DAY.search(phrase) and not _YEAR.search(phrase):
        return f"{start.day} {start:%B}"  # "on June 14th": the year is a guess, a birthday recurs
    return written_interval(phrase.lower(), start, end, stamp)


_RECURRING = re.compile(rf"\b(?:every\s+(?:other\s+)?)?(?:{'|'.join(_DAY_NAMES)})s?\b", re.IGNORECASE)


def recurring_day(said: str) -> str | None:
    """A weekday said as a habit ("let's go on Wednesdays", "every Sunday"), the last one the words name: "the gym on
    Mondays is closed now, so let's go on Wednesdays" moves from one to the other."""
    found = [m.group(0) for m in _RECURRING.finditer(said) if m.group(0).lower().endswith("s") or " " in m.group(0)]
    return found[-1] if found else None


def _first_and_whole(named: tuple[int, int, str], start: int, length: int) -> bool:
    """Whether the relative day comes before the rules' expression, or at the same place and no shorter: a longer
    one the rules read as a whole ("the last Thursday of May") is a date of its own."""
    return named[0] < start or (named[0] == start and named[1] - named[0] >= length)


_WEEKDAY_FROM = re.compile(
    rf"^the ({'|'.join(_DAY_NAMES)}) (before|after) (\d{{1,2}}) ([a-z]+) (\d{{4}})$", re.IGNORECASE
)


def exact_day(span: str) -> str | None:
    """The date a weekday counted from a day names ("the Friday after 31 January 2024" -> "Friday 2 February 2024"),
    for a person reading the answer; None for any other span."""
    match = _WEEKDAY_FROM.match(span)
    month = MONTHS.get(match.group(4).lower()) if match else None
    if match is None or month is None:
        return None
    try:
        origin = datetime(int(match.group(5)), month, int(match.group(3)))
    except ValueError:
        return None
    step = -1 if match.group(2).lower() == "before" else 1
    wanted = _DAY_NAMES.index(match.group(1).lower())
    day = origin + timedelta(days=step)
    while day.weekday() != wanted:
        day += timedelta(days=step)
    return f"{day:%A} {shown_date(day)}"


def written_interval(phrase: str, start: datetime, end: datetime, said: datetime | None) -> str:
    """7 May 2023 · the week before 9 June 2023 · the weekend of 15 July 2023 · May 2023 · summer 2023 · 2022."""
    days = (end.date() - start.date()).days + 1
    if days == 1:
        return shown_date(start)
    before = re.match(r"(?:last|this past|past)\s+(week|weekend)$", phrase)
    if before and said is not None:
        return f"the {before.group(1)} before {shown_date(said)}"
    if days == 2 and start.weekday() == 5:
        return f"the weekend of {shown_date(start)}"
    if days <= 7:
        return f"the week of {shown_date(start)}"
    if start.day == 1 and start.month == end.month and start.year == end.year:
        return f"{start:%B %Y}"
    if start.day == 1 and start.month == 1 and end.month == 12 and end.day == 31:
        return str(start.year) if start.year == end.year else f"{start.year}–{end.year}"
    if 85 <= days <= 95 and start.day == 1 and start.month in _SEASONS:
        return f"{_SEASONS[start.month]} {end.year}"
    return f"{shown_date(start)} to {shown_date(end)}"


def duration_span(said: str) -> str | None:
    """A stated duration: "4 years", "since 2016", "twelve weeks" (of "a twelve-week plan")."""
    match = _DURATION.search(said)
    if match is None:
        return None
    count, hyphen, unit = match.group(0).rpartition("-")
    if not hyphen:
        return match.group(0)
    return f"{count} {unit}" if count in _SINGLE or unit.endswith("s") else f"{count} {unit}s"  # a twelve-week plan


_WHILE = re.compile(r"^(?:a (?:while|bit|moment|minute|second|sec|few \w+)|ages|years|months|weeks|days|hours|now)\b")


def is_duration(text: str) -> bool:
    """Whether a phrase starts as a length of time ("ten days", "a while"): after "for" that is how long, not what
    for ("had to rest for ten days")."""
    said = duration_span(text)
    return bool(said and text.lower().startswith(said.lower())) or bool(_WHILE.match(text.lower()))


UNITS = frozenset(
    "seconds minutes hours days weeks weekends months years times points goals miles kilometers km pounds dollars"
    " percent".split()
)


def count_span(text: str, asked: frozenset[str] = frozenset()) -> str | None:
    """The first number the text states (digits or a number word), with its unit when the question asks in
    that unit ("how many weeks" → "two weeks", not "two"; "7 people" stays "7")."""
    match = _COUNT.search(text)
    if not match:
        return None
    after = re.match(r"\s+([a-z]+)", text[match.end() :], re.IGNORECASE)
    unit = after.group(1).lower() if after else ""
    return f"{match.group(0)} {after.group(1)}" if after and unit in UNITS and unit in asked else match.group(0)


_ORIGIN = re.compile(r"\b(?:leaving|leave|left|from|moved out of|away from)\s+(?:the\s+)?$", re.IGNORECASE)


def place_span(names: list[str], text: str, question_words: set[str]) -> str:
    """Names (case-folded in the store) as the text writes them, minus those the question names and, unless
    it asks "from", the places being left ("leaving Chicago")."""
    shown = []
    for name in names:
        if set(name.split()) <= question_words:
            continue
        match = re.search(rf"\b{re.escape(name)}\b", text, re.IGNORECASE)
        if match and "from" not in question_words and _ORIGIN.search(text[: match.start()]):
            continue
        shown.append(match.group(0) if match else name.title())
    return ", ".join(dict.fromkeys(shown))


def polarity(text: str) -> int:
    """How strongly a sentence speaks against (< 0) or for (> 0): word lists, strong words count twice."""
    words = re.findall(r"[a-z']+", text.lower().replace("’", "'"))
    against = sum(2 if w in STRONG_NEGATIVE else 1 for w in words if w in NEGATIVE)
    if against:
        return -against
    return sum(1 for w in words if w in POSITIVE)


def said_text(e: Evidence) -> str:
    """What the memory's source turns said (times are read from the words as spoken), else its restatement."""
    return " ".join(s.text for s in e.sources) or e.restatement


def session_stamp(e: Evidence) -> datetime | None:
    """The day the memory was said, on the clock where it was said: a memory said with a known zone gives its own
    local time (its session's stored time may be UTC); any other, the session date of its first source turn."""
    said = datetime.fromisoformat(e.said_at) if e.said_at else None
    if said is not None and said.tzinfo is not None:
        return said.replace(tzinfo=None)
    stamp = e.sources[0].timestamp if e.sources else None
    return datetime.fromisoformat(stamp) if stamp else None
