"""Through the real encoder and spaCy: a Chinese question finds a Chinese memory; "I" is the store's owner."""

from __future__ import annotations

from pathlib import Path

import pytest
from owner_chats import CHINESE_CHAT, OWNER_CHAT, write

from ripplecli.api import Memory
from ripplecli.cues import content_tokens

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def real_store(tmp_path_factory: pytest.TempPathFactory, shared_cache: Path) -> Path:
    """The owner chat and a Chinese chat in one store built by the real parts."""
    folder = tmp_path_factory.mktemp("languages")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("RIPPLE_CACHE", str(shared_cache))
        with Memory(folder / "store") as memory:
            memory.ingest(write(folder / "sugar.json", OWNER_CHAT), owner="Alex")
            memory.ingest(write(folder / "zh.json", CHINESE_CHAT))
    return folder / "store"


def test_cjk_text_is_tokenised_in_character_pairs():
    assert content_tokens("我的猫叫小白") == ["我的", "的猫", "猫叫", "叫小", "小白"]
    assert content_tokens("猫") == ["猫"]
    assert content_tokens("Die Mädchen gingen über die Straße") == [
        "die",
        "mädchen",
        "gingen",
        "über",
        "die",
        "straße",
    ]


def test_a_chinese_question_finds_the_chinese_memory(real_store):
    with Memory(real_store, read_only=True) as memory:
        result = memory.recall("我的猫叫什么名字？", k=5, answer="extractive")
        typed = memory.recall("我的猫叫什么名字？", k=5, answer="auto").answer
    (cat,) = [e for e in result.evidence if "小白" in e.restatement]
    assert result.trace.seeds["lexical"][0].id == cat.memory_id  # shared character pairs: 我的, 的猫, 猫叫
    assert cat.rank <= 3 and cat.title == "家里的事"
    answer = result.answer
    assert answer is not None and answer.citations == [cat.memory_id]  # before: "no evidence sentence matches"
    assert "小白" in answer.text
    assert typed is not None and typed.found and typed.citations == [cat.memory_id]


def test_i_in_a_question_is_the_owner_through_the_real_parts(real_store):
    with Memory(real_store, read_only=True) as memory:
        result = memory.recall("What did I ask ChatGPT about the sugar trade?", k=5)
        restatements = [m["restatement"] for m in memory.list_memories()]
    assert result.trace.focus.speaker == "alex"
    ranks = {e.source_turns[0]: e.rank for e in result.evidence if e.conversation_id == "c0ffee-1234"}
    assert ranks["m1"] < ranks["m2"]
    assert any(r.startswith("Alex: Alex is reading about the history of the Caribbean") for r in restatements)


def test_german_months_and_nouns_are_not_persons(tmp_path, shared_cache):
    chat = {
        "conversation_id": "de",
        "sessions": [
            {
                "timestamp": "2024-05-10T09:00:00",
                "turns": [
                    {"speaker": "Lena", "text": "Im Mai habe ich die Wohnung in Hamburg besichtigt, mit Jonas."},
                    {"speaker": "Jonas", "text": "Am Montag zeige ich dir das Zimmer."},
                ],
            }
        ],
    }
    with Memory(tmp_path / "store") as memory:
        memory.ingest(write(tmp_path / "de.json", chat))
        persons = {r[0] for r in memory.store.con.execute("SELECT person FROM memory_persons").fetchall()}
    assert {"lena", "jonas"} <= persons
    assert not persons & {"mai", "wohnung", "montag", "zimmer"}
