"""The `ripple` command: a thin shell over ripplecli.api, one module per command group."""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import threading
from typing import Annotated

import typer

from ripplecli import __version__
from ripplecli.cli import coercion, lazy_commands, lazy_help
from ripplecli.cli.common import show_flags_as_flags

# Every command, in the order help lists them: name -> its function or sub-app ("module:attr"). A command's module
# is imported, and typer builds it, only when that command is used (lazy_commands); `--help` reads the docstrings.
COMMANDS = {
    "ingest": "ripplecli.cli.ingest:ingest",
    "ask": "ripplecli.cli.ask:ask",
    "show": "ripplecli.cli.memories:show",
    "forget": "ripplecli.cli.manage:forget",
    "export": "ripplecli.cli.manage:export",
    "import": "ripplecli.cli.manage:import_",
    "doctor": "ripplecli.cli.manage:doctor",
    "mcp": "ripplecli.cli.mcp:mcp",
    "models": "ripplecli.cli.models:models_app",
    "graph": "ripplecli.cli.graph:graph_app",
    "link": "ripplecli.cli.link:link_app",
    "eval": "ripplecli.cli.eval:eval_app",
    "memories": "ripplecli.cli.memories:memories_app",
    "config": "ripplecli.cli.config:config_app",
}

show_flags_as_flags()
lazy_help.install()
coercion.install()
app = typer.Typer(
    name="ripple",
    cls=lazy_commands.group(COMMANDS),
    help="ripple: a local-first memory for your conversations, with associative recall.",
    no_args_is_help=True,
    add_completion=True,  # --install-completion / --show-completion for bash, zsh, fish and PowerShell
    pretty_exceptions_enable=False,
)


def _print_version(value: bool) -> None:
    """`ripple --version`: the version, then exit before any command runs."""
    if value:
        typer.echo(f"ripple {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_print_version, is_eager=True, help="Show the version and exit.")
    ] = False,
) -> None:
    """ripple: a local-first memory for your conversations, with associative recall."""


# Commands that hold nothing open once they return (their store is closed, their files written and closed): the
# process then ends without the interpreter's teardown. Freeing numpy, DuckDB, onnxruntime and a few hundred modules
# took ~80 ms after a cold `ripple ask` had printed (the bare imports alone ~50 ms), a sixth of the whole command;
# after an ingest, with spaCy loaded, ~260 ms. The rest (forget, export, import, doctor, mcp…) exit normally.
FAST_EXIT_COMMANDS = frozenset({None, "ask", "show", "memories", "graph", "models", "ingest"})


def main() -> None:
    """Console entry point."""
    try:
        app()
    except SystemExit as done:
        if _command(sys.argv[1:]) in FAST_EXIT_COMMANDS:
            _leave_now(done.code)
        raise


def _command(args: list[str]) -> str | None:
    """The command a command line runs (None for `ripple`, `--help`, `--version`)."""
    return next((arg for arg in args if not arg.startswith("-")), None)


def _leave_now(code: object) -> None:
    """Flush what was printed and logged, then end the process at once (see FAST_EXIT_COMMANDS). An encoder still
    loading (a command that failed before it needed it) is waited for: it may be writing its optimised copy."""
    status = code if isinstance(code, int) else (0 if code is None else 1)
    loading = getattr(sys.modules.get("ripplecli.runtime.encoders"), "LOADING_THREAD", None)  # None: none started
    for thread in threading.enumerate():
        if loading is not None and thread.name == loading:
            thread.join()
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed pipe (`ripple ask … | head -1`): nothing to add
            stream.flush()
    os._exit(status)
