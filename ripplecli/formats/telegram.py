"""Telegram Desktop's JSON export (Settings → Advanced → Export Telegram data, format JSON): `result.json`.

A chat's own export is one object with `name`, `type`, `id` and `messages`; the full account export holds
them under `chats.list` (and `left_chats.list`) with `personal_information` naming the account owner. `text`
is a string or a list of strings and entities (`{"type": "link", "text": …}`); service messages (joins,
pins, calls) are skipped, and so are messages with no text (a sticker or photo without caption). A message
with only `date_unixtime` (no `date`) is dated by it, in UTC; one that cannot be read is skipped and counted.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from datetime import datetime, timedelta

from ripplecli.formats.days import Dated, by_day, exporter_offset, from_epoch, from_iso
from ripplecli.formats.fields import LIKELY, SURE, ChatFormat, Node, Tolerant, Unique, first_object, located, quote
from ripplecli.model import Conversation, Turn


def parse_telegram(data: object, source: str) -> list[Conversation]:
    """Read one chat or a whole account's export; each chat becomes one conversation keyed by its Telegram id."""
    with located(source):
        root = Node(data)
        chats = [root] if root.get("messages") is not None else _listed_chats(root)
        return list(_conversations(chats, _owner_id(root)))


def stream_telegram(head: dict, chats: Iterable[Node], _: int | None, source: str) -> Iterator[Conversation]:
    """parse_telegram of a big account export's chats read one at a time (ripplecli.formats.stream)."""
    with located(source):
        yield from _conversations(chats, _owner_id(Node(head)))


def _conversations(chats: Iterable[Node], owner_id: str | None) -> Iterator[Conversation]:
    """Each chat's conversation, in order; a repeated chat id is an error, and so is a file most of whose messages
    cannot be read."""
    ids = Unique("chat id")
    tolerant = Tolerant()
    for chat in chats:
        chat_id = _chat_id(chat)
        ids.claim(chat_id, chat.keys)
        yield _conversation(chat, chat_id, owner_id, tolerant)
    tolerant.check()


def _listed_chats(root: Node) -> list[Node]:
    """The chats of a full export: `chats.list`, then the chats the owner has left."""
    chats = root.at("chats").at("list").items()
    left = root.get("left_chats")
    return chats + (left.at("list").items() if left is not None and left.get("list") is not None else [])


def _owner_id(root: Node) -> str | None:
    """The account owner's `from_id` ("user123"), when the export names them."""
    info = root.get("personal_information")
    user_id = info.get("user_id") if info is not None else None
    return f"user{user_id.scalar()}" if user_id is not None else None


def _chat_id(chat: Node) -> str:
    """`telegram-<id>`: the id Telegram gives the chat, stable across exports."""
    node = chat.at("id")
    return f"telegram-{node.scalar()}"


def _conversation(chat: Node, chat_id: str, owner_id: str | None, tolerant: Tolerant) -> Conversation:
    """One chat's messages with text, a session per local day. The owner is the account's own id when the export
    names it (a whole account's export), else, in a chat's own export of a personal chat, whoever is not the peer
    (the chat's id); a group's own export does not say who exported it. A message that cannot be read is left out
    and counted (the file is refused when most cannot)."""
    one_to_one = _string(chat.get("type")) in ("personal_chat", "bot_chat")
    peer = f"user{chat.at('id').scalar()}" if one_to_one and owner_id is None else None
    message_ids = Unique("message id")
    dated: list[Dated] = []
    skipped: Counter[str] = Counter()
    for message in chat.at("messages").items():
        with tolerant.message(message, skipped):
            if _string(message.get("type")) not in ("", "message"):
                skipped["service message"] += 1  # joins, pins, calls, title changes
                continue
            text = _text(message.at("text")) if message.get("text") is not None else ""
            if not text:
                skipped["media without text"] += 1  # a photo, sticker or file without a caption
                continue
            turn_id = message_ids.claim(message.at("id").scalar(), message.keys)
            said_at, local = _times(message)
            speaker = _speaker(message)
            from_id = _string(message.get("from_id"))
            role = "owner" if from_id and (from_id == owner_id or (peer is not None and from_id != peer)) else ""
            turn = Turn(turn_id, speaker, text, said_at, role, _offset(message, said_at, local))
            dated.append(Dated(turn, local))
    name = _string(chat.get("name")) or None
    return Conversation(chat_id, by_day(dated), name, dict(skipped), owner_by_name=owner_id is None and peer is None)


def _times(message: Node):
    """(UTC, local): `date_unixtime` is the instant, `date` the exporter's wall clock (a message with only the
    instant is dated by it, its day taken in UTC)."""
    if message.get("date") is None and message.get("date_unixtime") is not None:
        instant = _instant(message.at("date_unixtime"))
        return instant, instant
    local_node = message.at("date")
    parsed = from_iso(local_node.text())
    if parsed is None:
        raise local_node.fail(f'is not a date like "2024-01-15T10:30:00": {quote(local_node.string())}')
    local = parsed[1]
    unix = message.get("date_unixtime")
    if unix is None:
        return local, local
    return _instant(unix), local


def _instant(unix: Node):
    """`date_unixtime` ("1709373600") as naive UTC."""
    raw = unix.scalar()
    said_at = from_epoch(float(raw)) if raw.isdigit() else None
    if said_at is None:
        raise unix.fail(f"is not a Unix time: {quote(raw)}")
    return said_at


def _speaker(message: Node) -> str:
    """Who wrote it: `from` (null for deleted accounts), else the sender's id."""
    name = _string(message.get("from"))
    return name or _string(message.get("from_id")) or "Deleted Account"


def _text(node: Node) -> str:
    """`text` as a string, or the concatenation of a list of strings and entities with a `text` member."""
    if isinstance(node.value, str):
        return node.string()
    pieces = []
    for part in node.items():
        if isinstance(part.value, str):
            pieces.append(part.value)
        else:
            inner = part.fields().get("text")
            pieces.append(inner if isinstance(inner, str) else "")
    joined = "".join(pieces)
    return Node(joined, node.keys).string()


def _string(node: Node | None) -> str:
    """An optional string member; absent is empty."""
    return node.string() if node is not None else ""


def _offset(message: Node, said_at: datetime, local: datetime) -> timedelta | None:
    """Where the exporting device was: `date` (its clock) minus `date_unixtime` (the instant); None unless the
    message has both."""
    both = message.get("date") is not None and message.get("date_unixtime") is not None
    return exporter_offset(local, said_at) if both else None


# a full export's "chats", or one chat's "messages"
def detect_telegram(data: object) -> float:
    """An account's export by its "chats"; a chat's own export by "messages" beside an "id", a shape other exports
    of message lists may share."""
    found = first_object(data)
    if "chats" in found:
        return SURE
    return LIKELY if "messages" in found and "id" in found else 0.0


FORMAT = ChatFormat(
    parse_telegram,
    detect_telegram,
    label="a Telegram export",
    hints=frozenset({"name", "type", "id", "messages", "messages[].id", "messages[].date", "messages[].text"}),
    streams=("chats.list.item", "left_chats.list.item"),
    stream_head=("personal_information",),
    parse_records=stream_telegram,
)
