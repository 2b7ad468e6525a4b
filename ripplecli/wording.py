"""Counts as people read them: "1 memory", "3 memories", never "1 memories"."""

from __future__ import annotations

_VOWELS = frozenset("aeiou")


def plural_of(noun: str) -> str:
    """The regular English plural of a noun's last word: memory -> memories, match -> matches, edge -> edges."""
    if noun.endswith("y") and noun[-2:-1] not in _VOWELS:
        return noun[:-1] + "ies"
    if noun.endswith(("s", "x", "z", "ch", "sh")):
        return noun + "es"
    return noun + "s"


def counted(count: int | None, singular: str, plural: str | None = None) -> str:
    """The count with its noun (or phrase) in the number it takes: `1 memory`, `0 memories`, `1,200 turns`;
    an unknown count (None) reads `? memories`."""
    if count is None:
        return f"? {plural or plural_of(singular)}"
    return f"{count:,} {singular if count == 1 else plural or plural_of(singular)}"
