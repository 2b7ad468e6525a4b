"""From a path to validated conversations, or one line that says which file is wrong, where, and how."""

from __future__ import annotations

import json
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from ripplecli.errors import InputError
from ripplecli.formats.bundle import (  # noqa: F401  (MAX_BUNDLE_BYTES, is_chat_member: as callers import them)
    MAX_BUNDLE_BYTES,
    Entry,
    Member,
    bundle_entries,
    is_chat_member,
    member_name,
    read_entries,
)
from ripplecli.formats.detect import (
    HELP,
    UnknownFormat,
    claim_bundles,
    describe_text,
    detect_format,
    json_guess,
    looks_like,
    surer_text_format,
    text_format,
)
from ripplecli.formats.fields import ChatFormat, Claim, Keys, ShapeError, json_path
from ripplecli.formats.stream import STREAM_BYTES, Source, StreamedFile, can_stream, open_stream
from ripplecli.formats.text import TEXT_SUFFIXES, ExportFolder, TextDoc
from ripplecli.model import Conversation
from ripplecli.owner import with_owner
from ripplecli.registry import FORMATS

MAX_ACCOUNT_BYTES = 1 << 20  # an account file beside the chats names a person; a bigger one is not that file

_WHITESPACE = re.compile(r"[ \t\n\r]*")


@dataclass
class Reading:
    """What an input gave: its conversations, for a zip or folder what became of each file in it, and warnings
    about how a file was read (a chat read as notes because --format said so)."""

    conversations: list[Conversation]
    members: list[Member] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    # A big export checked record by record (read_input with stream=True): its conversations come in chunks from
    # stream.chunks(), and `conversations` is empty.
    stream: StreamedFile | None = None


def reads(fmt: str) -> str:
    """What the format's parser is given: "json", "text" or "tree"."""
    reader: ChatFormat = FORMATS.load(fmt)
    return reader.reads


def check_format(fmt: str, name: str = "") -> None:
    """Refuse an unknown --format before any file is opened."""
    if fmt != "auto" and fmt not in FORMATS:
        prefix = f"{name}: " if name else ""
        raise InputError(f"{prefix}unknown --format '{fmt}' (choose from: auto, {', '.join(sorted(FORMATS))})")


def read_conversations(path: Path, fmt: str = "auto") -> list[Conversation]:
    """Read and fully validate a chat file, zip or export folder before anything is returned, so a bad input
    writes nothing."""
    return read_input(path, fmt).conversations


def read_input(path: Path, fmt: str = "auto", stream: bool = False) -> Reading:
    """read_conversations, and for a zip or folder what was read of it as what, and what was passed over. With
    `stream`, a big JSON file whose format reads records one at a time is checked record by record and comes back
    as `Reading.stream` (ripplecli.formats.stream), so it is never held whole."""
    name = path.name or str(path)
    check_format(fmt, name)
    info = _stat(path, name)
    others: list[Member] = []
    if stat.S_ISDIR(info.st_mode) or _is_zip(path, name, fmt, info):
        entries = bundle_entries(path, name, stat.S_ISDIR(info.st_mode), others)
        if stream and (streamed := _streamed_bundle(entries, name, fmt, others)) is not None:
            return streamed
        reading = read_bundle(read_entries(entries, name), name, fmt)
    elif stream and (single := _streamed(path, name, fmt, info)) is not None:
        return Reading([], stream=single)
    else:
        raw = _read_bytes(path, name, info)
        warnings: list[str] = []
        chosen, found = read_file_as(raw, name, fmt, _mtime(info), warnings=warnings)
        reader: ChatFormat = FORMATS.load(chosen)
        reading = Reading(named_by_account(found, reader, _beside(path, reader)), warnings=warnings)
    members = sorted(reading.members + others, key=lambda member: member.path)
    return Reading(_with_turns(reading.conversations, name), members, reading.warnings)


def _is_zip(path: Path, name: str, fmt: str, info: os.stat_result) -> bool:
    """A non-empty regular file that opens as a zip, or is named .zip (a damaged one is refused as a zip)."""
    if not stat.S_ISREG(info.st_mode) or info.st_size == 0:
        return False
    return _start(path, name, 4) == b"PK\x03\x04" or (path.suffix.lower() == ".zip" and fmt == "auto")


def _start(path: Path, name: str, size: int) -> bytes:
    """A file's first bytes."""
    try:
        with path.open("rb") as handle:
            return handle.read(size)
    except OSError as err:
        raise _unreadable(name, err) from None


