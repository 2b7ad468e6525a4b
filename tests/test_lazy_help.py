"""`ripple --help` renders through typer's rich help without importing rich's Markdown and Traceback modules."""

from __future__ import annotations

import subprocess
import sys

from ripplecli.cli.lazy_help import stand_in

HELP_SCRIPT = """
import sys
from ripplecli.cli import app
try:
    app(["--help"], prog_name="ripple")
except SystemExit:
    pass
print("typer.rich_utils" in sys.modules, sorted(m for m in ("rich.markdown", "rich.traceback") if m in sys.modules))
import rich.markdown
print(type(rich.markdown.Markdown).__name__)
"""


def test_help_renders_without_markdown_or_traceback_modules() -> None:
    run = subprocess.run([sys.executable, "-c", HELP_SCRIPT], capture_output=True, text=True, check=True)
    lines = run.stdout.strip().splitlines()
    assert "ripple: a local-first memory" in run.stdout and "Commands" in run.stdout
    assert lines[-2] == "True []"  # help went through typer's rich renderer, which never needed the two modules
    assert lines[-1] == "type"  # a later import gets the real module, not the placeholder


def test_stand_ins_build_and_forward_to_the_real_classes() -> None:
    from rich.markdown import Markdown
    from rich.traceback import Traceback

    assert type(stand_in("rich.markdown", "Markdown")("# a heading")) is Markdown
    try:
        raise ValueError("boom")
    except ValueError as exc:
        frames = stand_in("rich.traceback", "Traceback").from_exception(type(exc), exc, exc.__traceback__)
    assert type(frames) is Traceback
