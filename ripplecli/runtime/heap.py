"""Freed memory handed back to the system: glibc keeps a process's freed heap for reuse, so after a batch of long
turns (spaCy's parses, ~6 KB a token; the passages' encodings) the resident size would stay at its high mark while
the next batch allocates its own."""

from __future__ import annotations

import ctypes
import sys
from functools import cache
from typing import Any


@cache
def _libc() -> Any:
    """glibc, when this process runs on it (musl and other systems have no malloc_trim); else None."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:
        return None
    return libc if hasattr(libc, "malloc_trim") else None


def give_back() -> bool:
    """Return the heap's free pages to the system (a few ms); whether it could."""
    libc = _libc()
    if libc is None:
        return False
    libc.malloc_trim(0)
    return True
