"""Time grounding: temporal expressions anchored on the session timestamp, as a closed interval.

Common expressions are parsed here with regexes and date arithmetic (fast, and free of dateparser's
false hits such as "We" read as Wednesday or "may" the verb read as a month); dateparser only sees the
rare leftovers that a narrow prefilter flags.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date, datetime, time, timedelta

from ripplecli.timewords import MONTHS, SEASON_START, WEEKDAYS  # the words of time, shared with the read path

Interval = tuple[datetime, datetime]

# Counts as (lowest, highest): vague counts ("a few") become a span rather than a guess.
COUNTS = {
    "a": (1, 1),
    "an": (1, 1),
    "one": (1, 1),
    "two": (2, 2),
    "three": (3, 3),
    "four": (4, 4),
    "five": (5, 5),
    "six": (6, 6),
    "seven": (7, 7),
    "eight": (8, 8),
    "nine": (9, 9),
    "ten": (10, 10),
    "eleven": (11, 11),
    "twelve": (12, 12),
    "fifteen": (15, 15),
    "twenty": (20, 20),
    "a couple of": (2, 2),
    "a couple": (2, 2),
    "couple of": (2, 2),
    "a few": (2, 4),
    "few": (2, 4),
    "several": (3, 7),
}
ROLLING_DAYS = {"week": 7, "month": 30, "year": 365}
RELATIONS = {"last": "last", "past": "last", "this past": "last", "next": "next", "coming": "next"}

_FULL_MONTH = "january|february|march|april|may|june|july|august|september|october|november|december"
FULL_MONTHS = tuple(_FULL_MONTH.split("|"))
_ANY_MONTH = "|".join(sorted(MONTHS, key=len, reverse=True)) + r"\.?"
_WEEKDAY = "|".join(WEEKDAYS)
_COUNT = "|".join(sorted(map(re.escape, COUNTS), key=len, reverse=True)) + r"|\d{1,3}"
_UNIT = r"(?P<unit>day|week|fortnight|month|year)s?"
_YEAR = r"(?:19|20)\d\d"
_ORD = r"(?:st|nd|rd|th)?"
_FUTURE_CUES = re.compile(
    r"\b(?:will|shall|gonna|going to|plan(?:ning)? to|hop(?:e|ing) to|about to|upcoming|can['’]t wait|might(?! have)"
    r"|looking forward|tomorrow|next|soon|(?:am|are|is)\s+going)\b|['’](?:ll|m going|re going)\b",
    re.IGNORECASE,
)
# A past act that arranges something ahead ("I signed up for the 10K on May 17th", "we booked it for June 3rd"):
# the date belongs to what was arranged, so it is the nearest such day, not the last one.
_ARRANGED = re.compile(
    r"\b(?:sign(?:ed)? up|register(?:ed)?|book(?:ed)?|schedul(?:e|ed)|reserv(?:e|ed)|(?:got|bought) tickets?)\b",
    re.IGNORECASE,
)
# A day named without a year or a last/next word is past only when its sentence reports (was, went, met…); in
# the present tense ("the movers come on May 28th", "dinner on Friday?") it is the nearest such day.
_PAST_CUES = re.compile(
    r"\b(?:was|were|did|had|went|got|came|met|been|ago|last|yesterday|used to"
    r"|took|saw|ate|made|gave|found|left|felt|bought|thought|brought|ran|won|lost|spent|slept|wrote|told|said|knew"
    r"|drove|flew|swam|began|became|caught|taught|fought|sold|sent|built|paid|heard|held|kept|wore|woke|rode|sang"
    r"|spoke|stood|threw|grew|drew|forgot|chose|broke|fell)\b|\b\w{3,}ed\b",
    re.IGNORECASE,
)
# A year-less date belongs to the year it is said in unless its words place it elsewhere in time: in a sentence set
# in another age ("an 18th-century letter", "in the 1700s", "in 1789", "44 BC", "AD 1066"), before a year the rules
# do not read ("May 15, 1789"), or inside a quoted passage (a letter, a book, a citation: its own time, not the
# chat's). Such a date stays ungrounded.
_OTHER_AGE = re.compile(
    r"(?i:\b(?:\d{1,2}|[a-z]+)(?:st|nd|rd|th)[\s-]+century\b|\bprevious century\b|\bcenturies\b|\bcentury ago\b"
    r"|\b1[0-8]\d0['’]?s\b|\b(?:in|circa|c\.|around|year)\s+1[0-8]\d\d\b)"
    r"|\b\d{1,4}\s*(?:BCE?|AD|CE)\b|\b(?:AD|A\.D\.)\s*\d{1,4}\b"
)
_FOLLOWING_YEAR = re.compile(r",?\s*(?!(?:19|20)\d\d\b)\d{3,4}\b")
_QUOTE_MARKS = (('"', '"'), ("“", "”"), ("«", "»"))
_QUOTED_LINE = re.compile(r"[ \t]*>")  # a quoted line, as e-mail and Markdown mark it
_FALLBACK_TRIGGER = re.compile(r"\bago\b", re.IGNORECASE)
_FALLBACK_NOISE = frozenset({"may", "march", "now", "second", "sun", "we", "sat", "today"})


def day_span(moment: date | datetime) -> Interval:
    """The whole calendar day: 00:00:00 to 23:59:59."""
    day = moment.date() if isinstance(moment, datetime) else moment
    return datetime.combine(day, time.min), datetime.combine(day, time(23, 59, 59))


def days_span(first: date | datetime, last: date | datetime) -> Interval:
    """From the start of one day to the end of another."""
    return day_span(first)[0], day_span(last)[1]


def week_span(moment: datetime) -> Interval:
    """The Monday-to-Sunday week containing a moment."""
    monday = moment.date() - timedelta(days=moment.weekday())
    return days_span(monday, monday + timedelta(days=6))


def month_span(year: int, month: int) -> Interval:
    """A whole calendar month (month numbers past 12 or below 1 roll into the neighbouring years)."""
    year, month = year + (month - 1) // 12, (month - 1) % 12 + 1
    following = date(year + month // 12, month % 12 + 1, 1)
    return days_span(date(year, month, 1), following - timedelta(days=1))


def year_span(year: int) -> Interval:
    """A whole calendar year."""
    return days_span(date(year, 1, 1), date(year, 12, 31))


def _unit_span(unit: str, moment: datetime) -> Interval:
    """The interval of one unit (day, week, month, year) around a moment."""
    spans: dict[str, Callable[[datetime], Interval]] = {
        "day": day_span,
        "fortnight": day_span,
        "week": week_span,
        "month": lambda m: month_span(m.year, m.month),
        "year": lambda m: year_span(m.year),
    }
    return spans[unit](moment)


def _shift(moment: datetime, unit: str, amount: int) -> datetime:
    """Move a moment by whole units; months and years land on the 1st so that no day overflows."""
    if unit in ("day", "week", "fortnight"):
        return moment + timedelta(days=amount * {"day": 1, "week": 7, "fortnight": 14}[unit])
    months = amount * (12 if unit == "year" else 1)
    return month_span(moment.year, moment.month + months)[0]


def _pick(candidates: list[Interval], anchor: datetime, relation: str) -> Interval | None:
    """Choose the instance of a recurring period (a Friday, a May) that a relation word points at."""
    today_start, today_end = day_span(anchor)
    tests: dict[str, Callable[[Interval], bool]] = {
        "last": lambda c: c[1] < today_start,
        "next": lambda c: c[0] > today_end,
        "past": lambda c: c[0] <= today_end,
        "future": lambda c: c[1] >= today_start,
    }
    matching = [c for c in candidates if tests[relation](c)]
    if not matching:
        return None
    return max(matching) if relation in ("last", "past") else min(matching)


def _relation(word: str | None, tense: str) -> str:
    """last/next words fix the direction; anything else ("this", "on", none) follows the verb tense."""
    return RELATIONS.get(" ".join((word or "").lower().split()), tense)


def _counted(match: re.Match[str], anchor: datetime | None, tense: str) -> Interval | None:
    """Counted units: "two days ago", "a few weeks ago" (a span), "in three months"."""
    if anchor is None:
        return None
    count = match["count"].lower()
    low, high = COUNTS.get(" ".join(count.split()), (int(count), int(count)) if count.isdigit() else (1, 1))
    unit = match["unit"].lower()
    sign = -1 if match["ago"] else 1
    near = _unit_span(unit, _shift(anchor, unit, sign * low))
    far = _unit_span(unit, _shift(anchor, unit, sign * high))
    return (far[0], near[1]) if sign < 0 else (near[0], far[1])


def _named_day(match: re.Match[str], anchor: datetime | None, tense: str) -> Interval | None:
    """yesterday, today, tomorrow, last night, this morning, the day before yesterday."""
    if anchor is None:
        return None
    phrase = " ".join(match.group(0).lower().split())
    offsets = {
        "yesterday": -1,
        "last night": -1,
        "tomorrow": 1,
        "the day before yesterday": -2,
        "the day after tomorrow": 2,
    }
    return day_span(anchor + timedelta(days=offsets.get(phrase, 0)))


def _relative_period(match: re.Match[str], anchor: datetime | None, tense: str) -> Interval | None:
    """last/this/next week, month, year."""
    if anchor is None:
        return None
    unit, relation = match["unit"].lower(), " ".join(match["rel"].lower().split())
    if relation in ("past", "this past"):  # a rolling span ending today: "the past week"
        return days_span(anchor - timedelta(days=ROLLING_DAYS[unit]), anchor)
    offset = {"last": -1, "next": 1}.get(_relation(relation, "this"), 0)
    return _unit_span(unit, _shift(anchor, unit, offset))


def _weekend(match: re.Match[str], anchor: datetime | None, tense: str) -> Interval | None:
    """this/last/next weekend: the Saturday-Sunday the words point at."""
    if anchor is None:
        return None
    saturday = anchor.date() + timedelta(days=5 - anchor.weekday())
    saturdays = [saturday + timedelta(weeks=k) for k in (-2, -1, 0, 1, 2)]
    candidates = [days_span(day, day + timedelta(days=1)) for day in saturdays]
    if (match["rel"] or "").lower() == "this" and _unmarked(match, tense):
        return candidates[2]  # "I'm free this weekend" said on a Friday: the weekend of the week it is said in
    return _pick(candidates, anchor, _relation(match["rel"], tense))


def _weekday(match: re.Match[str], anchor: datetime | None, tense: str) -> Interval | None:
    """last Friday, on Friday, next Monday."""
    if anchor is None:
        return None
    target = WEEKDAYS[match["weekday"].lower()]
    base = anchor.date() + timedelta(days=target - anchor.weekday())
    candidates = [day_span(base + timedelta(weeks=k)) for k in (-2, -1, 0, 1, 2)]
    if (match["rel"] or "on").lower() == "on" and _unmarked(match, tense):
        return _unmarked_pick(match, candidates, anchor)  # "the 14:30 on Friday", "dinner there on Friday?"
    return _pick(candidates, anchor, _relation(match["rel"], tense))


def _month(match: re.Match[str], anchor: datetime | None, tense: str) -> Interval | None:
    """in May, last May, May 2023: the month of the stated year, else the one the tense points at."""
    month = MONTHS[match["month"].lower().rstrip(".")]
    if match["year"]:
        return month_span(int(match["year"]), month)
    if anchor is None or _elsewhere_in_time(match):
        return None
    candidates = [month_span(anchor.year + k, month) for k in (-2, -1, 0, 1)]
    return _pick(candidates, anchor, _relation(match["rel"], tense))


_NTH = {"first": 1, "second": 2, "third": 3, "fourth": 4, "last": -1}


def _weekday_of_month(match: re.Match[str], anchor: datetime | None, tense: str) -> Interval | None:
    """the last Thursday of May, the first Monday in June: that day of the month of the stated year, else of the
    month the tense points at."""
    month_of = _month(match, anchor, tense)
    if month_of is None:
        return None
    first, last = month_of[0].date(), month_of[1].date()
    target = WEEKDAYS[match["weekday"].lower()]
    days = [first + timedelta(days=k) for k in range((last - first).days + 1)]
    matching = [day for day in days if day.weekday() == target]
    nth = _NTH[match["nth"].lower()]
    return day_span(matching[nth - 1 if nth > 0 else -1]) if len(matching) >= abs(nth) else None


def _season(match: re.Match[str], anchor: datetime | None, tense: str) -> Interval | None:
    """last summer, this winter, the summer of 2022 (meteorological seasons, northern hemisphere)."""
    first = SEASON_START[match["season"].lower()]
    span = lambda year: (month_span(year, first)[0], month_span(year, first + 2)[1])  # noqa: E731
    if match["year"]:
        return span(int(match["year"]) - (1 if first == 12 else 0))
    if anchor is None or _elsewhere_in_time(match):
        return None
    return _pick([span(anchor.year + k) for k in (-2, -1, 0, 1)], anchor, _relation(match["rel"], tense))


def _calendar_date(match: re.Match[str], anchor: datetime | None, tense: str) -> Interval | None:
    """8 May 2023, May 8th, 2023-05-08, 5/8/2023: a day; without a year only with a session to anchor it."""
    month = MONTHS.get(str(match["month"]).lower().rstrip(".")) or int(match["month"])
    day = int(match["day"])
    try:
        if match["year"]:
            return day_span(date(int(match["year"]), month, day))
        if anchor is None or _elsewhere_in_time(match):
            return None
        candidates = [day_span(date(anchor.year + k, month, day)) for k in (-1, 0, 1)]
    except ValueError:
        return None
    if _unmarked(match, tense) or _ARRANGED.search(sentence_at(match.string, match.start())):
        return _unmarked_pick(match, candidates, anchor)  # "the movers come on May 28th"
    return _pick(candidates, anchor, _relation(None, tense))


def _elsewhere_in_time(match: re.Match[str]) -> bool:
    """A year-less date its words place in another time (see _OTHER_AGE): it is not this year's."""
    text = match.string
    return (
        _FOLLOWING_YEAR.match(text, match.end()) is not None
        or _OTHER_AGE.search(sentence_at(text, match.start())) is not None
        or inside_quotes(text, match.start(), match.end())
    )


