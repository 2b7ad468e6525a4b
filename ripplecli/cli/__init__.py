"""The `ripple` command: a thin shell over ripplecli.api, one module per command group."""

from __future__ import annotations

import typer

from ripplecli.cli.ask import ask
from ripplecli.cli.config import config_app
from ripplecli.cli.eval import eval_app
from ripplecli.cli.graph import graph_app
from ripplecli.cli.ingest import ingest
from ripplecli.cli.link import link_app
from ripplecli.cli.manage import doctor, export, forget, import_
from ripplecli.cli.mcp import mcp
from ripplecli.cli.memories import memories_app, show
from ripplecli.cli.models import models

app = typer.Typer(
    name="ripple",
    help="ripple: a local-first memory for your conversations, with associative recall.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
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
