"""Time questions worked out by date arithmetic from the memories' days, with the question's day as today."""

from __future__ import annotations

from datetime import datetime

import pytest

from ripplecli.answer import answer_for
from ripplecli.answer.chronology import amount, chronology_answer
from ripplecli.answer.typed import typed_answer
from ripplecli.trace import Evidence, SourceRef


def memory(mid: int, said: str, day: str, refers_to: dict[str, str] | None = None) -> Evidence:
    """One user turn of a chat with an assistant, said on `day`."""
    source = SourceRef(f"D{mid}:1", str(mid), "user", said, day)
    return Evidence(mid, f"user: {said}", 0.0, mid, [source.turn_id], [source], refers_to=refers_to)


RAFTING = memory(1, "I went on a whitewater rafting trip in the Oregon mountains.", "2023-06-17T10:00:00")
WORKSHOP = memory(
    2,
    "Yesterday I attended a bird watching workshop at the local Audubon society.",
    "2023-04-04T09:00:00",
    refers_to={"start": "2023-04-03T00:00:00", "end": "2023-04-03T23:59:59"},
)
MARKET = memory(3, "I attended the Holiday Market downtown, lovely stalls.", "2023-11-25T18:00:00")
PHONE = memory(4, "I just bought the iPhone 13 Pro, the camera is great.", "2023-12-02T12:00:00")
OTHER = memory(5, "Can you suggest a recipe for dinner?", "2023-12-01T12:00:00")


def test_how_many_days_ago_counts_from_the_day_the_question_is_asked() -> None:
    """Today less the day the memory was said."""
    found = typed_answer(
        "How many days ago did I go on a whitewater rafting trip in the Oregon mountains?",
        [RAFTING, OTHER],
        today=datetime(2023, 6, 20, 12, 29),
    )
    assert found.span == "3 days ago"
    assert found.citations == [1] and "17 June 2023" in found.text


def test_the_day_a_memory_tells_of_is_its_stated_time_not_the_day_it_was_said() -> None:
    """ "Yesterday I attended…" said on 4 April: the workshop was on 3 April, four weeks before 1 May."""
    found = chronology_answer(
        "How many weeks ago did I attend a bird watching workshop at the local Audubon society?",
        [WORKSHOP],
        datetime(2023, 5, 1, 6, 46),
    )
    assert found is not None and found.span == "4 weeks ago"


def test_days_before_and_between_two_events() -> None:
    """The days between the two memories' days, whichever order the question names them in."""
    evidence = [OTHER, PHONE, MARKET]
    before = typed_answer("How many days before I bought the iPhone 13 Pro did I attend the Holiday Market?", evidence)
    between = typed_answer("How many days passed between the Holiday Market and buying the iPhone 13 Pro?", evidence)
    assert before.span == "7 days" and between.span == "7 days"
    assert set(before.citations) == {3, 4}


def test_which_came_first_is_the_option_with_the_earlier_day() -> None:
    """The option whose event has the earlier day; an option no memory tells of gives no worked-out answer."""
    evidence = [PHONE, MARKET]
    first = typed_answer("Which did I do first, buying the iPhone 13 Pro or attending the Holiday Market?", evidence)
    assert first.span == "attending the Holiday Market"
    assert chronology_answer("Which did I do first, the Holiday Market or fixing the fence?", evidence, None) is None


def test_without_today_or_a_matching_memory_the_rules_answer_as_before() -> None:
    """No day asked on: "how many days ago" cannot be worked out here."""
    question = "How many days ago did I go on a whitewater rafting trip in the Oregon mountains?"
    assert chronology_answer(question, [RAFTING], None) is None
    assert chronology_answer(question, [OTHER], datetime(2023, 6, 20)) is None


