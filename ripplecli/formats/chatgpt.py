"""ChatGPT's data export (Settings → Data controls → Export data): `conversations.json`, one tree per conversation.

Each conversation's `mapping` holds message nodes linked by `parent`; the thread the page shows runs from the
root to `current_node` (to the newest leaf when an export leaves it out), so branches an edit left behind are
not read. Kept: what the user and the assistant wrote (the text parts of multimodal messages), tool output
with text, and canvas documents the assistant wrote; skipped and counted: system and hidden messages, code
sent to tools, reasoning and anything else without readable text. Each turn keeps its message's id and time;
the assistant's turns are spoken by "ChatGPT" (a tool's by its name).
"""

from __future__ import annotations

import json
from datetime import datetime

from ripplecli.formats.days import Dated, by_day, from_epoch
from ripplecli.formats.fields import ChatFormat, Node, keyed, located, quote, records
from ripplecli.model import Conversation, Turn

ROLES = {"user": "owner", "assistant": "assistant", "tool": "assistant"}
ASSISTANT_NAME = "ChatGPT"  # what a person calls the author the export names by its role, "assistant"
TEXT_CONTENT = frozenset({"text", "multimodal_text"})
CANVAS = frozenset({"canmore.create_textdoc", "canmore.update_textdoc"})


def parse_chatgpt(data: object, source: str) -> list[Conversation]:
    """Read a ChatGPT export; a conversation's id is the export's `conversation_id` / `id`, one session per day."""
    with located(source):
        conversations = []
        for export, conversation_id in records(data, source, ("conversation_id", "id"), "conversation id"):
            created_node = export.get("create_time")
            created = parse_epoch(created_node) if created_node else None
            dated, skipped = _thread_turns(export, created)
            title = export.get("title")
            conversations.append(
                Conversation(conversation_id, by_day(dated), (title.string() if title else "") or None, skipped)
            )
        return conversations


def _thread_turns(export: Node, created: datetime | None) -> tuple[list[Dated], int]:
    """Turns along the shown thread, and how many messages on it were skipped."""
    dated: list[Dated] = []
    skipped = 0
    for node_id, node in _thread(export):
        message = node.get("message")
        if message is None:
            continue
        spoken = _spoken(message)
        if spoken is None:
            skipped += 1
            continue
        speaker, text, role = spoken
        stamp = message.get("create_time")
        said_at = parse_epoch(stamp) if stamp else None
        dated.append(Dated(Turn(node_id, speaker, text, said_at, role), said_at or created))
    return dated, skipped


def _thread(export: Node) -> list[tuple[str, Node]]:
    """(id, node) from the root to current_node, or to the newest leaf when current_node is absent."""
    mapping = export.at("mapping")
    nodes = mapping.fields()
    reference: Node | None = export.get("current_node")
    node_id = reference.text() if reference is not None else _newest_leaf(mapping)
    seen: set[str] = set()
    chain = []
    while node_id is not None:
        if node_id not in nodes:
            raise (reference or mapping).fail(f"points to node {quote(node_id)}, which is not in mapping")
        if node_id in seen:
            raise (reference or mapping).fail(f"closes a cycle of parents at node {quote(node_id)}")
        seen.add(node_id)
        node = mapping.at(node_id)
        chain.append((node_id, node))
        reference = node.get("parent")
        node_id = reference.text() if reference is not None else None
    return chain[::-1]


def _newest_leaf(mapping: Node) -> str | None:
    """The leaf whose message is newest (the last leaf in file order on a tie): what the page would show."""
    best: tuple[float, int, str] | None = None
    for order, (node_id, value) in enumerate(mapping.fields().items()):
        node = mapping.at(node_id)
        children = node.get("children")
        if children is not None and children.items():
            continue
        message = value.get("message") if isinstance(value, dict) else None
        stamp = message.get("create_time") if isinstance(message, dict) else None
        key = (float(stamp) if isinstance(stamp, int | float) and not isinstance(stamp, bool) else float("-inf"), order)
        if best is None or key > best[:2]:
            best = (*key, node_id)
    return best[2] if best else None


def _spoken(message: Node) -> tuple[str, str, str] | None:
    """(speaker, text, role) of a message worth keeping; None for the ones skipped."""
    author = message.at("author")
    kind = author.at("role").string()
    role = ROLES.get(kind)
    metadata = message.get("metadata")
    content = message.get("content")
    if role is None or content is None:
        return None
    if metadata is not None and metadata.fields().get("is_visually_hidden_from_conversation") is True:
        return None
    recipient = message.get("recipient")
    target = recipient.string() if recipient is not None else "all"
    name = author.get("name")
    tool = name.string() if name is not None and kind == "tool" else ""
    speaker = tool or (ASSISTANT_NAME if kind == "assistant" else kind)
    if target in CANVAS:
        text = _canvas_text(content)
    elif target != "all":
        return None
    else:
        text = _content_text(content, tool=kind == "tool")
    return (speaker, text, role) if text else None


def _content_text(content: Node, tool: bool) -> str:
    """Text parts of text and multimodal content (images and audio are not text); a tool's `text` field too."""
    kind = content.at("content_type").string()
    if kind in TEXT_CONTENT:
        parts = content.get("parts")
        texts = []
        for part in parts.items() if parts else []:
            if isinstance(part.value, str):
                texts.append(part.string())
            elif isinstance(part.value, dict) and isinstance(part.value.get("text"), str):
                texts.append(part.at("text").string())  # an audio transcription
        return "\n".join(piece for piece in texts if piece)
    text = content.get("text")
    return text.string() if tool and text is not None else ""


def _canvas_text(content: Node) -> str:
    """A canvas document the assistant wrote: the `content` of a create, the replacements of an update."""
    text = content.get("text")
    if text is None:
        return ""
    try:
        payload = json.loads(text.string())
    except ValueError:
        return ""
    if not isinstance(payload, dict):
        return ""
    if isinstance(payload.get("content"), str):
        return Node(payload["content"], text.keys).string()
    updates = payload.get("updates") if isinstance(payload.get("updates"), list) else []
    pieces = [u["replacement"] for u in updates if isinstance(u, dict) and isinstance(u.get("replacement"), str)]
    return Node("\n".join(pieces), text.keys).string()


def parse_epoch(node: Node) -> datetime:
    """A Unix time in seconds as naive UTC."""
    seconds = node.number()
    stamp = from_epoch(seconds)
    if stamp is None:
        raise node.fail(f"is not a usable Unix time: {seconds!r}")
    return stamp


# ChatGPT export conversations: recognised by "mapping"
FORMAT = ChatFormat(parse_chatgpt, keyed("mapping"), label="a ChatGPT export")
