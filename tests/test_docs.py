"""The documentation cannot drift from the code: every registered chat format is in `ripple ingest --help` and in
the README's table of formats."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ripplecli.cli import app
from ripplecli.registry import FORMATS

README = Path(__file__).resolve().parent.parent / "README.md"


def _readme_section(title: str) -> str:
    """The README's text from the heading `## title` to the next heading of that level."""
    text = README.read_text()
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else len(text)]


def _readme_formats() -> set[str]:
    """The formats the README's table names in bold in its first column."""
    rows = [line for line in _readme_section("Chat formats").splitlines() if line.startswith("| **")]
    return {name for row in rows for name in re.findall(r"\*\*([\w-]+)\*\*", row.split("|")[1])}


@pytest.fixture(scope="module")
def ingest_help() -> str:
    """`ripple ingest --help` on a wide terminal."""
    result = CliRunner().invoke(app, ["ingest", "--help"], env={"COLUMNS": "200"}, prog_name="ripple")
    assert result.exit_code == 0, result.output
    return result.stdout


@pytest.mark.parametrize("name", list(FORMATS))
def test_every_format_has_a_line_in_ingest_help(name: str, ingest_help: str) -> None:
    line = rf"^\s*{re.escape(name)}\s{{2,}}{re.escape(FORMATS[name].summary)}\s*$"
    assert re.search(line, ingest_help, re.MULTILINE), ingest_help


@pytest.mark.parametrize("name", list(FORMATS))
def test_every_format_is_in_the_readme_table(name: str) -> None:
    assert name in _readme_formats()


def test_the_readme_table_names_only_registered_formats() -> None:
    assert _readme_formats() <= set(FORMATS)
