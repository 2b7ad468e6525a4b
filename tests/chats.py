"""Small native-format chats and store helpers shared by the write-phase and data-ownership tests."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

from typer.testing import CliRunner

from ripplecli.api import Memory
from ripplecli.cli import app

TABLES = (
    "conversations",
    "sources",
    "memories",
    "provenance",
    "vectors",
    "memory_persons",
    "memory_locations",
    "memory_cues",
    "cue_forms",
    "edges",
    "ingest_runs",
    "failures",
)


def new_memory(path: Path, settings) -> Memory:
    """An empty store configured for the fake encoder."""
    memory = Memory(path)
    memory.configure(settings)
    return memory


def counts(memory: Memory) -> dict[str, int]:
    """Row count of every table: the fingerprint of a store's state."""
    return {table: memory.store.count(table) for table in TABLES}


def stored_counts(path: Path) -> dict[str, int]:
    """Row counts of every table of a store on disk, opened read-only."""
    with Memory(path, read_only=True) as memory:
        return counts(memory)


def one_error_line(result) -> str:
    """The single stderr line of a failed command."""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("ripple: error: ")
    return lines[0]


def session(number: int, turns: list[tuple[str, str]], day: datetime | None = None) -> dict:
    """A native-format session with explicit turn ids."""
    when = day or datetime(2023, 5, number, 18, 0)
    return {
        "id": f"s{number}",
        "timestamp": when.isoformat(),
        "turns": [{"id": f"D{number}:{i}", "speaker": s, "text": t} for i, (s, t) in enumerate(turns, start=1)],
    }


CHAT_1 = [
    ("Ana", "I went hiking with Maya in Denver yesterday."),
    ("Ben", "Nice, how was the weather up there?"),
    ("Ana", "Cold but sunny, Maya loved it."),
]
CHAT_2 = [
    ("Ben", "My sister Lena starts her new job on Monday."),
    ("Ana", "Tell Lena good luck from me!"),
    ("Ben", "Will do, she is nervous about the commute to Boulder."),
    ("Ana", "Boulder is not far, she will be fine."),
]
CHAT_3 = [("Ana", "Maya and I booked a cabin in Aspen for June."), ("Ben", "Aspen in June sounds lovely.")]


def write_chat(path: Path, sessions: list[dict], conversation_id: str = "ana-ben") -> Path:
    """A native chat file."""
    path.write_text(json.dumps({"conversation_id": conversation_id, "sessions": sessions}), encoding="utf-8")
    return path


def write_two_conversations(path: Path) -> Path:
    """One file holding two conversations (two write batches)."""
    documents = [
        {"conversation_id": "first", "sessions": [session(1, CHAT_1), session(2, CHAT_2)]},
        {"conversation_id": "second", "sessions": [session(1, CHAT_3), session(2, CHAT_1)]},
    ]
    path.write_text(json.dumps(documents), encoding="utf-8")
    return path


SECRET = "zqxwvut9137"
SECRET_CHAT = [("Ana", f"My locker code is {SECRET} at the gym."), ("Ben", "Noted, I will not tell Maya.")]


def run(*args: str, stdin: str | None = None):
    """The ripple command in process."""
    return CliRunner().invoke(app, list(args), input=stdin)
