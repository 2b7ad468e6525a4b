"""`ripple models`: the recommended models (`pull` one), the configured one (`use` another), the GGUF files found."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from ripplecli.cli.common import (
    JsonOption,
    console,
    err_console,
    escaped,
    print_json,
    printable,
    rows_table,
    user_errors,
    watched_stderr,
)

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
    from ripplecli.api import gib

    return gib(info["size"]) if info else "?"


def _table(found: list[dict[str, Any]]) -> Table:
    """One row per GGUF file: name, where, size, architecture, context, chat template."""
    table = Table(title="GGUF models found")
    for column in ("name", "source", "size", "architecture", "context", "chat template", "path"):
        table.add_column(column, justify="right" if column in ("size", "context") else "left")
    for m in found:
        info = m["info"] or {}
        template = "yes" if info.get("chat_template") else "[yellow]no (not for instructions)[/]"
        if m["error"] or (info and not info.get("complete")):
            template = f"[red]{escaped(m['error'] or 'truncated')}[/]"
        table.add_row(
            escaped(m["name"]),
            escaped(m["source"]),
            _size(m["info"]),
            escaped(info.get("architecture") or "?"),
            escaped(info.get("context_length") or "?"),
            template,
            escaped(m["path"]),
        )
    return table


def _configured_line(configured: dict[str, Any] | None) -> str:
    """Which model ripple would use, and whether it can."""
    if configured is None:
        return "configured model: [dim]none[/] (`ripple models pull`, or `ripple models use PATH|NAME`)"
    state = "[green]usable[/]" if configured["usable"] else f"[red]{escaped(configured['error'])}[/]"
    return f"configured model: {escaped(configured['path'])} (from {escaped(configured['origin'])}) · {state}"


models_app = typer.Typer(
    help="Local models: the recommended ones (pull), the configured one (use), the GGUF files on this machine.",
    invoke_without_command=True,
)


def _catalogue_table(entries: list[dict[str, Any]]) -> Table:
    """One row per recommended model: what it is, how it answered, whether it is here."""
    from ripplecli.api import gib

    table = rows_table("recommended models (ripple models pull NAME)")
    table.add_column("name", no_wrap=True)
    for column in ("size", "licence", "F1", "answer s", "installed"):
        table.add_column(column, justify="left" if column in ("licence", "installed") else "right", no_wrap=True)
    for e in entries:
        seconds = f"{e['p50_seconds']:.1f}/{e['p95_seconds']:.1f}" if e["p50_seconds"] is not None else "-"
        table.add_row(
            escaped(e["name"]) + ("[bold] *[/]" if e["default"] else ""),
            gib(e["size"]),
            escaped(e["licence"]),
            f"{e['f1']:.3f}" if e["f1"] is not None else "-",
            seconds,
            ("[green]yes[/]" if e["installed"] else "no") + (", in use" if e["configured"] else ""),
        )
    return table


def _measured_notes(entries: list[dict[str, Any]]) -> list[str]:
    """The default, what the figures are and where each model's come from (or that they are still to come)."""
    notes = ["[dim]* the default · F1: answer token F1 · answer s: seconds an answer takes, median/95th pct[/]"]
    for e in entries:
        where = escaped(e["measured_on"]) if e["measured_on"] else "not measured yet"
        notes.append(f"[dim]{escaped(e['name'])}: {where}[/]")
    return notes


def show_models(model: Path | None, as_json: bool) -> None:
    """The catalogue, the configured model and the GGUF files found (read from headers, not loaded)."""
    from ripplecli.api import models_overview

    overview = models_overview(model)
    if as_json:
        print_json(overview)
        return
    entries, configured, found = overview["catalogue"], overview["configured"], overview["models"]
    console.print(_catalogue_table(entries))
    for note in _measured_notes(entries):
        console.print(note)
    console.print(_configured_line(configured), markup=True)
    if found:
        console.print(_table(found))
    else:
        console.print("no GGUF files found in ripple's models, model.dirs, ~/models, the HF cache, LM Studio or Ollama")


