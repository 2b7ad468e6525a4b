"""The typer and rich versions the start-up tricks were written against.

`lazy_commands`, `lazy_help`, `coercion` and the flag display (`common.show_flags_as_flags`) reach into typer's
internals (and, through `typer.rich_utils`, rich's). Each asks `as_written()` first and leaves typer as it is on any
other typer version, and tests/test_typer_pins.py fails while the installed typer or rich is outside these ranges,
so an upgrade makes someone measure the tricks again (bench/cold.py) and move the pins with pyproject.toml's.
"""

from __future__ import annotations

TYPER = ((0, 29), (0, 30))  # from, up to (not including): measured and tested with typer 0.29.2
RICH = ((15, 0), (16, 0))  # measured and tested with rich 15.0.0


def release(version: str) -> tuple[int, int]:
    """A version's major and minor numbers ("0.29.2" -> (0, 29)); (-1, -1) when it does not start with them."""
    parts = version.split(".")
    try:
        return int(parts[0]), int(parts[1])
    except (IndexError, ValueError):
        return -1, -1


def within(version: str, pinned: tuple[tuple[int, int], tuple[int, int]]) -> bool:
    """Whether a version is inside a pinned range."""
    low, high = pinned
    return low <= release(version) < high


def as_written() -> bool:
    """Whether the installed typer is one the tricks were written for (read from typer itself: no metadata scan)."""
    import typer

    return within(getattr(typer, "__version__", ""), TYPER)
