"""What makes two messages the same message whatever file they came in: their time and text, and which repeat of
both they are (two "ok" in one minute are two messages). Their author is left out: an export that cannot tell who
its owner is (a WhatsApp chat renamed) names the same message's author otherwise; time and text already tell
messages apart, and the repeat number tells apart the rare same words at the same moment."""

from __future__ import annotations

import hashlib
from collections import Counter
from datetime import datetime


def message_key(when: datetime | None, text: str, repeat: int) -> int:
    """A message's identity as a signed 64-bit number (the `sources.message_key` column): a hash of when it was said
    (None: not part of it), its text and its repeat number (1 for the first message of that time and text)."""
    payload = "\x1f".join([when.isoformat() if when is not None else "", text, str(repeat)])
    return int.from_bytes(hashlib.sha256(payload.encode("utf-8")).digest()[:8], "big", signed=True)


class Repeats:
    """Numbers the messages of one conversation that share a time and a text, in their order."""

    def __init__(self) -> None:
        self.seen: Counter[tuple[datetime | None, str]] = Counter()

    def key(self, when: datetime | None, text: str) -> int:
        """The next message's key."""
        self.seen[when, text] += 1
        return message_key(when, text, self.seen[when, text])
