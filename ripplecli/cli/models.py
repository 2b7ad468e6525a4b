"""`ripple models`: the configured local model and the GGUF files found on this machine."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from ripplecli.cli.common import JsonOption, console, inert, print_json, user_errors

ModelOption = Annotated[
    Path | None,
    typer.Option(
        "--model",
        help="A GGUF model file (default: $RIPPLE_MODEL or `ripple config set model.path`).",
        show_default=False,
    ),
]


def _size(info: dict[str, Any] | None) -> str:
    """File size for people."""
    from ripplecli.runtime.gguf_info import gib

    return gib(info["size"]) if info else "?"


def _table(found: list) -> Table:
    """One row per GGUF file: name, where, size, architecture, context, chat template."""
    table = Table(title="GGUF models found")
    for column in ("name", "source", "size", "architecture", "context", "chat template", "path"):
        table.add_column(column, justify="right" if column in ("size", "context") else "left")
    for m in found:
        info = m.info or {}
        template = "yes" if info.get("chat_template") else "[yellow]no (not for instructions)[/]"
        if m.error or (info and not info.get("complete")):
            template = f"[red]{inert(m.error or 'truncated')}[/]"
        table.add_row(
            inert(m.name),
            inert(m.source),
            _size(m.info),
            inert(info.get("architecture") or "?"),
            inert(info.get("context_length") or "?"),
            template,
            inert(m.path),
        )
    return table


def _configured_line(configured: dict[str, Any] | None) -> str:
    """Which model ripple would use, and whether it can."""
    if configured is None:
        return "configured model: [dim]none[/] (pass --model, set RIPPLE_MODEL or `ripple config set model.path`)"
    state = "[green]usable[/]" if configured["usable"] else f"[red]{inert(configured['error'])}[/]"
    return f"configured model: {inert(configured['path'])} (from {inert(configured['origin'])}) · {state}"


@user_errors
def models(model: ModelOption = None, as_json: JsonOption = False) -> None:
    """List the configured local model and the GGUF files in the usual places (read from headers, not loaded)."""
    from ripplecli.local_models import configured_model, discover, search_dirs

    configured = configured_model(model)
    found = discover()
    if as_json:
        places = [{"source": label, "path": str(path)} for label, path in search_dirs()]
        print_json({"configured": configured, "models": [m.to_dict() for m in found], "searched": places})
        return
    console.print(_configured_line(configured), markup=True)
    if found:
        console.print(_table(found))
    else:
        console.print("no GGUF files found in the config dir, model.dirs, ~/models, the HF cache, LM Studio or Ollama")
