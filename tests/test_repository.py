"""What a contributor reads points inside the repository: no references to notes or data outside it."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUTSIDE = ("DESIGN §", "../shared", "shared/data/")  # notes and data that never ship with ripple
KEPT_OUT = {"tests", "bench", ".git", ".venv"}  # tests and benchmarks may find the dev data beside a checkout


def _read_by_people() -> list[Path]:
    """Code, help, docs, scripts and the README: every text file outside tests and bench."""
    suffixes = {".py", ".md", ".sh", ".toml", ".txt", ".json", ".yml", ".yaml"}
    return [
        path
        for path in ROOT.rglob("*")
        if path.is_file()
        and path.suffix in suffixes
        and not KEPT_OUT & set(path.relative_to(ROOT).parts)
        and "egg-info" not in str(path)
    ]


def test_no_reference_outside_the_repository() -> None:
    found = [
        f"{path.relative_to(ROOT)}: {needle}"
        for path in _read_by_people()
        for needle in OUTSIDE
        if needle in path.read_text(encoding="utf-8", errors="replace")
    ]
    assert not found, found


def test_the_docs_the_code_points_to_exist() -> None:
    for name in ("method.md", "evaluation.md", "json.md"):
        assert (ROOT / "docs" / name).is_file(), name


def test_sql_lives_in_the_store() -> None:
    """Only ripplecli/store/ talks to DuckDB: everything else asks it by a named function."""
    package = ROOT / "ripplecli"
    found = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in package.rglob("*.py")
        if "store" not in path.relative_to(package).parts[:1]
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if ".execute(" in line or ".con." in line or "store.con" in line
    ]
    assert not found, found
