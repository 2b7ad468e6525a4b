"""The evidence block shaped for a reader: what a careful person reads before answering a question about chats.

The best evidence, each memory with its speaker, the day it was said and the day it speaks of, read beside its
neighbours in the chat (a question and its answer), grouped by session in the order it was said; a long turn
clipped to the passages that match the question; the turn a short reply answers. For date questions the days
the time rules work out are given as facts; for list questions every session found gets a line before any gets
two; for "current" questions the newest session comes first and its statements are marked latest, older ones
earlier. `llm.py` puts the block under its prompt.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from datetime import datetime
from itertools import pairwise

from ripplecli.answer.base import Answer
from ripplecli.answer.phrases import stem
from ripplecli.answer.spans import NUMBER_WORDS, exact_day, session_stamp, shown_date, time_span
from ripplecli.answer.typed import (
    ASKS_CURRENT,
    QUESTION_WORDS,
    many,
    question_type,
    speaker_and_body,
    turn_place,
    typed_answer,
)
from ripplecli.cues import content_tokens
from ripplecli.extract.timeparse import find_expression
from ripplecli.protocols import LLM
from ripplecli.runtime.llm import count_tokens
from ripplecli.trace import Evidence

MOST_SHOWN = 24  # memories in one block at most, whatever the budget
ANCHORS = 3  # the best memories whose answers in the chat are read with them, when they ask something
NEAR_TURNS = 3  # turns after a question among the best that are read as its answer
THREAD_STEP = 0.5  # a turn k after a question at rank r is read as if ranked r + k·THREAD_STEP
RULED_AT = 0.5  # the memories the rules' answer cites are read as if ranked here (right after the best)
CHAIN = 1  # a pulled-up turn that asks again, ranked within ANCHORS·CHAIN, pulls up its own answers (0: none)
LONG_WORDS = 70  # a turn longer than this is clipped to its passages that match the question
CLIP_WORDS = 55  # what is kept of a long turn
CONTEXT_WORDS = 30  # what is kept of the turn a short reply answers
SESSIONS_BY = "rank"  # sessions in the order of their best memory ("rank") or of their day ("time")
NUMBER_FACTS = 6  # passages with a number listed for a how-many question, one per memory
RULES_HINT = 0  # 1: the rules' answer is given as a fact too (measured: see bench/README.md)
DATE_FACTS = 4  # dated memories worked out as facts

_PASSAGE = re.compile(r"(?<=[.!?])\s+|\s*\n+\s*")
_AGO = re.compile(r"\bhow (?:long|many (?:days|weeks|months|years)) ago\b|\bago\?$", re.IGNORECASE)
_TOTAL = re.compile(r"\b(?:total|in all|altogether|combined|sum)\b", re.IGNORECASE)
_NUMBER = re.compile(rf"[$£€]?\d[\d,.]*|\b(?:{'|'.join(NUMBER_WORDS)})\b", re.IGNORECASE)
_BETWEEN = re.compile(
    r"\bhow (?:many (?:days|weeks|months|years)|long)\b.*\b(?:between|since|after|before|passed|until|had passed)\b"
    r"|\bwhich (?:came|happened|did \w+ do) first\b|\bfirst\b.*\bor\b",
    re.IGNORECASE,
)
_PHOTO = re.compile(r"\[image: (?:an? )?(?:photo(?:graph)?y? of )?([^\]]*)\]?")  # a shared photo's caption
_CAPTION = r"(photo: \1)"  # as the block shows it: bracketed, the model copied it into its answers
_UNIT = re.compile(r"\b(days|weeks|months|years)\b", re.IGNORECASE)


@dataclass
class Asks:
    """What the question asks for, as the block is shaped by it."""

    text: str
    cues: frozenset[str]  # stems of its content words
    dates: bool  # when, how long ago, how many days between: the days are worked out as facts
    ago: bool  # counted back from today
    between: bool  # the time between two events
    listing: bool  # how many, which, a plural: one line from every session first
    counting: bool  # how many, how much, total: the numbers the memories give are listed
    current: bool  # current, now, still, latest: newest first

    weights: dict[str, float] = field(default_factory=dict)  # a cue few memories carry tells passages apart

    @classmethod
    def of(cls, question: str, evidence: list[Evidence] | None = None) -> Asks:
        """Read the question; the cues are weighed by how few of the evidence's memories carry them."""
        kind = question_type(question)
        cues = frozenset(stem(t) for t in content_tokens(question) if t not in QUESTION_WORDS)
        carried = [_stems(_with_turn_answered(e)) for e in evidence or []]
        weights = {c: 1 + math.log((len(carried) + 1) / (sum(c in s for s in carried) + 1)) for c in cues}
        ago, between = bool(_AGO.search(question)), bool(_BETWEEN.search(question))
        listing = kind == "how-many" or many(question) or bool(re.match(r"\s*(?:list|name)\b", question, re.I))
        current = bool(ASKS_CURRENT.search(question))
        counting = kind == "how-many" or bool(_TOTAL.search(question))
        dates = kind == "when" or ago or between
        return cls(question, cues, dates, ago, between, listing, counting, current, weights)

    def carried(self, text: str) -> float:
        """The weight of the question's cues a piece of text carries (0: none)."""
        return sum(self.weights.get(c, 1.0) for c in _stems(text) & self.cues)