def _streamed(path: Path, name: str, fmt: str, info: os.stat_result) -> StreamedFile | None:
    """The big regular JSON file checked record by record, or None when it is to be read whole."""
    if not stat.S_ISREG(info.st_mode):
        return None
    start = _start(path, name, 4096)
    return open_stream(Source(path), name, fmt) if can_stream(start, info.st_size, fmt, name) else None


def _streamed_bundle(entries: list[Entry], name: str, fmt: str, others: list[Member]) -> Reading | None:
    """A zip or folder whose biggest chat file is an export read record by record (a ChatGPT or Telegram export as
    downloaded): that file streamed from where it is, its other chat files read whole and ingested first. None when
    it is not such a file: the bundle is read whole."""
    big = [e for e in entries if e.size > STREAM_BYTES and can_stream(e.head(name), e.size, fmt, e.path)]
    if not big:
        return None
    big = [max(big, key=lambda e: e.size)]
    rest = read_entries([e for e in entries if e is not big[0]], name)
    small = _bundle_reading(rest, name, fmt) if rest else Reading([])
    kept = [found for conversation in small.conversations if (found := conversation.with_turns()) is not None]
    streamed = open_stream(big[0].source, member_name(name, big[0].path), fmt, kept)
    if streamed is None:
        return None
    members = sorted([*small.members, Member(big[0].path, streamed.format), *others], key=lambda m: m.path)
    return Reading([], members, small.warnings, stream=streamed)


def read_file_as(
    raw: bytes,
    name: str,
    fmt: str,
    modified=None,
    container: str = "",
    only: str | None = None,
    warnings: list[str] | None = None,
) -> tuple[str, list[Conversation]]:
    """One file's bytes, read as the format its reader recognises (ripplecli.formats.detect) or as `fmt`, and the
    format it was read as. With `only` (a zip or folder read with an explicit --format), a file detected as another
    format is UnknownFormat, so it is passed over; a text file read as --format says though it looks like another
    format (a WhatsApp chat as notes) adds a line to `warnings`."""
    text = _decode(raw, name)
    suffix = PurePosixPath(name).suffix.lower()
    is_json = suffix == ".json" or (text.lstrip()[:1] in ("{", "[") and _json_not_text(text, suffix))
    kind = reads(fmt) if fmt != "auto" else "auto"
    if kind == "tree":
        raise InputError(f"{name}: --format {fmt} reads an export folder or its .zip, not one file")
    if kind == "text" and is_json:
        wanted = FORMATS.load(fmt).label
        raise InputError(f"{name}: is JSON ({json_guess(text)}), not {wanted}; try --format auto, or {HELP}")
    doc = TextDoc(text, name.removeprefix(member_name(container, "")) if container else name, modified, container)
    if kind == "text" or (kind == "auto" and not is_json):
        chosen = text_format(doc, name) if fmt == "auto" else fmt
        _only(chosen, only, name)
        found = FORMATS.load(chosen).parse(doc, name)
        if fmt != "auto" and warnings is not None and (other := surer_text_format(doc, fmt)):
            label = FORMATS.load(fmt).label
            warnings.append(f"{name}: looks like {other}, but was read as {label}, as --format {fmt} asks")
        return chosen, found
    if not is_json:
        raise InputError(f"{name}: is not JSON but {describe_text(doc)}, so it is no {fmt} export; {HELP}")
    data = _parse_json(text, name)
    try:
        chosen = detect_format(data) if fmt == "auto" else fmt
    except UnknownFormat as err:
        raise UnknownFormat(f"{name}: {err}") from None
    _only(chosen, only, name)
    try:
        return chosen, FORMATS.load(chosen).parse(data, name)
    except ShapeError as err:
        if fmt != "auto" and not FORMATS.load(fmt).detect(data):
            raise _not_that_format(name, fmt, data) from None
        line = line_of(text, err.keys)
        where = json_path(err.keys) + (f" (line {line})" if line else "")
        raise InputError(f"{name}: {where}: {err.problem}") from None


def _not_that_format(name: str, fmt: str, data: object) -> InputError:
    """The refusal of a JSON file the --format's reader could not read and does not recognise: what it is instead."""
    wanted = FORMATS.load(fmt).label
    return InputError(f"{name}: does not look like {wanted}: it is {looks_like(data)}; try --format auto")


