"""What users type, parsed once for every front end: memory ids, dates and times (ripplecli.api exposes these)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from ripplecli.errors import InputError


def parse_memory_id(value: str | int) -> int:
    """A memory id as the trace prints it (`m14`) or bare (`14`)."""
    text = str(value).strip()
    digits = text[1:] if text[:1] in ("m", "M") else text
    if not digits.isdigit():
        raise InputError(f"'{value}' is not a memory id (like m14 or 14)")
    return int(digits)


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
