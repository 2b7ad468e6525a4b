"""LongMemEval (Wu et al., 2024): one entry per question, each with its own haystack of user/assistant sessions."""

from __future__ import annotations

import re
from datetime import datetime

from ripplecli.formats.fields import ChatFormat, Node, Unique, keyed, located, quote, records
from ripplecli.model import Conversation, Session, Turn
from ripplecli.owner import ASSISTANT, OWNER

SPEAKERS = {"user": "User", "assistant": "Assistant"}
# The user is the store's owner ("What did I say…" asks for their turns), the assistant an AI (its "we" is not the
# user's): as the ChatGPT and Claude readers mark them.
ROLES = {"user": OWNER, "assistant": ASSISTANT}
_DATE = re.compile(r"\s*(\d{4})/(\d{1,2})/(\d{1,2})\s*(?:\([A-Za-z]+\))?\s*(\d{1,2}):(\d{2})\s*")


def parse_longmemeval(data: object, source: str) -> list[Conversation]:
    """Read a LongMemEval file (a list of entries, or one); each entry's haystack becomes one conversation."""
    with located(source):
        return [
            Conversation(conversation_id, _sessions(entry), named_by_file=entry.get("question_id") is None)
            for entry, conversation_id in records(data, source, ("question_id",), "question_id")
        ]


def _sessions(entry: Node) -> list[Session]:
    """Haystack sessions with their dates and ids, which must line up one to one."""
    haystack = entry.at("haystack_sessions").items()
    dates = _aligned(entry, "haystack_dates", len(haystack))
    ids = _aligned(entry, "haystack_session_ids", len(haystack))
    session_ids = Unique("session id")
    sessions = []
    for number, (turns, date, given_id) in enumerate(zip(haystack, dates, ids, strict=True), start=1):
        session_id = session_ids.claim(given_id.text() if given_id else str(number), (given_id or turns).keys)
        stamp = parse_longmemeval_date(date) if date else None
        sessions.append(Session(session_id, stamp, _turns(turns, number)))
    return sessions


def _aligned(entry: Node, key: str, count: int) -> list[Node | None]:
    """An optional per-session list; when present it must have one element per haystack session."""
    node = entry.get(key)
    if node is None:
        return [None] * count
    values = node.items()
    if len(values) != count:
        raise node.fail(f"has {len(values)} elements but haystack_sessions has {count}")
    return [None if value.value is None else value for value in values]


def _turns(session: Node, number: int) -> list[Turn]:
    """Turns of one session; ids D<session>:<turn> keep their position even when an empty turn is skipped."""
    turns = []
    for position, node in enumerate(session.items(), start=1):
        role = node.at("role")
        speaker = SPEAKERS.get(role.string().lower())
        if speaker is None:
            raise role.fail(f'must be "user" or "assistant", got {quote(role.string())}')
        text = node.at("content").string()
        if text:
            turns.append(Turn(turn_id(number, position), speaker, text, role=ROLES[role.string().lower()]))
    return turns


def turn_id(session_number: int, position: int) -> str:
    """A haystack turn's id, D<session>:<turn>, both counted from 1 in the file's order (the evaluation finds the
    `has_answer` turns by it)."""
    return f"D{session_number}:{position}"


def parse_longmemeval_date(node: Node) -> datetime:
    """LongMemEval's "2023/05/20 (Sat) 02:21"; the weekday is redundant and not checked."""
    raw = node.string()
    match = _DATE.fullmatch(raw)
    try:
        if match is None:
            raise ValueError(raw)
        year, month, day, hour, minute = map(int, match.groups())
        return datetime(year, month, day, hour, minute)
    except ValueError:
        raise node.fail(f'is not a LongMemEval date like "2023/05/20 (Sat) 02:21": {quote(raw)}') from None


# LongMemEval entries: recognised by "haystack_sessions"
FORMAT = ChatFormat(
    parse_longmemeval,
    keyed("haystack_sessions"),
    label="a LongMemEval file",
    hints=frozenset({"question_id", "question", "answer", "haystack_sessions", "haystack_dates"}),
)
