"""Inputs that are not one JSON document: a text file's words and date, and a folder or zip of named files."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import PurePosixPath

# Invisible marks phones put around names and times (left-to-right / right-to-left marks, embeddings, isolates)
DIRECTION_MARKS = re.compile("[\u200e\u200f\u202a-\u202e\u2066-\u2069\ufeff]")
TEXT_SUFFIXES = frozenset({".md", ".markdown", ".txt", ".text"})  # text files: notes, a WhatsApp chat
_DATED_LINE = re.compile(r"^\W{0,3}\d{1,4}[./-]\d{1,2}[./-]\d{1,4}")


@dataclass(frozen=True)
class TextDoc:
    """A text file as a reader sees it: its words, its path (inside a zip, the member's), when it was last changed,
    and the archive or folder it came in (empty for a plain file)."""

    text: str
    name: str
    modified: datetime | None = None
    container: str = ""

    @property
    def stem(self) -> str:
        """The file name without folders and extension."""
        return PurePosixPath(self.name).stem


@dataclass(frozen=True)
class ExportFolder:
    """A folder or zip of files by relative path; readers take the parsed JSON of the members they need."""

    name: str
    members: dict[str, object]  # relative path -> parsed JSON (only the .json members)


def looks_like_html(text: str) -> bool:
    """Whether a text file is a web page (an export's HTML version)."""
    return text.lstrip()[:200].lower().startswith(("<!doctype html", "<html"))


def dated_lines(text: str) -> bool:
    """Whether many lines start with a date, as chat logs do."""
    lines = [line for line in text.splitlines()[:200] if line.strip()]
    return bool(lines) and sum(1 for line in lines if _DATED_LINE.match(line)) >= 0.3 * len(lines)