def inside_quotes(text: str, start: int, end: int) -> bool:
    """Whether text[start:end] sits in a quoted passage: between a quote mark and its closing one, or on a quoted
    line ("> ...")."""
    line = text.rfind("\n", 0, start) + 1
    if _QUOTED_LINE.match(text, line):
        return True
    for opening, closing in _QUOTE_MARKS:
        if closing not in text[end:]:
            continue
        if opening == closing and text.count(opening, 0, start) % 2:
            return True
        if opening != closing and text.rfind(opening, 0, start) > text.rfind(closing, 0, start):
            return True
    return False


def _unmarked(match: re.Match[str], tense: str) -> bool:
    """No word of the expression's clause or of what follows it in the sentence says past or future (the default
    tense is only a guess). An earlier clause does not count: "Work has been crazy, we have a launch on the 12th"
    speaks of a launch ahead; "On the 3rd, we went" still reports."""
    return tense == "past" and not _PAST_CUES.search(clause_onwards(match.string, match.start()))


def _unmarked_pick(match: re.Match[str], candidates: list[Interval], anchor: datetime) -> Interval | None:
    """A question proposes ("dinner there on Friday?": the coming one); a statement means the nearest instance."""
    if match.string.startswith("?", sentence_end(match.string, match.end())):
        return _pick(candidates, anchor, "future")
    return min(candidates, key=lambda c: abs(c[0] - anchor))


