"""`ripple forget`, `ripple export`, `ripple import`, `ripple doctor`: remove, move and check your data."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from ripplecli.api import counted
from ripplecli.cli.common import (
    JsonOption,
    StoreOption,
    console,
    err_console,
    escaped,
    open_memory,
    print_json,
    printable,
    user_errors,
)

PLAN_ORDER = ("memories", "edges", "vectors", "cues", "provenance", "sources")
# what one of each counted kind is called, when there is one
PLAN_NOUNS = {"memories": "memory", "provenance": "provenance link", "sources": "source turn"}
STATUS_STYLE = {"ok": "green", "stale": "yellow", "problem": "bold red"}


def _plan_line(counts: dict[str, int], verb: str) -> str:
    """`will forget: 3 memories, 1 edge, …`."""
    return f"{verb}: " + ", ".join(counted(counts[key], PLAN_NOUNS.get(key, key[:-1])) for key in PLAN_ORDER)


@user_errors
def forget(
    ids: Annotated[list[str] | None, typer.Argument(help="Memory ids (m14 or 14).", show_default=False)] = None,
    conversation: Annotated[str | None, typer.Option(help="Every memory of this conversation.")] = None,
    session: Annotated[str | None, typer.Option(help="Every memory of this session id.")] = None,
    person: Annotated[str | None, typer.Option(help="Every memory mentioning this person.")] = None,
    before: Annotated[str | None, typer.Option(help="Every memory said before this date (YYYY-MM-DD).")] = None,
    keep_sources: Annotated[bool, typer.Option("--keep-sources", help="Keep the raw turns.")] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
    store: StoreOption = None,
    as_json: JsonOption = False,
) -> None:
    """Remove memories completely: rows, edges, vectors, cues, source turns, and their bytes on disk.

    Selectors combine (AND): `--conversation c1 --session s2` forgets session s2 of c1 only.
    """
    from ripplecli.api import parse_date

    selection: dict[str, Any] = {
        "conversation": conversation,
        "session": session,
        "person": person,
        "before": parse_date(before, "--before"),
        "keep_sources": keep_sources,
    }
    with open_memory(store, create=False) as memory:
        plan = memory.forget(*(ids or []), dry_run=True, **selection)
        if plan.empty:
            _report({"forgotten": False, "counts": plan.counts}, "nothing matches; nothing forgotten", as_json)
            return
        err_console.print(_plan_line(plan.counts, "will forget"))
        if not yes and not _confirmed():
            err_console.print("nothing was forgotten (to forget without being asked, pass --yes)")
            raise typer.Exit(1)
        done = memory.forget(*(ids or []), **selection)
    _report(
        {"forgotten": True, "counts": done.counts, "memory_ids": done.memory_ids},
        _plan_line(done.counts, "forgot"),
        as_json,
    )


def _confirmed() -> bool:
    """The user's yes; no answer (end of input in a script or pipe) is a no, not click's bare 'Aborted.'."""
    try:
        return typer.confirm("Forget them? This cannot be undone", default=False, err=True)
    except typer.Abort:
        return False


def _report(document: dict[str, Any], line: str, as_json: bool) -> None:
    """JSON or one line on stdout."""
    if as_json:
        print_json(document)
    else:
        console.print(printable(line), markup=False)


@user_errors
def export(
    out: Annotated[Path | None, typer.Option("--out", "-o", help="File to write (default: stdout).")] = None,
    with_vectors: Annotated[bool, typer.Option("--with-vectors", help="Include vectors (else re-encoded).")] = False,
    salvage: Annotated[
        bool, typer.Option("--salvage", help="From a damaged database file: every row that can still be read.")
    ] = False,
    store: StoreOption = None,
) -> None:
    """Write the whole store as one JSONL document (conversations, sources, memories with cues, edges), to back up."""
    if salvage:
        from ripplecli.api import Memory

        found = Memory.salvage(store, out, with_vectors=with_vectors)
        err_console.print(printable(found.summary(str(out) if out else "stdout")), markup=False, soft_wrap=True)
        return
    with open_memory(store, read_only=True, create=False) as memory:
        lines = memory.export(out, with_vectors=with_vectors)
    if out is not None:
        err_console.print(printable(f"exported {counted(lines, 'record')} to {out}"), markup=False)


@user_errors
def import_(
    file: Annotated[Path, typer.Argument(help="A file written by `ripple export`.")],
    store: StoreOption = None,
    as_json: JsonOption = False,
) -> None:
    """Restore an export into an empty store (re-encoding the vectors when the export has none)."""
    with open_memory(store) as memory:
        counts = memory.import_(file)
    _report(counts, "imported: " + ", ".join(counted(n, kind.replace("_", " ")) for kind, n in counts.items()), as_json)


@user_errors
def doctor(
    repair: Annotated[bool, typer.Option("--repair", help="Drop orphan rows and rebuild derived indexes.")] = False,
    store: StoreOption = None,
    as_json: JsonOption = False,
) -> None:
    """Check the store's integrity; exit 1 when a problem is found (stale derived indexes are not problems)."""
    from ripplecli.errors import DamagedStoreError, known_failure

    try:
        with open_memory(store, read_only=not repair, create=False) as memory:
            report = memory.doctor(repair=repair)
    except Exception as exc:  # DuckDB cannot open the file, or read its meta, at all: that is the report
        failure = known_failure(exc)
        if repair or not isinstance(failure, DamagedStoreError):
            raise
        from ripplecli.api import unopenable_report

        report = unopenable_report(store, failure)
    if as_json:
        print_json(report)
    else:
        console.print(_doctor_table(report))
        for line in report["repaired"]:
            console.print(printable(f"repaired: {line}"), markup=False)
    if not report["ok"]:
        raise typer.Exit(1)


def _doctor_table(report: dict[str, Any]) -> Table:
    """One row per check, coloured by status."""
    table = Table(title=f"doctor: store {escaped(report['store'])}")
    for column in ("check", "status", "detail"):
        table.add_column(column, overflow="fold")
    for finding in report["checks"]:
        style = STATUS_STYLE.get(finding["status"], "")
        status = f"[{style}]{escaped(finding['status'])}[/]"
        table.add_row(escaped(finding["check"]), status, escaped(finding["detail"]))
    return table