def _stems(text: str) -> set[str]:
    """The stems of a text's content words."""
    return {stem(t) for t in content_tokens(text)}


@dataclass
class Block:
    """The memories shown (chat order within each group), their text and the facts worked out for the question."""

    shown: list[Evidence]
    text: str


def shaped_block(question: str, evidence: list[Evidence], llm: LLM, budget: int, today: datetime | None) -> Block:
    """The block a careful reader would read, within `budget` tokens (never fewer than one memory)."""
    asks = Asks.of(question, evidence)
    ruled = typed_answer(question, evidence, today)  # the memories the rules answer from are read first
    order = reading_order(evidence, asks, ruled.citations if ruled.found and ruled.sure else [])
    shown: list[Evidence] = []
    used = 0
    for e in order[:MOST_SHOWN]:
        cost = count_tokens(llm, reader_line(e, asks)) + 1
        if shown and used + cost > budget:
            break
        shown.append(e)
        used += cost
    groups = grouped(shown, order, asks)
    facts = facts_for(asks, groups, today, ruled)
    while facts and shown[1:] and used + count_tokens(llm, facts) > budget:  # facts come first
        dropped = max(shown, key=order.index)  # the last to have earned its place
        shown.remove(dropped)
        used -= count_tokens(llm, reader_line(dropped, asks)) + 1
        groups = grouped(shown, order, asks)
        facts = facts_for(asks, groups, today, ruled)
    return Block([e for group in groups for e in group], render(groups, facts, asks))


def facts_for(asks: Asks, groups: list[list[Evidence]], today: datetime | None, ruled: Answer | None = None) -> str:
    """What the rules work out for the question from the memories shown: the dates, the numbers to count with
    (and with RULES_HINT, the rules' own answer)."""
    shown = [e for group in groups for e in group]
    ids = {e.memory_id for e in shown}
    sure = RULES_HINT and ruled is not None and ruled.found and ruled.sure and set(ruled.citations) <= ids
    hint = ruled if sure else None
    sections = [
        ("Worked out from the dates:", date_facts(asks, shown, today) if asks.dates else []),
        ("Numbers the memories give:", number_facts(asks, shown) if asks.counting else []),
        ("The rules read:", [f"- {hint.span} " + " ".join(f"[m{c}]" for c in hint.citations)] if hint else []),
    ]
    return "\n\n".join(f"{head}\n" + "\n".join(lines) for head, lines in sections if lines)


def reading_order(evidence: list[Evidence], asks: Asks, ruled: list[int] | None = None) -> list[Evidence]:
    """Evidence in the order it earns a place: by rank, the memories the rules answer from (`ruled`) right after
    the best, the turns answering a question among the best right after it, and for a list question the best
    memory of every session before the second of any."""
    priority = {e.memory_id: float(i) for i, e in enumerate(evidence)}
    for i, memory_id in enumerate(ruled or []):
        if memory_id in priority:
            priority[memory_id] = min(priority[memory_id], RULED_AT + i / 100)
    places = {e.memory_id: turn_place(e) for e in evidence}
    waiting = [e for e in evidence if priority[e.memory_id] < ANCHORS and _asks(e)]
    while waiting:  # the turns answering a question among the best are read with it; one that asks again, too
        anchor = waiting.pop(0)
        at = places[anchor.memory_id]
        for e in evidence:
            there = places[e.memory_id]
            if at is None or there is None or there[1] != at[1] or not 0 < there[2] - at[2] <= NEAR_TURNS:
                continue
            pulled = priority[anchor.memory_id] + (there[2] - at[2]) * THREAD_STEP
            if pulled < priority[e.memory_id]:
                priority[e.memory_id] = pulled
                if pulled < ANCHORS * CHAIN and _asks(e):
                    waiting.append(e)
    ranked = sorted(evidence, key=lambda e: priority[e.memory_id])
    if not asks.listing:
        return ranked
    firsts, seen = [], set()
    for e in ranked:
        session = session_key(e)
        if session not in seen and asks.carried(_with_turn_answered(e)):
            firsts.append(e)
            seen.add(session)
    return [*firsts, *(e for e in ranked if e not in firsts)]


