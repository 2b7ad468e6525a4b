"""A big JSON export read one record at a time (ijson), so memory stays flat whatever the file's size.

A reader that can take its records one by one declares `streams` (the JSON paths of its record lists, as ijson
prefixes: "item" for a top-level list, "chats.list.item" for a Telegram account's chats) and `parse_records`. A
file bigger than STREAM_BYTES whose format has them is recognised from a sample (its first record, or its top
level with every list cut to its first element), then read twice: once whole to check it (every record parsed,
nothing kept but counts), then again as ingest takes it, a chunk of conversations at a time. The file is checked
before the first write, as a file read whole is. The file may be a member of a zip (a ChatGPT or Telegram export as
downloaded): the member is unpacked as it is read, never whole, and a damaged one (a bad CRC, cut short) is refused
in the check.
"""

from __future__ import annotations

import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path, PurePosixPath
from typing import IO, Any

from ripplecli.errors import InputError
from ripplecli.formats.fields import ChatFormat, Node, ShapeError, json_path
from ripplecli.formats.text import TEXT_SUFFIXES
from ripplecli.model import Conversation
from ripplecli.owner import is_role_word, owner_names

# A JSON file bigger than this is read record by record; a smaller one is read whole, as it always was (with the
# line of a shape error). measured: a 2.7 MB ChatGPT export of 2,000 messages read whole peaks 11 MB above the
# interpreter (4x the file), streamed 2 MB; so a whole read stays under ~35 MB.
STREAM_BYTES = 8 << 20
# Conversations go to ingest in chunks of at least this many turns (a chunk is what ingest plans at once: its
# duplicates and owners); a chunk's turns are what a streamed read holds in memory.
CHUNK_TURNS = 2_000
# Detection sees the sample read from at most about this many bytes of a big file's head (a top-level list stops at
# its first element before): a Telegram account export says "chats" after its contacts, well within it, and is not
# parsed through to its end to be recognised.
SAMPLE_BYTES = 4 << 20
_BOM = b"\xef\xbb\xbf"
# What a damaged or unsupported zip member raises as it is unpacked (a bad CRC at its end, a cut deflate stream).
UNPACK_ERRORS = (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, RuntimeError, OSError)


@dataclass(frozen=True)
class Source:
    """Where a big export's bytes are: a file, or a member of the zip file at `path` (unpacked as it is read)."""

    path: Path
    member: str = ""

    def read_bytes(self, name: str) -> bytes:
        """The whole file or member (a small one: ripplecli.formats.load reads it whole)."""
        with _opened(self, name, keep_bom=True) as handle:
            try:
                return handle.read()
            except UNPACK_ERRORS as err:
                raise unpack_error(name, err) from None

    def read_head(self, name: str, size: int) -> bytes:
        """The first `size` bytes, to tell JSON from text without reading the rest."""
        with _opened(self, name, keep_bom=True) as handle:
            try:
                return handle.read(size)
            except UNPACK_ERRORS as err:
                raise unpack_error(name, err) from None


@dataclass
class StreamedFile:
    """A checked big export, to be read again in chunks: its counts, and the few conversations that decide the
    owner's name (ripplecli.owner) of the whole file."""

    source: Source
    name: str
    format: str
    reader: ChatFormat
    before: list[Conversation] = field(default_factory=list)  # a zip's or folder's small chat files, read whole
    records: int = 0
    conversations: int = 0
    turns: int = 0
    witnesses: list[Conversation] = field(default_factory=list)
    head: dict = field(default_factory=dict)  # the top-level members the reader wants beside its records

    def conversations_read(self) -> Iterator[Conversation]:
        """Every conversation with turns, one at a time, sessions without turns dropped (a bundle's small files
        first)."""
        yield from self.before
        for conversation in _records(self.source, self.name, self.reader, self.head, self.records or None):
            kept = conversation.with_turns()
            if kept is not None:
                yield kept

    def chunks(self, turns: int = CHUNK_TURNS) -> Iterator[list[Conversation]]:
        """The conversations in lists of at least `turns` turns (the last one smaller)."""
        chunk: list[Conversation] = []
        size = 0
        for conversation in self.conversations_read():
            chunk.append(conversation)
            size += conversation.turn_count
            if size >= turns:
                yield chunk
                chunk, size = [], 0
        if chunk:
            yield chunk


