"""What every command shares: the store option, consoles, one-line errors, JSON output."""

from __future__ import annotations

import functools
import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer
from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ripplecli.errors import known_failure

if TYPE_CHECKING:  # rich.progress loads when a bar is shown, not for `--help`
    from rich.progress import Progress, ProgressColumn

console = Console(highlight=False, soft_wrap=False, emoji=False)  # ":smile:" in a chat stays text
err_console = Console(stderr=True, highlight=False, emoji=False)
_UNPRINTABLE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # C0 (tab and newline stay), DEL and C1 controls


def printable(value: object) -> str:
    """Text from a chat, a store or a file with its control characters shown as `\\x1b`: an escape sequence in
    a turn must never reach the terminal (print it with markup=False)."""
    return _UNPRINTABLE.sub(lambda m: f"\\x{ord(m.group()):02x}", str(value))


def escaped(value: object) -> str:
    """Such text ready to sit inside rich markup: control characters shown, `[bold]`-like tags escaped."""
    return escape(printable(value))


StoreOption = Annotated[
    Path | None,
    typer.Option(
        "--store", "-s", help="Store folder (default: $RIPPLE_HOME or the user data dir).", show_default=False
    ),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON for programs instead of tables.")]

F = TypeVar("F", bound=Callable[..., Any])


def show_flags_as_flags() -> None:
    """typer's help prints a type beside every option, `--json <bool>` too; a flag takes no value, so show none (on
    the typer version this was written for: ripplecli.cli.pins)."""
    from ripplecli.cli.pins import as_written

    if not as_written():
        return
    option_class = getattr(getattr(typer, "core", None), "TyperOption", None)
    shown = getattr(option_class, "display_type_rich", None)
    if option_class is None or shown is None or getattr(shown, "flags_as_flags", False):
        return

    def display_type_rich(self: Any, ctx: Any) -> str | None:
        return None if getattr(self, "is_flag", False) else shown(self, ctx)

    display_type_rich.flags_as_flags = True  # type: ignore[attr-defined]  # the mark that it is patched once
    option_class.display_type_rich = display_type_rich


def user_errors(command: F) -> F:
    """Turn expected failures into one line on stderr and their exit code; no tracebacks for user mistakes, a full
    disk or a damaged database file (errors.known_failure)."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except KeyboardInterrupt:
            err_console.print("ripple: interrupted; the store is unchanged since the last completed batch")
            raise typer.Exit(130) from None
        except Exception as exc:
            known = known_failure(exc)
            if known is None:
                raise
            err_console.print(f"ripple: error: {printable(known)}", markup=False, soft_wrap=True)
            raise typer.Exit(known.exit_code) from None

    return wrapper  # type: ignore[return-value]  # functools.wraps keeps the signature F stands for


def rows_table(title: str) -> Table:
    """A table of many columns that still reads at 80 columns: no vertical rules, two spaces between columns."""
    return Table(title=title, box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True)


def facts_table(title: str, rows: list[tuple[str, Any]]) -> Table:
    """A two-column what / value table without a header, the shape of every summary ripple prints."""
    table = Table(title=escaped(title), show_header=False)
    table.add_column("what")
    table.add_column("value", justify="right")
    for what, value in rows:
        table.add_row(what, escaped(value))
    return table


def print_json(data: Any) -> None:
    """JSON on stdout, plain (no rich markup), stable key order, no raw control character."""
    from ripplecli.api import escape_c1

    typer.echo(escape_c1(json.dumps(data, indent=2, sort_keys=True, default=str, ensure_ascii=False)))


def open_memory(store: Path | None, *, read_only: bool = False, create: bool = True):
    """The API object for a command; imported late so `ripple --help` stays fast."""
    from ripplecli.api import Memory

    return Memory(store, read_only=read_only, create=create)


TEXT_WIDTH = 90


def one_line(text: str, width: int = TEXT_WIDTH) -> str:
    """Whitespace collapsed to single spaces, cut to width with an ellipsis."""
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 1] + "…"


def clip(text: str, width: int = TEXT_WIDTH) -> str:
    """One line, cut to width, markup-safe."""
    return escaped(one_line(text, width))


def watched_stderr() -> bool:
    """Whether a person sees what goes to stderr (a terminal, not CI logs or a pipe): download bars, tips."""
    return err_console.is_terminal and not os.environ.get("CI")


def progress_bar(*columns: ProgressColumn) -> Progress:
    """Long work's bar: what it is, done of total, then `columns` (a rate, elapsed time) and the ETA."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        *columns,
        TimeRemainingColumn(),
        console=console,
        transient=True,
    )