def _asks(e: Evidence) -> bool:
    """Whether the memory asks something (the turns after it likely answer)."""
    return "?" in speaker_and_body(e)[1]


def session_key(e: Evidence) -> str:
    """The memory's session, named with its conversation."""
    place = turn_place(e)
    return place[1] if place else f"{e.conversation_id}/m{e.memory_id}"


def grouped(shown: list[Evidence], order: list[Evidence], asks: Asks) -> list[list[Evidence]]:
    """The shown memories by session, each session in chat order; sessions by their best memory, or newest first
    for a "current" question."""
    groups: dict[str, list[Evidence]] = {}
    for e in sorted(shown, key=order.index):
        groups.setdefault(session_key(e), []).append(e)
    ordered = list(groups.values())
    if SESSIONS_BY == "time":
        ordered.sort(key=lambda group: session_stamp(group[0]) or datetime.min)
    if asks.current:
        ordered.sort(key=lambda group: session_stamp(group[0]) or datetime.min, reverse=True)
    return [sorted(group, key=_position) for group in ordered]


def _position(e: Evidence) -> tuple[int, int]:
    """Where the memory's turn sits in its session (its id breaks ties between memories of one turn)."""
    place = turn_place(e)
    return (place[2] if place else 0, e.memory_id)


def render(groups: list[list[Evidence]], facts: str, asks: Asks) -> str:
    """Sessions separated by a blank line, then the facts."""
    latest = _latest(groups, asks) if asks.current else None
    lines = []
    for group in groups:
        said = {turn for e in group for turn in e.source_turns}
        lines.append("\n".join(reader_line(e, asks, said, latest) for e in group))
    text = "\n\n".join(lines)
    return f"{text}\n\n{facts}" if facts else text


def _latest(groups: list[list[Evidence]], asks: Asks) -> datetime | None:
    """The day of the newest statement that carries the question's cues."""
    carrying = (e for group in groups for e in group if asks.carried(_with_turn_answered(e)))
    return max((stamp for e in carrying if (stamp := session_stamp(e))), default=None)


def reader_line(e: Evidence, asks: Asks, beside: set[str] | None = None, latest: datetime | None = None) -> str:
    """`[m4] Nora, 2 March 2024 (speaks of 1 March 2024) (to Ben: "…"): passage … passage`; the turn a reply
    answers is left out when it is shown right beside it, and for a "current" question a statement on the question's
    subject is marked latest or earlier."""
    speaker, body = speaker_and_body(e)
    stamp = session_stamp(e)
    head = f"[m{e.memory_id}] {speaker}"
    if stamp:
        head += f", {shown_date(stamp)}"
        spoken_of = time_span(body, stamp)
        if spoken_of and spoken_of != shown_date(stamp):
            head += f" (speaks of {spoken_of})"
    if latest is not None and stamp is not None and asks.carried(body):
        head += " (latest)" if stamp.date() >= latest.date() else " (earlier)"
    if e.context and not _context_shown(e, beside or set()):
        head += f' (to {e.context.speaker}: "{clipped(e.context.text, asks, CONTEXT_WORDS, CONTEXT_WORDS)}")'
    return f"{head}: {_PHOTO.sub(_CAPTION, clipped(body, asks))}"


def _context_shown(e: Evidence, beside: set[str]) -> bool:
    """Whether the turn a reply answers is itself in the block (so not repeated)."""
    return e.context is not None and e.context.turn_id in beside


def clipped(text: str, asks: Asks, long: int | None = None, keep: int | None = None) -> str:
    """A text longer than `long` words (LONG_WORDS) cut to about `keep` (CLIP_WORDS) of its passages that carry the
    question's cues (best first, shown in their own order, gaps marked …); one with no such passage keeps its
    opening."""
    long, keep = long or LONG_WORDS, keep or CLIP_WORDS
    flat = " ".join(text.split())
    if len(flat.split()) <= long:
        return flat
    pieces = [p.strip() for p in _PASSAGE.split(text) if p and p.strip()]
    scored = sorted(range(len(pieces)), key=lambda i: (-asks.carried(pieces[i]), i))
    kept: set[int] = set()
    words = 0
    for i in scored:
        if asks.carried(pieces[i]) == 0 and kept:
            break
        kept.add(i)
        words += len(pieces[i].split())
        if words >= keep:
            break
    out, last = [], -1
    for i in sorted(kept):
        out.append(("… " if i != last + 1 else "") + pieces[i])
        last = i
    said = " ".join(out)
    if last < len(pieces) - 1:
        said += " …"
    cut = said.split()
    return " ".join(cut[: keep + 10]) + (" …" if len(cut) > keep + 10 else "")


