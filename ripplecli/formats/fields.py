"""Typed access to parsed JSON that remembers where each value sits, so every shape error names its path."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from ripplecli.errors import InputError
from ripplecli.model import Conversation

Keys = tuple[str | int, ...]
T = TypeVar("T")

MAX_TEXT_CHARS = 200_000  # one turn larger than a long book chapter is a broken export, not a chat message

JSON_TYPES = {
    dict: "an object",
    list: "an array",
    str: "a string",
    bool: "a boolean",
    int: "a number",
    float: "a number",
    type(None): "null",
}

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_PLAIN_KEY = re.compile(r"[A-Za-z_][\w-]{0,63}", re.ASCII)


def quote(value: str, limit: int = 60) -> str:
    """A value shown in a message: JSON-quoted so newlines stay escaped, and cut short."""
    shown = json.dumps(value, ensure_ascii=False)
    return shown if len(shown) <= limit else shown[: limit - 4] + '..."'


def json_path(keys: Keys) -> str:
    """Render keys the way people read JSON paths: sessions[2].turns[5].speaker."""
    parts = [
        f"[{key}]" if isinstance(key, int) else f".{key}" if _PLAIN_KEY.fullmatch(key) else f"[{quote(key)}]"
        for key in keys
    ]
    return "".join(parts).lstrip(".") or "top level"


def json_type(value: object) -> str:
    """The JSON name of a Python value's type, for messages."""
    return JSON_TYPES.get(type(value), type(value).__name__)


class ShapeError(InputError):
    """A value of the wrong shape; keeps its JSON path so the loader can add the line it sits on."""

    def __init__(self, keys: Keys, problem: str, source: str = "") -> None:
        self.keys, self.problem, self.source = keys, problem, source
        prefix = f"{source}: " if source else ""
        super().__init__(f"{prefix}{json_path(keys)}: {problem}")

    def within(self, source: str) -> ShapeError:
        """The same error, now naming the file it came from."""
        return ShapeError(self.keys, self.problem, source)


@contextmanager
def located(source: str) -> Iterator[None]:
    """Make shape errors raised inside a parser name the file they describe."""
    try:
        yield
    except ShapeError as err:
        raise err.within(source) from None


def clean_text(value: str) -> str:
    """Drop control characters and lone surrogates so every later stage (DuckDB, spaCy) can take the text."""
    if not value.isascii():
        value = value.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
    return _CONTROL.sub("", value).strip()


def default_id(source: str, index: int, count: int) -> str:
    """Conversation id when the file gives none: the file stem, numbered when the file holds several."""
    stem = Path(source).stem or "chat"
    return stem if count == 1 else f"{stem}-{index + 1}"


@dataclass(frozen=True)
class Node:
    """A JSON value plus its path; accessors check the type and raise ShapeError naming that path."""

    value: object
    keys: Keys = ()

    def fail(self, problem: str) -> ShapeError:
        """An error about this value."""
        return ShapeError(self.keys, problem)

    def _expect(self, kind: type[T], wanted: str) -> T:
        """The value, refused if of the wrong JSON type before anything relies on it."""
        if not isinstance(self.value, kind):
            raise self.fail(f"must be {wanted}, got {json_type(self.value)}")
        return self.value

    def fields(self) -> dict:
        """The value as an object."""
        return self._expect(dict, "an object")

    def at(self, key: str) -> Node:
        """A required member; a missing key is named by its full path."""
        fields = self.fields()
        if key not in fields:
            raise ShapeError((*self.keys, key), "is missing")
        return Node(fields[key], (*self.keys, key))

    def get(self, key: str) -> Node | None:
        """An optional member: missing and null both mean absent."""
        fields = self.fields()
        return None if fields.get(key) is None else Node(fields[key], (*self.keys, key))

    def items(self) -> list[Node]:
        """The elements of an array, each with its index in the path."""
        values = self._expect(list, "an array")
        return [Node(value, (*self.keys, index)) for index, value in enumerate(values)]

    def string(self) -> str:
        """Any string, cleaned; may be empty."""
        text = clean_text(self._expect(str, "a string"))
        if len(text) > MAX_TEXT_CHARS:
            raise self.fail(f"is {len(text):,} characters long; ripple reads at most {MAX_TEXT_CHARS:,}")
        return text

    def text(self) -> str:
        """A string that must say something: empty or blank is an error."""
        text = self.string()
        if not text:
            raise self.fail("must not be empty")
        return text

    def scalar(self) -> str:
        """An id written as a number or a string (exporters differ), as text."""
        if isinstance(self.value, bool) or not isinstance(self.value, int | str):
            raise self.fail(f"must be a number or a string, got {json_type(self.value)}")
        return self.text() if isinstance(self.value, str) else str(self.value)

    def number(self) -> float:
        """A JSON number (not a boolean)."""
        if isinstance(self.value, bool) or not isinstance(self.value, int | float):
            raise self.fail(f"must be a number, got {json_type(self.value)}")
        return float(self.value)


