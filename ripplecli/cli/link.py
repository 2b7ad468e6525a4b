"""`ripple link cable`: build CABLE antecedent links for the memories that have none yet (resumable)."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from ripplecli.cli.common import (
    JsonOption,
    StoreOption,
    console,
    facts_table,
    open_memory,
    print_json,
    progress_bar,
    user_errors,
)
from ripplecli.cli.models import ModelOption

link_app = typer.Typer(help="Build extra links between memories.", no_args_is_help=True)


def _summary(report) -> Table:
    """What the run did."""
    rows = [
        ("memories processed", report.memories),
        ("skipped (low information)", report.skipped),
        ("candidates verified", report.candidates),
        ("antecedent edges", report.edges),
        ("model fallbacks", report.failures),
        ("seconds", f"{report.seconds:.2f}"),
    ]
    return facts_table("CABLE links", rows)


@link_app.command("cable")
@user_errors
def cable(
    llm: Annotated[bool, typer.Option("--llm", help="Queries and verification by the configured local model.")] = False,
    model: ModelOption = None,
    store: StoreOption = None,
    as_json: JsonOption = False,
) -> None:
    """Antecedent links (older → newer) for every memory without them; an interrupted run resumes."""
    if llm:
        from ripplecli.api import load_model

        load_model(model)  # an unusable model is one line before the store is touched
    with open_memory(store) as memory, progress_bar() as bar:
        memory.model = model
        task = bar.add_task("linking", total=None)
        report = memory.link(
            "cable-llm" if llm else "cable",
            progress=lambda done, total: bar.update(task, completed=done, total=total or None),
        )
    if as_json:
        print_json(report.__dict__)
    else:
        console.print(_summary(report))
