"""The start-up tricks (lazy commands, lazy help, plain coercion, flags shown as flags) are pinned to the typer and
rich they were written for: this fails when the installed versions leave the pins, and another typer gets typer's
own behaviour."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from importlib.metadata import version
from pathlib import Path

from ripplecli.cli import pins

PYPROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"


def test_the_installed_typer_and_rich_are_the_pinned_ones() -> None:
    """An upgrade lands here: measure the tricks again (bench/cold.py), re-check them, then move the pins."""
    assert pins.within(version("typer"), pins.TYPER), version("typer")
    assert pins.within(version("rich"), pins.RICH), version("rich")
    assert pins.as_written()


def test_pyproject_allows_only_the_pinned_versions() -> None:
    wanted = {"typer": pins.TYPER, "rich": pins.RICH}
    for requirement in tomllib.loads(PYPROJECT.read_text())["project"]["dependencies"]:
        name = re.match(r"[\w-]+", requirement).group()
        if name in wanted:
            low, high = wanted[name]
            low_bound = re.search(r">=([\d.]+)", requirement).group(1)
            high_bound = re.search(r"<([\d.]+)", requirement).group(1)
            assert pins.release(low_bound) == low and pins.release(high_bound + ".0") == high, requirement
            wanted.pop(name)
    assert not wanted


def test_release_numbers() -> None:
    assert pins.release("0.29.2") == (0, 29) and pins.release("15.0.0") == (15, 0)
    assert pins.release("") == (-1, -1) and pins.release("dev") == (-1, -1)
    assert pins.within("0.29.9", pins.TYPER) and not pins.within("0.30.0", pins.TYPER)


OTHER_TYPER = """
import sys
import typer
typer.__version__ = "0.99.0"
import ripplecli.cli as cli
from typer.core import TyperOption, _TyperParameter
from typer.testing import CliRunner
assert cli.ROOT_GROUP is None
assert not any(type(f).__name__ == "_Finder" for f in sys.meta_path)
assert not getattr(_TyperParameter.get_runtime_param, "plain_first", False)
assert not getattr(TyperOption.display_type_rich, "flags_as_flags", False)
root = CliRunner().invoke(cli.app, ["--help"], prog_name="ripple", env={"COLUMNS": "120"})
ask = CliRunner().invoke(cli.app, ["ask", "--help"], prog_name="ripple", env={"COLUMNS": "120"})
print(root.exit_code, ask.exit_code, "ingest" in root.stdout and "config" in root.stdout, "--mode" in ask.stdout)
"""


def test_another_typer_gets_typers_own_behaviour() -> None:
    run = subprocess.run([sys.executable, "-c", OTHER_TYPER], capture_output=True, text=True, check=True)
    assert run.stdout.split() == ["0", "0", "True", "True"], run.stdout + run.stderr
