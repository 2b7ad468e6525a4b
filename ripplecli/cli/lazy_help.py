"""`ripple --help` without rich's Markdown and Traceback modules, which typer's help renderer imports but ripple's
help never uses (its help is rich markup, and pretty tracebacks are off): ~70 ms, a third of the command.

`install()` puts a finder first on `sys.meta_path` that waits for `typer.rich_utils`. While that one module runs,
`rich.markdown` and `rich.traceback` are placeholder modules whose `Markdown` and `Traceback` are stand-in classes;
the first real use of either (a markdown help mode, a pretty traceback) imports the real module and hands it on.
Afterwards the placeholders leave `sys.modules`, so any other import of those modules gets the real ones.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import sys
import types
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the loader is checked as importlib's Loader; at run time it is a plain class (see _Loader)
    from importlib.abc import Loader as _LoaderBase
else:
    _LoaderBase = object

RENDERER = "typer.rich_utils"
DEFERRED = {"rich.markdown": "Markdown", "rich.traceback": "Traceback"}


class _StandIn(type):
    """The metaclass of a stand-in: class attributes (`Traceback.from_exception`) come from the real class."""

    def __getattr__(cls, attr: str) -> Any:
        return getattr(cls.real(), attr)


def stand_in(module: str, name: str) -> type:
    """A class that imports `module` on first use and builds the real `name` instead of itself."""

    def real() -> type:
        return getattr(importlib.import_module(module), name)

    def build(_cls: type, *args: Any, **kwargs: Any) -> Any:
        return real()(*args, **kwargs)

    return _StandIn(name, (), {"__new__": build, "real": staticmethod(real), "__module__": module})


class _Loader(_LoaderBase):
    """Runs the renderer's module with the placeholders in `sys.modules`, then takes them out again (a plain class:
    importing importlib.abc would cost more than it saves)."""

    def __init__(self, loader: Any) -> None:
        self._loader = loader

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType | None:
        return self._loader.create_module(spec)

    def exec_module(self, module: types.ModuleType) -> None:
        placeholders = {}
        for name, attr in DEFERRED.items():
            if name not in sys.modules:
                placeholders[name] = types.ModuleType(name)
                setattr(placeholders[name], attr, stand_in(name, attr))
        sys.modules.update(placeholders)
        try:
            self._loader.exec_module(module)
        finally:
            for name, placeholder in placeholders.items():
                if sys.modules.get(name) is placeholder:
                    del sys.modules[name]


class _Finder:
    """Finds the renderer as the path finder would, then wraps its loader; steps aside after that one import."""

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if fullname != RENDERER:
            return None
        uninstall()
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is not None and spec.loader is not None:
            spec.loader = _Loader(spec.loader)
        return spec


def install() -> None:
    """Defer the two modules for the renderer's import, unless it is already imported or typer is not the version
    this was written for (ripplecli.cli.pins)."""
    from ripplecli.cli.pins import as_written

    if as_written() and RENDERER not in sys.modules and not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder())


def uninstall() -> None:
    """Remove the finder (it serves one import)."""
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, _Finder)]
