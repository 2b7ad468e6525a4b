"""DuckDB's engine without its Python layer, because every `ripple ask` is a new process that imports it.

The `duckdb` package is its C++ extension `_duckdb` plus a Python layer it re-exports it through (a relational
API built from dataclasses, its version read through importlib.metadata): on a 2-core machine `import duckdb`
cost ~75 ms against ~15 ms for the extension alone, a third of the cold ask's imports. The store uses only what
the extension itself provides (connect, the connection and its exceptions), so it imports that directly; an
install whose extension is named otherwise falls back to the package, which re-exports the same objects.
"""

from __future__ import annotations

try:
    import _duckdb as duckdb
except ImportError:  # pragma: no cover - DuckDB releases before the extension was split out as `_duckdb`
    import duckdb  # type: ignore[no-redef]  # the same module under its older name

__all__ = ["duckdb"]
