"""Auto-detection: which registered reader an input is, asked of the readers themselves (each FORMAT's `detect`).

Every reader of the input's kind ("json": the parsed file, "text": a TextDoc, "tree": a zip's or folder's file
paths) says how sure it is; the surest reads it, and of readers equally sure the registry's higher priority. No
format is named here: a new reader is found as soon as it is registered.
"""

from __future__ import annotations

import json

from ripplecli.errors import InputError
from ripplecli.formats.fields import SURE, ChatFormat, Claim, json_type, quote
from ripplecli.formats.text import TextDoc, dated_lines, looks_like_html
from ripplecli.registry import FORMATS

HELP = "see `ripple ingest --help` for the exports ripple reads, or write its native JSON"


class UnknownFormat(InputError):
    """A file that is readable but in no format ripple knows (inside a zip or folder such files are passed over)."""


def readers(kind: str) -> list[tuple[str, ChatFormat]]:
    """The registered readers of one kind of input, highest priority first (then in registry order)."""
    names = sorted(FORMATS, key=lambda name: -FORMATS[name].priority)
    loaded = [(name, FORMATS.load(name)) for name in names]
    return [(name, reader) for name, reader in loaded if reader.reads == kind]


def surest(kind: str, given: object) -> str | None:
    """The reader surest that `given` (parsed JSON or a TextDoc) is its format; None when none claims it."""
    chosen, best = None, 0.0
    for name, reader in readers(kind):
        confidence = reader.detect(given)
        if confidence > best:
            chosen, best = name, confidence
    return chosen


def detect_format(data: object) -> str:
    """Name the format of a parsed JSON file."""
    chosen = surest("json", data)
    if chosen is not None:
        return chosen
    if data == []:
        raise UnknownFormat("holds an empty list, so there is nothing to read")
    raise UnknownFormat(f"is not a chat export ripple knows: it looks like {describe_json(data)}; {HELP}")


def text_format(doc: TextDoc, name: str) -> str:
    """Name the format of a text file; a file no reader claims is refused, saying what it looks like."""
    chosen = surest("text", doc)
    if chosen is None:
        raise UnknownFormat(f"{name}: is {describe_text(doc)}; {HELP}")
    return chosen


def claim_bundle(paths: list[str], fmt: str) -> tuple[str, Claim] | None:
    """The folder export (a Slack workspace) a zip or folder holds, and the files that are its own: the surest
    claim of the folder readers, or with --format naming one, its claim (all the JSON files when it makes none, so
    its reader says what is missing). None: the files are read one by one."""
    if fmt != "auto":
        reader: ChatFormat = FORMATS.load(fmt)
        if reader.reads != "tree":
            return None
        return fmt, reader.detect(paths) or Claim(frozenset(path for path in paths if path.endswith(".json")))
    found = None
    for name, reader in readers("tree"):
        claim = reader.detect(paths)
        if claim is not None and claim.confidence > (found[1].confidence if found else 0.0):
            found = (name, claim)
    return found


def json_guess(text: str) -> str:
    """What a JSON file seems to be, for a refusal that names it: "a Telegram export?"."""
    try:
        data = json.loads(text)
        return FORMATS.load(detect_format(data)).label + "?"
    except UnknownFormat:
        return describe_json(data)
    except (ValueError, RecursionError):
        return "not even valid JSON"


def describe_json(data: object) -> str:
    """What an unrecognised JSON document looks like, in a few words."""
    sample = data[0] if isinstance(data, list) and data else data
    if isinstance(sample, dict):
        keys = list(sample)
        if "messages" in sample:
            return "a list of messages without a chat id (a Telegram or Discord export has one)"
        if {"role", "content"} <= set(keys):
            return "an OpenAI-style message list (role/content); ripple reads the ChatGPT account export"
        if "personal_information" in sample:
            return "a Telegram account export without chats (export them as JSON too)"
        shown = ", ".join(quote(str(key), 30) for key in keys[:5]) + (", ..." if len(keys) > 5 else "")
        where = f"a list of {len(data)} objects" if isinstance(data, list) else "an object"
        return f"{where} with keys {shown or 'none'}"
    return f"{json_type(data)}" if not isinstance(data, list) else f"a list of {json_type(sample)}s"


def describe_text(doc: TextDoc) -> str:
    """What a text file that is not JSON looks like: the format a reader is sure of, else its shape."""
    sure = next((reader.label for _, reader in readers("text") if reader.detect(doc) >= SURE), None)
    if sure is not None:
        return sure
    if looks_like_html(doc.text):
        return "an HTML page (Telegram and ChatGPT export HTML too; ripple reads their JSON)"
    if dated_lines(doc.text):
        return "plain text with dated lines, not in a WhatsApp form ripple reads"
    return "plain text without WhatsApp message lines"
