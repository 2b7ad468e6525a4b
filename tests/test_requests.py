"""Requests for advice: the frame a person words every request with ("Can you recommend …", "Any tips?") is not
matched as words, so recall finds what the advice should build on rather than the person's other requests."""

from __future__ import annotations

from pathlib import Path

from chats import new_memory, session, write_chat

from ripplecli.cues import without_request

ASKED = [
    ("Sam", "Can you recommend some books on comedy writing that would help me improve my craft?"),
    ("Sam", "Can you recommend a good Thai restaurant in the area?"),
    ("Sam", "Can you recommend some popular train-themed board games?"),
    ("Sam", "Can you recommend some podcasts for my commute?"),
    ("Sam", "I love stand-up comedy specials on Netflix, the ones that tell a long story."),
    ("Sam", "Can you recommend some apps to track my running?"),
]


def test_the_frame_of_a_request_is_taken_out_of_the_text_views_match() -> None:
    assert without_request("Can you recommend a show or movie for me to watch tonight?") == (
        "a show or movie for me to watch tonight?"
    )
    assert without_request("My kitchen is a mess. Any tips for keeping it clean?") == (
        "My kitchen is a mess. for keeping it clean?"
    )
    assert without_request("I'm buying a NAS. What do you think?") == "I'm buying a NAS. ?"
    assert without_request("What did Caroline recommend to Melanie?") == "What did Caroline recommend to Melanie?"
    assert without_request("Any suggestions?") == "Any suggestions?"  # nothing else to match


def test_the_real_encoder_finds_what_the_advice_builds_on(tmp_path: Path, fake_extractor) -> None:
    """Through all-MiniLM-L6-v2: the person's liking, not another of their requests, comes first."""
    from ripplecli.config import Settings

    chat = write_chat(
        tmp_path / "chat.json",
        [session(n + 1, [turn, ("Bot", "Sure, here are a few.")]) for n, turn in enumerate(ASKED)],
    )
    with new_memory(tmp_path / "store", Settings()) as memory:
        memory.ingest(chat)
        found = memory.recall("Can you recommend a show or movie for me to watch tonight?", k=3)
    assert "stand-up comedy specials" in found.evidence[0].restatement
