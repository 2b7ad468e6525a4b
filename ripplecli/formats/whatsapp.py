"""WhatsApp's "Export chat" text file: one line per message, in the phone's own date and clock format.

Android writes ``31/12/2023, 21:05 - Alex: text`` (or ``12/31/23, 9:05 PM - …``), iOS ``[31/12/2023, 21:05:09]
Alex: text``. Day-month or month-day order is decided from the whole file (a day above 12 settles it), lines
that start without a date continue the previous message, and system lines (encryption notice, joins, calls,
deleted messages) and media placeholders are skipped. Times are the phone's wall clock: the export has no zone.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, replace
from datetime import datetime

from ripplecli.errors import InputError
from ripplecli.formats.days import Dated, StableIds, by_day, short_hash, slug
from ripplecli.formats.fields import MAX_TEXT_CHARS, SURE, ChatFormat, Tolerant, clean_text, quote
from ripplecli.formats.text import DIRECTION_MARKS, TextDoc
from ripplecli.model import Conversation, Turn

_HEADER = re.compile(
    r"\[?(\d{1,4})[./-](\d{1,2})[./-](\d{1,4})\.?,?\s+(\d{1,2})[:.](\d{2})(?:[:.](\d{2}))?"
    r"(?:\s*([AaPp])\.?\s?[Mm]\.?)?(?:\]\s*|\s+[-\u2013]\s+)(.*)"
)
_SKIPPED = re.compile(
    r"<media omitted>|<attached: [^>]*>|.{1,200} \(file attached\)|(image|video|audio|sticker|gif|document|"
    r"contact card) omitted|this message was deleted\.?|you deleted this message\.?|null|"
    r"missed (voice|video|group voice|group video) call.*|waiting for this message.*|"
    r"messages and calls are end-to-end encrypted.*|.*security code (changed|with).*|<view once [a-z]+ omitted>",
    re.IGNORECASE,
)
_EDITED = re.compile(r"\s*<this message was edited>\s*$", re.IGNORECASE)
# "WhatsApp Chat with Maya", "WhatsApp Chat - Maya" (iOS zips), "WhatsApp-Chat mit Maya", "Chat de WhatsApp con
# Maya", "Conversa do WhatsApp com Maya", "Discussion WhatsApp avec Maya"; a browser's " (1)" is not part of it
_CHAT_NAME = re.compile(r"whatsapp.*?(?:\bwith|\bmit|\bavec|\bcon|\bcom|\bmet|\s-)\s+(.+?)(?:\s*\(\d+\))?$", re.I)
MIN_SHARE = 0.3  # of non-empty lines that must be message headers for a file to count as a WhatsApp export


@dataclass
class _Line:
    """One message header's parts before the date order is known, plus the text of its continuation lines."""

    numbers: tuple[int, int, int]
    clock: tuple[int, int, int, str]
    sender: str | None  # None: a system line
    text: str
    line: int


def looks_like_whatsapp(text: str) -> bool:
    """Whether the file opens with a WhatsApp message header, or enough of its lines are (format detection)."""
    lines = [line for line in text.splitlines()[:400] if line.strip()]
    if not lines:
        return False
    if _HEADER.match(_plain(lines[0])):  # an export starts with a message or the encryption notice
        return True
    return sum(1 for line in lines if _HEADER.match(_plain(line))) >= MIN_SHARE * len(lines)


def parse_whatsapp(doc: TextDoc, source: str) -> list[Conversation]:
    """Read one exported chat; it becomes one conversation with a session per calendar day."""
    lines = _messages(doc.text, source)
    if not lines:
        raise InputError(
            f'{source}: is plain text without WhatsApp message lines (like "31/12/2023, 21:05 - Alex: hi")'
        )
    day_first = _day_first(lines)
    ids = StableIds("wa-")
    dated: list[Dated] = []
    skipped: Counter[str] = Counter()
    tolerant = Tolerant()
    for line in lines:
        with tolerant.message(None, skipped, what="unreadable date"):
            reason = _left_out(line)
            if reason:
                skipped[reason] += 1  # system lines, media placeholders, deleted messages, calls
                continue
            assert line.sender is not None  # _left_out keeps no system line
            when = _when(line, day_first, source)
            turn = Turn(ids.make(when.isoformat(), line.sender, line.text), line.sender, line.text, said_at=when)
            dated.append(Dated(turn, when))
    tolerant.check()
    if not dated:
        raise InputError(f"{source}: holds WhatsApp system lines and media only, no messages with text")
    title = _chat_name(doc)
    first = dated[0].turn
    prefix = f"whatsapp-{slug(title)}-"
    conversation_id = prefix + short_hash(f"{first.said_at}|{first.speaker}|{first.text}")
    sessions = by_day(dated)
    owner_known = _mark_owner(sessions, title)
    chat = Conversation(conversation_id, sessions, title, dict(skipped), named_by_file=True)
    return [chat if owner_known else replace(chat, owner_by_name=True)]


