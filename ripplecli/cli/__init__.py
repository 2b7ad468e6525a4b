"""The `ripple` command: a thin shell over ripplecli.api, one module per command group."""

from __future__ import annotations

import contextlib
import importlib
import logging
import os
import sys
import threading
from typing import Annotated

import typer

from ripplecli import __version__
from ripplecli.cli import coercion, lazy_help, pins
from ripplecli.cli.common import show_flags_as_flags

# Every command, in the order help lists them: name -> its function or sub-app ("module:attr"). A command's module
# is imported, and typer builds it, only when that command is used (lazy_commands); `--help` reads the docstrings.
# Each start-up trick below was measured (bench/cold.py, CPU medians of 7 rounds on a busy 2-core machine, load 9-13,
# without the trick -> with it, `--help` / a cold `ask`, seconds): the
# lazy commands 0.218 -> 0.179 / 0.513 -> 0.441, the lazy help 0.251 -> 0.179 / -, the plain coercion - / 0.572 ->
# 0.441, the fast exit 0.239 -> 0.179 / 0.530 -> 0.441. Each is pinned to the typer it was written for (pins.py).
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


def _root_group() -> type | None:
    """The root group whose commands are built on first use, on the typer it was written for (else typer's own)."""
    if not pins.as_written():
        return None
    from ripplecli.cli import lazy_commands

    return lazy_commands.group(COMMANDS)


ROOT_GROUP = _root_group()
app = typer.Typer(
    name="ripple",
    cls=ROOT_GROUP,
    help="ripple: a local-first memory for your conversations, with associative recall.",
    no_args_is_help=True,
    add_completion=True,  # --install-completion / --show-completion for bash, zsh, fish and PowerShell
    pretty_exceptions_enable=False,
)
if ROOT_GROUP is None:  # another typer: every command registered and built as typer does it
    for _name, _path in COMMANDS.items():
        _module, _attr = _path.split(":")
        _target = getattr(importlib.import_module(_module), _attr)
        if isinstance(_target, typer.Typer):
            app.add_typer(_target, name=_name)
        else:
            app.command(_name)(_target)


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
