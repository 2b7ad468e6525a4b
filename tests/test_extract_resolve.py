"""First/second-person resolution: the restatement names who did what."""

from __future__ import annotations

import pytest

from ripplecli.pronouns import resolve_references


def both(text: str) -> str:
    """Resolve as Caroline talking to Melanie in a two-party chat."""
    return resolve_references(text, "Caroline", "Melanie")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I went to a support group", "Caroline went to a support group"),
        ("I'm swamped", "Caroline is swamped"),
        ("I’m swamped", "Caroline is swamped"),
        ("I am tired", "Caroline is tired"),
        ("I've been busy", "Caroline has been busy"),
        ("I'll go", "Caroline will go"),
        ("I'd love that", "Caroline would love that"),
        ("I don't know", "Caroline doesn't know"),
        ("my kids", "Caroline's kids"),
        ("My kids", "Caroline's kids"),
        ("give it to me", "give it to Caroline"),
        ("I did it myself", "Caroline did it Caroline"),
        ("that one is mine", "that one is Caroline's"),
        ("am I late?", "is Caroline late?"),
    ],
)
def test_first_person_becomes_the_speaker(text: str, expected: str) -> None:
    assert both(text) == expected
    assert resolve_references(text, "Caroline", None) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I need a break", "Caroline needs a break"),
        ("I really need it", "Caroline really needs it"),
        ("I love it, I miss it", "Caroline loves it, Caroline misses it"),
        ("I try, I watch, I go", "Caroline tries, Caroline watches, Caroline goes"),
        ("I think I need help", "Caroline thinks Caroline needs help"),
        ("I haven't seen it", "Caroline hasn't seen it"),
        ("I just don't know", "Caroline just doesn't know"),
        ("I sort of like it", "Caroline sort of likes it"),
        ("Do I need to?", "Does Caroline need to?"),
        ("What I want is rest", "What Caroline wants is rest"),
        # the form stays: past, modal, auxiliary before "I", a plural subject, an adverb or a word ending in -s
        ("I went, I got, I used", "Caroline went, Caroline got, Caroline used"),
        ("Can I go? Did I say that?", "Can Caroline go? Did Caroline say that?"),
        ("Melanie and I love hiking", "Melanie and Caroline love hiking"),
        ("Tonight, my wife and I want pizza", "Tonight, Caroline's wife and Caroline want pizza"),
        ("It's on June 14th and I want to go", "It's on June 14th and Caroline wants to go"),
        ("I went home and I need sleep", "Caroline went home and Caroline needs sleep"),
        ("I was there, I can't, I'm in", "Caroline was there, Caroline can't, Caroline is in"),
        ("I definitely.", "Caroline definitely."),
        ("I color-code it", "Caroline color-code it"),
        ("the book I read", "the book Caroline read"),
    ],
)
def test_a_verb_after_i_takes_the_names_third_person(text: str, expected: str) -> None:
    assert both(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("How are you?", "How is Melanie?"),
        ("Are you ok?", "Is Melanie ok?"),
        ("you were right", "Melanie was right"),
        ("You're great", "Melanie is great"),
        ("you've got this", "Melanie has got this"),
        ("What do you think?", "What does Melanie think?"),
        ("your painting", "Melanie's painting"),
        ("Is this yours?", "Is this Melanie's?"),
        ("Take care of yourself", "Take care of Melanie"),
        ("We went hiking", "Caroline and Melanie went hiking"),
        (
            "Lena and I went there for our anniversary",
            "Lena and Caroline went there for Lena and Caroline's anniversary",
        ),
        ("Lena and I went. Our trip was fun", "Lena and Caroline went. Caroline and Melanie's trip was fun"),
        ("Thanks and I hope we meet", "Thanks and Caroline hopes Caroline and Melanie meet"),
        ("we're close", "Caroline and Melanie are close"),
        ("tell us", "tell Caroline and Melanie"),
        ("our trip", "Caroline and Melanie's trip"),
        ("If you want, come", "If Melanie wants, come"),  # a "you" that starts a clause governs its verb
        ("You really need a break", "Melanie really needs a break"),
        ("Thank you, you rock", "Thank Melanie, Melanie rocks"),
        ("I'll see you tomorrow", "Caroline will see Melanie tomorrow"),  # elsewhere "you" is an object
        ("You all rock", "Melanie all rock"),
        ("You bet!", "Melanie bet!"),
        # a "she" or "he" before "we" in the sentence: the two who chat may not be the "we"; it stays as said
        ("She got me into running, we used to jog", "She got Caroline into running, we used to jog"),
    ],
)
def test_second_person_and_we_become_names_in_a_two_party_chat(text: str, expected: str) -> None:
    assert both(text) == expected


