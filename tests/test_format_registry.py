"""A new chat reader is one module and one registry entry: throwaway formats registered here (as tests register a
fake encoder) are detected in a file, a zip and a folder, chosen by --format and listed by `ripple ingest --help`,
with no change to the loader."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path, PurePosixPath

import pytest

from ripplecli.formats import read_conversations
from ripplecli.formats.detect import detect_format
from ripplecli.formats.fields import SURE, ChatFormat, Claim, Node, keyed
from ripplecli.formats.load import Member, check_format, read_input
from ripplecli.formats.text import ExportFolder, TextDoc
from ripplecli.model import Conversation, Session, Turn
from ripplecli.registry import FORMATS, FormatEntry

FIXTURES = Path(__file__).parent / "fixtures" / "formats"
MEMO_TEXT = "MEMO\nAna: the boat leaves at nine\nBen: I'll bring the map\n"


# --- a text format: a memo starts with the line "MEMO" ---------------------------------------------------
def parse_memo(doc: TextDoc, source: str) -> list[Conversation]:
    """Each "speaker: text" line after the first is a turn."""
    lines = [line.split(": ", 1) for line in doc.text.splitlines()[1:] if ": " in line]
    turns = [Turn(f"m{number}", speaker, text) for number, (speaker, text) in enumerate(lines, start=1)]
    return [Conversation(f"memo-{doc.stem}", [Session("1", None, turns)])]


def detect_memo(doc: TextDoc) -> float:
    """Sure of a file whose first line is MEMO."""
    return SURE if doc.text.startswith("MEMO\n") else 0.0


MEMO = ChatFormat(parse_memo, detect_memo, reads="text", label="a memo")


# --- a JSON format: {"jots": [{"who": ..., "said": ...}]} --------------------------------------------------
def parse_jots(data: object, source: str) -> list[Conversation]:
    """One conversation of the jots in order."""
    jots = Node(data).at("jots").items()
    turns = [Turn(f"j{n}", jot.at("who").text(), jot.at("said").text()) for n, jot in enumerate(jots, start=1)]
    return [Conversation(f"jots-{PurePosixPath(source).stem}", [Session("1", None, turns)])]


JOTS = ChatFormat(parse_jots, keyed("jots"), label="a jots file")


# --- a folder export: diary.json names the day files beside it ---------------------------------------------
def detect_diary(paths: list[str]) -> Claim | None:
    """The JSON files in the folder that holds diary.json."""
    index = next((path for path in paths if PurePosixPath(path).name == "diary.json"), None)
    if index is None:
        return None
    folder = str(PurePosixPath(index).parent).removeprefix(".")
    return Claim(frozenset(p for p in paths if p.endswith(".json") and p.startswith(folder)))


def parse_diary(tree: ExportFolder, source: str) -> list[Conversation]:
    """Every day file's entries, in the index's order."""
    index = next(path for path in tree.members if PurePosixPath(path).name == "diary.json")
    folder = PurePosixPath(index).parent
    days = Node(tree.members[index]).at("days").items()
    turns = [Turn(day.text(), "me", str(tree.members[str(folder / f"{day.text()}.json")])) for day in days]
    return [Conversation("diary", [Session("1", None, turns)])]


DIARY = ChatFormat(parse_diary, detect_diary, reads="tree", label="a diary export")


@pytest.fixture
def memo(monkeypatch: pytest.MonkeyPatch) -> None:
    """Register the throwaway formats, the way tests register a fake encoder."""
    monkeypatch.setitem(FORMATS, "memo", FormatEntry("test_format_registry:MEMO", "a memo .txt (MEMO, then lines)"))
    monkeypatch.setitem(FORMATS, "jots", FormatEntry("test_format_registry:JOTS", "a jots .json", priority=95))
    monkeypatch.setitem(FORMATS, "diary", FormatEntry("test_format_registry:DIARY", "a diary export folder"))


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_a_registered_text_format_is_detected_before_notes(tmp_path: Path, memo: None) -> None:
    (conversation,) = read_conversations(_write(tmp_path / "boat.txt", MEMO_TEXT))
    assert conversation.conversation_id == "memo-boat"
    assert [t.speaker for t in conversation.sessions[0].turns] == ["Ana", "Ben"]


def test_unregistered_the_same_file_is_a_note(tmp_path: Path) -> None:
    (conversation,) = read_conversations(_write(tmp_path / "boat.txt", MEMO_TEXT))
    assert conversation.conversation_id == "note-boat.txt"


def test_a_registered_json_format_is_detected_and_its_priority_breaks_ties(tmp_path: Path, memo: None) -> None:
    jots = {"jots": [{"who": "Ana", "said": "see you at the pier"}]}
    assert detect_format(jots) == "jots"
    assert detect_format({**jots, "sessions": []}) == "jots"  # its priority (95) is above native's
    (conversation,) = read_conversations(_write(tmp_path / "pier.json", json.dumps(jots)))
    assert conversation.conversation_id == "jots-pier"


def test_a_registered_format_is_read_in_a_folder_and_a_zip(tmp_path: Path, memo: None) -> None:
    folder = tmp_path / "project"
    _write(folder / "boat.txt", MEMO_TEXT)
    _write(folder / "README.md", "# Project\n\nHow to build it.\n")
    _write(folder / "pier.json", json.dumps({"jots": [{"who": "Ana", "said": "see you at the pier"}]}))
    archive = tmp_path / "project.zip"
    with zipfile.ZipFile(archive, "w") as out:
        for path in sorted(folder.iterdir()):
            out.write(path, path.name)
    expected = [Member("README.md", "notes"), Member("boat.txt", "memo"), Member("pier.json", "jots")]
    for given in (folder, archive):
        assert read_input(given).members == expected
    only = read_input(folder, "memo")
    assert [c.conversation_id for c in only.conversations] == ["memo-boat"]


def test_a_registered_folder_export_claims_only_its_own_files(tmp_path: Path, memo: None) -> None:
    folder = tmp_path / "exports"
    _write(folder / "diary" / "diary.json", json.dumps({"days": ["2024-03-01", "2024-03-02"]}))
    _write(folder / "diary" / "2024-03-01.json", '"sailed"')
    _write(folder / "diary" / "2024-03-02.json", '"rested"')
    _write(folder / "diary" / "cover.md", "My diary.\n")
    _write(folder / "beside.json", '{"beside": true}')  # not the diary's, so not read with it: read on its own
    reading = read_input(folder)
    assert [t.text for t in reading.conversations[0].sessions[0].turns] == ["sailed", "rested"]
    assert [m for m in reading.members if m.format != "diary"] == [
        Member("beside.json", None, "in no format ripple reads"),
        Member("diary/cover.md", "notes"),  # no JSON, so not the diary's: a note
    ]


def test_an_explicit_registered_format_is_accepted(tmp_path: Path, memo: None) -> None:
    check_format("memo")
    (conversation,) = read_conversations(_write(tmp_path / "boat.md", MEMO_TEXT), "memo")
    assert conversation.conversation_id == "memo-boat"


HELP_SCRIPT = """
import sys
sys.path.insert(0, {tests!r})
from ripplecli.registry import FORMATS, FormatEntry
FORMATS["memo"] = FormatEntry("test_format_registry:MEMO", "a memo .txt (MEMO, then lines)")
from ripplecli.cli import app
try:
    app(["ingest", "--help"], prog_name="ripple")
except SystemExit:
    pass
print(sorted(m for m in sys.modules if m.startswith("ripplecli.formats") or m == "test_format_registry"))
"""


def test_ingest_help_lists_a_registered_format_without_importing_any_reader() -> None:
    script = HELP_SCRIPT.format(tests=str(Path(__file__).parent))
    env = {**os.environ, "COLUMNS": "200"}
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, env=env)
    lines = run.stdout.splitlines()
    assert any(line.split() == ["memo", "a", "memo", ".txt", "(MEMO,", "then", "lines)"] for line in lines)
    assert "longmemeval, memo." in run.stdout  # and among the --format choices
    assert lines[-1] == "[]"
