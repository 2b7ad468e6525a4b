"""ripple's own chat format: the smallest JSON that says who said what, in which sitting, and when.

A file holds one conversation object or a list of them::

    {
      "conversation_id": "dinner-plans",          # optional; default: the file stem (numbered in a list)
      "title": "Dinner plans",                    # optional; shown beside the id
      "sessions": [
        {
          "id": "s1",                             # optional; default: "1", "2", ... by position
          "timestamp": "2023-04-23T19:30:00",     # optional, may be null; ISO 8601
          "turns": [
            {"speaker": "Alex", "text": "Have you been to Harbor Grill?",
             "id": "D1:1",                        # optional; default: "D<session>:<turn>", 1-based
             "image_caption": "a photo of ...",   # optional; appended to the text as " [image: ...]"
             "said_at": "2023-04-23T19:31:05",    # optional; when this message was sent (ISO 8601)
             "role": "owner"}                     # optional; "owner" (you), "assistant" (an AI) or omitted
          ]
        }
      ]
    }

Timestamps with a time zone are stored in UTC with their offset, and their day is the day where they were said
(`2026-03-10T20:00:00-07:00` is the evening of 10 March); timestamps without one are taken as the wall-clock time
where they were said; date-only values mean midnight.
Speakers and texts must be non-empty strings (a turn whose text is empty is allowed only when it carries an
image caption), and turn ids must be unique within a conversation. Unknown keys are ignored. A turn whose role
is "owner" is stored under the store owner's name (`ripple config set me NAME`).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from ripplecli.formats.fields import ChatFormat, Node, Unique, keyed, located, quote, records, with_caption
from ripplecli.model import Conversation, Session, Turn

ROLES = ("owner", "assistant")


def parse_native(data: object, source: str) -> list[Conversation]:
    """Read native-format data parsed from the file named `source`."""
    with located(source):
        return [
            _conversation(document, conversation_id)
            for document, conversation_id in records(data, source, ("conversation_id",), "conversation id")
        ]


def _conversation(document: Node, conversation_id: str) -> Conversation:
    """One conversation object; turn ids are checked for uniqueness across all its sessions."""
    turn_ids, session_ids = Unique("turn id"), Unique("session id")
    sessions = []
    for number, node in enumerate(document.at("sessions").items(), start=1):
        session = _session(node, number, turn_ids)
        session_ids.claim(session.session_id, node.keys)
        sessions.append(session)
    title = document.get("title")
    named_by_file = document.get("conversation_id") is None
    return Conversation(conversation_id, sessions, title.text() if title else None, named_by_file=named_by_file)


def _session(node: Node, number: int, turn_ids: Unique) -> Session:
    """One sitting; its turns get default ids D<session>:<turn> when the file has none."""
    given_id = node.get("id")
    stamp = node.get("timestamp")
    turns = [
        _turn(turn, f"D{number}:{position}", turn_ids)
        for position, turn in enumerate(node.at("turns").items(), start=1)
    ]
    when, offset = parse_iso(stamp) if stamp else (None, None)
    return Session(given_id.text() if given_id else str(number), when, turns, offset)


def _turn(node: Node, fallback_id: str, turn_ids: Unique) -> Turn:
    """One utterance; an image caption may stand in for empty text."""
    given_id = node.get("id")
    turn_id = given_id.text() if given_id else fallback_id
    turn_ids.claim(turn_id, given_id.keys if given_id else node.keys)
    caption_node = node.get("image_caption")
    caption = caption_node.string() if caption_node else ""
    text_node = node.at("text")
    text = with_caption(text_node.string() if caption else text_node.text(), caption)
    said = node.get("said_at")
    said_at, offset = parse_iso(said) if said else (None, None)
    return Turn(turn_id, node.at("speaker").text(), text, said_at, _role(node.get("role")), offset)


def _role(node: Node | None) -> str:
    """Who wrote a turn, when the file says: the store's owner or an AI assistant."""
    if node is None:
        return ""
    role = node.string()
    if role not in ROLES:
        raise node.fail(f"must be one of {', '.join(ROLES)} (got {quote(role)})")
    return role


def parse_iso(node: Node) -> tuple[datetime, timedelta | None]:
    """An ISO 8601 timestamp as naive time and its UTC offset: an aware value in UTC with its offset, a naive one as
    written with None."""
    raw = node.string()
    try:
        stamp = datetime.fromisoformat(raw)
        return (stamp.astimezone(UTC).replace(tzinfo=None), stamp.utcoffset()) if stamp.tzinfo else (stamp, None)
    except ValueError:
        raise node.fail(f"is not an ISO 8601 date-time: {quote(raw)}") from None
    except OverflowError:
        raise node.fail(f"is out of range once converted to UTC: {quote(raw)}") from None


# ripple's own JSON: recognised by "sessions"
FORMAT = ChatFormat(
    parse_native,
    keyed("sessions"),
    label="ripple's native JSON",
    hints=frozenset({"sessions", "sessions[].turns"}),
)