def _left_out(line: _Line) -> str:
    """Why a line is no message to keep ("system line", "media", "deleted", "call"), else ""."""
    if line.sender is None:
        return "system line"  # joins, subject changes, the encryption notice
    if not line.text:
        return "no text"
    match = _SKIPPED.fullmatch(line.text)
    if match is None:
        return ""
    said = line.text.lower()
    if "deleted" in said or "waiting for this message" in said:
        return "deleted"
    if " call" in said:
        return "call"
    if "encrypted" in said or "security code" in said:
        return "system line"
    return "media"


def _plain(line: str) -> str:
    """A line without invisible direction marks and with narrow / no-break spaces made ordinary."""
    return DIRECTION_MARKS.sub("", line).replace("\u202f", " ").replace("\u00a0", " ")


def _messages(text: str, source: str) -> list[_Line]:
    """Header lines with their continuation lines joined; text before the first header is ignored."""
    found: list[_Line] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = _plain(raw)
        match = _HEADER.match(line)
        if match is None:
            if found:
                found[-1].text += "\n" + line
                if len(found[-1].text) > MAX_TEXT_CHARS:
                    raise InputError(
                        f"{source}: line {found[-1].line}: a message longer than {MAX_TEXT_CHARS:,} characters"
                    )
            continue
        a, b, c, hour, minute, second, half, rest = match.groups()
        sender, sep, said = rest.partition(": ")
        if not sep and rest.endswith(":"):
            sender, sep, said = rest[:-1], ":", ""
        # iOS starts a system line's text with a left-to-right mark: "[…] Trip: \u200eAlex added Sam"
        marked = line.startswith("[") and raw.partition(": ")[2].startswith("\u200e")
        is_person = bool(sep) and 0 < len(sender.strip()) <= 80 and '"' not in sender and not marked
        clock = (int(hour), int(minute), int(second or 0), (half or "").lower())
        found.append(_Line((int(a), int(b), int(c)), clock, sender.strip() if is_person else None, said, number))
    for message in found:
        message.text = clean_text(_EDITED.sub("", message.text))
    return found


def _day_first(lines: list[_Line]) -> bool:
    """Day-month (most of the world) unless the file shows a month-day date; ambiguous files follow the clock:
    a 12-hour clock means month-day (the US form), a 24-hour one day-month."""
    if any(12 < line.numbers[0] < 100 for line in lines):
        return True
    if any(b > 12 for (a, b, _) in (line.numbers for line in lines)):
        return False
    return not any(line.clock[3] for line in lines)


def _when(line: _Line, day_first: bool, source: str) -> datetime:
    """The message's date and time; an impossible one names its line."""
    a, b, c = line.numbers
    hour, minute, second, half = line.clock
    if a >= 100:  # year first: 2023-12-31
        year, month, day = a, b, c
    else:
        day, month = (a, b) if day_first else (b, a)
        year = c + 2000 if c < 100 else c
    if half:
        hour = hour % 12 + (12 if half == "p" else 0)
    try:
        return datetime(year, month, day, hour, minute, second)
    except ValueError:
        shown = f"{a}/{b}/{c} {line.clock[0]}:{minute:02d}"
        raise InputError(f"{source}: line {line.line}: {quote(shown)} is not a date and time") from None


def _chat_name(doc: TextDoc) -> str:
    """The chat's name from the export's file name ("WhatsApp Chat with Alex.txt"; iOS zips name the zip)."""
    stem = doc.stem
    if stem.lower() in ("_chat", "chat") and doc.container:
        stem = doc.container.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    match = _CHAT_NAME.search(stem.strip())
    return (match.group(1) if match else stem).strip() or "chat"


def _mark_owner(sessions, title: str) -> bool:
    """In a chat of two people named after one of them, the other is the account owner; whether the chat is one
    (a group chat does not say which of its people exported it)."""
    speakers = {turn.speaker for session in sessions for turn in session.turns}
    if speakers == {title}:
        return True  # only the person the chat is named after wrote: the owner wrote nothing in it
    if len(speakers) != 2 or title not in speakers:
        return False
    for session in sessions:
        session.turns[:] = [
            Turn(t.turn_id, t.speaker, t.text, t.said_at, "" if t.speaker == title else "owner") for t in session.turns
        ]
    return True




def detect_whatsapp(doc: TextDoc) -> float:
    """A text file is a WhatsApp chat when it opens with, or is largely made of, message header lines."""
    return SURE if looks_like_whatsapp(doc.text) else 0.0


FORMAT = ChatFormat(parse_whatsapp, detect_whatsapp, reads="text", label="a WhatsApp chat export")