def _day_of_month(match: re.Match[str], anchor: datetime | None, tense: str) -> Interval | None:
    """On "the 15th": that day of the session's month, or of a neighbouring month the tense points at."""
    if anchor is None or _elsewhere_in_time(match):
        return None
    day, candidates = int(match["day"]), []
    for offset in (-1, 0, 1):
        first = month_span(anchor.year, anchor.month + offset)[0]
        if day <= month_span(first.year, first.month)[1].day:
            candidates.append(day_span(first.replace(day=day)))
    if candidates and _unmarked(match, tense):
        return _unmarked_pick(match, candidates, anchor)  # "we have a launch on the 12th"
    return _pick(candidates, anchor, tense)


def _year(match: re.Match[str], anchor: datetime | None, tense: str) -> Interval | None:
    """in 2022, since 2019: the whole year."""
    return year_span(int(match["year"]))


Handler = Callable[[re.Match[str], datetime | None, str], Interval | None]
_REL = r"this past|last|this|next|past|coming"
_MONTH_CONTEXT = r"in|last|this|next|since|until|till|during|early|mid|late|of|by|through|around|before|after"
_RULES: list[tuple[str, Handler]] = [
    (rf"(?<!-)\b(?P<count>{_COUNT})\s+{_UNIT}\s+(?P<ago>ago)\b", _counted),
    (rf"\bin\s+(?P<count>{_COUNT})\s+{_UNIT}\b(?P<ago>)", _counted),
    (
        r"\b(?:the day (?:before yesterday|after tomorrow)|yesterday|today|tonight|tomorrow|last night"
        r"|this (?:morning|afternoon|evening))\b",
        _named_day,
    ),
    (rf"\b(?P<rel>{_REL})\s+(?P<unit>week|month|year)\b", _relative_period),
    (rf"\b(?P<rel>{_REL}|over the|on the|at the)\s+weekend\b", _weekend),
    (
        rf"\b(?:the\s+)?(?P<nth>first|second|third|fourth|last)\s+(?P<weekday>{_WEEKDAY})\s+(?:of|in)\s+(?P<rel>)"
        rf"(?P<month>{_FULL_MONTH})\b(?:,?\s+(?P<year>{_YEAR}))?",
        _weekday_of_month,
    ),
    (rf"\b(?:(?P<rel>{_REL}|on)\s+)?(?P<weekday>{_WEEKDAY})\b(?!['’]?s\b)", _weekday),
    (rf"\b(?P<day>\d{{1,2}}){_ORD}\s+(?:of\s+)?(?P<month>{_ANY_MONTH}),?(?:\s+(?P<year>{_YEAR}))?\b", _calendar_date),
    (rf"\b(?P<month>{_ANY_MONTH})\s+(?P<day>\d{{1,2}}){_ORD}(?!\d)(?:,?\s+(?P<year>{_YEAR}))?\b", _calendar_date),
    (r"\b(?:on|since|by|until|till|before|after)\s+the\s+(?P<day>\d{1,2})(?:st|nd|rd|th)\b", _day_of_month),
    (rf"\b(?P<year>{_YEAR})-(?P<month>\d{{1,2}})-(?P<day>\d{{1,2}})\b", _calendar_date),
    (rf"\b(?P<month>\d{{1,2}})/(?P<day>\d{{1,2}})/(?P<year>{_YEAR})\b", _calendar_date),
    (
        rf"\b(?:(?P<rel>{_MONTH_CONTEXT})\s+(?:(?:early|mid|late)[\s-]+)?)(?P<month>{_FULL_MONTH})\b"
        rf"(?:,?\s+(?:of\s+)?(?P<year>{_YEAR}))?",
        _month,
    ),
    (rf"\b(?P<rel>)(?P<month>{_FULL_MONTH}),?\s+(?P<year>{_YEAR})\b", _month),
    (
        rf"\b(?:(?P<rel>{_REL})\s+|(?:in|during|over)\s+(?:the\s+)?)"
        rf"(?P<season>spring|summer|fall|autumn|winter)\b(?:\s+of\s+(?P<year>{_YEAR}))?",
        _season,
    ),
    (rf"\b(?:in|since|during|until|by|early|late|around|of|back in)\s+(?P<year>{_YEAR})\b(?!\s*[-/])", _year),
]
_COMPILED = [(re.compile(pattern, re.IGNORECASE), handler) for pattern, handler in _RULES]
_TRIGGER = re.compile(
    rf"\b(?:ago|yesterday|today|tonight|tomorrow|night|morning|afternoon|evening|weeks?|weekends?|months?|years?"
    rf"|days?|fortnights?|{_WEEKDAY}|{_ANY_MONTH}|spring|summer|fall|autumn|winter)\b|\d",
    re.IGNORECASE,
)