def test_second_person_is_left_alone_without_a_single_other_party() -> None:
    text = "Are you coming with us? Your call."
    assert resolve_references(text, "Caroline", None) == text


@pytest.mark.parametrize(
    "text",
    [
        "Illinois is mineral rich",
        "Determine the youth movement",
        "a gold mine and the mine shaft",
        "The US is huge, see ME and the U.S. too",
        "i.e. nothing here",
        "museum, menu, mymind, yourselfie, ourselfs",
    ],
)
def test_words_that_only_look_like_pronouns_are_untouched(text: str) -> None:
    assert both(text) == text


def test_caption_and_punctuation_are_kept() -> None:
    text = "Look at my new mug! [image: a photo of a mug] Do you like it?"
    assert both(text) == "Look at Caroline's new mug! [image: a photo of a mug] Does Melanie like it?"


def test_lower_case_i_in_chat_typing() -> None:
    assert both("i think i'm ready") == "Caroline thinks Caroline is ready"


def test_in_a_chat_with_an_assistant_we_stays_and_you_is_the_assistant() -> None:
    from ripplecli.extract.rules import restate
    from ripplecli.model import Turn

    asked = Turn("m-3", "Alex", "We picked Alfama. Can you find us a bakery?", role="owner")
    answered = Turn("m-4", "Claude", "We could try the one near your hostel.", role="assistant")
    speakers = ["Alex", "Claude"]
    assert restate(asked, speakers, {"Claude"}) == ("Alex: We picked Alfama. Can Claude find us a bakery?", "Claude")
    assert restate(answered, speakers, {"Claude"})[0] == "Claude: We could try the one near Alex's hostel."
    assert restate(asked, speakers)[0].startswith("Alex: Alex and Claude picked Alfama.")  # two people: "we" is both


def test_a_lower_case_handle_keeps_its_case_where_i_stood() -> None:
    assert resolve_references("I'll host at my place.", "omar.h", None) == "omar.h will host at omar.h's place."
    assert resolve_references("Are you ok?", "Caroline", "melanie") == "Is melanie ok?"


def test_an_owner_without_a_name_keeps_i_and_you() -> None:
    """With no `me` set, the owner's turns are spoken by a role word; "Thanks, Me will book…" reads worse than "I"."""
    text = "Thanks, I will book the engenho visit for Saturday."
    assert resolve_references(text, "Me", "ChatGPT") == text
    assert resolve_references("Can you plan it for me?", "User", "ChatGPT") == "Can ChatGPT plan it for me?"
    assert resolve_references("You should pack layers.", "ChatGPT", "User") == "You should pack layers."


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "> I moved the launch review to Thursday\nGood, I will have my slides ready by then.",
            "> I moved the launch review to Thursday\nGood, Alex will have Alex's slides ready by then.",
        ),
        ("> I quit\n> my team said it\nI", "> I quit\n> my team said it\nAlex"),
        (">>> I quit\nmy team\nsaid it", ">>> I quit\nmy team\nsaid it"),  # Slack: the rest of the message
        ('Priya wrote "I am done with my part" and I agree', 'Priya wrote "I am done with my part" and Alex agrees'),
        ("She said “I love my job” and I laughed", "She said “I love my job” and Alex laughed"),
        ("My favourite song is «I Will Survive»", "Alex's favourite song is «I Will Survive»"),
        ("```\nI = my_index()\n```\nI ran it", "```\nI = my_index()\n```\nAlex ran it"),
        ("I ran `my_script` twice", "Alex ran `my_script` twice"),
    ],
)
def test_quoted_words_keep_their_authors_pronouns(text: str, expected: str) -> None:
    """A quoted line, a pasted passage in quotes or code is someone else's words: its "I" is not the speaker."""
    assert resolve_references(text, "Alex", None) == expected