class Repeated(ShapeError):
    """An id seen before in the same file (a message an exporter wrote twice)."""

    def __init__(self, keys: Keys, problem: str, kind: str, source: str = "") -> None:
        super().__init__(keys, problem, source)
        self.kind = kind

    def within(self, source: str) -> ShapeError:
        """The same error, now naming the file it came from."""
        return Repeated(self.keys, self.problem, self.kind, source)


class Unique:
    """Remembers where each id was first seen so a duplicate can point at both places."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.first_seen: dict[str, Keys] = {}

    def claim(self, value: str, keys: Keys) -> str:
        """Register `value`; a second claim is a ShapeError at `keys`."""
        if value in self.first_seen:
            where = json_path(self.first_seen[value])
            raise Repeated(keys, f"duplicate {self.kind} {quote(value)} (first at {where})", self.kind)
        self.first_seen[value] = keys
        return value


class Tolerant:
    """Reads an export's messages one at a time: a message that cannot be read is left out and counted by what is
    wrong with it (`unreadable date`, `repeated message id`), so one bad message does not refuse a whole file. When
    fewer than half of the file's messages can be read, `check` refuses it with the first message's error."""

    def __init__(self) -> None:
        self.total = 0
        self.bad = 0
        self.first: InputError | None = None

    @contextmanager
    def message(self, node: Node | None, skipped: Counter[str], source: str = "", what: str = "") -> Iterator[None]:
        """Read one message inside the block; an InputError there leaves it out, counted in `skipped`. `source`
        names the file the message is in when it is not the one being parsed (a Slack day file in the export);
        `what` the reason for a message that is not JSON ("unreadable date" of a WhatsApp line)."""
        self.total += 1
        try:
            yield
        except InputError as err:
            self.bad += 1
            if self.first is None:
                self.first = err.within(source) if source and isinstance(err, ShapeError) else err
            skipped[_unreadable(err, node) if node is not None else what or "unreadable"] += 1

    def check(self) -> None:
        """Refuse the file when fewer than half of its messages could be read."""
        if self.first is None or 2 * self.bad <= self.total:
            return
        told = f"; {self.bad} of {self.total} messages cannot be read" if self.total > 1 else ""
        if isinstance(self.first, ShapeError):
            raise ShapeError(self.first.keys, self.first.problem + told, self.first.source)
        raise InputError(f"{self.first}{told}")


def _unreadable(err: InputError, node: Node | None) -> str:
    """The reason a bad message is left out, the same for every message with that fault: `missing date`."""
    if isinstance(err, Repeated):
        return f"repeated {err.kind}"
    if not isinstance(err, ShapeError) or node is None:
        return "unreadable"
    inner = json_path(err.keys[len(node.keys) :]) if err.keys[: len(node.keys)] == node.keys else "message"
    inner = "message" if inner == "top level" else inner
    return f"missing {inner}" if err.problem == "is missing" else f"unreadable {inner}"


def records(data: object, source: str, id_keys: tuple[str, ...], kind: str) -> Iterator[tuple[Node, str]]:
    """Each top-level record (the file holds a list of them, or one) with its id: the first of `id_keys` the
    record gives, else one made from the file name; a duplicate id is an error at the record that repeats it."""
    root = Node(data)
    nodes = root.items() if isinstance(data, list) else [root]
    return records_of(nodes, len(nodes), source, id_keys, kind)


def records_of(
    nodes: Iterable[Node], count: int | None, source: str, id_keys: tuple[str, ...], kind: str
) -> Iterator[tuple[Node, str]]:
    """records of nodes read one at a time (ripplecli.formats.stream); `count` None (not known yet) names a record
    without an id as one of several."""
    ids = Unique(kind)
    for index, node in enumerate(nodes):
        given = next((found for key in id_keys if (found := node.get(key))), None)
        made = default_id(source, index, 2 if count is None else count)
        yield node, ids.claim(given.text() if given else made, node.keys)


def with_caption(text: str, caption: str) -> str:
    """An image turn's text: what was said plus what the picture shows, so both become searchable."""
    if not caption:
        return text
    return f"{text} [image: {caption}]" if text else f"[image: {caption}]"


