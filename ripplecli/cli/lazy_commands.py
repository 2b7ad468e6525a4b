"""Subcommands built on first use: typer turns every registered command into a click command (each parameter's
signature read, its annotations evaluated) before it runs any, a third of `ripple --help` and work every
`ripple ask` paid for fifteen commands it never runs.

`group(COMMANDS)` is the root group's class. Its commands are a `LazyCommands` mapping: a name is all it holds until
that command is looked up (to run it, complete it or show its help), and then typer builds it from the same
`CommandInfo` / `TyperInfo` that `app.command(name)` / `app.add_typer(app, name=name)` would have registered. The
root help lists each command from its docstring (or its sub-app's help) alone, without building it.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Iterator, MutableMapping
from typing import Any

import typer
from typer.core import TyperCommand, TyperGroup
from typer.main import get_command_from_info, get_group_from_info, solve_typer_info_defaults
from typer.models import CommandInfo, TyperInfo


def target(path: str) -> Any:
    """The command function or sub-app named by "module:attr"."""
    module, attr = path.split(":")
    return getattr(importlib.import_module(module), attr)


def info_of(name: str, obj: Any) -> CommandInfo | TyperInfo:
    """What typer registers for `obj` under `name` (a function or a sub-app), made by typer's own registration."""
    holder = typer.Typer()
    if isinstance(obj, typer.Typer):
        holder.add_typer(obj, name=name)
        return holder.registered_groups[0]
    holder.command(name)(obj)
    return holder.registered_commands[0]


class LazyCommands(MutableMapping):
    """name -> click command of one group, each built by typer when first looked up."""

    def __init__(self, paths: dict[str, str], group: TyperGroup) -> None:
        self._paths = paths
        self._group = group
        self._built: dict[str, Any] = {}

    def info(self, name: str) -> CommandInfo | TyperInfo:
        """The registration of one command (its module imported, nothing built)."""
        return info_of(name, target(self._paths[name]))

    def __getitem__(self, name: str) -> Any:
        if name not in self._built:
            if name not in self._paths:
                raise KeyError(name)
            self._built[name] = build(self.info(name), self._group)
        return self._built[name]

    def __setitem__(self, name: str, command: Any) -> None:
        self._built[name] = command

    def __delitem__(self, name: str) -> None:
        if name not in self:
            raise KeyError(name)
        self._paths.pop(name, None)
        self._built.pop(name, None)

    def __contains__(self, name: object) -> bool:
        return name in self._paths or name in self._built

    def __iter__(self) -> Iterator[str]:
        return iter({**dict.fromkeys(self._paths), **dict.fromkeys(self._built)})

    def __len__(self) -> int:
        return len(set(self._paths) | set(self._built))

    def built(self, name: str) -> bool:
        """Whether a command has been built already."""
        return name in self._built


def build(info: CommandInfo | TyperInfo, group: TyperGroup) -> Any:
    """The click command typer builds for one registration, with the root group's settings."""
    if isinstance(info, TyperInfo):
        return get_group_from_info(
            info,
            pretty_exceptions_short=PRETTY_EXCEPTIONS_SHORT,
            suggest_commands=group.suggest_commands,
            rich_markup_mode=group.rich_markup_mode,
        )
    return get_command_from_info(
        info, pretty_exceptions_short=PRETTY_EXCEPTIONS_SHORT, rich_markup_mode=group.rich_markup_mode
    )


PRETTY_EXCEPTIONS_SHORT = True  # typer's default, which the root app keeps (get_command passes the app's value)


def listed(info: CommandInfo | TyperInfo) -> Any:
    """A command as the root help lists it: name, help, short help and flags, taken as typer takes them."""
    solved: TyperInfo | CommandInfo
    kind: type[TyperGroup] | type[TyperCommand]
    if isinstance(info, TyperInfo):
        solved = solve_typer_info_defaults(info)
        kind, name, text = TyperGroup, solved.name, solved.help
    else:
        solved, kind, name = info, TyperCommand, info.name
        text = inspect.getdoc(info.callback) if info.help is None else inspect.cleandoc(info.help)
    return kind(
        name=name,
        help=text,
        short_help=solved.short_help,
        hidden=solved.hidden,
        deprecated=solved.deprecated,
        rich_help_panel=solved.rich_help_panel,
    )


def group(paths: dict[str, str]) -> type[TyperGroup]:
    """The root group class whose commands are `paths` (name -> "module:attr", in help order), built on first use."""

    class LazyGroup(TyperGroup):
        """A TyperGroup whose commands typer builds when they are used; its help lists them unbuilt. (`ctx: Any`:
        the base class takes the Context of the click that typer vendors, a private module.)"""

        def __init__(self, **attrs: Any) -> None:
            super().__init__(**attrs)
            self.commands = LazyCommands(dict(paths), self)
            self._listing = False

        def list_commands(self, ctx: Any) -> list[str]:
            """The names in registration order, nothing built."""
            return list(self.commands)

        def get_command(self, ctx: Any, cmd_name: str) -> Any:
            """The built command; while the help lists commands, a listing of an unbuilt one instead."""
            commands = self.commands
            if self._listing and isinstance(commands, LazyCommands) and not commands.built(cmd_name):
                return listed(commands.info(cmd_name)) if cmd_name in commands else None
            return commands.get(cmd_name)

        def format_help(self, ctx: Any, formatter: Any) -> None:
            """The help page, listing the commands without building them."""
            self._listing = True
            try:
                super().format_help(ctx, formatter)
            finally:
                self._listing = False

    return LazyGroup
