"""Fixtures for the extractor tests: small conversations and a minimal LoCoMo reader."""

from __future__ import annotations

import json
from datetime import datetime
from functools import cache
from pathlib import Path

from ripplecli.model import Conversation, Session, Turn

LOCOMO_DEV = Path("/work/shared/data/locomo-dev.json")


def make_conversation(session_sizes: list[int], speakers: tuple[str, str] = ("Ana", "Ben")) -> Conversation:
    """A synthetic conversation whose turn ids say where each turn sits ("s1:t3")."""
    sessions = []
    for s, count in enumerate(session_sizes, start=1):
        turns = [Turn(f"s{s}:t{t}", speakers[t % 2], f"turn {t} of session {s}") for t in range(count)]
        sessions.append(Session(f"s{s}", datetime(2023, 5, s, 12, 0), turns))
    return Conversation("synthetic", sessions)


def _locomo_turn(raw: dict) -> Turn:
    """A LoCoMo turn, with its image caption kept in the text as the rules extractor expects."""
    caption = raw.get("blip_caption")
    text = f"{raw['text']} [image: {caption}]" if caption else raw["text"]
    return Turn(raw["dia_id"], raw["speaker"], text)


@cache
def locomo_conversation(sample_id: str = "conv-26") -> Conversation:
    """One LoCoMo dev conversation (prefers ripplecli.formats when it exists)."""
    try:
        from ripplecli.formats import read_conversations  # type: ignore[attr-defined]

        return next(c for c in read_conversations(LOCOMO_DEV) if c.conversation_id == sample_id)
    except (ImportError, StopIteration, TypeError):
        pass
    sample = next(s for s in json.loads(LOCOMO_DEV.read_text()) if s["sample_id"] == sample_id)
    raw = sample["conversation"]
    sessions = []
    for n in range(1, 100):
        if f"session_{n}" not in raw:
            continue
        stamp = datetime.strptime(raw[f"session_{n}_date_time"], "%I:%M %p on %d %B, %Y")
        sessions.append(Session(f"session_{n}", stamp, [_locomo_turn(t) for t in raw[f"session_{n}"]]))
    return Conversation(sample_id, sessions)
