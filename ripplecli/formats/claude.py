"""Claude.ai's data export (Settings → Privacy → Export data): `conversations.json`, a list of conversations.

Each has a `uuid`, a `name` (its title) and `chat_messages` in order, each with its own `uuid`, `sender`
(`human` or `assistant`), `created_at` and either `content` blocks (the text ones are read; tool calls and
results are skipped) or a plain `text`. Attached files' extracted text is not read: it is the file, not the chat.
The assistant's messages are spoken by "Claude". The export's `users.json`, beside `conversations.json`, names the
account holder (`full_name`): the owner's turns carry that name rather than "human" when it is there.
Messages that name a `parent_message_uuid` form a tree (an edited prompt or a retried answer starts a branch):
only the branch the page shows is read, from `current_leaf_message_uuid` or else the newest leaf.
"""

from __future__ import annotations

import json
from collections import Counter

from ripplecli.formats.days import Dated, by_day, from_iso
from ripplecli.formats.fields import ChatFormat, Node, Tolerant, Unique, clean_text, keyed, located, quote
from ripplecli.model import Conversation, Turn

ROLES = {"human": "owner", "user": "owner", "assistant": "assistant"}
ASSISTANT_NAME = "Claude"  # what a person calls the sender the export names by its role, "assistant"


def parse_claude(data: object, source: str) -> list[Conversation]:
    """Read a Claude export (a list of conversations, or one); a conversation's id is its uuid."""
    with located(source):
        root = Node(data)
        records = root.items() if isinstance(data, list) else [root]
        ids = Unique("conversation uuid")
        tolerant = Tolerant()
        conversations = []
        for record in records:
            uuid = record.at("uuid")
            conversation_id = ids.claim(uuid.text(), uuid.keys)
            name = record.get("name")
            title = name.string() if name is not None else ""
            sessions, skipped = _sessions(record, tolerant)
            conversations.append(Conversation(conversation_id, sessions, title or None, skipped))
        tolerant.check()
        return conversations


def _sessions(record: Node, tolerant: Tolerant) -> tuple[list, dict[str, int]]:
    """Messages with text, one session per UTC day, and the messages left out, by reason."""
    message_ids = Unique("message uuid")
    skipped: Counter[str] = Counter()
    dated = []
    messages = record.at("chat_messages").items()
    shown = _shown_branch(record, messages)
    for message in messages:
        with tolerant.message(message, skipped):
            if shown is not None and _uuid(message) not in shown:
                skipped["other branch"] += 1  # a branch left behind by an edit or a retry
                continue
            sender = message.at("sender")
            role = ROLES.get(sender.string())
            if role is None:
                skipped["unknown sender"] += 1
                continue
            text = _text(message)
            if not text:
                skipped["no text"] += 1  # tool calls and results, attachments only
                continue
            turn_id = message_ids.claim(message.at("uuid").text(), message.keys)
            said_at = _time(message)
            speaker = ASSISTANT_NAME if role == "assistant" else sender.string()
            dated.append(Dated(Turn(turn_id, speaker, text, said_at, role), said_at))
    return by_day(dated), dict(skipped)


def _uuid(message: Node) -> str | None:
    """A message's uuid when it is a string (shapes are checked when the message is read)."""
    fields = message.value if isinstance(message.value, dict) else {}
    uuid = fields.get("uuid")
    return uuid if isinstance(uuid, str) else None


def _shown_branch(record: Node, messages: list[Node]) -> set[str] | None:
    """The uuids from the shown leaf up to the root, or None for a flat export without parent links."""
    parent_of: dict[str, str] = {}
    created: dict[str, str] = {}
    for message in messages:
        fields = message.value if isinstance(message.value, dict) else {}
        uuid, parent = _uuid(message), fields.get("parent_message_uuid")
        if uuid is not None and isinstance(parent, str):
            parent_of[uuid] = parent
        if uuid is not None:
            created[uuid] = stamp if isinstance(stamp := fields.get("created_at"), str) else ""
    if not parent_of:
        return None
    parents = set(parent_of.values())
    leaves = [uuid for uuid in created if uuid not in parents]
    current = record.value.get("current_leaf_message_uuid") if isinstance(record.value, dict) else None
    leaf = current if current in created else max(leaves, key=lambda uuid: created[uuid], default=None)
    branch: set[str] = set()
    while leaf in created and leaf not in branch:
        branch.add(leaf)
        leaf = parent_of.get(leaf)
    return branch


def _text(message: Node) -> str:
    """The text blocks of `content` joined, else `text`."""
    content = message.get("content")
    if content is not None:
        blocks = [block for block in content.items() if block.fields().get("type") == "text"]
        texts = [block.at("text").string() for block in blocks]
        if any(texts):
            return "\n\n".join(text for text in texts if text)
    text = message.get("text")
    return text.string() if text is not None else ""


def _time(message: Node):
    """`created_at` as naive UTC; a message without one has no time."""
    node = message.get("created_at")
    if node is None:
        return None
    parsed = from_iso(node.string())
    if parsed is None:
        raise node.fail(f'is not an ISO 8601 time like "2024-05-01T09:30:00Z": {quote(node.string())}')
    return parsed[0]


def account_name(raw: bytes) -> str | None:
    """The account holder's `full_name` from `users.json` when it names exactly one user; None for anything else
    (the file is not a chat: a damaged or unexpected one leaves the owner's turns as "human", it refuses nothing)."""
    try:
        users = json.loads(raw.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
    if isinstance(users, dict):
        users = [users]
    if not isinstance(users, list) or len(users) != 1 or not isinstance(users[0], dict):
        return None
    name = users[0].get("full_name")
    if not isinstance(name, str):
        return None
    return " ".join(clean_text(name).split())[:NAME_LIMIT] or None


NAME_LIMIT = 100  # characters of a full name kept (a name, not a paragraph)

# Claude.ai export conversations: recognised by "chat_messages"
FORMAT = ChatFormat(
    parse_claude,
    keyed("chat_messages"),
    label="a Claude export",
    hints=frozenset({"uuid", "name", "chat_messages", "chat_messages[].uuid", "chat_messages[].sender"}),
    account_file="users.json",
    account_name=account_name,
)
