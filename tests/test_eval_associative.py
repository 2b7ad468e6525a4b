"""Our own associative set loads with the LoCoMo loader and its gold evidence is sound and spread over sessions."""

from __future__ import annotations

import pytest
from conftest import REPO
from eval_sets import evidence_sharing_words, session_of, turns_of

from ripplecli.eval.locomo import ASKED_CATEGORIES, Sample, load_samples

ASSOCIATIVE = REPO / "eval" / "associative.json"


@pytest.fixture(scope="module")
def samples() -> list[Sample]:
    return load_samples(ASSOCIATIVE)


def test_three_conversations_of_two_speakers_over_several_sessions(samples: list[Sample]) -> None:
    assert len(samples) == 3
    for sample in samples:
        sessions = sample.conversation.sessions
        assert 8 <= len(sessions) <= 12 and all(s.timestamp is not None for s in sessions)
        assert len({t.speaker for s in sessions for t in s.turns}) == 2
        assert len(sample.questions) == 15


def test_every_evidence_id_is_a_turn_of_its_conversation(samples: list[Sample]) -> None:
    for sample in samples:
        ids = set(turns_of(sample))
        for question in sample.questions:
            assert question.category in ASKED_CATEGORIES
            assert question.gold and not question.unresolved, question.text
            assert set(question.gold) <= ids


def test_multi_hop_evidence_spans_at_least_two_sessions(samples: list[Sample]) -> None:
    multi_hop = [q for s in samples for q in s.questions if q.category == 1]
    assert len(multi_hop) >= len([q for s in samples for q in s.questions]) // 2
    for question in multi_hop:
        assert len({session_of(turn) for turn in question.gold}) >= 2, question.text


def test_evidence_is_worded_apart_from_its_question(samples: list[Sample]) -> None:
    assert evidence_sharing_words(samples) == []
