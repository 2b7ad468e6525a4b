"""`ripple config`: read and change settings in the config file (the local model and its runtime options)."""

from __future__ import annotations

from typing import Annotated

import typer

from ripplecli.cli.common import JsonOption, console, print_json, printable, user_errors

config_app = typer.Typer(
    help="Settings in the config file ($RIPPLE_CONFIG or the user config dir): your name (me) and the local model.",
    no_args_is_help=True,
)


@config_app.command("set", context_settings={"ignore_unknown_options": True})  # values like -1
@user_errors
def config_set(
    key: Annotated[
        str, typer.Argument(help="e.g. me (your name), model.path, model.n_ctx, model.n_gpu_layers, model.dirs")
    ],
    value: Annotated[str, typer.Argument(help="The new value.")],
) -> None:
    """Set one key (checked before the file is written)."""
    from ripplecli.api import config_path, set_config

    data = set_config(key, value)
    console.print(printable(f"{key} = {data[key]!r}  ({config_path()})"), markup=False)


@config_app.command("unset")
@user_errors
def config_unset(key: Annotated[str, typer.Argument(help="The key to remove.")]) -> None:
    """Remove one key (back to its default)."""
    from ripplecli.api import config_path, set_config

    set_config(key, None)
    console.print(printable(f"{key} removed  ({config_path()})"), markup=False)


@config_app.command("get")
@user_errors
def config_get(key: Annotated[str, typer.Argument(help="The key to show.")]) -> None:
    """Print one key's value (nothing when unset)."""
    from ripplecli.api import config_value

    value = config_value(key)
    if value is not None:
        typer.echo(printable(value))


@config_app.command("show")
@user_errors
def config_show(as_json: JsonOption = False) -> None:
    """Every key that is set, and where the file is."""
    from ripplecli.api import config_path, load_config

    data = load_config()
    if as_json:
        print_json({"path": str(config_path()), "settings": data})
        return
    console.print(printable(f"config file: {config_path()}"), markup=False)
    for key, value in sorted(data.items()):
        console.print(printable(f"{key} = {value!r}"), markup=False)