SENTENCE_MARKS = ".!?\n"


def sentence_at(text: str, position: int) -> str:
    """The sentence holding `position`: "Will do. I went past it on Tuesday" reports, whatever came before."""
    return text[_start(text, position, SENTENCE_MARKS) : sentence_end(text, position)]


def clause_onwards(text: str, position: int) -> str:
    """From the start of the clause holding `position` (after a comma or semicolon of its sentence) to the end of
    its sentence."""
    return text[_start(text, position, SENTENCE_MARKS + ",;") : sentence_end(text, position)]


def _start(text: str, position: int, marks: str) -> int:
    """Just after the last of `marks` before `position` (0 when there is none)."""
    return max(text.rfind(mark, 0, position) for mark in marks) + 1


def sentence_end(text: str, position: int) -> int:
    """Where the sentence holding `position` ends: its closing mark, else the end of the text."""
    return min((end for end in (text.find(mark, position) for mark in SENTENCE_MARKS) if end != -1), default=len(text))


def tense_of(text: str) -> str:
    """The direction bare expressions point: "future" for plans, else "past" (chat mostly reports)."""
    return "future" if _FUTURE_CUES.search(text) else "past"


# A turn the rules leave to dateparser: warm() reads it so dateparser is imported and its English data loaded.
WARM_TEXT = "I got my first guitar twenty-five years ago"