def test_the_typed_answer_mode_passes_the_question_day_on() -> None:
    """`answer_for("typed", …, today=…)` reaches the rules: the ago question is counted from that day."""
    question = "How many days ago did I go on a whitewater rafting trip in the Oregon mountains?"
    found = answer_for("typed", question, [RAFTING], today=datetime(2023, 6, 27))
    auto = answer_for("auto", question, [RAFTING], today=datetime(2023, 6, 27))
    assert found is not None and found.span == "10 days ago"
    assert auto is not None and auto.span == "10 days ago"


def test_auto_keeps_a_worked_out_duration_over_the_model(fake_llm) -> None:
    """With a model configured, a duration the rules work out from the chats' days is kept (the model is not asked);
    a question the rules cannot work out goes to the model."""
    from ripplecli.answer import ModelProvider

    llm = fake_llm("3 weeks ago [m1]")
    model = ModelProvider(True, lambda: llm)
    question = "How many days ago did I go on a whitewater rafting trip in the Oregon mountains?"
    kept = answer_for("auto", question, [RAFTING], model, today=datetime(2023, 6, 27))
    assert kept is not None and kept.method == "typed" and kept.span == "10 days ago"
    assert "worked out" in (kept.note or "") and llm.requests == []
    undated = memory(5, "The Oregon mountains were lovely, the river was cold.", "2023-06-17T10:00:00")
    asked = answer_for("auto", question, [undated], model, today=datetime(2023, 6, 27))
    assert asked is not None and asked.method == "llm" and len(llm.requests) == 1


def test_amounts_are_rounded_to_the_asked_unit() -> None:
    """Weeks and months rounded, one without a plural."""
    assert amount(7, "weeks") == "1 week"
    assert amount(150, "months") == "5 months"
    assert amount(30, "days") == "30 days"


@pytest.mark.parametrize("question", ["Where do I currently keep my old sneakers?", "Where do I keep my old sneakers?"])
def test_a_current_question_is_answered_by_the_newest_telling(question: str) -> None:
    """ "Where do I currently keep…", and "Where do I keep…" (how things are now): the place said last, the earlier
    one shown as earlier."""
    older = memory(6, "I keep my old sneakers in a box under my bed in Lisbon.", "2023-03-01T10:00:00")
    newer = memory(7, "I moved my old sneakers to a shoe rack in my closet in Porto.", "2023-05-01T10:00:00")
    older.locations, newer.locations = ["lisbon"], ["porto"]
    found = typed_answer(question, [older, newer])
    assert found.span is not None and "Porto" in found.span
    assert "earlier: " in found.text and "[m6]" in found.text


def test_a_weekday_in_the_event_name_does_not_date_it() -> None:
    """ "Sunday mass … last Sunday": the day is last Sunday, not the Sunday of the event's name."""
    mass = memory(8, "I just got back from Sunday mass at St. Mary's Church last Sunday.", "2023-03-26T22:45:00")
    holi = memory(9, "I attended the Hindu festival of Holi at the temple on February 26th.", "2023-03-26T10:07:00")
    found = typed_answer(
        "How many days had passed between the Hindu festival of Holi and the Sunday mass at St. Mary's Church?",
        [mass, holi],
    )
    assert found.span == "21 days"


def test_a_count_of_zero_is_no_worked_out_answer() -> None:
    """ "0 months ago" means the day found was not the event's: no answer from the dates."""
    question = "How many months ago did I go on a whitewater rafting trip in the Oregon mountains?"
    assert chronology_answer(question, [RAFTING], datetime(2023, 6, 20)) is None


def test_how_long_had_i_been_counts_from_when_the_doing_began() -> None:
    """ "I've been taking lessons for six weeks now" began six weeks before it was said; "two weeks ago" is that
    day, not its whole week."""
    lessons = memory(10, "I've been taking guitar lessons for six weeks now.", "2023-05-27T10:00:00")
    amp = memory(11, "I bought a new guitar amp two weeks ago.", "2023-05-27T11:00:00")
    found = typed_answer("How long had I been taking guitar lessons when I bought the new guitar amp?", [lessons, amp])
    assert found.span == "4 weeks"
