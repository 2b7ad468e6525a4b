"""Slack's workspace export (Workspace settings → Import/Export data → Export): a zip, or the folder it unpacks to.

`users.json` names the people, `channels.json` (and `groups.json`, `dms.json`, `mpims.json` where the export
has them) the conversations, and each conversation's folder holds one `YYYY-MM-DD.json` list of messages per
day. Each message has a `ts` (its id and its time), a `user` and `text`; bot messages, joins, topic changes and
other subtyped events and files without text are skipped and counted, and `<@U123>` mentions become the person's
name. A workspace export does not say who exported it: `me` names the owner among its people, by the name Slack
shows, their real name or their handle.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import replace
from pathlib import PurePosixPath

from ripplecli.errors import InputError
from ripplecli.formats.days import Dated, by_day, from_epoch
from ripplecli.formats.fields import ChatFormat, Claim, Node, Tolerant, Unique, located, quote
from ripplecli.formats.text import ExportFolder
from ripplecli.model import Conversation, Turn
from ripplecli.owner import name_key

LISTS = ("channels.json", "groups.json", "dms.json", "mpims.json")
SPOKEN_SUBTYPES = frozenset({"", "thread_broadcast", "me_message", "file_share"})
_MENTION = re.compile(r"<([@#!])([^>|]+)(?:\|([^>]*))?>")
_LINK = re.compile(r"<((?:https?|mailto):[^>|]+)(?:\|([^>]*))?>")


def find_root(paths: list[str]) -> str | None:
    """The folder (inside a zip or a folder) that holds users.json and channels.json, or None."""
    for path in sorted(paths, key=len):
        parent = PurePosixPath(path).parent
        if PurePosixPath(path).name == "users.json" and str(parent / "channels.json").lstrip("./") in {
            p.lstrip("./") for p in paths
        }:
            return "" if str(parent) == "." else str(parent) + "/"
    return None


def parse_slack(tree: ExportFolder, source: str) -> list[Conversation]:
    """Read every conversation of the export; one conversation per channel, a session per day."""
    root = find_root(list(tree.members))
    if root is None:
        raise InputError(f"{source}: is not a Slack export (it needs users.json and channels.json)")
    names = _people(_member(tree, root + "users.json", source), f"{source}: {root}users.json")
    conversations = []
    ids = Unique("channel id")
    tolerant = Tolerant()
    for listing in LISTS:
        if root + listing not in tree.members:
            continue
        where = f"{source}: {root}{listing}"
        with located(where):
            channels = Node(tree.members[root + listing]).items()
        for channel in channels:
            with located(where):
                channel_id, folder, title = _channel(channel, names)
                ids.claim(channel_id, channel.keys)
            days = sorted(p for p in tree.members if p.startswith(f"{root}{folder}/") and p.endswith(".json"))
            dated: list[Dated] = []
            skipped: Counter[str] = Counter()
            for day in days:
                with located(f"{source}: {day}"):
                    dated += _day(Node(tree.members[day]), names, skipped, tolerant, f"{source}: {day}")
            first: dict[str, Dated] = {}
            for d in dated:
                first.setdefault(d.turn.turn_id, d)
            kept = list(first.values())
            if len(kept) < len(dated):
                skipped["repeated message"] += len(dated) - len(kept)  # the same ts in two day files
            conversations.append(Conversation(f"slack-{channel_id}", by_day(kept), title, dict(skipped)))
    tolerant.check()
    aliases = _aliases(tree.members[root + "users.json"], names)
    return [replace(c, owner_by_name=True, aliases=aliases) for c in conversations]


def _member(tree: ExportFolder, path: str, source: str) -> object:
    """A required member's JSON."""
    if path not in tree.members:
        raise InputError(f"{source}: has no {path}")
    return tree.members[path]


def _people(data: object, where: str) -> dict[str, str]:
    """User id -> the name Slack shows (display name, else real name, else user name)."""
    names = {}
    with located(where):
        users = [user.fields() for user in Node(data).items()]
    for fields in users:
        profile = found if isinstance(found := fields.get("profile"), dict) else {}
        options = (profile.get("display_name"), profile.get("real_name"), fields.get("real_name"), fields.get("name"))
        name = next((value.strip() for value in options if isinstance(value, str) and value.strip()), "")
        if isinstance(fields.get("id"), str) and name:
            names[fields["id"]] = name
    return names


