"""ChatGPT's data export (conversations.json): message trees, of which only the shown thread is the chat."""

from __future__ import annotations

from datetime import UTC, datetime

from ripplecli.formats.fields import ChatFormat, Node, located, quote, records
from ripplecli.model import Conversation, Session, Turn

SPEAKERS = {"user": "User", "assistant": "Assistant"}
TEXT_CONTENT = frozenset({"text", "multimodal_text"})


def parse_chatgpt(data: object, source: str) -> list[Conversation]:
    """Read a ChatGPT export; each conversation becomes one session dated by its create_time."""
    with located(source):
        conversations = []
        for export, conversation_id in records(data, source, ("conversation_id", "id"), "conversation id"):
            created = export.get("create_time")
            session = Session("1", parse_epoch(created) if created else None, _thread_turns(export))
            conversations.append(Conversation(conversation_id, [session]))
        return conversations


def _thread_turns(export: Node) -> list[Turn]:
    """User and assistant text along the shown thread, numbered D1:1, D1:2, ..."""
    said = [line for node in _thread(export) if (line := _spoken(node)) is not None]
    return [Turn(f"D1:{position}", speaker, text) for position, (speaker, text) in enumerate(said, start=1)]


def _thread(export: Node) -> list[Node]:
    """Nodes from the root to current_node: following parents skips the branches an edit left behind."""
    mapping = export.at("mapping")
    nodes = mapping.fields()
    reference: Node | None = export.at("current_node")
    seen: set[str] = set()
    chain = []
    while reference is not None:
        node_id = reference.text()
        if node_id not in nodes:
            raise reference.fail(f"points to node {quote(node_id)}, which is not in mapping")
        if node_id in seen:
            raise reference.fail(f"closes a cycle of parents at node {quote(node_id)}")
        seen.add(node_id)
        node = mapping.at(node_id)
        chain.append(node)
        reference = node.get("parent")
    return chain[::-1]


def _spoken(node: Node) -> tuple[str, str] | None:
    """(speaker, text) of a visible user/assistant text message; None for system, tool and hidden ones."""
    message = node.get("message")
    if message is None or not _shown_as_text(message):
        return None
    speaker = SPEAKERS.get(message.at("author").at("role").string())
    parts = message.at("content").get("parts")
    texts = [part.string() for part in parts.items() if isinstance(part.value, str)] if parts else []
    text = "\n".join(piece for piece in texts if piece)
    return (speaker, text) if speaker and text else None


def _shown_as_text(message: Node) -> bool:
    """Whether the ChatGPT page shows this message as prose: not hidden, not a tool call, text content."""
    metadata = message.get("metadata")
    recipient = message.get("recipient")
    content = message.get("content")
    return (
        content is not None
        and content.at("content_type").string() in TEXT_CONTENT
        and (recipient is None or recipient.string() == "all")
        and (metadata is None or metadata.fields().get("is_visually_hidden_from_conversation") is not True)
    )


def parse_epoch(node: Node) -> datetime:
    """A Unix time in seconds as naive UTC."""
    seconds = node.number()
    try:
        return datetime.fromtimestamp(seconds, UTC).replace(tzinfo=None)
    except (OverflowError, ValueError, OSError):
        raise node.fail(f"is not a usable Unix time: {seconds!r}") from None


FORMAT = ChatFormat("mapping", parse_chatgpt)  # ChatGPT export conversations: recognised by "mapping"
