"""Which part of ripple may import which: read from every module's import statements (ast), nothing run."""

from __future__ import annotations

import ast
from pathlib import Path

import ripplecli

PACKAGE = Path(ripplecli.__file__).parent
WRITE_PATH = (
    "ripplecli.extract",
    "ripplecli.ingest",
    "ripplecli.graph",
    "ripplecli.formats",
    "ripplecli.early_encoding",
)


def imported(path: Path) -> set[str]:
    """Every module a file imports, at its top or inside a function (a relative import made absolute)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{path}: a relative import"
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def within(name: str, modules: tuple[str, ...]) -> bool:
    """Whether an imported name is one of `modules` or inside one."""
    return any(name == m or name.startswith(m + ".") for m in modules)


def test_the_read_path_imports_no_write_path_module():
    """Recall reads what ingest wrote; the words both need (time words, pronouns) live in neutral modules."""
    found = {
        f"{path.name}: {name}"
        for path in sorted((PACKAGE / "recall").glob("*.py"))
        for name in imported(path)
        if within(name, WRITE_PATH)
    }
    assert not found
