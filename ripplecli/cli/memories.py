"""`ripple memories list|search` and `ripple show ID`: see everything the store holds."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.table import Table

from ripplecli.api import counted
from ripplecli.cli.common import (
    JsonOption,
    StoreOption,
    clip,
    console,
    escaped,
    one_line,
    open_memory,
    print_json,
    printable,
    rows_table,
    user_errors,
)

memories_app = typer.Typer(help="List and search the memories in the store.", no_args_is_help=True)
TEXT_WIDTH = 80
WIDE = 110  # terminal columns from which the memory tables also show persons


def _table(rows: list[dict[str, Any]], title: str, found_by: bool = False) -> Table:
    """Memories as rows: id, where they came from, when said, who, (how a search found them) and the restatement."""
    persons = console.width >= WIDE  # at 80 columns the restatement needs the room more
    table = rows_table(title)
    table.add_column("id", no_wrap=True)
    table.add_column("where", overflow="fold", max_width=24)  # conversation (its title when known)/session
    table.add_column("said", no_wrap=True)
    if persons:
        table.add_column("persons", overflow="fold", max_width=16)
    if found_by:
        table.add_column("found by", overflow="fold", max_width=10)
    table.add_column("restatement", overflow="fold", ratio=1)
    for row in rows:
        cells = [
            f"m{row['memory_id']}",
            f"{conversation_label(row)}/{row['session_id']}",
            (row["said_at"] or "-")[:16].replace("T", " "),
        ]
        if persons:
            cells.append(", ".join(row["persons"]))
        if found_by:
            cells.append(_view_ranks(row))
        table.add_row(*map(escaped, cells), clip(row["restatement"], TEXT_WIDTH))
    return table


def conversation_label(row: dict[str, Any], width: int = 30) -> str:
    """A conversation as people know it: its title (when the export has one) before its id."""
    title = one_line(row.get("title") or "", width)
    return f"{title} ({row['conversation_id']})" if title else row["conversation_id"]


def _view_ranks(row: dict[str, Any]) -> str:
    """How a search hit was found: `dense#1, lexical#3`."""
    return ", ".join(f"{view}#{rank}" for view, rank in sorted(row.get("views", {}).items()))


@memories_app.command("list")
@user_errors
def list_command(
    person: Annotated[str | None, typer.Option(help="Only memories mentioning this person.")] = None,
    session: Annotated[str | None, typer.Option(help="Only this session id.")] = None,
    conversation: Annotated[str | None, typer.Option(help="Only this conversation id.")] = None,
    since: Annotated[str | None, typer.Option(help="Said on or after this date (YYYY-MM-DD).")] = None,
    until: Annotated[str | None, typer.Option(help="Said on or before this date (YYYY-MM-DD).")] = None,
    limit: Annotated[int | None, typer.Option(help="At most this many memories.")] = None,
    store: StoreOption = None,
    as_json: JsonOption = False,
) -> None:
    """List memories, oldest first, filtered by person, session, conversation or the date they were said."""
    from ripplecli.api import parse_date

    start, end = parse_date(since, "--since"), parse_date(until, "--until", end_of_day=True)
    with open_memory(store, read_only=True, create=False) as memory:
        rows = memory.list_memories(
            person=person, session=session, conversation=conversation, since=start, until=end, limit=limit
        )
    if as_json:
        print_json(rows)
        return
    console.print(_table(rows, counted(len(rows), "memory")) if rows else "no memories match")


@memories_app.command("search")
@user_errors
def search_command(
    text: Annotated[str, typer.Argument(help="Words to look for.")],
    k: Annotated[int, typer.Option("--k", help="How many memories.")] = 10,
    store: StoreOption = None,
    as_json: JsonOption = False,
) -> None:
    """Search memories by text: BM25 and dense views fused by rank (no graph, no planner)."""
    with open_memory(store, read_only=True, create=False) as memory:
        rows = memory.search_memories(text, k=k)
    if as_json:
        print_json(rows)
        return
    title = f"{counted(len(rows), 'memory')} for '{escaped(text)}'"
    console.print(_table(rows, title, found_by=True) if rows else "no memories match")


@user_errors
def show(
    memory_id: Annotated[str, typer.Argument(help="A memory id, like m14 or 14.")],
    store: StoreOption = None,
    as_json: JsonOption = False,
) -> None:
    """Show one memory in full: restatement, cues, source turns, and its edges in every channel."""
    with open_memory(store, read_only=True, create=False) as memory:
        record = memory.show(memory_id)
    if as_json:
        print_json(record)
        return
    _print_memory(record)


def _print_memory(record: dict[str, Any]) -> None:
    """The memory as a few labelled blocks; every stored string is shown as text, never as markup."""
    where = f"{conversation_label(record, 60)} / {record['session_id']}"
    console.print(f"[bold]m{record['memory_id']}[/bold]  {escaped(where)}")
    console.print(printable(record["restatement"]), markup=False)
    console.print(f"said: {record['said_at'] or 'unknown'}", markup=False)
    refers = record["refers_to"]
    about = f"{refers['start']} … {refers['end']}" if refers else "- (the text names no time)"
    console.print(printable(f"refers to: {about}   extractor: {record['extractor']}"), markup=False)
    for key, values in record["cues"].items():
        console.print(printable(f"{key}: {', '.join(values) or '-'}"), markup=False)
    sources = Table(title="source turns")
    for column in ("turn", "session", "speaker", "text"):
        sources.add_column(column, overflow="fold")
    for s in record["sources"]:
        sources.add_row(*(escaped(s[key]) for key in ("turn_id", "session_id", "speaker", "text")))
    console.print(sources)
    edges = Table(title="edges")
    for column in ("channel", "to", "weight", "restatement"):
        edges.add_column(column, overflow="fold" if column == "restatement" else "ellipsis")
    for channel, rows in record["edges"].items():
        for e in rows:
            text = clip(e["restatement"] or "?", 70)
            edges.add_row(escaped(channel), f"m{e['memory_id']}", f"{e['weight']:.3f}", text)
    console.print(edges if record["edges"] else "edges: none")
