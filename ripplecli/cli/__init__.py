"""The `ripple` command: a thin shell over ripplecli.api, one module per command group."""

from __future__ import annotations

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
    "models": "ripplecli.cli.models:models",
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


def main() -> None:
    """Console entry point."""
    app()