def _only(chosen: str, only: str | None, name: str) -> None:
    """Pass over a file of another format than the one asked for (inside a zip or folder)."""
    if only is not None and chosen != only:
        raise UnknownFormat(f"{name}: is {chosen}, not {only}")


def read_bundle(members: dict[str, tuple[bytes, object]], name: str, fmt: str) -> Reading:
    """A zip or folder as it comes: each folder export in it (a Slack workspace) as a whole, and every other chat
    file in it one by one (files in no known format, such as an export's user.json or its media, are passed over,
    and listed as such). A folder may hold several exports: each is read."""
    reading = _bundle_reading(members, name, fmt)
    if not reading.conversations:
        paths = list(members)
        if not paths:
            raise InputError(f"{name}: holds no .json, .txt or .md file, so no chat export ripple reads; {HELP}")
        shown = ", ".join(sorted(paths)[:4]) + (", ..." if len(paths) > 4 else "")
        raise InputError(
            f"{name}: holds no chat export ripple knows ({len(paths)} readable files: {shown or 'none'}); {HELP}"
        )
    return reading


def _bundle_reading(members: dict[str, tuple[bytes, object]], name: str, fmt: str) -> Reading:
    """read_bundle, with no conversations when none of the files is a chat export."""
    conversations: list[Conversation] = []
    listed: list[Member] = []
    rest = dict(members)
    for chosen, claim in claim_bundles(list(members), fmt):  # each folder export in it (a Slack workspace), as a whole
        tree = _read_tree(members, name, chosen, claim)
        conversations += tree.conversations
        listed += tree.members
        rest = {path: value for path, value in rest.items() if path not in claim.files}
    accounts: dict[str, str] = {}  # account file -> the format whose owner it named
    only = None if fmt == "auto" else fmt
    for path, (raw, modified) in sorted(rest.items()):
        if only is not None and reads(only) == "tree":
            listed.append(Member(path, None, f"outside the {only} export"))
            continue
        try:
            chosen, found = read_file_as(raw, member_name(name, path), "auto", modified, container=name, only=only)
        except UnknownFormat:
            listed.append(Member(path, None, f"not {fmt}" if only else "in no format ripple reads"))
            continue
        named, account = _named_in_bundle(found, chosen, path, members)
        if account:
            accounts[account] = chosen
        conversations += named
        listed.append(Member(path, chosen))
    listed = [
        Member(m.path, f"{accounts[m.path]} account (the owner's name)") if m.path in accounts else m for m in listed
    ]
    return Reading(conversations, listed)


def named_by_account(found: list[Conversation], reader: ChatFormat, account: bytes | None) -> list[Conversation]:
    """The conversations with the owner's turns spoken by the name the export's account file gives (Claude's
    users.json), or `found` itself when there is no such file or it names nobody."""
    name = reader.account_name(account) if reader.account_name is not None and account is not None else None
    return [with_owner(conv, name) for conv in found] if name else found


def _named_in_bundle(
    found: list[Conversation], chosen: str, path: str, members: dict[str, tuple[bytes, object]]
) -> tuple[list[Conversation], str]:
    """named_by_account with the account file in the chat file's folder of a zip or export folder, and that
    file's path when it named the owner ("" otherwise)."""
    reader: ChatFormat = FORMATS.load(chosen)
    account = str(PurePosixPath(path).with_name(reader.account_file)) if reader.account_file else ""
    named = named_by_account(found, reader, members[account][0] if account in members else None)
    return named, account if named is not found else ""


def _beside(path: Path, reader: ChatFormat) -> bytes | None:
    """The account file next to a chat file given on its own (an unzipped export's conversations.json)."""
    if not reader.account_file:
        return None
    account = path.parent / reader.account_file
    try:
        return account.read_bytes() if account.stat().st_size <= MAX_ACCOUNT_BYTES else None
    except OSError:
        return None


def _read_tree(members: dict[str, tuple[bytes, object]], name: str, chosen: str, claim: Claim) -> Reading:
    """A folder export read as a whole: its reader is given the JSON of the files it claimed, listed as read."""
    tree = ExportFolder(
        name,
        {
            path: _parse_json(_decode(raw, member_name(name, path)), member_name(name, path))
            for path, (raw, _) in members.items()
            if path in claim.files
        },
    )
    listed = [Member(path, chosen) for path in sorted(claim.files) if path in members]
    return Reading(FORMATS.load(chosen).parse(tree, name), listed)


