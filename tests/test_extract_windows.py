"""Windows: contiguous, overlapping by context turns, every turn extracted exactly once."""

from __future__ import annotations

from collections import Counter
from itertools import pairwise

import pytest
from extract_helpers import make_conversation

from ripplecli.errors import InputError
from ripplecli.extract.windows import make_windows


def test_every_turn_is_non_context_in_exactly_one_window() -> None:
    conversation = make_conversation([7, 12, 5])
    windows = list(make_windows(conversation, size=10, overlap=2))
    fresh = Counter(wt.turn.turn_id for w in windows for wt in w.turns if not wt.is_context)
    assert sorted(fresh) == sorted(t.turn_id for s in conversation.sessions for t in s.turns)
    assert set(fresh.values()) == {1}


def test_windows_overlap_by_context_turns_in_order() -> None:
    conversation = make_conversation([7, 12, 5])
    windows = list(make_windows(conversation, size=10, overlap=2))
    assert [len(w.turns) for w in windows] == [10, 10, 8]
    assert not any(wt.is_context for wt in windows[0].turns)
    for previous, window in pairwise(windows):
        assert [wt.is_context for wt in window.turns[:2]] == [True, True]
        assert not any(wt.is_context for wt in window.turns[2:])
        assert [wt.turn for wt in window.turns[:2]] == [wt.turn for wt in previous.turns[-2:]]


def test_window_turns_carry_their_session_and_timestamp() -> None:
    conversation = make_conversation([3, 3])
    (window,) = make_windows(conversation, size=40, overlap=2, known_persons=["Zoe"])
    assert [wt.session_id for wt in window.turns] == ["s1"] * 3 + ["s2"] * 3
    assert window.turns[4].timestamp == conversation.sessions[1].timestamp
    assert window.speakers == ["Ana", "Ben"]
    assert window.known_persons == ["Zoe"]


def test_no_overlap_and_empty_conversation() -> None:
    windows = list(make_windows(make_conversation([5]), size=2, overlap=0))
    assert [len(w.turns) for w in windows] == [2, 2, 1]
    assert list(make_windows(make_conversation([]), size=4)) == []


@pytest.mark.parametrize(("size", "overlap"), [(0, 0), (4, 4), (4, -1)])
def test_impossible_window_shapes_are_rejected(size: int, overlap: int) -> None:
    with pytest.raises(InputError):
        list(make_windows(make_conversation([3]), size=size, overlap=overlap))
