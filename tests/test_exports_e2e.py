"""A WhatsApp and a Telegram export end to end through the real encoder and spaCy: ingest, then ask."""

from __future__ import annotations

import json
import shutil
from datetime import datetime
from pathlib import Path

import pytest
from chats import run

from ripplecli.api import Memory

pytestmark = pytest.mark.slow
FIXTURES = Path(__file__).parent / "fixtures" / "formats"


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory, shared_cache: Path) -> Path:
    """One real store holding both exports, ingested through the CLI."""
    folder = tmp_path_factory.mktemp("exports")
    whatsapp = folder / "WhatsApp Chat with Maya.txt"
    shutil.copy(FIXTURES / whatsapp.name, whatsapp)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("RIPPLE_CACHE", str(shared_cache))
        result = run("ingest", str(whatsapp), str(FIXTURES / "telegram_chat.json"), "--store", str(folder / "s"))
        assert result.exit_code == 0, result.output
    return folder / "s"


def ask(store: Path, question: str) -> dict:
    """`ripple ask --json` without an answer."""
    result = run("ask", question, "--json", "--no-answer", "--k", "5", "--store", str(store))
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_whatsapp_turns_are_memories_with_their_own_time(exported: Path) -> None:
    with Memory(exported, read_only=True) as memory:
        rows = memory.store.con.execute(
            "SELECT s.session_id, s.speaker, s.text FROM sources s WHERE s.conversation_id LIKE 'whatsapp-maya-%' "
            "ORDER BY position"
        ).fetchall()
        memories = memory.store.count("memories")
    assert len(rows) == 7 and memories == 7 + 3
    assert rows[0] == ("2024-01-31", "Maya", "Morning! Did you book the train to Porto?")


def test_ask_finds_the_whatsapp_message(exported: Path) -> None:
    result = ask(exported, "What is the address of the hostel in Porto?")
    cited = [source for item in result["evidence"][:3] for source in item["sources"]]
    (address,) = [s for s in cited if s["text"] == "Rua da Ribeira 12, Porto"]
    assert address["speaker"] == "Alex" and address["session_id"] == "2024-01-31"
    assert datetime.fromisoformat(address["timestamp"]).date() == datetime(2024, 1, 31).date()


def test_ask_finds_the_telegram_message(exported: Path) -> None:
    result = ask(exported, "What did Nora sign for the apartment?")
    cited = [source for item in result["evidence"][:2] for source in item["sources"]]
    assert any(s["turn_id"] == "1002" and s["session_id"] == "2024-03-02" for s in cited), cited
