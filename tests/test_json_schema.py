"""`ripple ask --json` keeps the schema written in docs/json.md: every mode's document checked against it."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ripplecli.api import Memory
from ripplecli.cli import app
from ripplecli.recall.modes import ASK_MODES, MODES

DOC = Path(__file__).resolve().parent.parent / "docs" / "json.md"
ITEM = re.compile(
    r"^(?P<key>\w+)(?P<optional>\?)?(?:\[(?P<list>\w+)\]|\{(?P<object>\w+)\}|\{\w+: \[(?P<map>\w+)\]\})?$"
)


def schema() -> dict[str, list[re.Match[str]]]:
    """The ```schema block of docs/json.md: object name -> its key items."""
    block = DOC.read_text(encoding="utf-8").split("```schema\n", 1)[1].split("```", 1)[0]
    objects = {}
    for line in block.strip().splitlines():
        name, items = line.split(": ", 1)
        parsed = [ITEM.match(item) for item in items.split(", ")]
        assert all(parsed), line
        objects[name] = parsed
    return objects


def check(value: object, name: str, objects: dict[str, list[re.Match[str]]], where: str) -> None:
    """`value` has exactly the keys `name` allows (all required ones), and so does everything nested."""
    assert isinstance(value, dict), where
    items = objects[name]
    allowed = {m["key"] for m in items}
    required = {m["key"] for m in items if not m["optional"]}
    assert required <= set(value) <= allowed, (where, sorted(set(value) ^ allowed))
    for m in items:
        inner = value.get(m["key"])
        if inner is None:
            continue
        if m["object"]:
            check(inner, m["object"], objects, f"{where}.{m['key']}")
        for i, row in enumerate(inner if m["list"] else []):
            check(row, m["list"], objects, f"{where}.{m['key']}[{i}]")
        for group, rows in inner.items() if m["map"] else []:
            for i, row in enumerate(rows):
                check(row, m["map"], objects, f"{where}.{m['key']}.{group}[{i}]")


def test_the_schema_block_parses() -> None:
    objects = schema()
    assert {"document", "evidence", "trace", "round", "plan", "support"} <= set(objects)


@pytest.mark.parametrize("mode", list(MODES))
def test_every_mode_writes_the_documented_schema(store: Path, mode: str) -> None:
    """`ripple ask --json` in the modes it offers; the evaluation's ablations write the same document (the API's)."""
    question = "Where did Ana go hiking with Maya?"
    if mode in ASK_MODES:
        args = ["ask", question, "--mode", mode, "--rounds", "2", "--json"]
        result = CliRunner().invoke(app, [*args, "--answer", "extractive", "--store", str(store)])
        assert result.exit_code == 0, result.output
        document = json.loads(result.stdout)
    else:
        with Memory(store, read_only=True, create=False) as memory:
            result = memory.recall(question, mode=mode, rounds=2, answer="extractive")
        document = json.loads(json.dumps(result.to_dict(), default=str))  # as print_json writes it
    check(document, "document", schema(), "document")


def test_an_empty_store_writes_the_documented_schema(tmp_path: Path) -> None:
    Memory(tmp_path / "empty").close()
    result = CliRunner().invoke(app, ["ask", "anything?", "--json", "--store", str(tmp_path / "empty")])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    check(document, "document", schema(), "document")
    assert document["trace"]["note"] and "seeds" not in document["trace"]
