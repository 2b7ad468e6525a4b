"""The `ripple` command: a thin shell over ripplecli.api, one module per command group."""

from __future__ import annotations

from typing import Annotated

import typer

from ripplecli import __version__
from ripplecli.cli import coercion, lazy_help
from ripplecli.cli.ask import ask
from ripplecli.cli.common import show_flags_as_flags
from ripplecli.cli.config import config_app
from ripplecli.cli.eval import eval_app
from ripplecli.cli.graph import graph_app
from ripplecli.cli.ingest import ingest
from ripplecli.cli.link import link_app
from ripplecli.cli.manage import doctor, export, forget, import_
from ripplecli.cli.mcp import mcp
from ripplecli.cli.memories import memories_app, show
from ripplecli.cli.models import models

show_flags_as_flags()
lazy_help.install()
coercion.install()
app = typer.Typer(
    name="ripple",
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


app.command("ingest")(ingest)
app.command("ask")(ask)
app.add_typer(graph_app, name="graph")
app.add_typer(link_app, name="link")
app.add_typer(eval_app, name="eval")
app.add_typer(memories_app, name="memories")
app.command("show")(show)
app.command("forget")(forget)
app.command("export")(export)
app.command("import")(import_)
app.command("doctor")(doctor)
app.command("mcp")(mcp)
app.command("models")(models)
app.add_typer(config_app, name="config")


def main() -> None:
    """Console entry point."""
    app()
