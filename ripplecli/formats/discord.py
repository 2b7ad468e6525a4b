"""DiscordChatExporter's JSON (`DiscordChatExporter.Cli export -f Json`): one channel per file.

The file has `guild`, `channel` and `messages`, each message an `id`, a `type` (`Default` and `Reply` are
what people wrote; joins, pins, calls and the like are skipped), an ISO `timestamp` with the exporter's offset,
`content` and an `author` (`name`, `nickname`). The exporter does not say who exported: `me` names the owner
among the channel's people, by nickname or user name. A message written twice (a repeated id) or that cannot be
read is skipped and counted.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

from ripplecli.formats.days import Dated, by_day, zoned_iso
from ripplecli.formats.fields import ChatFormat, Node, Tolerant, Unique, keyed, located, quote
from ripplecli.model import Conversation, Turn, wall_clock
from ripplecli.owner import name_key

SPOKEN = frozenset({"Default", "Reply", ""})


def parse_discord(data: object, source: str) -> list[Conversation]:
    """Read one exported channel; its id is the channel's Discord id."""
    with located(source):
        root = Node(data)
        channel = root.at("channel")
        channel_id = channel.at("id").scalar()
        name = channel.get("name")
        guild = root.get("guild")
        guild_name = guild.get("name") if guild is not None else None
        title = " / ".join(part.string() for part in (guild_name, name) if part is not None and part.string())
        dated, skipped = _messages(root.at("messages"))
        chat = Conversation(f"discord-{channel_id}", by_day(dated), title or None, skipped)
        return [replace(chat, owner_by_name=True, aliases=_aliases(root.at("messages")))]


def _messages(messages: Node) -> tuple[list[Dated], dict[str, int]]:
    """Messages people wrote, with text; the rest, and messages that cannot be read (a repeated id), counted by
    reason as skipped (the file is refused when most cannot be read)."""
    ids = Unique("message id")
    tolerant = Tolerant()
    dated: list[Dated] = []
    skipped: Counter[str] = Counter()
    for message in messages.items():
        with tolerant.message(message, skipped):
            kind = message.get("type")
            content = message.get("content")
            text = content.string() if content is not None else ""
            if (kind.string() if kind is not None else "") not in SPOKEN:
                skipped["system message"] += 1  # joins, pins, calls, renames
                continue
            if not text:
                skipped["no text"] += 1  # an attachment, embed or sticker only
                continue
            turn_id = ids.claim(message.at("id").scalar(), message.keys)
            stamp = message.at("timestamp")
            parsed = zoned_iso(stamp.text())
            if parsed is None:
                raise stamp.fail(f'is not an ISO 8601 time like "2024-01-15T10:30:00+00:00": {quote(stamp.string())}')
            author = message.at("author")
            nickname = author.get("nickname")
            speaker = (nickname.string() if nickname is not None else "") or author.at("name").text()
            said_at, offset = parsed
            dated.append(Dated(Turn(turn_id, speaker, text, said_at, "", offset), wall_clock(said_at, offset)))
    tolerant.check()
    return dated, dict(skipped)


def _aliases(messages: Node) -> dict[str, str]:
    """Authors' user names, folded as `me` is compared, -> the nickname their turns carry."""
    aliases: dict[str, str] = {}
    for message in messages.items():
        author = message.value.get("author") if isinstance(message.value, dict) else None
        if not isinstance(author, dict):
            continue
        name, nickname = author.get("name"), author.get("nickname")
        if isinstance(name, str) and name.strip() and isinstance(nickname, str) and nickname.strip():
            aliases.setdefault(name_key(name), nickname)
    return aliases


# DiscordChatExporter channels: recognised by "guild"
FORMAT = ChatFormat(
    parse_discord,
    keyed("guild"),
    label="a DiscordChatExporter file",
    hints=frozenset({"guild", "channel", "messages", "messages[].id", "messages[].timestamp", "messages[].author"}),
)
