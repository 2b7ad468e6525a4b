"""ChatGPT's data export (Settings → Data controls → Export data): `conversations.json`, one tree per conversation.

Each conversation's `mapping` holds message nodes linked by `parent`; the thread the page shows runs from the
root to `current_node` (to the newest leaf when an export leaves it out), so branches an edit left behind are
not read (they are counted, as `other branch`). Kept: what the user and the assistant wrote (the text parts of
multimodal messages), tool output with text, and canvas documents the assistant wrote; skipped and counted:
system and hidden messages, code sent to tools, reasoning and anything else without readable text. Each turn
keeps its message's id and time; the assistant's turns are spoken by "ChatGPT" (a tool's by its name). A
conversation without its id (an older export, a hand-made file) is named after the file, and joins the stored
chat its messages overlap (see ingest).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Iterator
from datetime import datetime

from ripplecli.formats.days import Dated, by_day, from_epoch
from ripplecli.formats.fields import ChatFormat, Node, Tolerant, keyed, located, quote, records_of
from ripplecli.model import Conversation, Turn

ROLES = {"user": "owner", "assistant": "assistant", "tool": "assistant"}
ASSISTANT_NAME = "ChatGPT"  # what a person calls the author the export names by its role, "assistant"
TEXT_CONTENT = frozenset({"text", "multimodal_text"})
CANVAS = frozenset({"canmore.create_textdoc", "canmore.update_textdoc"})
ID_KEYS = ("conversation_id", "id")
ID_KIND = (ID_KEYS, "conversation id")  # records' id keys and what a repeated one is called


def parse_chatgpt(data: object, source: str) -> list[Conversation]:
    """Read a ChatGPT export; a conversation's id is the export's `conversation_id` / `id`, one session per day."""
    root = Node(data)
    nodes = root.items() if isinstance(data, list) else [root]
    return list(stream_chatgpt({}, nodes, len(nodes), source))


def stream_chatgpt(_: dict, nodes: Iterable[Node], count: int | None, source: str) -> Iterator[Conversation]:
    """parse_chatgpt of a big export's conversations read one at a time (ripplecli.formats.stream)."""
    with located(source):
        tolerant = Tolerant()
        for export, conversation_id in records_of(nodes, count, source, *ID_KIND):
            yield _conversation(export, conversation_id, tolerant)
        tolerant.check()


def _conversation(export: Node, conversation_id: str, tolerant: Tolerant) -> Conversation:
    """One conversation of the export: its shown thread's turns, a session per day."""
    created_node = export.get("create_time")
    created = parse_epoch(created_node) if created_node else None
    dated, skipped = _thread_turns(export, created, tolerant)
    title = export.get("title")
    named_by_file = not any(export.get(key) for key in ID_KEYS)
    return Conversation(
        conversation_id, by_day(dated), (title.string() if title else "") or None, skipped, named_by_file=named_by_file
    )


def _thread_turns(export: Node, created: datetime | None, tolerant: Tolerant) -> tuple[list[Dated], dict[str, int]]:
    """Turns along the shown thread, and the messages left out by reason (those of other branches too)."""
    dated: list[Dated] = []
    skipped: Counter[str] = Counter()
    thread = _thread(export)
    on_thread = {node_id for node_id, _ in thread}
    for node_id, value in export.at("mapping").fields().items():
        if node_id not in on_thread and isinstance(value, dict) and value.get("message") is not None:
            skipped["other branch"] += 1  # an edit or a regenerated answer the page no longer shows
    for node_id, node in thread:
        message = node.get("message")
        if message is None:
            continue
        with tolerant.message(message, skipped):
            spoken = _spoken(message)
            if isinstance(spoken, str):
                skipped[spoken] += 1
                continue
            speaker, text, role = spoken
            stamp = message.get("create_time")
            said_at = parse_epoch(stamp) if stamp else None
            dated.append(Dated(Turn(node_id, speaker, text, said_at, role), said_at or created))
    return dated, dict(skipped)


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


def _spoken(message: Node) -> tuple[str, str, str] | str:
    """(speaker, text, role) of a message worth keeping; for one skipped, why ("hidden", "sent to a tool")."""
    author = message.at("author")
    kind = author.at("role").string()
    role = ROLES.get(kind)
    metadata = message.get("metadata")
    content = message.get("content")
    if role is None:
        return "system message"
    if content is None:
        return "no text"
    if metadata is not None and metadata.fields().get("is_visually_hidden_from_conversation") is True:
        return "hidden"
    recipient = message.get("recipient")
    target = recipient.string() if recipient is not None else "all"
    name = author.get("name")
    tool = name.string() if name is not None and kind == "tool" else ""
    speaker = tool or (ASSISTANT_NAME if kind == "assistant" else kind)
    if target in CANVAS:
        text = _canvas_text(content)
    elif target != "all":
        return "sent to a tool"
    else:
        text = _content_text(content, tool=kind == "tool")
    return (speaker, text, role) if text else "no text"


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
    updates = found if isinstance(found := payload.get("updates"), list) else []
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
FORMAT = ChatFormat(
    parse_chatgpt,
    keyed("mapping"),
    label="a ChatGPT export",
    hints=frozenset({"mapping", "current_node", "create_time", "title"}),
    streams=("item",),
    parse_records=stream_chatgpt,
)
