"""Plain option values skip pydantic, and come out exactly as typer's own coercion gives them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import typer
import typer.main
from typer._coercion import build_runtime_param

from ripplecli.cli.coercion import PlainCoercion, plain

VALUES = {
    "n": [3, "3", "-7", "007", " 3", "1_000", "3.0", "x", "", "99999999999999999999999", None],
    "s": ["hello", "", "--k", " spaced ", None],
    "p": ["a/b", "", "/", "~/x", Path("c"), None],
    "f": [True, False, None],
}


def _command():
    app = typer.Typer()

    @app.command()
    def cmd(n: int = 1, s: str = "", p: Path | None = None, f: bool = False, ids: list[str] | None = None) -> None:
        """A command of every kind of parameter."""

    command = typer.main.get_command(app)
    return command, {param.name: param for param in command.params}


def outcome(coercion, value, param, ctx):
    """The coerced value with its type, or the error's message."""
    try:
        result = coercion.coerce(value, param=param, ctx=ctx)
    except Exception as exc:  # the message is what a person sees
        return ("error", type(exc).__name__, str(exc))
    return ("value", type(result), result)


@pytest.mark.parametrize(("name", "value"), [(name, value) for name, values in VALUES.items() for value in values])
def test_plain_coercion_gives_what_typer_gives(name: str, value) -> None:
    command, params = _command()
    param = params[name]
    ctx = typer.Context(command)
    assert plain(param)
    typers = build_runtime_param(param.type_descriptor)
    ours = PlainCoercion(param.type_descriptor, lambda: build_runtime_param(param.type_descriptor))
    assert outcome(ours, value, param, ctx) == outcome(typers, value, param, ctx)


def test_lists_keep_typers_coercion() -> None:
    _, params = _command()
    assert not plain(params["ids"])


def test_ask_parses_its_options_without_pydantic(tmp_path: Path) -> None:
    script = (
        "import sys\n"
        "from ripplecli.cli import app\n"
        "try:\n"
        f"    app(['ask', 'q', '--k', '5', '--rounds', '2', '--no-trace', '--store', {str(tmp_path / 'none')!r}])\n"
        "except SystemExit as exit:\n"
        "    print(exit.code, 'pydantic' in sys.modules)\n"
    )
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert run.stdout.split() == ["2", "False"], run.stderr  # the missing store's one-line error, no pydantic
    assert "no ripple store here" in run.stderr