@models_app.callback()
@user_errors
def models(ctx: typer.Context, model: ModelOption = None, as_json: JsonOption = False) -> None:
    """Local models: the recommended ones (pull), the configured one (use), the GGUF files on this machine.

    Bare `ripple models` is `ripple models list`."""
    if ctx.invoked_subcommand is None:
        show_models(model, as_json)


def _group(ctx: typer.Context, name: str) -> Any:
    """An option given to `ripple models` before the subcommand (`ripple models --json list`), else None."""
    return ctx.parent.params.get(name) if ctx.parent else None


@models_app.command("list")
@user_errors
def list_models(ctx: typer.Context, model: ModelOption = None, as_json: JsonOption = False) -> None:
    """The recommended models, the configured one, and the GGUF files found (read from headers, not loaded)."""
    show_models(model or _group(ctx, "model"), as_json or bool(_group(ctx, "as_json")))


@contextlib.contextmanager
def _download_bar(shown: bool) -> Iterator[Callable[[int, int], None] | None]:
    """A transfer bar on stderr fed by the download's (done, total) calls; None when nobody watches."""
    if not shown:
        yield None
        return
    from rich import progress as rp

    columns = (rp.BarColumn(), rp.DownloadColumn(), rp.TransferSpeedColumn(), rp.TimeRemainingColumn())
    with rp.Progress(rp.TextColumn("[bold]downloading"), *columns, console=err_console, transient=True) as bar:
        task = bar.add_task("download", total=None)
        yield lambda done, total: bar.update(task, completed=done, total=total)


@models_app.command("pull")
@user_errors
def pull(
    ctx: typer.Context,
    name: Annotated[
        str | None,
        typer.Argument(help="A name from `ripple models` (default: the recommended one).", show_default=False),
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Download a recommended model and make it the model `ripple ask` answers with.

    The only command that uses the network. A cut-off download resumes on the
    next pull; a file whose sha256 does not match is deleted, never used.

    \b
    RIPPLE_HUB_URL   where files come from (default https://huggingface.co)
    RIPPLE_MODELS    where they go (default: the user data dir's ripple-models)
    """
    from ripplecli.api import pull_model

    as_json = as_json or bool(_group(ctx, "as_json"))
    try:
        with _download_bar(not as_json and watched_stderr()) as progress:
            pulled = pull_model(name, progress)
    except KeyboardInterrupt:
        err_console.print("ripple: interrupted; the same `ripple models pull` resumes the download", markup=False)
        raise typer.Exit(130) from None
    if as_json:
        print_json(pulled.to_dict())
        return
    from ripplecli.api import gib

    how = "already there, sha256 checked" if not pulled.fetched else "downloaded, sha256 ok"
    if pulled.resumed_from:
        how += f", resumed after {gib(pulled.resumed_from)}"
    console.print(printable(f"{pulled.name}: {gib(pulled.size)} at {pulled.path} ({how})"), markup=False)
    _print_set(pulled.path, pulled.config, pulled.previous_model)


def _print_set(path: str, config: str, previous: str | None = None) -> None:
    """What the config now says, what it said, and whether $RIPPLE_MODEL hides it."""
    was = f"; was {previous}" if previous and previous != path else ""
    console.print(printable(f"model.path = {path}  ({config}{was})"), markup=False)
    if os.environ.get("RIPPLE_MODEL"):
        console.print("[yellow]note: RIPPLE_MODEL is set and wins over the config until you unset it[/]")


@models_app.command("use")
@user_errors
def use(
    ctx: typer.Context,
    target: Annotated[
        str,
        typer.Argument(
            help="A pulled name from `ripple models`, a .gguf path, or a found model's name (Ollama name:tag…).",
            show_default=False,
        ),
    ],
    as_json: JsonOption = False,
) -> None:
    """Make one model the configured one, after checking it is a complete GGUF with a chat template."""
    from ripplecli.api import use_model

    chosen = use_model(target)
    if as_json or _group(ctx, "as_json"):
        print_json(chosen.to_dict())
        return
    _print_set(chosen.path, chosen.config)
