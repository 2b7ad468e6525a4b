"""Option values without pydantic: typer (0.29) coerces every parameter through a pydantic TypeAdapter, and
importing pydantic costs about 75 ms of every command, a tenth of a cold `ripple ask`.

A str, int, bool or Path parameter needs none of it. `install()` gives such parameters a coercion that takes the
values pydantic would take unchanged (a str; a bool; an int or a string of digits; a path, through typer's own
path checks; None, which typer passes for an unset flag like --install-completion) and hands anything else (an
int written "1e3" or " 3", bytes, a flag given as text) to typer's own coercion, so every accepted value is the
same and every error message is still typer's. Other parameters (lists, enums, ranges, custom parsers) keep
typer's coercion. When typer's internals are not the ones this was written for, it does nothing.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

PLAIN_INT = re.compile(r"-?[0-9]{1,18}")  # what int() and pydantic read alike, far from any size limit
SLOW = object()  # "not a plain value: ask typer"


class PlainCoercion:
    """Coercion of one str, int, bool or Path parameter; values that are not plain go to typer's coercion."""

    def __init__(self, descriptor: Any, typer_coercion: Callable[[], Any]) -> None:
        self.kind = descriptor.annotation
        self.info = descriptor.parameter_info
        self._typer_coercion = typer_coercion
        self._typer: Any = None

    def coerce(self, value: Any, param: Any, ctx: Any) -> Any:
        """The value as typer's coercion would give it."""
        if value is None:
            return None
        plain = self._plain(value, param, ctx)
        if plain is not SLOW:
            return plain
        if self._typer is None:
            self._typer = self._typer_coercion()
        return self._typer.coerce(value, param=param, ctx=ctx)

    def _plain(self, value: Any, param: Any, ctx: Any) -> Any:
        """The coerced value, or SLOW."""
        if self.kind is str:
            return value if isinstance(value, str) else SLOW
        if self.kind is bool:
            return value if isinstance(value, bool) else SLOW
        if self.kind is int:
            if isinstance(value, int) and not isinstance(value, bool):
                return value
            return int(value) if isinstance(value, str) and PLAIN_INT.fullmatch(value) else SLOW
        return self._path(value, param, ctx)

    def _path(self, value: Any, param: Any, ctx: Any) -> Any:
        """typer's own path checks (exists, readable, …) on a value already made a Path."""
        from typer._param_types import coerce_cli_path

        path_type = self.info.path_type or self.kind
        if isinstance(value, str) and value:
            value = path_type(value)
        if not isinstance(value, path_type):
            return SLOW
        return coerce_cli_path(value, self.info, path_type=path_type, param=param, ctx=ctx)


def plain(param: Any) -> bool:
    """Whether a parameter takes one str, int, bool or Path value with no parser, range or file type of its own."""
    descriptor = param.type_descriptor
    info = descriptor.parameter_info
    if param.multiple or param.nargs != 1 or descriptor.file_annotation is not None:
        return False
    if getattr(info, "parser", None) is not None or getattr(info, "click_type", None) is not None:
        return False
    if descriptor.annotation is int:
        return info.min is None and info.max is None
    if descriptor.annotation is Path:
        return getattr(info, "path_type", None) in (None, Path)
    return descriptor.annotation in (str, bool)


def install() -> None:
    """Route plain parameters around pydantic (see the module docstring); a no-op on other typer versions."""
    from ripplecli.cli.pins import as_written

    if not as_written():
        return
    try:
        from typer._coercion import build_runtime_param
        from typer.core import _TyperParameter as param_class
    except ImportError:
        return
    typers_own = getattr(param_class, "get_runtime_param", None)
    if typers_own is None or getattr(typers_own, "plain_first", False):
        return

    def get_runtime_param(self: Any) -> Any:
        if getattr(self, "_runtime_param", None) is None and plain(self):
            descriptor = self.type_descriptor
            self._runtime_param = PlainCoercion(descriptor, lambda: build_runtime_param(descriptor))
        return typers_own(self)

    get_runtime_param.plain_first = True  # type: ignore[attr-defined]  # the mark that it is patched once
    param_class.get_runtime_param = get_runtime_param  # type: ignore[method-assign]  # the patch this module is