def warm() -> None:
    """Load dateparser now: a long-lived server (MCP) would otherwise pay ~0.3 s for it on the first turn it writes
    that the rules leave to dateparser."""
    find_interval(WARM_TEXT, datetime(2024, 1, 1))


def find_interval(text: str, session_ts: datetime | None) -> Interval | None:
    """The interval of the first temporal expression in the text, or None when there is none we trust."""
    if not _TRIGGER.search(text):
        return None
    found = find_expression(text, session_ts)
    if found is not None:
        return found[1]
    if any(regex.search(text) for regex, _ in _COMPILED):
        return None
    return _within_calendar(_dateparser_interval, text, session_ts, tense_of(text))


def find_expression(text: str, session_ts: datetime | None) -> tuple[str, Interval] | None:
    """The first temporal expression the rules resolve (its words as written, its interval); no dateparser."""
    if not _TRIGGER.search(text):
        return None
    hits = [(m, handler) for regex, handler in _COMPILED for m in regex.finditer(text)]
    hits.sort(key=lambda hit: (hit[0].start(), -len(hit[0].group(0))))  # leftmost first, then longest
    for match, handler in hits:
        interval = _within_calendar(handler, match, session_ts, tense_of(sentence_at(text, match.start())))
        if interval is not None:
            return match.group(0), interval
    return None


