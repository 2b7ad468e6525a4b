"""Sessions for exports that have none: one per calendar day, so a message's session never depends on its neighbours.

A day is a stable key: a newer export of the same chat puts every old message in the session it had before,
which is what lets a re-ingest add only the new turns.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from ripplecli.model import Session, Turn, wall_clock


@dataclass(frozen=True)
class Dated:
    """A turn and the wall-clock time that decides its day (the export's local time where it has one)."""

    turn: Turn
    local: datetime | None


def by_day(dated: list[Dated], undated_id: str = "undated") -> list[Session]:
    """Group turns into one session per local calendar day, in order of first appearance; undated turns follow
    the last dated one (or form `undated_id` when nothing before them has a date)."""
    sessions: dict[str, Session] = {}
    current = undated_id
    for item in dated:
        if item.local is not None:
            current = item.local.date().isoformat()
        session = sessions.setdefault(current, Session(current, item.local, []))
        session.turns.append(item.turn)
    return list(sessions.values())


class StableIds:
    """Turn ids for exports whose messages have none: a short hash of what the message is, numbered when the
    same message (time, author, text) repeats, so the same message gets the same id in every export."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.seen: Counter[str] = Counter()

    def make(self, *parts: str) -> str:
        """The id of the next message made of `parts`."""
        key = "\x1f".join(parts)
        self.seen[key] += 1
        digest = hashlib.sha1(f"{key}\x1f{self.seen[key]}".encode()).hexdigest()[:12]
        return f"{self.prefix}{digest}"


def slug(text: str) -> str:
    """Letters and digits of a name, joined by dashes, for ids."""
    return "-".join(re.findall(r"\w+", text.lower()))[:40] or "chat"


def short_hash(text: str, length: int = 8) -> str:
    """A few hex digits that tell two things with the same name apart."""
    return hashlib.sha1(text.encode()).hexdigest()[:length]


def from_epoch(seconds: float) -> datetime | None:
    """A Unix time as naive UTC; None when it is out of range."""
    try:
        return datetime.fromtimestamp(seconds, UTC).replace(tzinfo=None)
    except (OverflowError, ValueError, OSError):
        return None


QUARTER_HOUR = timedelta(minutes=15)  # every UTC offset in use is a whole number of quarter hours
LONGEST_OFFSET = timedelta(hours=14)  # Kiribati; the west ends at -12


def exporter_offset(local: datetime, instant: datetime) -> timedelta | None:
    """The UTC offset of a clock that showed `local` at `instant` (naive UTC), to the quarter hour; None when no
    zone is that far off UTC (the two disagree: the time keeps its instant, with no zone, as before)."""
    offset = round((local - instant) / QUARTER_HOUR) * QUARTER_HOUR
    return offset if abs(offset) <= LONGEST_OFFSET else None


def from_iso(text: str) -> tuple[datetime, datetime] | None:
    """An ISO 8601 time as (naive UTC, wall-clock time as written); None when it does not parse.
    A value without a zone is taken as UTC."""
    zoned = zoned_iso(text)
    if zoned is None:
        return None
    instant, offset = zoned
    return instant, wall_clock(instant, offset)  # type: ignore[return-value]  # an instant in, a time out


def zoned_iso(text: str) -> tuple[datetime, timedelta | None] | None:
    """An ISO 8601 time as (naive UTC, its UTC offset) when it gives a zone, (naive time as written, None) when it
    gives none; None when it does not parse or leaves the calendar once in UTC."""
    try:
        parsed = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    if parsed.tzinfo is None:
        return parsed, None
    try:
        return parsed.astimezone(UTC).replace(tzinfo=None), parsed.utcoffset()
    except OverflowError:
        return None
