"""The short-turn tuning set loads, its evidence resolves and is worded apart from its question."""

from __future__ import annotations

import pytest
from conftest import REPO
from eval_sets import evidence_sharing_words, session_of, turns_of

from ripplecli.eval.locomo import ASKED_CATEGORIES, Sample, load_samples

TUNING = REPO / "eval" / "shortturn-tuning.json"


@pytest.fixture(scope="module")
def samples() -> list[Sample]:
    return load_samples(TUNING)


def test_two_chats_of_short_turns_over_six_sessions(samples: list[Sample]) -> None:
    assert len(samples) == 2
    for sample in samples:
        sessions = sample.conversation.sessions
        assert len(sessions) == 6 and all(s.timestamp is not None for s in sessions)
        words = sorted(len(t.text.split()) for s in sessions for t in s.turns)
        assert words[len(words) // 2] <= 5
        assert len(sample.questions) == 10


def test_evidence_resolves_and_multi_hop_spans_sessions(samples: list[Sample]) -> None:
    for sample in samples:
        ids = set(turns_of(sample))
        for question in sample.questions:
            assert question.category in ASKED_CATEGORIES
            assert question.gold and not question.unresolved and set(question.gold) <= ids, question.text
            if question.category == 1:
                assert len({session_of(turn) for turn in question.gold}) >= 2, question.text


def test_evidence_is_worded_apart_from_its_question(samples: list[Sample]) -> None:
    assert evidence_sharing_words(samples) == []
