"""The store's owner: whose export it is. Their turns carry their name, and "I" in a question means them."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import replace

from ripplecli.model import Conversation

OWNER = "owner"
ASSISTANT = "assistant"
ROLE_WORDS = frozenset({"me", "user", "human"})  # what exports call the owner when they give no name
# "I", "me", "my"... as a question uses them; "ME" (the state) and "i.e." are not the owner.
_FIRST_PERSON = re.compile(r"(?<![\w'’])(?:I|i|[Mm]e|[Mm]y|[Mm]ine|[Mm]yself)(?![\w'’]|[.\-]\w)")


def is_role_word(name: str) -> bool:
    """An export's word for its owner, not a name ("User", "Me", "Human")."""
    return name.strip().casefold() in ROLE_WORDS


def owner_names(conversations: Sequence[Conversation]) -> Iterator[str]:
    """The speaker of every owner turn, in order ("User", the account name, "me")."""
    return (t.speaker for c in conversations for s in c.sessions for t in s.turns if t.role == OWNER)


def owner_speaker(conversations: Sequence[Conversation]) -> str | None:
    """The name the export gives the owner's turns ("User", the account name), or None when it marks none."""
    return next(owner_names(conversations), None)


def default_owner_name(conversations: Sequence[Conversation]) -> str | None:
    """The name the owner's turns get when `me` is not set: the export's own, a bare role word capitalised
    ("user" -> "User", so a restatement opens "User: …", as a name would). A real name from any of the exports
    ("Alex" of a WhatsApp chat) wins over a role word (the notes' "me", ChatGPT's "user")."""
    names = list(owner_names(conversations))
    name = next((n for n in names if not is_role_word(n)), names[0] if names else None)
    if name is None or any(c.isupper() for c in name):
        return name
    return name[:1].upper() + name[1:]


def with_owner(conversation: Conversation, name: str | None) -> Conversation:
    """The conversation with the owner's turns spoken by `name` (unchanged without a name or owner turns)."""
    if not name or not any(t.role == OWNER for s in conversation.sessions for t in s.turns):
        return conversation
    sessions = [
        replace(s, turns=[replace(t, speaker=name) if t.role == OWNER else t for t in s.turns])
        for s in conversation.sessions
    ]
    return replace(conversation, sessions=sessions)


def name_key(name: str) -> str:
    """A name as `me` is compared with it, whatever its case and spacing ("alex  moreau" is "Alex Moreau")."""
    return " ".join(name.split()).casefold()


def claim_owner(conversation: Conversation, me: str | None) -> Conversation | None:
    """A chat whose export names no owner (a group chat, a Slack or Discord export) with the turns of the person
    `me` names marked as the owner's (they may have written nothing in it), or None when `me` names none of its
    people. Any other chat, or no `me`, is returned as it is."""
    if not conversation.owner_by_name or not me or not me.strip():
        return conversation
    key = name_key(me)
    named = {speaker for speaker in conversation.speakers if name_key(speaker) == key}
    alias = conversation.aliases.get(key)
    if alias is not None:
        named.add(alias)
    if not named:
        return None
    sessions = [
        replace(s, turns=[replace(t, role=OWNER) if t.speaker in named and not t.role else t for t in s.turns])
        for s in conversation.sessions
    ]
    return replace(conversation, sessions=sessions)


# "…the list you provided", "you mentioned…", "our previous conversation": the asker wants what the other party (an
# assistant) said, so their own turns are not the question's focus.
_SAID_BY_YOU = re.compile(
    r"\byou(?:'ve| have| had)?\s+(?:\w+\s+)?(?:told|said|mentioned|provided|gave|given|recommended|suggested|"
    r"created|wrote|written|listed|shared|explained|described|made|came up|helped|showed|shown|offered)\b"
    r"|\bdid you\s+(?:\w+\s+)?(?:tell|say|mention|recommend|suggest|give|provide|list|share|explain|show|write)\b"
    r"|\bour (?:previous|earlier|last|past) (?:conversation|chat|discussion|talk)\b",
    re.IGNORECASE,
)


def asks_what_you_said(question: str) -> bool:
    """Whether the question asks what its addressee said earlier, not what its asker did."""
    return _SAID_BY_YOU.search(question) is not None


def first_person_at(question: str) -> int | None:
    """Where the question first speaks of its asker ("What did I ask…"), or None when it never does."""
    match = _FIRST_PERSON.search(question)
    return match.start() if match else None