def _within_calendar(handler: Callable[..., Interval | None], *args: object) -> Interval | None:
    """A handler's interval, or None when it falls off the calendar (year 1 "last week", year 9999 "next week"):
    such a time stays ungrounded and the turn is kept."""
    try:
        return handler(*args)
    except (OverflowError, ValueError):
        return None


def ground_time(text: str, session_ts: datetime | None) -> tuple[datetime | None, datetime | None, bool]:
    """(start, end, grounded): the text's own time, else the session's day marked as not grounded."""
    interval = find_interval(text, session_ts)
    if interval is not None:
        return interval[0], interval[1], True
    if session_ts is None:
        return None, None, False
    start, end = day_span(session_ts)
    return start, end, False


def _dateparser_interval(text: str, session_ts: datetime | None, tense: str) -> Interval | None:
    """Ask dateparser about the rare leftovers ("twenty years ago"), keeping only real date expressions."""
    if not _FALLBACK_TRIGGER.search(text) or (session_ts is None and not re.search(_YEAR, text)):
        return None
    from dateparser.search import search_dates

    settings = {"PREFER_DATES_FROM": tense, "RETURN_AS_TIMEZONE_AWARE": False}
    if session_ts is not None:
        settings["RELATIVE_BASE"] = session_ts
    for phrase, moment in search_dates(text, languages=["en"], settings=settings) or []:
        if phrase.strip().lower() in _FALLBACK_NOISE or not _FALLBACK_TRIGGER.search(phrase):
            continue
        if session_ts is None and (not re.search(_YEAR, phrase) or "ago" in phrase.lower()):
            continue
        return _unit_span(_granularity(phrase), moment)
    return None


def _granularity(phrase: str) -> str:
    """The unit a dateparser phrase names, so "in 2019" covers the year and "May 3rd" the day."""
    lowered = phrase.lower()
    for unit in ("week", "month", "year"):
        if re.search(rf"\b{unit}s?\b", lowered):
            return unit
    has_month = re.search(rf"\b(?:{_ANY_MONTH})\b", lowered)
    has_day = re.search(r"\b\d{1,2}(?:st|nd|rd|th)?\b", lowered)
    if has_month and not has_day:
        return "month"
    if not has_month and not has_day and re.search(_YEAR, lowered):
        return "year"
    return "day"
