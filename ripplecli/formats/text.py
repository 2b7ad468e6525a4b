"""Inputs that are not one JSON document: a text file's words and date, and a folder or zip of named files."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import PurePosixPath

# Invisible marks phones put around names and times (left-to-right / right-to-left marks, embeddings, isolates)
DIRECTION_MARKS = re.compile("[\u200e\u200f\u202a-\u202e\u2066-\u2069\ufeff]")


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
class Tree:
    """A folder or zip of files by relative path; readers take the parsed JSON of the members they need."""

    name: str
    members: dict[str, object]  # relative path -> parsed JSON (only the .json members)