def can_stream(raw_start: bytes, size: int, fmt: str, name: str = "") -> bool:
    """Whether a file is big enough to be read record by record and opens like JSON (not a zip, and not a text
    file: notes or a chat whose first line opens with "[" are read whole, as text)."""
    from ripplecli.registry import FORMATS

    if size <= STREAM_BYTES or raw_start.startswith(b"PK\x03\x04"):
        return False
    if PurePosixPath(name).suffix.lower() in TEXT_SUFFIXES:
        return False
    if fmt != "auto" and not FORMATS.load(fmt).streams:
        return False
    return raw_start.removeprefix(_BOM).lstrip()[:1] in (b"[", b"{")


def open_stream(source: Source, name: str, fmt: str, before: list[Conversation] | None = None) -> StreamedFile | None:
    """The big file checked whole, record by record, when its format reads records one at a time; None when it
    does not (or the file's shape is not the one it streams): the caller reads it whole. `before`: the other chat
    files of its zip or folder, read whole, ingested first."""
    from ripplecli.formats.detect import UnknownFormat, detect_format
    from ripplecli.registry import FORMATS

    sample = _sample(source, name)
    try:
        chosen = detect_format(sample) if fmt == "auto" else fmt
    except UnknownFormat:
        return None  # read whole, so the refusal says what the file looks like as it always did
    reader: ChatFormat = FORMATS.load(chosen)
    if not reader.streams or reader.parse_records is None or not _fits(sample, reader.streams[0]):
        return None
    streamed = StreamedFile(source, name, chosen, reader, list(before or []), head=_head(source, name, reader))
    for conversation in streamed.before:
        streamed.conversations += 1
        streamed.turns += conversation.turn_count
        _witness(streamed.witnesses, conversation)
    for conversation in _records(source, name, reader, streamed.head, None):
        streamed.records += 1
        kept = conversation.with_turns()
        if kept is None:
            continue
        streamed.conversations += 1
        streamed.turns += kept.turn_count
        _witness(streamed.witnesses, kept)
    if not streamed.conversations:
        raise InputError(f"{name}: holds no chat turns")
    return streamed


def _witness(witnesses: list[Conversation], conversation: Conversation) -> None:
    """Keep the conversations ripplecli.owner's answers for the whole file depend on: the first with an owner turn,
    the first whose owner has a name (not a role word), the first whose export leaves `me` to name the owner."""
    names, kept = list(owner_names([conversation])), list(owner_names(witnesses))
    wanted = (
        bool(names) and not kept,
        any(not is_role_word(n) for n in names) and all(is_role_word(n) for n in kept),
        conversation.owner_by_name and not any(w.owner_by_name for w in witnesses),
    )
    if any(wanted):
        witnesses.append(conversation)


def _records(source: Source, name: str, reader: ChatFormat, head: dict, count: int | None) -> Iterator[Conversation]:
    """The reader's conversations of the file, parsed record by record; a syntax or shape error is one line."""
    ijson = _ijson()

    lists = [_nodes(source, name, prefix) for prefix in reader.streams]
    try:
        yield from reader.parse_records(head, chain.from_iterable(lists), count, name)  # type: ignore[misc]
    except ShapeError as err:
        raise InputError(f"{name}: {json_path(err.keys)}: {err.problem}") from None
    except (ijson.JSONError, UnicodeDecodeError) as err:
        raise _not_json(name, err) from None


def _nodes(source: Source, name: str, prefix: str) -> Iterator[Node]:
    """The records at `prefix`, each with its JSON path (`chats.list[3]`); a zip member is read to its end, so its
    CRC is checked."""
    ijson = _ijson()

    keys = tuple(part for part in prefix.split(".") if part != "item")
    with _opened(source, name) as handle:
        try:
            for index, value in enumerate(ijson.items(handle, prefix, use_float=True)):
                yield Node(value, (*keys, index))
            while source.member and handle.read(1 << 16):
                pass
        except (ijson.JSONError, UnicodeDecodeError) as err:
            raise _not_json(name, err) from None
        except UNPACK_ERRORS as err:
            raise unpack_error(name, err) from None


def _head(source: Source, name: str, reader: ChatFormat) -> dict:
    """The top-level members a reader wants beside its records (a Telegram account's `personal_information`)."""
    ijson = _ijson()

    head = {}
    for key in reader.stream_head:
        with _opened(source, name) as handle:
            try:
                found = next(iter(ijson.items(handle, key, use_float=True)), None)
            except (ijson.JSONError, UnicodeDecodeError) as err:
                raise _not_json(name, err) from None
            except UNPACK_ERRORS as err:
                raise unpack_error(name, err) from None
        if found is not None:
            head[key] = found
    return head


def _ijson() -> Any:
    """ijson, imported when a big file is read (its C backend, yajl2_c, when installed)."""
    import ijson  # type: ignore[import-untyped]

    return ijson


