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


def claim_bundles(paths: list[str], fmt: str) -> list[tuple[str, Claim]]:
    """Every folder export a zip or folder holds (two Slack workspaces side by side), each with its own files:
    claim_bundle asked again of the files no export has claimed yet. With --format naming one, its one claim."""
    if fmt != "auto":
        claimed = claim_bundle(paths, fmt)
        return [claimed] if claimed is not None else []
    found: list[tuple[str, Claim]] = []
    rest = list(paths)
    while (claimed := claim_bundle(rest, fmt)) is not None and claimed[1].files & set(rest):
        found.append(claimed)
        rest = [path for path in rest if path not in claimed[1].files]
    return found


def looks_like(data: object) -> str:
    """What a parsed JSON file is, for a refusal of the wrong --format: "a ChatGPT export", or its shape."""
    try:
        return FORMATS.load(detect_format(data)).label
    except UnknownFormat:
        return describe_json(data)


def surer_text_format(doc: TextDoc, fmt: str) -> str | None:
    """The label of a text format surer of `doc` than `fmt` is (a WhatsApp chat given as --format notes)."""
    chosen = surest("text", doc)
    if chosen is None or chosen == fmt:
        return None
    reader: ChatFormat = FORMATS.load(chosen)
    return reader.label if reader.detect(doc) > FORMATS.load(fmt).detect(doc) else None


def json_guess(text: str) -> str:
    """What a JSON file seems to be, for a refusal that names it: "a Telegram export?"."""
    try:
        data = json.loads(text)
        return FORMATS.load(detect_format(data)).label + "?"
    except UnknownFormat:
        return describe_json(data)
    except (ValueError, RecursionError):
        return "not even valid JSON"


NEAR = 0.5  # of a format's hint keys a file must carry to be named after it


def describe_json(data: object) -> str:
    """What an unrecognised JSON document looks like, in a few words: the format whose keys it shares most (and the
    ones it lacks), else its shape, said to be in no format ripple knows."""
    sample = data[0] if isinstance(data, list) and data else data
    if isinstance(sample, dict):
        keys = list(sample)
        found = keys_of(sample)
        if {"role", "content"} <= set(keys) or {"messages[].role", "messages[].content"} <= found:
            return "an OpenAI-style message list (role/content); ripple reads the ChatGPT account export"
        if "personal_information" in sample:
            return "a Telegram account export without chats (export them as JSON too)"
        near = nearest_format(found)
        if near is not None:
            return near
        shown = ", ".join(quote(str(key), 30) for key in keys[:5]) + (", ..." if len(keys) > 5 else "")
        where = f"a list of {len(data)} objects" if isinstance(data, list) else "an object"
        return f"{where} with keys {shown or 'none'}, in no format ripple knows"
    kind = json_type(data) if not isinstance(data, list) else f"a list of {json_type(sample).split(' ')[-1]}s"
    return f"{kind}, in no format ripple knows"


def keys_of(sample: dict) -> set[str]:
    """An object's keys, and its lists' first objects' as `list[].key` ("messages[].date"): what hints name."""
    found = set(map(str, sample))
    for name, value in sample.items():
        if isinstance(value, list) and value and isinstance(value[0], dict):
            found |= {f"{name}[].{key}" for key in value[0]}
    return found


def nearest_format(found: set[str]) -> str | None:
    """ "a Telegram export, but without "id"": the JSON reader whose hint keys a file shares most, when it shares at
    least NEAR of them; None otherwise."""
    best: tuple[float, str, frozenset[str]] | None = None
    for _, reader in readers("json"):
        if reader.hints:
            share = len(reader.hints & found) / len(reader.hints)
            if share >= NEAR and (best is None or share > best[0]):
                best = (share, reader.label, reader.hints - found)
    if best is None:
        return None
    missing = ", ".join(quote(key, 30) for key in sorted(best[2])[:3])
    return best[1] + (f", but without {missing}" if missing else ", in a shape ripple does not read")


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
