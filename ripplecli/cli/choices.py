"""Every choice list of the `ripple` command, taken from the registries the code chooses from (help and shell
completion cannot drift from what the code accepts)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import typer

from ripplecli.api import (
    ANSWER_MODES,
    ASK_MODES,
    EVAL_ANSWERS,
    EXTRACTORS,
    FORMATS,
    LINKS,
    LONGMEMEVAL_TYPES,
    MODES,
    PLANNERS,
    QUERY_ANALYZERS,
)
from ripplecli.errors import InputError

# (command, option) -> the names it accepts, in the order help lists them.
CHOICES: dict[tuple[str, str], list[str]] = {
    ("ask", "--mode"): list(ASK_MODES),
    ("ask", "--answer"): list(ANSWER_MODES),
    ("ask", "--planner"): PLANNERS.names,
    ("ask", "--analyzer"): QUERY_ANALYZERS.names,
    ("ingest", "--format"): ["auto", *FORMATS.names],
    ("ingest", "--extractor"): EXTRACTORS.names,
    ("ingest", "--links"): ["none", *LINKS],
    ("eval locomo", "--modes"): list(MODES),
    ("eval locomo", "--answer"): list(EVAL_ANSWERS),
    ("eval longmemeval", "--types"): list(LONGMEMEVAL_TYPES),  # its --modes and --answer are eval locomo's
}


def listed(names: Sequence[str]) -> str:
    """How help shows a choice list (after the option's own text)."""
    return f"One of: {', '.join(names)}."


def completer(names: Sequence[str]) -> Callable[[str], list[str]]:
    """Shell completion of one choice list."""
    return lambda incomplete: [name for name in names if name.startswith(incomplete)]


def checked(command: str, name: str, value: str) -> str:
    """An option's value when its choice list has it; else one line naming the choices."""
    names = CHOICES[(command, name)]
    if value in names:
        return value
    raise InputError(f"unknown {name} '{value}' (choose from: {', '.join(names)})")


def choice(command: str, name: str, text: str, *also: str) -> Any:
    """A typer option whose help and completion list the registry's names (`text` says what it chooses)."""
    names = CHOICES[(command, name)]
    return typer.Option(name, *also, help=f"{text} {listed(names)}", autocompletion=completer(names), show_default=True)