# How sure a reader's `detect` is that an input is its format; the surest reader reads it (ties: the registry's
# priority), and 0 means "not mine".
SURE = 1.0  # a key or a line only this format writes
LIKELY = 0.5  # a shape another format may share (a Telegram chat's "messages" beside an "id")
FALLBACK = 0.1  # any input of the kind the reader takes that no other reader claims (notes: any prose .md/.txt)


@dataclass(frozen=True)
class Claim:
    """A folder export's answer to "is any of this zip or folder yours": the files its export is made of (by path
    in the zip or folder) and how sure it is; the other files are not its own."""

    files: frozenset[str]
    confidence: float = SURE


def first_object(data: object) -> dict:
    """The top-level object a JSON reader recognises a file by (the first of a list); {} for any other shape."""
    sample = data[0] if isinstance(data, list) and data else data
    return sample if isinstance(sample, dict) else {}


def keyed(key: str) -> Callable[[object], float]:
    """The `detect` of a JSON format recognised by a key only its top-level objects carry."""
    return lambda data: SURE if key in first_object(data) else 0.0


@dataclass(frozen=True)
class ChatFormat:
    """What a reader module declares (as `FORMAT`): how to read its files and how to recognise them."""

    parse: Callable[[Any, str], list[Conversation]]  # (what it reads, file name) -> conversations
    # Auto-detection (ripplecli.formats.detect): given what the reader reads, parsed JSON or a TextDoc, how sure it
    # is that it is its format (0 to SURE); given the file paths of a zip or folder ("tree"), its Claim or None.
    detect: Callable[[Any], Any]
    reads: str = "json"  # "json": the parsed file; "text": a TextDoc; "tree": an ExportFolder (a folder or zip) of JSON
    label: str = "JSON"  # what a file of this format is, in a refusal that guesses it: "a Telegram export"
    # The account file an export keeps beside its chats, and how to read the owner's name from its bytes (Claude's
    # users.json); the owner's turns then carry that name instead of the export's role word ("human").
    account_file: str = ""
    account_name: Callable[[bytes], str | None] | None = None
    # Keys a JSON file of this format carries, at its top or in the first element of a list there (a message's):
    # a file no reader claims is named after the format whose keys it shares most ("looks most like a Telegram
    # export, but has no "id"").
    hints: frozenset[str] = frozenset()
    # A reader that takes a big file one record at a time (ripplecli.formats.stream): the ijson prefixes of its
    # record lists ("item": a top-level list), the top-level members it wants beside them, and its parser of
    # (those members, the records as Nodes, how many there are or None, file name) -> conversations, in order.
    streams: tuple[str, ...] = ()
    stream_head: tuple[str, ...] = ()
    parse_records: Callable[[dict, Iterable[Node], int | None, str], Iterator[Conversation]] | None = None