def _with_turn_answered(e: Evidence) -> str:
    """The memory's words without its speaker, with the turn it answers (a reply's cues are in the question)."""
    body = speaker_and_body(e)[1]
    return f"{e.context.text} {body}" if e.context else body


def number_facts(asks: Asks, shown: list[Evidence]) -> list[str]:
    """For a how-many or how-much question: of each memory, the passage that best carries the question's cues and
    states a number (dates aside), the best NUMBER_FACTS in the block's order, each number once: the model adds up
    what it is shown."""
    best: dict[int, tuple[float, str, frozenset[str]]] = {}
    for e in shown:
        stamp = session_stamp(e)
        for passage in _PASSAGE.split(speaker_and_body(e)[1]):
            dated = find_expression(passage, stamp)
            numbers = frozenset(n.lower() for n in _NUMBER.findall(passage) if not dated or n not in dated[0])
            weight = asks.carried(passage) if numbers and not passage.rstrip().endswith("?") else 0.0
            if weight > best.get(e.memory_id, (0.0,))[0]:
                best[e.memory_id] = (weight, passage, numbers)
    kept: dict[int, str] = {}
    seen: set[str] = set()
    for memory_id, (_, passage, numbers) in sorted(best.items(), key=lambda item: -item[1][0]):
        if numbers <= seen:
            continue
        seen |= numbers
        kept[memory_id] = passage
        if len(kept) == NUMBER_FACTS:
            break
    clip = CONTEXT_WORDS
    return [f"- [m{e.memory_id}] {clipped(kept[e.memory_id], asks, clip, clip)}" for e in shown if e.memory_id in kept]


def date_facts(asks: Asks, shown: list[Evidence], today: datetime | None) -> list[str]:
    """The days the time rules work out for the memories that carry the question's cues and state a time: the day
    each speaks of (a weekday counted from the day said, named); for "how long ago" and "between" questions also
    the days said, how long before today, and the time between them."""
    counting = asks.ago or asks.between
    dated = []
    weights = {e.memory_id: asks.carried(_with_turn_answered(e)) for e in shown}
    for e in sorted(shown, key=lambda e: -weights[e.memory_id]):
        stamp = session_stamp(e)
        if stamp is None or not weights[e.memory_id]:
            continue
        day, words = _event_day(speaker_and_body(e)[1], stamp)
        if words or counting:
            dated.append((e, day, words or f"was said on {shown_date(stamp)}"))
        if len(dated) == DATE_FACTS:
            break
    unit = _asked_unit(asks.text)
    facts = []
    for e, day, words in dated:
        line = f"- [m{e.memory_id}] {words}"
        if asks.ago and today is not None:
            line += f", {_span(day, today, unit)} before today ({shown_date(today)})"
        facts.append(line + ".")
    if asks.between:
        for first, second in pairwise(dated):
            (a, day_a, _), (b, day_b, _) = sorted((first, second), key=lambda d: d[1])
            facts.append(f"- from [m{a.memory_id}] to [m{b.memory_id}]: {_span(day_a, day_b, unit)}.")
    return facts


def _event_day(body: str, stamp: datetime) -> tuple[datetime, str]:
    """The day a memory tells of and how a person writes it ("" when its words state no time: the day said)."""
    written = time_span(body, stamp)
    if not written:
        return stamp, ""
    exact = exact_day(written)
    if exact:
        return datetime.strptime(exact, "%A %d %B %Y"), f"speaks of {written} ({exact})"  # as the rules write it
    found = find_expression(body, stamp)
    return (found[1][0] if found else stamp), f"speaks of {written}"


def _asked_unit(question: str) -> str | None:
    """The unit the question counts in, if it names one."""
    match = _UNIT.search(question)
    return match.group(1).lower() if match else None


def _span(start: datetime, end: datetime, unit: str | None) -> str:
    """The time from one day to another in the asked unit (else the one a person would use), with the days:
    "3 weeks (20 days)"."""
    days = abs((end.date() - start.date()).days)
    unit = unit or ("years" if days >= 365 else "months" if days >= 60 else "weeks" if days >= 14 else "days")
    if unit == "weeks":
        return f"{_count(round(days / 7), 'week')} ({_count(days, 'day')})"
    if unit == "months":
        months = abs((end.year - start.year) * 12 + end.month - start.month - (end.day < start.day))
        return f"{_count(months, 'month')} ({_count(days, 'day')})"
    if unit == "years":
        years = abs(end.year - start.year - ((end.month, end.day) < (start.month, start.day)))
        return f"{_count(years, 'year')} ({_count(days, 'day')})"
    return _count(days, "day")


def _count(number: int, unit: str) -> str:
    """"1 week", "3 weeks"."""
    return f"{number} {unit}{'' if number == 1 else 's'}"
