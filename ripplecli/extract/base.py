"""The Extractor protocol: a window of turns in, memory drafts out."""

from __future__ import annotations

from typing import Protocol

from ripplecli.model import MemoryDraft, Window
from ripplecli.registry import EXTRACTORS  # noqa: F401  (its registry, kept importable from here)


class Extractor(Protocol):
    """Turns a window into memory units; must only cite turns of the window that are not context."""

    name: str

    def extract(self, window: Window) -> list[MemoryDraft]: ...
