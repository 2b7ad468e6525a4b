"""Contiguous, slightly overlapping windows over a conversation, so a fact split at a boundary is kept."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

from ripplecli.errors import InputError
from ripplecli.model import Conversation, Window, WindowTurn, said_wall_clock


def placed_turns(conversation: Conversation) -> list[WindowTurn]:
    """Every turn in conversation order, carrying its session id and when it was said (its own time, else its
    session's) on the clock where it was said: "yesterday" in a message sent at 00:10 refers to the day before that
    message, and "today" in one sent at 20:00 in California is that Californian day, not the next day in UTC."""
    return [
        WindowTurn(turn=turn, session_id=session.session_id, timestamp=said_wall_clock(turn, session))
        for session in conversation.sessions
        for turn in session.turns
    ]


def make_windows(
    conversation: Conversation,
    size: int = 40,
    overlap: int = 2,
    known_persons: Iterable[str] = (),
    speakers: Sequence[str] | None = None,
) -> Iterator[Window]:
    """Windows of `size` turns; each after the first starts with `overlap` context turns already extracted.

    `speakers`: every speaker of the chat when `conversation` holds only some of its turns (default: its own)."""
    if size < 1 or not 0 <= overlap < size:
        raise InputError(f"windows need size >= 1 and 0 <= overlap < size (got {size}, {overlap})")
    turns = placed_turns(conversation)
    speakers, persons = conversation.speakers if speakers is None else speakers, list(known_persons)
    fresh_start, context_start = 0, 0
    while fresh_start < len(turns):
        end = context_start + size
        window_turns = [
            WindowTurn(wt.turn, wt.session_id, wt.timestamp, is_context=index < fresh_start)
            for index, wt in enumerate(turns[context_start:end], start=context_start)
        ]
        yield Window(conversation.conversation_id, list(speakers), window_turns, list(persons))
        fresh_start, context_start = end, max(end - overlap, 0)
