"""Plain notes: a Markdown or text file you wrote, one memory per paragraph.

Paragraphs are separated by blank lines; a paragraph of headings only is not a memory. The note is dated by
its front matter (``date:`` or ``created:`` between ``---`` lines, which may also give ``title:`` and
``author:``), else by the file's modification time. Notes are the owner's own words.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from pathlib import PurePosixPath

from ripplecli.errors import InputError
from ripplecli.formats.days import StableIds, zoned_iso
from ripplecli.formats.fields import FALLBACK, MAX_TEXT_CHARS, ChatFormat, clean_text, quote
from ripplecli.formats.text import TEXT_SUFFIXES, TextDoc, dated_lines, looks_like_html
from ripplecli.model import Conversation, Session, Turn

_FRONT = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.DOTALL)
_FIELD = re.compile(r"^(\w[\w-]*)\s*:\s*(.*?)\s*$", re.MULTILINE)
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s")
_BLANK = re.compile(r"\n\s*\n")


def parse_notes(doc: TextDoc, source: str) -> list[Conversation]:
    """Read one note; it becomes one conversation (named after the file) with one session."""
    text = doc.text.replace("\r\n", "\n")
    fields, body = _front_matter(text)
    date, offset = _date(fields, doc, source)
    author = fields.get("author", "").strip("\"' ") or "me"
    ids = StableIds("p-")
    turns = []
    for paragraph in _BLANK.split(body):
        kept = clean_text(paragraph)
        if not kept or all(_HEADING.match(line) for line in kept.splitlines()):
            continue
        if len(kept) > MAX_TEXT_CHARS:
            raise InputError(
                f"{source}: a paragraph is {len(kept):,} characters long; ripple reads at most {MAX_TEXT_CHARS:,}"
            )
        turns.append(Turn(ids.make(kept), author, kept, said_at=date, role="owner", offset=offset))
    if not turns:
        raise InputError(f"{source}: holds no paragraphs of text")
    title = fields.get("title", "").strip("\"' ") or _first_heading(body) or doc.stem
    session = Session("note", date, turns, offset)
    return [Conversation(f"note-{doc.name}", [session], title, named_by_file=True, keyed_by_text=True)]


def _front_matter(text: str) -> tuple[dict[str, str], str]:
    """`key: value` lines between leading `---` lines, and the rest of the note."""
    match = _FRONT.match(text)
    if match is None:
        return {}, text
    return {key.lower(): value for key, value in _FIELD.findall(match.group(1))}, text[match.end() :]


def _date(fields: dict[str, str], doc: TextDoc, source: str) -> tuple[datetime | None, timedelta | None]:
    """The front matter's date (and its UTC offset, when it gives a zone), else the file's modification time."""
    raw = (fields.get("date") or fields.get("created") or "").strip("\"' ")
    if not raw:
        return doc.modified, None
    parsed = zoned_iso(raw)
    if parsed is None:
        raise InputError(f"{source}: front matter date {quote(raw)} is not a date like 2024-03-05 or 2024-03-05T09:30")
    return parsed


def _first_heading(body: str) -> str:
    """The first Markdown heading's words, as a title."""
    for line in body.splitlines():
        if _HEADING.match(line):
            return line.strip().lstrip("#").strip()
    return ""


def detect_notes(doc: TextDoc) -> float:
    """Any .md or .txt of prose is a note, unless a reader of a stricter format claims it (a WhatsApp chat): not a
    web page, nor a log of dated lines in a form no reader knows."""
    prose = not looks_like_html(doc.text) and not dated_lines(doc.text)
    return FALLBACK if PurePosixPath(doc.name).suffix.lower() in TEXT_SUFFIXES and prose else 0.0


FORMAT = ChatFormat(parse_notes, detect_notes, reads="text", label="a note (.md/.txt)")
