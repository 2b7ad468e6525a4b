"""The hostile corpus in tests/fuzz: ok_* files parse, bad_* files raise one clear InputError line."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from ripplecli.errors import InputError
from ripplecli.formats import read_conversations

CORPUS = Path(__file__).parent / "fuzz"
FILES = sorted(path for path in CORPUS.iterdir() if path.name.startswith(("ok_", "bad_")))
READERS = ("whatsapp", "telegram", "claude", "chatgpt", "slack", "discord", "notes")


def corpus_cases() -> dict:
    """The generator's table of cases, loaded from its file (tests/ is not a package)."""
    spec = importlib.util.spec_from_file_location("make_corpus", CORPUS / "make_corpus.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.CASES


def test_corpus_is_complete_and_reproducible() -> None:
    cases = corpus_cases()
    assert len(FILES) >= 50
    for reader in READERS:  # every export reader has its own malformed variants
        assert sum(path.name.startswith(f"bad_{reader}_") for path in FILES) >= 10, reader
    assert {path.name for path in FILES} == set(cases)
    assert all(cases[path.name]() == path.read_bytes() for path in FILES)
    assert all(path.name.startswith(("ok_", "bad_")) for path in FILES)


@pytest.mark.parametrize("path", [p for p in FILES if p.name.startswith("ok_")], ids=lambda p: p.name)
def test_ok_files_parse(path: Path) -> None:
    conversations = read_conversations(path)
    turns = [turn for conversation in conversations for session in conversation.sessions for turn in session.turns]
    assert turns and all(turn.speaker and turn.text for turn in turns)


@pytest.mark.parametrize("path", [p for p in FILES if p.name.startswith("bad_")], ids=lambda p: p.name)
def test_bad_files_raise_one_line_naming_the_file(path: Path) -> None:
    with pytest.raises(InputError) as caught:
        read_conversations(path)
    message = str(caught.value)
    assert message.startswith(f"{path.name}: ")
    assert "\n" not in message and "\r" not in message


def test_ten_megabyte_turn(tmp_path: Path) -> None:
    path = tmp_path / "bad_ten_megabyte_turn.json"
    path.write_text('{"sessions": [{"turns": [{"speaker": "A", "text": "' + "ha" * (5 * 1024 * 1024) + '"}]}]}')
    with pytest.raises(InputError, match=r"^bad_ten_megabyte_turn\.json: sessions\[0\]\.turns\[0\]\.text"):
        read_conversations(path)
