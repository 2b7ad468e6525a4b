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


# What the command line may import of ripple: the library face, the evaluation, the error types, the trace it renders,
# its own modules, the package (its version), and the MCP server, the other shell over the library that `ripple mcp`
# starts (the library cannot start it: the server imports the library).
CLI_MAY_IMPORT = (
    "ripplecli.api",
    "ripplecli.eval",
    "ripplecli.errors",
    "ripplecli.trace",
    "ripplecli.cli",
    "ripplecli.__version__",
    "ripplecli.mcp_server",
)


def test_the_command_line_imports_only_the_library_face():
    """`cli/` parses options, calls the library, prints: encoder, formats, models and config are behind `api`."""
    found = {
        f"{path.name}: {name}"
        for path in sorted((PACKAGE / "cli").glob("*.py"))
        for name in imported(path)
        if within(name, ("ripplecli",)) and not within(name, CLI_MAY_IMPORT)
    }
    assert not found