def _json_not_text(text: str, suffix: str) -> bool:
    """Whether a file that opens like JSON is JSON: any file but a .txt or .md one, which must parse as JSON
    (iOS WhatsApp lines and Markdown links open with "[" too)."""
    if suffix not in TEXT_SUFFIXES:
        return True
    try:
        json.loads(text)
    except (ValueError, RecursionError):
        return False
    return True


def _stat(path: Path, name: str) -> os.stat_result:
    """The input's file status, taken once; a missing or unreadable path is refused here."""
    try:
        return path.stat()
    except OSError as err:
        raise _unreadable(name, err) from None


def _unreadable(name: str, err: OSError) -> InputError:
    """The refusal for a path the system will not give us."""
    if isinstance(err, FileNotFoundError):
        return InputError(f"{name}: no such file")
    return InputError(f"{name}: cannot be read ({err.strerror or err})")


def _mtime(info: os.stat_result):
    """A file's modification time as naive UTC (notes without a date use it)."""
    from ripplecli.formats.days import from_epoch

    return from_epoch(int(info.st_mtime))


def _read_bytes(path: Path, name: str, info: os.stat_result) -> bytes:
    """The file's bytes; anything but a non-empty regular file is refused before parsing."""
    if not stat.S_ISREG(info.st_mode):
        raise InputError(f"{name}: is not a regular file")
    if info.st_size == 0:
        raise InputError(f"{name}: is empty (0 bytes)")
    try:
        return path.read_bytes()
    except OSError as err:
        raise _unreadable(name, err) from None


def _decode(raw: bytes, name: str) -> str:
    """UTF-8 text (a byte-order mark is dropped); other bytes name where they are."""
    if not raw:
        raise InputError(f"{name}: is empty (0 bytes)")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        line = raw.count(b"\n", 0, err.start) + 1
        raise InputError(
            f"{name}: is not UTF-8 text (byte 0x{raw[err.start]:02x} at line {line}, offset {err.start})"
        ) from None


def _parse_json(text: str, name: str) -> object:
    """Strict JSON: syntax errors give line and column, NaN/Infinity and absurd nesting are refused."""
    try:
        return json.loads(text, parse_constant=_refuse_constant)
    except json.JSONDecodeError as err:
        raise InputError(f"{name}: is not valid JSON: {err.msg} (line {err.lineno}, column {err.colno})") from None
    except RecursionError:
        raise InputError(f"{name}: is not readable JSON: nested too deeply") from None
    except ValueError as err:
        detail = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise InputError(f"{name}: is not valid JSON: {detail}") from None


def _refuse_constant(constant: str) -> object:
    """Python accepts NaN and Infinity; JSON does not, and a timestamp of NaN would break later."""
    raise ValueError(f"{constant} is not a JSON value")


def _with_turns(conversations: list[Conversation], name: str) -> list[Conversation]:
    """Drop sessions and conversations without turns; a file with no turns at all is an error."""
    kept = [found for conversation in conversations if (found := conversation.with_turns()) is not None]
    if not kept:
        raise InputError(f"{name}: holds no chat turns")
    return kept


def line_of(text: str, keys: Keys) -> int | None:
    """The line where the value at `keys` (or its deepest existing parent) starts, found on demand."""
    decoder = json.JSONDecoder()
    position = _after_space(text, 0)
    try:
        for key in keys:
            inner = _member_start(text, position, key, decoder)
            if inner is None:
                break
            position = inner
    except (ValueError, IndexError, RecursionError):
        return None
    return text.count("\n", 0, position) + 1


def _member_start(text: str, position: int, key: str | int, decoder: json.JSONDecoder) -> int | None:
    """Offset of member `key` of the object or array starting at `position`; None if it is not there."""
    opener = text[position]
    if opener not in "[{" or (opener == "{") != isinstance(key, str):
        return None
    index = 0
    position = _after_space(text, position + 1)
    while text[position] not in "]}":
        member: str | int = index
        if opener == "{":
            member, position = decoder.raw_decode(text, position)  # the key, a JSON string
            position = _after_space(text, text.index(":", position) + 1)
        if member == key:
            return position
        _, position = decoder.raw_decode(text, position)
        position = _after_space(text, position)
        if text[position] == ",":
            position = _after_space(text, position + 1)
        index += 1
    return None


def _after_space(text: str, position: int) -> int:
    """The first offset from `position` on that is not JSON whitespace."""
    spaces = _WHITESPACE.match(text, position)
    return spaces.end() if spaces is not None else position  # the pattern matches the empty string too
