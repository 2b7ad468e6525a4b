"""From a path to validated conversations, or one line that says which file is wrong, where, and how."""

from __future__ import annotations

import json
import re
import stat
from pathlib import Path

from ripplecli.errors import InputError
from ripplecli.formats.fields import ChatFormat, Keys, ShapeError, json_path
from ripplecli.model import Conversation
from ripplecli.registry import Registry

# --format NAME -> the reader module's FORMAT (a ChatFormat: its signature and its parser); auto-detection tries
# them in this order. A new reader is one module declaring FORMAT and one line here.
FORMATS = Registry(
    "format",
    {
        "native": "ripplecli.formats.native:FORMAT",
        "locomo": "ripplecli.formats.locomo:FORMAT",
        "longmemeval": "ripplecli.formats.longmemeval:FORMAT",
        "chatgpt": "ripplecli.formats.chatgpt:FORMAT",
    },
)

_WHITESPACE = re.compile(r"[ \t\n\r]*")


def read_conversations(path: Path, fmt: str = "auto") -> list[Conversation]:
    """Read and fully validate a chat file before anything is returned, so a bad file writes nothing."""
    name = path.name or str(path)
    text = _read_text(path, name)
    data = _parse_json(text, name)
    try:
        reader: ChatFormat = FORMATS.load(detect_format(data) if fmt == "auto" else fmt)
    except InputError as err:
        raise InputError(f"{name}: {err}") from None
    try:
        conversations = reader.parse(data, name)
    except ShapeError as err:
        line = line_of(text, err.keys)
        where = json_path(err.keys) + (f" (line {line})" if line else "")
        raise InputError(f"{name}: {where}: {err.problem}") from None
    return _with_turns(conversations, name)


def detect_format(data: object) -> str:
    """Name the format by the key only its top-level objects carry."""
    signatures = signature_keys()
    sample = data[0] if isinstance(data, list) and data else data
    if isinstance(sample, dict):
        for key, format_name in signatures.items():
            if key in sample:
                return format_name
    if data == []:
        raise InputError("holds an empty list, so there is nothing to read")
    expected = ", ".join(f'"{key}" ({format_name})' for key, format_name in signatures.items())
    raise InputError(f"is not a chat format ripple knows: expected objects with one of {expected}")


def signature_keys() -> dict[str, str]:
    """The key that only one format's top-level objects carry -> that format, in registry order."""
    return {FORMATS.load(name).signature: name for name in FORMATS}


def _read_text(path: Path, name: str) -> str:
    """The file's text; anything but a non-empty regular UTF-8 file is refused before parsing."""
    try:
        info = path.stat()
        if stat.S_ISDIR(info.st_mode):
            raise InputError(f"{name}: is a directory, not a chat file")
        if not stat.S_ISREG(info.st_mode):
            raise InputError(f"{name}: is not a regular file")
        if info.st_size == 0:
            raise InputError(f"{name}: is empty (0 bytes)")
        raw = path.read_bytes()
    except FileNotFoundError:
        raise InputError(f"{name}: no such file") from None
    except OSError as err:
        raise InputError(f"{name}: cannot be read ({err.strerror or err})") from None
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
    kept = []
    for conversation in conversations:
        sessions = [session for session in conversation.sessions if session.turns]
        if sessions:
            kept.append(Conversation(conversation.conversation_id, sessions, conversation.title))
    if not kept:
        raise InputError(f"{name}: holds no chat turns")
    return kept


def line_of(text: str, keys: Keys) -> int | None:
    """The line where the value at `keys` (or its deepest existing parent) starts, found on demand."""
    decoder = json.JSONDecoder()
    position = _WHITESPACE.match(text, 0).end()
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
    position = _WHITESPACE.match(text, position + 1).end()
    while text[position] not in "]}":
        member: str | int = index
        if opener == "{":
            member, position = json.decoder.scanstring(text, position + 1)
            position = _WHITESPACE.match(text, text.index(":", position) + 1).end()
        if member == key:
            return position
        _, position = decoder.raw_decode(text, position)
        position = _WHITESPACE.match(text, position).end()
        if text[position] == ",":
            position = _WHITESPACE.match(text, position + 1).end()
        index += 1
    return None
