"""What users type, parsed once for every front end: memory ids, dates and times (ripplecli.api exposes these)."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from ripplecli.errors import InputError

MAX_MEMORY_ID = 2**63 - 1  # ids are DuckDB BIGINTs: a larger number is no id, not a query error
MAX_ID_DIGITS = len(str(MAX_MEMORY_ID))
MAX_SHOWN_ID = 40  # characters of a rejected id a message repeats
_MEMORY_ID = re.compile(r"[mM]?([0-9]+)")


def parse_memory_id(value: str | int) -> int:
    """A memory id as the trace prints it (`m14`) or bare (`14`): ASCII digits, within the store's BIGINT range."""
    if isinstance(value, int) and not isinstance(value, bool) and not 0 <= value <= MAX_MEMORY_ID:
        what = "a negative number" if value < 0 else "a number that large"  # str() of a huge int may itself fail
        raise InputError(f"{what} is not a memory id (like m14 or 14)")
    text = str(value).strip()
    found = _MEMORY_ID.fullmatch(text)
    if found is None or len(found[1]) > MAX_ID_DIGITS or int(found[1]) > MAX_MEMORY_ID:
        shown = " ".join(text.split())
        shown = shown if len(shown) <= MAX_SHOWN_ID else shown[: MAX_SHOWN_ID - 1] + "…"
        raise InputError(f"'{shown}' is not a memory id (like m14 or 14)")
    return int(found[1])


def parse_date(value: str | None, option: str, *, end_of_day: bool = False) -> datetime | None:
    """An ISO date or date-time from the command line, or None; `end_of_day` makes a bare date include its day."""
    if value is None:
        return None
    try:
        parsed = datetime.fromisoformat(value.strip())
    except ValueError:
        raise InputError(f"{option}: '{value}' is not a date (use YYYY-MM-DD or YYYY-MM-DDTHH:MM)") from None
    bare = len(value.strip()) == len("YYYY-MM-DD")
    return parsed + timedelta(days=1, microseconds=-1) if end_of_day and bare else parsed


def naive_utc(stamp: datetime) -> datetime:
    """A timestamp as the store keeps it: naive, zone-aware values converted to UTC (as the chat formats do)."""
    return stamp.astimezone(UTC).replace(tzinfo=None) if stamp.tzinfo else stamp


def utc_offset(stamp: datetime) -> timedelta | None:
    """The UTC offset a zone-aware timestamp gives (the store keeps it beside the UTC time); None without a zone."""
    return stamp.utcoffset() if stamp.tzinfo else None


def wall_time(stamp: datetime) -> datetime:
    """A timestamp as the clock where it was given reads it, naive: "yesterday" asked at 20:00 in California is
    read on the Californian day. A timestamp without a zone is taken as that clock's time already (a plain now is
    the local clock)."""
    return stamp.replace(tzinfo=None)


def parse_time(value: str | None, what: str) -> datetime | None:
    """An ISO 8601 argument, its zone kept when it gives one (the API stores its instant and offset, and reads a
    question's date on its own clock); empty is None."""
    return parse_date(value, what) if value and value.strip() else None