def _aliases(data: object, names: dict[str, str]) -> dict[str, str]:
    """Every name of a workspace's people (the name Slack shows, their real name, their handle), folded as `me` is
    compared, -> the name their turns carry: `me` names its owner by any of them."""
    aliases: dict[str, str] = {}
    for user in data if isinstance(data, list) else []:
        user_id = user.get("id") if isinstance(user, dict) else None
        shown = names.get(user_id) if isinstance(user_id, str) else None
        if shown is None:
            continue
        profile = user.get("profile") if isinstance(user.get("profile"), dict) else {}
        known = (profile.get("display_name"), profile.get("real_name"), user.get("real_name"), user.get("name"))
        for name in (shown, *known):
            if isinstance(name, str) and name.strip():
                aliases.setdefault(name_key(name), shown)
    return aliases


def _channel(channel: Node, names: dict[str, str]) -> tuple[str, str, str | None]:
    """(id, folder, title): channels' folders are named after them, direct messages' after their id (and
    titled by their members)."""
    channel_id = channel.at("id").text()
    name = channel.get("name")
    if name is not None:
        return channel_id, name.text(), f"#{name.text()}"
    members = channel.get("members")
    people = [names.get(m.value, m.value) for m in members.items() if isinstance(m.value, str)] if members else []
    return channel_id, channel_id, f"messages: {', '.join(people)}" if people else None


def _day(messages: Node, names: dict[str, str], skipped: Counter[str], tolerant: Tolerant, where: str) -> list[Dated]:
    """One day file's messages that people wrote, with text; the others counted in `skipped` by reason."""
    dated = []
    for message in messages.items():
        with tolerant.message(message, skipped, where):
            reason = _left_out(message.fields())
            body = _readable(message.at("text").string(), names) if not reason else ""
            if reason or not body:
                skipped[reason or "no text"] += 1
                continue
            dated.append(_dated(message, body, names))
    return dated


def _left_out(fields: dict) -> str:
    """Why a message is not one a person wrote ("bot message", "event": a join or a topic change), else ""."""
    subtype = fields.get("subtype") or ""
    if subtype == "bot_message" or (not subtype and "bot_id" in fields and "user" not in fields):
        return "bot message"
    if subtype not in SPOKEN_SUBTYPES or fields.get("type", "message") != "message":
        return "event"
    return "" if fields.get("text") is not None else "no text"


def _dated(message: Node, body: str, names: dict[str, str]) -> Dated:
    """A message people wrote: its `ts` is its id and its time; its speaker the name Slack shows."""
    fields = message.fields()
    ts = message.at("ts")
    try:
        said_at = from_epoch(float(ts.text()))
    except ValueError:
        said_at = None
    if said_at is None:
        raise ts.fail(f'is not a Slack timestamp like "1700000000.000100": {quote(ts.string())}')
    user = fields.get("user")
    profile = found if isinstance(found := fields.get("user_profile"), dict) else {}
    speaker = names.get(user) if isinstance(user, str) else None
    speaker = speaker or profile.get("real_name") or fields.get("username") or (user if isinstance(user, str) else "")
    return Dated(Turn(ts.text(), str(speaker or "unknown"), body, said_at, ""), said_at)


def _readable(text: str, names: dict[str, str]) -> str:
    """Slack's markup as people read it: mentions by name, links by their label."""
    text = _LINK.sub(lambda m: m.group(2) or m.group(1), text)

    def mention(match: re.Match) -> str:
        kind, target, label = match.groups()
        if kind == "@":
            return "@" + (names.get(target) or label or target)
        if kind == "#":
            return "#" + (label or target)
        return "@" + (label or target)

    text = _MENTION.sub(mention, text)
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&").strip()


def detect_slack(paths: list[str]) -> Claim | None:
    """The export in a zip or folder: its JSON files under the folder that holds users.json and channels.json."""
    root = find_root(paths)
    if root is None:
        return None
    return Claim(frozenset(path for path in paths if path.endswith(".json") and path.startswith(root)))


FORMAT = ChatFormat(parse_slack, detect_slack, reads="tree", label="a Slack export")