class _opened:
    """The file (or zip member) opened for reading as bytes, past a UTF-8 byte-order mark unless `keep_bom`."""

    def __init__(self, source: Source, name: str, keep_bom: bool = False) -> None:
        self.source, self.name, self.keep_bom = source, name, keep_bom
        self.archive: zipfile.ZipFile | None = None

    def __enter__(self) -> IO[bytes]:
        try:
            self.handle = self._open()
            if not self.keep_bom and self.handle.read(3) != _BOM:
                self.handle.seek(0)
        except OSError as err:
            self.__exit__()
            raise InputError(f"{self.name}: cannot be read ({err.strerror or err})") from None
        except UNPACK_ERRORS as err:
            self.__exit__()
            raise unpack_error(self.name, err) from None
        return self.handle

    def _open(self) -> IO[bytes]:
        """The file, or its member unpacked as it is read."""
        if not self.source.member:
            return self.source.path.open("rb")
        self.archive = zipfile.ZipFile(self.source.path)
        return self.archive.open(self.source.member)

    def __exit__(self, *exc) -> None:
        if getattr(self, "handle", None) is not None:
            self.handle.close()
        if self.archive is not None:
            self.archive.close()


def unpack_error(name: str, err: Exception) -> InputError:
    """The refusal of a zip member that cannot be unpacked (damaged, cut short, encrypted, an unknown method)."""
    return InputError(f"{name}: cannot be unpacked ({err or type(err).__name__})")


def _not_json(name: str, err: Exception) -> InputError:
    """The refusal of a big file that stops being JSON (or UTF-8) somewhere."""
    if isinstance(err, UnicodeDecodeError):
        return InputError(f"{name}: is not UTF-8 text ({err.reason})")
    detail = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
    return InputError(f"{name}: is not valid JSON: {detail}")


def _fits(sample: object, prefix: str) -> bool:
    """Whether the sample holds a list where the reader's first stream prefix points ("item": a top-level list)."""
    value = sample
    for part in prefix.split(".")[:-1]:
        if not isinstance(value, dict) or part not in value:
            return False
        value = value[part]
    return isinstance(value, list)


def _sample(source: Source, name: str) -> object:
    """What detection sees of a big file's head: a top-level list's first element (as a one-element list), or the
    top-level object with every list in it cut to its first element, as far as SAMPLE_BYTES go."""
    ijson = _ijson()

    with _opened(source, name) as handle:
        try:
            events = ijson.parse(handle, use_float=True)
            _, event, value = next(events)
            if event not in ("start_array", "start_map"):
                return value
            return _skeleton(events, [[] if event == "start_array" else {}], lambda: handle.tell() > SAMPLE_BYTES)
        except (ijson.JSONError, UnicodeDecodeError) as err:
            raise _not_json(name, err) from None
        except UNPACK_ERRORS as err:
            raise unpack_error(name, err) from None
        except StopIteration:
            raise InputError(f"{name}: is not valid JSON: it ends too early") from None


def _skeleton(events, stack: list, enough) -> object:
    """The value whose opening event was read, from its parse events, every list cut to its first element; a
    top-level list stops at the end of its first element, and any value when `enough()` says so (its containers
    are put in their parents as they open, so what is cut short is still a value)."""
    keys: list[object] = [None]
    root = stack[0]
    for _, event, value in events:
        if enough():
            return root
        parent = stack[-1]
        if event == "map_key":
            keys[-1] = value
            continue
        if isinstance(parent, list) and parent and event not in ("end_map", "end_array"):
            if event in ("start_map", "start_array"):
                _skip(events)  # a list's second element and on: not in the sample
            continue
        if event in ("start_map", "start_array"):
            child: dict | list = {} if event == "start_map" else []
            _put(parent, keys[-1], child)
            stack.append(child)
            keys.append(None)
            continue
        if event in ("end_map", "end_array"):
            stack.pop()
            keys.pop()
            if not stack:
                return root
        else:
            _put(parent, keys[-1], value)
        if len(stack) == 1 and isinstance(root, list) and root:
            return root  # a top-level list's first element is all the sample needs
    return root


def _skip(events) -> None:
    """Consume the events of one value that was just opened."""
    depth = 1
    for _, event, _ in events:
        depth += event in ("start_map", "start_array")
        depth -= event in ("end_map", "end_array")
        if depth == 0:
            return


def _put(parent: object, key: object, value: object) -> None:
    """Place a finished value in its parent: a member of an object, or the first element of a list."""
    if isinstance(parent, dict):
        parent[key] = value
    elif isinstance(parent, list) and not parent:
        parent.append(value)
