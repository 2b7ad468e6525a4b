"""Checks shared by the tests of our own evaluation sets (eval/*.json): evidence that resolves and is worded apart."""

from __future__ import annotations

from typing import Any

from ripplecli.cues import content_tokens
from ripplecli.eval.locomo import Sample
from ripplecli.model import Turn


def turns_of(sample: Sample) -> dict[str, Turn]:
    """A conversation's turns by their LoCoMo id (`D3:12`)."""
    return {t.turn_id: t for s in sample.conversation.sessions for t in s.turns}


def session_of(turn_id: str) -> str:
    """`D3:12` -> `3`: the session a gold turn sits in."""
    return turn_id[1:].split(":")[0]


def evidence_sharing_words(samples: list[Sample]) -> list[tuple[str, str]]:
    """(question, turn id) pairs whose evidence repeats a content word of the question other than a speaker's name."""
    shared = []
    for sample in samples:
        turns = turns_of(sample)
        speakers = {t.speaker.lower() for t in turns.values()}
        for question in sample.questions:
            asked = set(content_tokens(question.text)) - speakers
            shared += [(question.text, i) for i in question.gold if asked & set(content_tokens(turns[i].text))]
    return shared


def assert_refused(result: Any, phrase: str) -> None:
    """A user mistake on `ripple eval`: exit 2 and one line, `ripple: error: …`, that contains `phrase`."""
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ripple: error:"), result.output
    assert phrase in lines[0]
