"""Short-turn chats: a speaker's name alone must not outrank a turn that matches the question's content."""

from __future__ import annotations

from pathlib import Path

import pytest
from chats import session, write_chat

from ripplecli.recall.query import without_speakers

SHORT_CHAT = [
    ("Nadia", "are you coming sunday"),
    ("Omar", "stop"),
    ("Nadia", "mum asked"),
    ("Omar", "tell her Omar said hi"),
    ("Nadia", "priorities"),
    ("Omar", "two bites of the prawn curry and my throat closed up"),
    ("Nadia", "omg"),
    ("Omar", "Omar ok now"),
]


def test_without_speakers_drops_the_chat_speakers_names_only() -> None:
    speakers = {"omar", "nadia", "mary ann"}
    assert without_speakers("What should Omar avoid eating?", speakers) == "What should avoid eating?"
    assert without_speakers("What are Nadia's plans with Gerald?", speakers) == "What are plans with Gerald?"
    assert without_speakers("Did Mary  Ann call omar?", speakers) == "Did call ?"
    assert without_speakers("Omar?", speakers) == "Omar?"  # nothing else left: the question as it is
    assert without_speakers("What did Omarion eat?", speakers) == "What did Omarion eat?"


@pytest.mark.parametrize("mode", ["dense", "lexical", "seeds", "ripple"])
def test_a_short_turn_with_the_name_does_not_outrank_a_content_match(fake_memory, tmp_path: Path, mode: str) -> None:
    fake_memory.ingest(write_chat(tmp_path / "chat.json", [session(1, SHORT_CHAT)], "siblings"))
    result = fake_memory.recall("What did Omar say about the curry?", k=5, mode=mode)
    assert result.evidence[0].source_turns == ["D1:6"]
    if mode == "lexical":  # the name alone matches nothing: only the turn that names the curry is found
        assert [e.source_turns for e in result.evidence] == [["D1:6"]]


LONG_CHAT = [
    ("Nadia", "are you still coming over on sunday for the big family lunch at mum's place"),
    ("Omar", "yes I will be there, I am bringing the lemon cake that everyone asked for last time"),
    ("Nadia", "great, mum asked whether you can pick up grandad from the station on the way"),
    ("Omar", "two bites of the prawn curry last week and my throat closed up, so no seafood for me"),
]


def _question_vector(memory, question: str):
    """The vector the dense view asks with, as recall builds it."""
    from ripplecli.recall.pipeline import Recaller

    recaller = Recaller(memory.store, lambda: memory.encoder)
    index = recaller.index()
    return recaller._vector(index, question, without_speakers(question, index.speakers))


def test_the_name_free_question_is_used_only_when_the_nearest_turns_are_short(fake_memory, tmp_path: Path) -> None:
    import numpy as np

    question = "What did Omar say about the curry?"
    fake_memory.ingest(write_chat(tmp_path / "long.json", [session(1, LONG_CHAT)], "long"))
    whole = fake_memory.encoder.encode([question])[0]
    assert np.allclose(_question_vector(fake_memory, question), whole)  # long turns: the name is a fair prior
    fake_memory.ingest(write_chat(tmp_path / "short.json", [session(1, SHORT_CHAT * 2)], "short"))
    assert not np.allclose(_question_vector(fake_memory, question), whole)
