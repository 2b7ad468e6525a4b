"""The documentation cannot drift from the code: every registered chat format is in `ripple ingest --help` and in
the README's table of formats, and every relative link in the README, docs/ and bench/README.md resolves (to a file,
and a `#anchor` to a heading of it)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ripplecli.cli import app
from ripplecli.registry import FORMATS

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md")), ROOT / "bench" / "README.md"]
FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^()\s]+)\)")


def _readme_section(title: str) -> str:
    """The README's text from the heading `## title` to the next heading of that level."""
    text = README.read_text()
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else len(text)]


def _readme_formats() -> set[str]:
    """The formats the README's table names in bold in its first column."""
    rows = [line for line in _readme_section("Chat formats").splitlines() if line.startswith("| **")]
    return {name for row in rows for name in re.findall(r"\*\*([\w-]+)\*\*", row.split("|")[1])}


@pytest.fixture(scope="module")
def ingest_help() -> str:
    """`ripple ingest --help` on a wide terminal."""
    result = CliRunner().invoke(app, ["ingest", "--help"], env={"COLUMNS": "200"}, prog_name="ripple")
    assert result.exit_code == 0, result.output
    return result.stdout


@pytest.mark.parametrize("name", list(FORMATS))
def test_every_format_has_a_line_in_ingest_help(name: str, ingest_help: str) -> None:
    line = rf"^\s*{re.escape(name)}\s{{2,}}{re.escape(FORMATS[name].summary)}\s*$"
    assert re.search(line, ingest_help, re.MULTILINE), ingest_help


@pytest.mark.parametrize("name", list(FORMATS))
def test_every_format_is_in_the_readme_table(name: str) -> None:
    assert name in _readme_formats()


def test_the_readme_table_names_only_registered_formats() -> None:
    assert _readme_formats() <= set(FORMATS)


def _prose(page: Path) -> str:
    """A markdown page without its fenced code blocks and inline code (a `[x](y)` there is no link)."""
    return re.sub(r"`[^`\n]*`", "", FENCE.sub("", page.read_text(encoding="utf-8")))


def _anchors(page: Path) -> set[str]:
    """The `#anchors` GitHub gives a page's headings: lower case, punctuation dropped, spaces as hyphens, repeats
    numbered."""
    found: set[str] = set()
    for title in re.findall(r"^#{1,6}\s+(.+?)\s*#*$", FENCE.sub("", page.read_text(encoding="utf-8")), re.MULTILINE):
        slug = re.sub(r"[^\w\- ]", "", title.strip().lower()).replace(" ", "-")
        anchor, n = slug, 0
        while anchor in found:
            n += 1
            anchor = f"{slug}-{n}"
        found.add(anchor)
    return found


def _relative_links(page: Path) -> list[str]:
    """Every link of a documentation page that points inside the repository."""
    return [target for target in LINK.findall(_prose(page)) if not re.match(r"[a-z][a-z0-9+.-]*:", target)]


def _broken_links(page: Path) -> list[str]:
    """The page's relative links whose file is missing, or whose `#anchor` names no heading of a markdown file."""
    broken = []
    for target in _relative_links(page):
        path, _, anchor = target.partition("#")
        resolved = (page.parent / path).resolve() if path else page
        if not resolved.exists():
            broken.append(f"{target}: no such file")
        elif anchor and resolved.suffix == ".md" and anchor not in _anchors(resolved):
            broken.append(f"{target}: no heading #{anchor} in {resolved.name}")
    return broken


def test_the_documentation_pages_exist() -> None:
    for page in ("formats", "recall", "method", "evaluation", "models", "own-your-data", "mcp-and-api", "json"):
        assert (ROOT / "docs" / f"{page}.md").is_file(), page
    assert all(page.is_file() for page in PAGES)


def test_the_readme_fits_five_minutes() -> None:
    assert len(README.read_text(encoding="utf-8").splitlines()) <= 250


def test_the_pages_have_links_to_check() -> None:
    """The link test below looks at something: the README links every page of docs/."""
    linked = {target.split("#")[0] for target in _relative_links(README)}
    assert {f"docs/{page.name}" for page in PAGES if page.parent == ROOT / "docs"} <= linked


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_every_relative_link_resolves(page: Path) -> None:
    assert not _broken_links(page)


def test_a_broken_link_is_found(tmp_path: Path) -> None:
    """A missing file, a missing heading, and what is not a link (code, a web address) left alone."""
    (tmp_path / "other.md").write_text("# Other\n\n## Sessions as units (`ripple+sessions`, opt-in)\n\n# Other\n")
    page = tmp_path / "page.md"
    page.write_text(
        "# Page\n\n[a](other.md#sessions-as-units-ripplesessions-opt-in) [b](other.md#nowhere) [c](gone.md)\n"
        "[a2](other.md#other-1)\n"
        "[d](#page) [e](#missing) [f](https://example.org/x.md) `[g](code.md)`\n\n```\n[h](fenced.md)\n```\n"
    )
    assert _broken_links(page) == [
        "other.md#nowhere: no heading #nowhere in other.md",
        "gone.md: no such file",
        "#missing: no heading #missing in page.md",
    ]


def test_the_anchors_are_github_s() -> None:
    """The slug rule on headings of the kind the docs use (code, punctuation, a plus sign, a number)."""
    page = ROOT / "docs" / "method.md"
    assert "4-cable-antecedent-links-graphcablepy-recallcablepy" in _anchors(page)
    assert "sessions-as-units-ripplesessions-opt-in" in _anchors(page)
