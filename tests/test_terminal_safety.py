"""Chat text is shown, never obeyed: rich markup, emoji codes and terminal escapes in a chat print as text."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from chats import new_memory, run
from rich.console import ColorSystem

from ripplecli.cli import common

MARKUP_CHAT = Path(__file__).parent / "fuzz" / "ok_native_rich_markup.json"
RAW = " \x1b[5mRAW BLINK\x1b[0m \x1b]8;;http://evil.example\x07hidden link\x1b]8;;\x07 \x9b6n"
# What must show literally wherever the text is printed (a chat turn, the conversation and session ids).
LITERAL = ["[link=http://evil.example]my photos[/link]", "[/unclosed]", "[blink]this[/blink]", "[bold red]now"]
SGR = re.compile(r"\x1b\[([0-9;]*)m")
OWN = re.compile(r"\x1b\[(?:[0-9;]*m|\?25[lh]|2K|1A|1G)")  # styles; the progress bar's cursor and line moves


@pytest.fixture
def markup_store(tmp_path, fake_settings, fake_extractor, monkeypatch) -> tuple[Path, list[int]]:
    """The markup chat ingested, then raw escape bytes written into turns and memories (as an import could)."""
    monkeypatch.setattr(common.console, "_width", 400)  # no folding: literal markup stays on one line
    store = tmp_path / "store"
    with new_memory(store, fake_settings) as memory:
        assert memory.ingest(MARKUP_CHAT).memories == 3
        memory.store.con.execute("UPDATE sources SET text = text || ?", [RAW])
        memory.store.con.execute("UPDATE memories SET restatement = restatement || ?", [RAW])
        ids = [r[0] for r in memory.store.con.execute("SELECT memory_id FROM memories ORDER BY 1").fetchall()]
    return store, ids


def _commands(store: Path, ids: list[int], tmp_path: Path) -> list[list[str]]:
    """Every command that prints stored or chat text, in text and JSON form."""
    s = ["--store", str(store)]
    before, after = _reports(tmp_path)
    shows = [["show", f"m{i}", *s] for i in ids]
    return [
        ["ingest", str(MARKUP_CHAT), *s],
        ["ask", "[bold red]Alarm at Harbor Grill [/unclosed] [blink]?", "--answer", "extractive", *s],
        ["ask", "What did [link=http://evil.example]Mallory[/link] see?", "--no-trace", "--answer", "extractive", *s],
        ["ask", "What did Mallory see?", "--json", *s],
        ["memories", "list", *s],
        ["memories", "list", "--json", *s],
        ["memories", "search", "[blink]photos [/unclosed]", *s],
        ["memories", "search", "photos", "--json", *s],
        *shows,
        ["show", f"m{ids[0]}", "--json", *s],
        ["graph", "stats", *s],
        ["doctor", *s],
        ["export", *s],
        ["eval", "compare", str(before), str(after)],
        ["show", "[blink]m1\x1b[5m", *s],  # an error quoting what the user typed
        ["forget", f"m{ids[-1]}", "--yes", *s],
    ]


def _reports(tmp_path: Path) -> tuple[Path, Path]:
    """Two eval reports whose mode, category and flipped question are markup."""
    metrics = {"[blink]mode": {"overall": {"recall@10": 0.5, "full@10": 0.5, "recall@30": 0.5, "full@30": 0.5}}}
    question = {"conversation": "[bold]c", "index": 0, "category": "[/x]", "question": "[link=http://evil.example]q"}
    paths = []
    question |= {"gold_answer": "[bold red]gold", "answer": "[link=http://evil.example]answer\x1b[5m"}
    for name, turns, f1 in (("before", [], 0.0), ("after", [["D1:1"]], 1.0)):
        record = {**question, "mode": "[blink]mode", "gold": ["D1:1"], "source_turns": turns, "f1": f1}
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps({"metrics": metrics, "results": [record]}), encoding="utf-8")
        paths.append(path)
    return paths[0], paths[1]


def _outputs(store: Path, ids: list[int], tmp_path: Path) -> dict[str, str]:
    """Each command's stdout + stderr."""
    outputs = {}
    for command in _commands(store, ids, tmp_path):
        result = run(*command)
        assert result.exit_code in (0, 2), (command, result.output, result.exception)
        outputs[" ".join(command[:3])] = result.stdout + result.stderr
    return outputs


def test_no_command_lets_chat_text_drive_the_terminal(markup_store, tmp_path):
    store, ids = markup_store
    outputs = _outputs(store, ids, tmp_path)
    for command, output in outputs.items():
        assert "\x1b" not in output and "\x9b" not in output and "\x07" not in output, (command, output)
    for command in [f"show m{i} --store" for i in ids[:1]] + ["memories list --store"]:
        assert all(piece in outputs[command] for piece in LITERAL[:1]), outputs[command]
    shown = outputs[f"show m{ids[0]} --store"]
    assert all(piece in shown for piece in LITERAL), shown  # the source-turn cell and the restatement
    assert "\\x1b[5mRAW BLINK" in shown and ":warning:" in shown  # escapes shown as text, no emoji
    compared = outputs["eval compare " + str(tmp_path / "before.json")]
    assert "[link=http://evil.example]q" in compared and "answer gained" in compared and "\\x1b[5m" in compared


def test_on_a_terminal_only_ripples_own_styles_are_emitted(markup_store, tmp_path, monkeypatch):
    """With colours on, the only escape sequences are ripple's own SGR styles: no blink, no hyperlink."""
    store, ids = markup_store
    for console in (common.console, common.err_console):
        monkeypatch.setattr(console, "_force_terminal", True)
        monkeypatch.setattr(console, "_color_system", ColorSystem.STANDARD)
    outputs = _outputs(store, ids, tmp_path)
    assert any(SGR.search(output) for output in outputs.values())  # the terminal really was on
    for command, output in outputs.items():
        rest = OWN.sub("", output)
        assert "\x1b" not in rest and "\x9b" not in rest, (command, rest)
        codes = {code for match in SGR.finditer(output) for code in match.group(1).split(";")}
        assert not codes & {"5", "6"}, (command, output)  # blink
    assert "[bold red]now" in SGR.sub("", outputs[f"show m{ids[0]} --store"])
