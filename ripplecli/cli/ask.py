"""`ripple ask QUESTION`: associative recall with its trace; `ripple show ID`: one memory in full."""

# No `from __future__ import annotations`: typer then reads these annotations as objects; as strings it evaluated
# each one twice (signature and type hints) every time `ripple ask` ran.

from typing import Annotated

import typer

from ripplecli.api import ASK_MODES, MODES
from ripplecli.cli.choices import checked, choice
from ripplecli.cli.common import (
    JsonOption,
    StoreOption,
    console,
    err_console,
    open_memory,
    print_json,
    printable,
    user_errors,
    watched_stderr,
)
from ripplecli.cli.models import ModelOption
from ripplecli.errors import InputError

BRIEF_EVIDENCE = 5  # --no-trace: the answer and this many evidence lines


@user_errors
def ask(
    question: Annotated[str, typer.Argument(help="What you want to recall.")],
    k: Annotated[int, typer.Option("--k", help="How many memories of evidence to return.")] = 30,
    mode: Annotated[
        str, choice("ask", "--mode", "How evidence is recalled (the others are for comparison).")
    ] = "ripple",
    rounds: Annotated[int, typer.Option(help="Recall rounds (planner + diffusion).")] = 1,
    as_of: Annotated[str | None, typer.Option("--as-of", help="The question's date (default: now).")] = None,
    answer: Annotated[
        str, choice("ask", "--answer", "How to answer (auto: the local model when one is set).")
    ] = "auto",
    planner: Annotated[str, choice("ask", "--planner", "Who plans anchors and the missing-support target.")] = "rules",
    analyzer: Annotated[str, choice("ask", "--analyzer", "Who reads the question's names, places and time.")] = "rules",
    model: ModelOption = None,
    no_answer: Annotated[bool, typer.Option("--no-answer", help="Evidence only (same as --answer none).")] = False,
    trace: Annotated[bool, typer.Option("--trace/--no-trace", help="Show how the evidence was recalled.")] = True,
    store: StoreOption = None,
    as_json: JsonOption = False,
) -> None:
    """Answer a question from your chats: the answer, the evidence it rests on, and how recall found it."""
    _user_mode(mode)
    from ripplecli import api

    if mode != "lexical":  # the default encoder starts loading beside the imports and the store's opening
        api.start_encoder(few=True)  # one question to encode: a lighter session
    from ripplecli.api import parse_date
    from ripplecli.cli.render import answer_text, evidence_line, trace_tree  # not needed for `--help`

    when = parse_date(as_of, "--as-of")
    with open_memory(store, read_only=True, create=False) as memory:
        memory.model = model
        result = memory.recall(
            question,
            k=k,
            mode=mode,
            rounds=rounds,
            as_of=when,
            answer="none" if no_answer else answer,
            planner=planner,
            analyzer=analyzer,
            stream=None if as_json else terminal_stream(),
        )
    if as_json:
        print_json(result.to_dict())
        return
    if trace:
        console.print(trace_tree(result))
    else:
        if result.answer is not None:
            console.print(answer_text(result.answer))
        for e in result.evidence[:BRIEF_EVIDENCE]:
            console.print(evidence_line(e))
        if len(result.evidence) > BRIEF_EVIDENCE:
            console.print(f"[dim]… {len(result.evidence) - BRIEF_EVIDENCE} more (--json or the trace shows all)[/]")
    if not result.evidence:
        console.print("no evidence found for this question", style="yellow")
    if answer == "auto" and not no_answer:
        model_tip(model)


def model_tip(model) -> None:
    """Once per user, where a person reads stderr: the one command that gets a model (auto then answers with it)."""
    if not watched_stderr():
        return
    from ripplecli.api import model_tip as tip_line
    from ripplecli.api import tip_shown

    line = tip_line(model)
    if line:
        err_console.print(line, style="dim", markup=False, soft_wrap=True)
        tip_shown()


def terminal_stream():
    """A model's answer on the terminal as it is written, under a status line (stderr, so stdout stays clean)."""
    from rich.console import Console

    from ripplecli.api import answer_stream

    screen = Console(stderr=True)

    def started(model: str, tokens: int) -> None:
        screen.print(f"[dim]answering with {printable(model)} · {tokens} prompt tokens[/]")

    def token(piece: str) -> None:
        screen.print(printable(piece), end="", markup=False, highlight=False)

    return answer_stream(started, token, lambda: screen.print())


def _user_mode(mode: str) -> None:
    """Refuse a mode ask does not offer; an evaluation-only mode (an ablation) is told where it belongs."""
    if mode in MODES and mode not in ASK_MODES:
        raise InputError(f"--mode {mode} is an ablation for `ripple eval locomo --modes`; ripple ask takes "
                         f"{', '.join(ASK_MODES)}")  # fmt: skip
    checked("ask", "--mode", mode)
