"""`ripple ingest FILE...`: read chats into the store, with progress and a summary table."""

from __future__ import annotations

import inspect
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from ripplecli.api import FORMATS, counted
from ripplecli.cli.choices import choice
from ripplecli.cli.common import (
    JsonOption,
    StoreOption,
    console,
    err_console,
    escaped,
    open_memory,
    print_json,
    printable,
    progress_bar,
    rows_table,
    user_errors,
)
from ripplecli.cli.models import ModelOption
from ripplecli.errors import InputError

if TYPE_CHECKING:  # the readers load only when a file is read, not for --help
    from ripplecli.api import IngestReport, Member


def _summary(reports: list[IngestReport]) -> Table:
    """One row per file: what was added, skipped and how long it took."""
    table = rows_table("ingest summary")
    table.caption = (
        "turns: new source turns · dupes: turns already stored · skip: messages left out (tool calls, media, "
        "system lines, other branches; why: below) · fails: model fallbacks · s: seconds"
    )
    table.add_column("file", overflow="fold", ratio=1)
    for column in ("chats", "turns", "dupes", "skip", "memories", "edges", "fails", "s"):
        table.add_column(column, justify="right", no_wrap=True)
    for r in reports:
        edges = "\n".join(f"{k} {v}" for k, v in sorted(r.edges.items())) or "0"
        table.add_row(
            escaped(Path(r.file).name),
            str(r.conversations),
            str(r.new_sources),
            str(r.duplicates),
            str(r.skipped),
            str(r.memories),
            edges,
            str(r.failures),
            f"{r.seconds:.2f}",
        )
    return table


LISTED_NAMES = 4  # file names shown per format or reason before "… and N more"


def bundle_lines(name: str, members: list[Member]) -> list[str]:
    """For a zip or folder: which of its files were read and as what, and which were passed over and why."""
    read = [m for m in members if m.format]
    passed = [m for m in members if not m.format]
    lines = [f"{name}: read {counted(len(read), 'file')}: {_grouped(read, lambda m: m.format)}"] if read else []
    if passed:
        lines.append(f"{name}: passed over {counted(len(passed), 'file')}: {_grouped(passed, lambda m: m.passed_over)}")
    return lines


def _grouped(members: list[Member], key: Callable[[Member], str | None]) -> str:
    """`notes: a.md, b.md; whatsapp: WhatsApp Chat with Maya.txt`, a few names per group."""
    groups: dict[str | None, list[str]] = {}
    for member in members:
        groups.setdefault(key(member), []).append(member.path)
    return "; ".join(f"{what}: {_names(paths)}" for what, paths in groups.items())


def _names(paths: list[str], limit: int = LISTED_NAMES) -> str:
    """The first few names, then how many more."""
    shown = ", ".join(paths[:limit])
    return shown + (f" and {len(paths) - limit} more" if len(paths) > limit else "")


def skipped_line(report: IngestReport) -> str | None:
    """What a file's reader left out, by reason: `chat.txt: left out 5 messages: system line 2, media 1, …`."""
    if not report.skipped:
        return None
    reasons = ", ".join(f"{reason} {count}" for reason, count in report.skipped_by_reason.items())
    return f"{Path(report.file).name}: left out {counted(report.skipped, 'message')}: {reasons}"


def _edited_line(edited: int) -> str:
    """What the ingest says of messages an export changed since they were stored, in the number they take."""
    one = edited == 1
    return (
        f"{counted(edited, 'message')} changed since {'it was' if one else 'they were'} stored; the stored text is "
        f"kept (`ripple forget` {'it' if one else 'them'}, then ingest again, to take the new text)"
    )


def stdin_is_terminal() -> bool:
    """Whether a person can answer a question (not a pipe, a script or CI)."""
    return sys.stdin.isatty()


def owner_for(parsed: list[tuple[Path, list]], given: str | None) -> tuple[str | None, str | None, str | None]:
    """(me, default, hint): the owner's name when the user gives it (--me, `me` in the config, or asked once), else
    the export's own name for the owner's turns and the hint to print after the ingest. Only `me` names the owner
    of a group chat, so a default never does.

    Asked only on a terminal, and saved as `me`."""
    from ripplecli.api import default_owner_name, is_role_word, owner_name, set_config

    conversations = [c for _, chats in parsed for c in chats]
    me = owner_name(conversations, given)
    default = default_owner_name(conversations)
    if me is not None or default is None:
        return me, None, None
    if stdin_is_terminal():
        question = "These chats have your own messages. Your name (saved as `me`)"
        answer = typer.prompt(question, default=default, err=True)  # stderr: `--json` output stays JSON
        set_config("me", answer)
        return " ".join(answer.split()), None, None
    if is_role_word(default):
        hint = (
            f"ripple: your own messages are stored as '{default}', so \"I\" in them stays unresolved; to use your "
            "name, ingest with `--me NAME` (or run `ripple config set me NAME` before ingesting)"
        )
    else:  # a name the export gives its owner (a WhatsApp chat's other side, Claude's users.json)
        hint = (
            f"ripple: your own messages are stored as '{default}', the export's name for you; "
            "`--me NAME` (or `ripple config set me NAME` before ingesting) chooses another"
        )
    return None, default, hint


LISTED_PEOPLE = 8  # people named in the line about a chat `me` names no one of, before "and N more"


