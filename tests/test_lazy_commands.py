"""The root group builds a command only when it is used, and every page and error reads as with all built up front."""

from __future__ import annotations

import subprocess
import sys

import pytest
import typer
from typer.testing import CliRunner

from ripplecli import cli
from ripplecli.cli import COMMANDS, app, lazy_commands


def eager_app() -> typer.Typer:
    """The same commands registered the usual way: typer builds every one before it runs any."""
    eager = typer.Typer(
        name="ripple", help=app.info.help, no_args_is_help=True, add_completion=True, pretty_exceptions_enable=False
    )
    eager.callback()(cli._root)
    for name, path in COMMANDS.items():
        target = lazy_commands.target(path)
        if isinstance(target, typer.Typer):
            eager.add_typer(target, name=name)
        else:
            eager.command(name)(target)
    return eager


def pages() -> list[list[str]]:
    """Every help page: the root, each command, each sub-app's commands; then a typo and a bad value."""
    found = [["--help"], []]
    for name in COMMANDS:
        found.append([name, "--help"])
        sub = lazy_commands.target(COMMANDS[name])
        if isinstance(sub, typer.Typer):
            found.append([name])
            found += [[name, command.name, "--help"] for command in sub.registered_commands]
    return [*found, ["akk"], ["ask", "--k", "x", "q"], ["graph", "stat"]]


@pytest.mark.parametrize("args", pages(), ids=" ".join)
@pytest.mark.parametrize("columns", [80, 200])
def test_every_page_reads_as_with_every_command_built(args: list[str], columns: int) -> None:
    env = {"COLUMNS": str(columns)}
    lazy = CliRunner().invoke(app, args, env=env, prog_name="ripple")
    eager = CliRunner().invoke(eager_app(), args, env=env, prog_name="ripple")
    assert (lazy.exit_code, lazy.output) == (eager.exit_code, eager.output)


def test_the_root_help_builds_no_command() -> None:
    group = typer.main.get_command(app)
    runner = CliRunner().invoke(app, ["--help"], prog_name="ripple")
    assert runner.exit_code == 0 and "ask" in runner.output
    assert not any(group.commands.built(name) for name in COMMANDS)
    assert list(group.commands) == list(COMMANDS) and "ask" in group.commands
    assert group.commands["ask"].params and group.commands.built("ask")


def imported_by(code: str) -> set[str]:
    """The ripplecli.cli modules a fresh interpreter has loaded after running `code`."""
    shown = "import sys; print(' '.join(m for m in sys.modules if m.startswith('ripplecli.cli.')))"
    done = subprocess.run([sys.executable, "-c", f"{code}\n{shown}"], capture_output=True, text=True, check=True)
    return set(done.stdout.split())


SHARED = {
    "ripplecli.cli.common",
    "ripplecli.cli.coercion",
    "ripplecli.cli.lazy_help",
    "ripplecli.cli.lazy_commands",
    "ripplecli.cli.pins",
}


def test_importing_the_cli_imports_no_command() -> None:
    assert imported_by("import ripplecli.cli") == SHARED


def test_an_ask_imports_only_its_own_command(tmp_path) -> None:
    code = (
        "import contextlib, ripplecli.cli\n"
        "with contextlib.suppress(SystemExit):\n"
        f"    ripplecli.cli.app(['ask', 'q', '--store', {str(tmp_path / 'none')!r}])"
    )
    expected = {"ripplecli.cli.ask", "ripplecli.cli.choices", "ripplecli.cli.models", "ripplecli.cli.render"}
    assert imported_by(code) - SHARED == expected
