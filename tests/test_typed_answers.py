"""The typed rules read the part of a question that asks: a lead-in decides nothing."""

from __future__ import annotations

import pytest

from ripplecli.answer.typed import asked_part, question_type


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("By the way, where did I buy my new tennis racket from?", "where"),
        ("Also, when did I submit my research paper?", "when"),
        (
            "I'm looking back at our previous conversation about the Bajimaya case. Can you remind me what year the"
            " construction of the house began?",
            "when",
        ),
        ("I was wondering, who gave me a new stand mixer?", "who"),
        ("What's the phone number of the Speyer tourism board you gave me?", "what"),
        ("Would Caroline likely have Dr. Seuss books on her bookshelf?", "should"),
    ],
)
def test_a_lead_in_does_not_decide_the_question_type(question: str, kind: str) -> None:
    """The type comes from the asking sentence, after "Can you remind me" or "By the way,"."""
    assert question_type(question) == kind


def test_the_asked_part_of_a_long_question() -> None:
    """The last asking sentence, without its polite lead-in; an abbreviation does not end a sentence."""
    long = "I think we discussed jobs for seniors earlier. Can you remind me what was the 7th job in the list?"
    assert asked_part(long) == "what was the 7th job in the list?"
    assert asked_part("What areas of the U.S. has John been to?") == "What areas of the U.S. has John been to?"


def test_a_first_person_who_question_is_not_answered_with_a_speaker() -> None:
    """ "Who gave me…" in a chat with an assistant: neither the asker nor the assistant is the answer."""
    from ripplecli.answer.typed import typed_answer
    from ripplecli.trace import Evidence, SourceRef

    source = SourceRef("D1:1", "1", "assistant", "A stand mixer is a lovely birthday gift!", "2023-05-01T10:00:00")
    told = Evidence(1, "assistant: A stand mixer is a lovely birthday gift!", 0.0, 1, ["D1:1"], [source])
    found = typed_answer("Who gave me a new stand mixer as a birthday gift?", [told])
    assert found.span != "assistant"


def test_a_total_adds_up_the_amounts_of_every_memory_found() -> None:
    """ "How much in total": each amount once (an assistant's echo is the same amount), summed and cited."""
    from ripplecli.answer.typed import typed_answer
    from ripplecli.trace import Evidence, SourceRef

    def said(mid: int, speaker: str, text: str) -> Evidence:
        source = SourceRef(f"D{mid}:1", str(mid), speaker, text, "2023-05-01T10:00:00")
        return Evidence(mid, f"{speaker}: {text}", 0.0, mid, [source.turn_id], [source])

    evidence = [
        said(1, "user", "I got a car wash yesterday, it was $25."),
        said(2, "assistant", "A $25 car wash sounds reasonable."),
        said(3, "user", "Ugh, I also got a parking ticket for $40 downtown."),
        said(4, "user", "I bought a lamp for $90."),
    ]
    found = typed_answer("How much did I spend on the car wash and the parking ticket in total?", evidence)
    assert found.span == "$65"
    assert set(found.citations) == {1, 3}


def test_what_time_is_answered_with_the_clock_time_said_newest_first() -> None:
    """ "What time do I usually go to the gym?": the clock time, not the session's date; none said: not sure."""
    from ripplecli.answer.typed import typed_answer
    from ripplecli.trace import Evidence, SourceRef

    text = "I usually go to the gym at 6:00 pm after work."
    source = SourceRef("D1:1", "1", "user", text, "2023-05-01T10:00:00")
    gym = Evidence(1, f"user: {text}", 0.0, 1, ["D1:1"], [source])
    assert typed_answer("What time do I usually go to the gym?", [gym]).span == "6:00 pm"
    other = SourceRef("D2:1", "2", "user", "I go to the gym a lot these days.", "2023-05-01T10:00:00")
    vague = Evidence(2, "user: I go to the gym a lot these days.", 0.0, 1, ["D2:1"], [other])
    assert typed_answer("What time do I usually go to the gym?", [vague]).span != "1 May 2023"


def test_the_nth_item_of_a_numbered_list_a_turn_gave() -> None:
    """ "What was the 3rd job in the list you provided?": line 3 of the numbered list, up to its colon."""
    from ripplecli.answer.typed import typed_answer
    from ripplecli.trace import Evidence, SourceRef

    text = "Jobs for seniors:\n1. **Tutor**: teach online\n2. Pet sitter - walk dogs\n3. Transcriptionist: type"
    source = SourceRef("D1:2", "1", "assistant", text, "2023-05-01T10:00:00")
    listed = Evidence(1, f"assistant: {text}", 0.0, 1, ["D1:2"], [source])
    question = "I think we discussed jobs for seniors. Can you remind me what was the 3rd job in the list you provided?"
    assert typed_answer(question, [listed]).span == "Transcriptionist"
    assert typed_answer("What was the second job in the list?", [listed]).span == "Pet sitter"
    assert typed_answer("What was the 9th job in the list?", [listed]).span != "Transcriptionist"


def test_a_name_no_memory_holds_is_not_answered_about_another() -> None:
    """ "How often do I see Dr. Johnson?" when the chats tell of Dr. Smith: not found, saying which name; a name
    spelt nearly so, one word of a longer name, or a quoted title is no such name."""
    from ripplecli.answer.names import unmentioned_name
    from ripplecli.answer.typed import typed_answer
    from ripplecli.trace import Evidence, SourceRef

    text = "I see my therapist Dr. Smith every week, and I love LeBron and Xeonoblade."
    source = SourceRef("D1:1", "1", "user", text, "2023-05-01T10:00:00")
    seen = [Evidence(1, f"user: {text}", 0.0, 1, ["D1:1"], [source])]
    found = typed_answer("How often do I see Dr. Johnson?", seen)
    assert not found.found and "Johnson" in found.text
    assert typed_answer("How often do I see Dr. Smith?", seen).span == "every week"
    assert unmentioned_name("What do I like about Lebron James?", seen) is None
    assert unmentioned_name("What is Xenoblade like?", seen) is None
    assert unmentioned_name('When did I watch "Eternal Sunshine of the Spotless Mind"?', seen) is None
