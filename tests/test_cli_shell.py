"""The shell around the commands: --version, completion, flags shown as flags, choice lists taken from the
registries, tables that read at 80 columns."""

from __future__ import annotations

import re

import pytest
import typer
from chats import CHAT_1, session, write_chat
from typer.testing import CliRunner

from ripplecli import __version__
from ripplecli.answer import ANSWER_MODES
from ripplecli.cli import app
from ripplecli.cli.choices import CHOICES, listed
from ripplecli.eval.longmemeval import QUESTION_TYPES
from ripplecli.eval.runner import ANSWERS
from ripplecli.formats import FORMATS
from ripplecli.recall.modes import ASK_MODES, MODES
from ripplecli.registry import EXTRACTORS, LINKS, PLANNERS, QUERY_ANALYZERS

WIDTH = 80


def run(*args: str, columns: int = WIDTH, env: dict[str, str] | None = None):
    """The ripple command in process, on a terminal of `columns` columns."""
    return CliRunner().invoke(app, list(args), env={"COLUMNS": str(columns), **(env or {})}, prog_name="ripple")


def test_version() -> None:
    result = run("--version")
    assert result.exit_code == 0 and result.stdout.strip() == f"ripple {__version__}"


def test_completion_is_offered_and_completes_choices() -> None:
    assert "--install-completion" in run("--help").stdout
    env = {"_RIPPLE_COMPLETE": "complete_bash", "COMP_WORDS": "ripple ask --mode ripple", "COMP_CWORD": "3"}
    completed = run(env=env).stdout.split()
    assert set(completed) == {m for m in ASK_MODES if m.startswith("ripple")}


@pytest.mark.parametrize(
    "command", [["ask"], ["ingest"], ["forget"], ["export"], ["eval", "locomo"], ["eval", "longmemeval"], []]
)
def test_flags_show_no_value(command: list[str]) -> None:
    page = run(*command, "--help").stdout
    assert "<bool>" not in page
    assert re.search(r"--help\s+Show this message", page)


# Each CLI choice list and the registry the code resolves it in.
REGISTRIES = {
    ("ask", "--mode"): list(ASK_MODES),
    ("ask", "--answer"): list(ANSWER_MODES),
    ("ask", "--planner"): list(PLANNERS),
    ("ask", "--analyzer"): list(QUERY_ANALYZERS),
    ("ingest", "--format"): ["auto", *FORMATS],
    ("ingest", "--extractor"): list(EXTRACTORS),
    ("ingest", "--links"): ["none", *LINKS],
    ("eval locomo", "--modes"): list(MODES),
    ("eval locomo", "--answer"): list(ANSWERS),
    ("eval longmemeval", "--types"): list(QUESTION_TYPES),
}


def _option(command: str, name: str):
    """The click parameter of `ripple COMMAND NAME`."""
    node = typer.main.get_command(app)
    for part in command.split():
        node = node.commands[part]
    return next(p for p in node.params if name in p.opts)


@pytest.mark.parametrize("key", sorted(REGISTRIES))
def test_every_choice_list_matches_its_registry(key: tuple[str, str]) -> None:
    assert CHOICES[key] == REGISTRIES[key]
    option = _option(*key)
    assert option.help.endswith(listed(REGISTRIES[key]))
    page = " ".join(run(*key[0].split(), "--help", columns=300).stdout.split())
    assert listed(REGISTRIES[key]) in page


def test_every_listed_choice_is_accepted(store) -> None:
    """No name in a list that the code then refuses: each mode recalls, each backend loads."""
    for mode in ASK_MODES:
        result = run("ask", "hiking", "--mode", mode, "--store", str(store), "--no-answer", "--json")
        assert result.exit_code == 0, (mode, result.output)
    for registry in (FORMATS, EXTRACTORS, PLANNERS, QUERY_ANALYZERS):
        for name in registry:
            assert registry.load(name) is not None


def test_ask_offers_the_user_modes_and_leaves_ablations_to_the_evaluation(store) -> None:
    page = " ".join(run("ask", "--help", columns=300).stdout.split())
    assert "ripple+sessions" in page and "ripple-paper" not in page and "ripple-noshare" not in page
    assert "ripple-paper" in " ".join(run("eval", "locomo", "--help", columns=300).stdout.split())
    refused = run("ask", "hiking", "--mode", "ripple-paper", "--store", str(store))
    assert refused.exit_code == 2 and "ablation for `ripple eval locomo --modes`" in refused.stderr
    unknown = run("ask", "hiking", "--mode", "nope", "--store", str(store))
    assert unknown.exit_code == 2 and "unknown --mode 'nope' (choose from: ripple," in unknown.stderr


def _fits(page: str) -> None:
    """Every line within the terminal, no header cut to an ellipsis."""
    lines = page.splitlines()
    assert lines and max(len(line) for line in lines) <= WIDTH, page
    header = next(line for line in lines if line.lstrip().startswith(("file", "id")))
    assert "…" not in header, page


def test_tables_read_at_80_columns(store, tmp_path) -> None:
    chat = write_chat(tmp_path / "a-rather-long-file-name.json", [session(3, CHAT_1)], "other")
    short = write_chat(tmp_path / "dinner.json", [session(3, CHAT_1)], "dinner")
    ingest = run("ingest", str(chat), str(short), "--store", str(store))
    assert ingest.exit_code == 0, ingest.output
    _fits(ingest.stdout)
    assert "dinner.json" in ingest.stdout  # a short file name is not folded into pieces
    assert all(word in ingest.stdout for word in ("memories", "edges", "contiguity"))
    listing = run("memories", "list", "--store", str(store))
    _fits(listing.stdout)
    assert "restatement" in listing.stdout
    found = run("memories", "search", "hiking", "--store", str(store))
    _fits(found.stdout)
    assert "found by" in found.stdout and "restatement" in found.stdout
