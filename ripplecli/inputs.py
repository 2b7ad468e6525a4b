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


def parse_time(value: str | None, what: str) -> datetime | None:
    """An ISO 8601 argument as the store keeps times (naive; zone-aware values in UTC); empty is None."""
    parsed = parse_date(value, what) if value and value.strip() else None
    return naive_utc(parsed) if parsed else None