def no_owner_line(report: IngestReport, me: str) -> str | None:
    """One line for a file's chats whose export names no owner and whose people `me` is none of: they are stored
    without an owner, so "I" in a question does not reach them."""
    if not report.no_owner:
        return None
    chats = [str(chat["chat"]) for chat in report.no_owner]
    people = list(dict.fromkeys(person for chat in report.no_owner for person in chat["people"]))
    shown = _names(people, LISTED_PEOPLE)
    where = f"'{chats[0]}'" if len(chats) == 1 else f"{counted(len(chats), 'chat')} ({_names(chats)})"
    stored = "it is" if len(chats) == 1 else "they are"
    return (
        f"ripple: {Path(report.file).name}: you are '{me}' (--me, else `me` in the config), none of the people of "
        f"{where} ({shown or 'no one wrote'}), so {stored} stored without an owner; `--me NAME` with one of "
        "these names names you there"
    )


@user_errors
def ingest(
    files: Annotated[
        list[Path],
        typer.Argument(
            help="Chat exports: files, .zip archives or export folders, in the formats listed above."
        ),
    ],
    fmt: Annotated[
        str, choice("ingest", "--format", "The export's format (auto: detected from the content).", "-f")
    ] = "auto",
    extractor: Annotated[
        str | None, choice("ingest", "--extractor", "Who writes memories (default: the store's, rules).")
    ] = None,
    model: ModelOption = None,
    links: Annotated[
        str, choice("ingest", "--links", "Antecedent links too (cable: rules, cable-llm: the local model).")
    ] = "none",
    me: Annotated[
        str | None,
        typer.Option(
            "--me",
            help="Your name for your own messages, and who you are in a group chat, a Slack or a Discord export "
            "(default: `ripple config get me`).",
        ),
    ] = None,
    store: StoreOption = None,
    as_json: JsonOption = False,
) -> None:
    """Read chat histories and exports into memories, cues and the memory graph.

    Re-ingesting a file is a no-op, and a newer export adds only its new messages, whatever the file is called.
    A .zip or an export folder is read as it comes; the README's "Chat formats" section says how to get each export.

    In a zip or folder (and a zip in a folder) every .json, .txt and .md file in
    a known format is read (a Slack export in it as a whole, the files beside it
    one by one): a .md or .txt that is no WhatsApp chat as notes (so `ripple
    ingest .` takes a README too). Hidden files, media and other files are passed over; the ingest lists
    what it read, as what, what it passed over, and why messages were left out.

    \b
    {formats}

    Exports that mark your own messages (ChatGPT's `user`, Claude's `human`, your
    side of a Telegram or WhatsApp chat) store them under your name: `--me`, else
    `me` in the config, else asked once on a terminal. A group chat, a Slack or a
    Discord export does not say who you are: the person `--me` (or `me`) names is.

    A big export (a ChatGPT conversations.json, a Telegram account's result.json,
    zipped or not) is read a conversation at a time, so any size fits in memory;
    if the ingest is stopped, running the same command again adds the rest.
    """
    from ripplecli import api

    api.start_encoder()  # the default encoder loads beside reading the files and opening the store
    api.check_format(fmt)  # before any file is opened
    readings = [(path, api.read_export(path, fmt)) for path in files]  # every file checked before any write
    # a big export's few conversations that say how its owner is named stand for it (ripplecli.formats.stream)
    parsed = [(path, r.stream.witnesses if r.stream else r.conversations) for path, r in readings]
    if not parsed:
        raise InputError("no files given")
    if extractor == "llm" or links == "cable-llm":
        api.load_model(model)  # an unusable model is one line before the store is touched
    owner, default_owner, hint = owner_for(parsed, me)
    reports = []
    from rich.progress import TextColumn

    with open_memory(store) as memory, progress_bar(TextColumn("{task.fields[rate]}")) as bar:
        memory.model = model
        for path, reading in readings:
            task = bar.add_task(escaped(path.name), total=None, rate="")
            started = time.perf_counter()

            def advance(done: int, total: int, task=task, started=started) -> None:
                rate = done / max(time.perf_counter() - started, 1e-6)
                bar.update(task, completed=done, total=total or None, rate=f"{rate:,.0f} turns/s")

            reports.append(
                memory.ingest(
                    path,
                    conversations=reading.conversations,
                    stream=reading.stream,
                    extractor=extractor,
                    progress=advance,
                    links=links,
                    owner=owner,
                    default_owner=default_owner,
                )
            )
    if as_json:
        print_json([r.__dict__ for r in reports])
    else:
        console.print(_summary(reports))
    for path, reading in readings:
        for line in [*bundle_lines(path.name or str(path), reading.members), *reading.warnings]:
            err_console.print(printable(line), markup=False, soft_wrap=True)
    for report in reports:
        if skipped := skipped_line(report):
            err_console.print(printable(skipped), markup=False, soft_wrap=True)
    if hint:
        err_console.print(hint, markup=False, soft_wrap=True)
    for report in reports:
        if unowned := no_owner_line(report, owner or ""):
            err_console.print(printable(unowned), markup=False, soft_wrap=True)
    rejected = sum(r.rejected for r in reports)
    if rejected:
        err_console.print(
            f"{counted(rejected, 'field or memory', 'fields or memories')} the local model wrote "
            f"{'was' if rejected == 1 else 'were'} not kept by its gates; the rules' memories stand (each one is a row "
            "of the store's failures table, stage extract:gate)",
            markup=False,
            soft_wrap=True,
        )
    edited = sum(r.edited for r in reports)
    if edited:
        err_console.print(_edited_line(edited), markup=False, soft_wrap=True)


def format_table() -> str:
    """The help's table of chat formats, a line each from the registry (listing imports no reader)."""
    width = max(len(name) for name in FORMATS) + 3
    return "\n".join(f"{name:<{width}}{entry.summary}" for name, entry in FORMATS.items())


ingest.__doc__ = inspect.cleandoc(ingest.__doc__ or "").replace("{formats}", format_table())
