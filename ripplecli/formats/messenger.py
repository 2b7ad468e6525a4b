"""Facebook Messenger's and Instagram's chats (Settings → Download your information → Messages, format JSON): one
`message_1.json` per chat (a long chat continues in `message_2.json`, …), under `inbox/<chat folder>/`.

A file holds the chat's `participants` (each a `name`), its `title`, its `thread_path` ("inbox/mayachen_10158…",
the chat's id) and its `messages` newest first, each with `sender_name`, `timestamp_ms` and, when it says
something, `content`. Photos, videos, stickers and voice messages without words, calls, joins and unsent
messages are skipped and counted. The export writes text as UTF-8 bytes each taken for a Latin-1 character
("CafÃ©" for "Café"): it is repaired. In a chat of two named after one of them, the other is the account owner.
"""

from __future__ import annotations

import re
from collections import Counter
from datetime import datetime
from pathlib import PurePosixPath

from ripplecli.formats.days import Dated, StableIds, by_day, from_epoch, short_hash, slug
from ripplecli.formats.fields import LIKELY, SURE, ChatFormat, Node, Tolerant, clean_text, first_object, located
from ripplecli.model import Conversation, Turn

SPOKEN = frozenset({"Generic", "Share", ""})  # what people wrote; "Call", "Subscribe", "Unsubscribe" are events
_REACTION = re.compile(r"reacted .{1,8} to your message|liked a message", re.IGNORECASE)


def repaired(text: str) -> str:
    """Text as written: the export's UTF-8 bytes read back from the Latin-1 characters it wrote them as; text that
    is no such mojibake (a character above U+00FF, or bytes that are no UTF-8) is kept as it is."""
    if text.isascii():
        return text
    try:
        return text.encode("latin-1").decode("utf-8")
    except (UnicodeEncodeError, UnicodeDecodeError):
        return text


def parse_messenger(data: object, source: str) -> list[Conversation]:
    """Read one chat file; its id is the chat's `thread_path`, else made from its title and first message."""
    with located(source):
        root = Node(data)
        title = _name(root.get("title"))
        participants = [_name(person.get("name")) for person in root.at("participants").items()]
        skipped: Counter[str] = Counter()
        dated = _messages(root.at("messages"), skipped)
        _mark_owner(dated, participants, title)
        path = root.get("thread_path")
        if path is not None and path.string():
            chat_id, named_by_file = f"messenger-{PurePosixPath(path.string()).name}", False
        else:
            first = dated[0].turn if dated else None
            said = f"{first.said_at}|{first.speaker}|{first.text}" if first else source
            chat_id, named_by_file = f"messenger-{slug(title or 'chat')}-{short_hash(said)}", True
        return [Conversation(chat_id, by_day(dated), title or None, dict(skipped), named_by_file=named_by_file)]


def _messages(messages: Node, skipped: Counter[str]) -> list[Dated]:
    """The messages with words, oldest first; the others counted in `skipped` by reason."""
    ids = StableIds("fb-")
    tolerant = Tolerant()
    stamped: list[tuple[datetime, Turn]] = []
    for message in reversed(messages.items()):  # the export lists the newest first
        with tolerant.message(message, skipped):
            reason = _left_out(message)
            text = clean_text(repaired(message.at("content").string())) if not reason else ""
            if reason or not text:
                skipped[reason or "media without text"] += 1
                continue
            stamp = message.at("timestamp_ms")
            said_at = from_epoch(stamp.number() / 1000)
            if said_at is None:
                raise stamp.fail(f"is not a time in milliseconds since 1970: {stamp.value!r}")
            speaker = _name(message.at("sender_name")) or "unknown"
            turn = Turn(ids.make(str(stamp.value), speaker, text), speaker, text, said_at)
            stamped.append((said_at, turn))
    tolerant.check()
    stamped.sort(key=lambda pair: pair[0])  # stable: messages of the same millisecond keep the file's order
    return [Dated(turn, said_at) for said_at, turn in stamped]


def _left_out(message: Node) -> str:
    """Why a message is not kept ("media without text", "call", "event", "deleted", "reaction"), else ""."""
    fields = message.fields()
    if fields.get("is_unsent") is True:
        return "deleted"
    kind = fields.get("type") if isinstance(fields.get("type"), str) else ""
    if kind == "Call":
        return "call"
    if kind not in SPOKEN:
        return "event"  # someone joined or left the group
    content = message.get("content")
    if content is None:
        return "media without text"  # photos, videos, stickers, voice messages, files
    return "reaction" if _REACTION.fullmatch(repaired(content.string()).strip()) else ""


def _mark_owner(dated: list[Dated], participants: list[str], title: str) -> None:
    """In a chat of two people named after one of them, the other is the account owner."""
    if len(participants) != 2 or title not in participants:
        return
    for index, item in enumerate(dated):
        if item.turn.speaker != title and item.turn.speaker in participants:
            turn = item.turn
            dated[index] = Dated(Turn(turn.turn_id, turn.speaker, turn.text, turn.said_at, "owner"), item.local)


def _name(node: Node | None) -> str:
    """A person's or the chat's name, repaired; absent is empty."""
    return " ".join(repaired(node.string()).split()) if node is not None else ""




def detect_messenger(data: object) -> float:
    """A chat file by its `participants` beside `messages` that carry a `sender_name` or `timestamp_ms`."""
    found = first_object(data)
    if not isinstance(data, dict) or "participants" not in found or "messages" not in found:
        return 0.0
    messages = found["messages"]
    sample = messages[0] if isinstance(messages, list) and messages and isinstance(messages[0], dict) else {}
    return SURE if {"sender_name", "timestamp_ms"} & set(sample) else LIKELY


FORMAT = ChatFormat(
    parse_messenger,
    detect_messenger,
    label="a Messenger or Instagram chat (message_1.json)",
    hints=frozenset({"participants", "messages", "messages[].sender_name", "messages[].timestamp_ms"}),
)
