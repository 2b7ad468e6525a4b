"""LoCoMo (Maharana et al., 2024): samples whose `conversation` holds session_N lists and their dates."""

from __future__ import annotations

import re
from datetime import datetime

from ripplecli.formats.fields import ChatFormat, Node, Unique, keyed, located, quote, records, with_caption
from ripplecli.model import Conversation, Session, Turn

_SESSION_KEY = re.compile(r"session_(\d+)")
_DATE = re.compile(r"\s*(\d{1,2}):(\d{2})\s*([ap])\.?m\.?\s+on\s+(\d{1,2})\s+([a-z]+),?\s+(\d{4})\s*", re.I)
_MONTH_NAMES = "january february march april may june july august september october november december".split()
_MONTHS = {name[:length]: number for number, name in enumerate(_MONTH_NAMES, start=1) for length in (3, None)}


def parse_locomo(data: object, source: str) -> list[Conversation]:
    """Read a LoCoMo file (a list of samples, or one sample); `qa` and summaries are not chat and are skipped."""
    with located(source):
        return [
            Conversation(
                conversation_id, _sessions(sample.at("conversation")), named_by_file=sample.get("sample_id") is None
            )
            for sample, conversation_id in records(data, source, ("sample_id",), "sample_id")
        ]


def _sessions(conversation: Node) -> list[Session]:
    """Sessions in numeric order (session_10 after session_9); dates without a session list are ignored."""
    numbers = sorted(int(match.group(1)) for key in conversation.fields() if (match := _SESSION_KEY.fullmatch(key)))
    turn_ids = Unique("dia_id")
    sessions = []
    for number in numbers:
        stamp = conversation.get(f"session_{number}_date_time")
        turns = [_turn(node, turn_ids) for node in conversation.at(f"session_{number}").items()]
        sessions.append(Session(str(number), parse_locomo_date(stamp) if stamp else None, turns))
    return sessions


def _turn(node: Node, turn_ids: Unique) -> Turn:
    """One dialogue turn; the BLIP caption stands for the shared image."""
    dia_id = node.at("dia_id")
    caption = node.get("blip_caption")
    text = with_caption(node.at("text").string(), caption.string() if caption else "")
    if not text:
        raise node.at("text").fail("must not be empty")
    return Turn(turn_ids.claim(dia_id.text(), dia_id.keys), node.at("speaker").text(), text)


def parse_locomo_date(node: Node) -> datetime:
    """LoCoMo's "1:56 pm on 8 May, 2023", read without the locale so "May" means May everywhere."""
    raw = node.string()
    try:
        return _locomo_datetime(raw)
    except ValueError:
        raise node.fail(f'is not a LoCoMo date like "1:56 pm on 8 May, 2023": {quote(raw)}') from None


def _locomo_datetime(raw: str) -> datetime:
    """The parsing itself; any mismatch or impossible date is a ValueError."""
    match = _DATE.fullmatch(raw)
    if match is None:
        raise ValueError(raw)
    hour, minute, half, day, month_name, year = match.groups()
    month = _MONTHS.get(month_name.lower())
    if month is None or not 1 <= int(hour) <= 12:
        raise ValueError(raw)
    hour24 = int(hour) % 12 + (12 if half.lower() == "p" else 0)
    return datetime(int(year), month, int(day), hour24, int(minute))


# LoCoMo samples: recognised by "conversation"
FORMAT = ChatFormat(
    parse_locomo, keyed("conversation"), label="a LoCoMo file", hints=frozenset({"sample_id", "conversation", "qa"})
)
