"""LongMemEval as an evaluation set: every question with its own haystack (one store each), dated at the question,
its evidence turns (`has_answer`) and sessions (`answer_session_ids`) resolved against that haystack."""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from pathlib import Path
from typing import Any

from ripplecli.errors import InputError
from ripplecli.eval.locomo import Question, Sample, read_entries
from ripplecli.formats.fields import Node, ShapeError, Unique, json_path, located, quote
from ripplecli.model import Conversation
from ripplecli.registry import LONGMEMEVAL_TYPES

QUESTION_TYPES = LONGMEMEVAL_TYPES
PREFERENCE = "single-session-preference"  # gold answers are rubrics, scored by what they name (metrics.rubric_share)
ABSTENTION_SUFFIX = "_abs"  # a question the haystack cannot answer: the right answer says so


def load_questions(path: Path, ids: list[str] | None = None, types: list[str] | None = None) -> list[Sample]:
    """Read and check a LongMemEval file (.json or .json.gz): one sample per chosen question, the types taking turns
    (interleaved); every problem is an InputError raised before any work starts."""
    unknown = [t for t in types or [] if t not in QUESTION_TYPES]
    if unknown:
        raise InputError(f"unknown question type {', '.join(unknown)} (choose from: {', '.join(QUESTION_TYPES)})")
    entries = _entries(path)
    with located(path.name):
        heads = [_head(Node(entry, (index,))) for index, entry in enumerate(entries)]
    chosen = _chosen(heads, ids, types, path)
    settings = _settings_key()
    return [_sample(entries[index], index, head, settings, path) for index, head in _interleaved(chosen)]


def _interleaved(chosen: list[tuple[int, dict[str, Any]]]) -> list[tuple[int, dict[str, Any]]]:
    """The questions with their types taking turns, each type in file order: the published files are sorted by
    type, and a long run stopped early (or read while it runs) then covers every type alike."""
    by_type: dict[str, list[tuple[int, dict[str, Any]]]] = {}
    for item in chosen:
        by_type.setdefault(item[1]["type"], []).append(item)
    rounds = max(len(items) for items in by_type.values())
    return [items[turn] for turn in range(rounds) for items in by_type.values() if turn < len(items)]


def _entries(path: Path) -> list[Any]:
    """The file's JSON list of questions (gzip-compressed or not)."""
    entries = read_entries(path, "LongMemEval questions")
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict) or "haystack_sessions" not in entry:
            raise InputError(f"{path.name}: [{index}] has no 'haystack_sessions'; not a LongMemEval file")
    return entries


def _head(node: Node) -> dict[str, Any]:
    """A question's own fields, checked (its haystack is read only when the question is chosen)."""
    kind = node.at("question_type").string()
    if kind not in QUESTION_TYPES:
        raise node.at("question_type").fail(f"must be one of {', '.join(QUESTION_TYPES)}, got {quote(kind)}")
    sessions = node.get("answer_session_ids")
    return {
        "id": node.at("question_id").scalar(),
        "question": node.at("question").text(),
        "type": kind,
        "answer": node.at("answer").scalar(),
        "as_of": _date(node.at("question_date")),
        "answer_sessions": [s.scalar() for s in sessions.items()] if sessions else [],
    }


def _date(node: Node) -> datetime:
    """A question's date, in the haystack's own format."""
    from ripplecli.formats.longmemeval import parse_longmemeval_date

    return parse_longmemeval_date(node)


def _chosen(
    heads: list[dict[str, Any]], ids: list[str] | None, types: list[str] | None, path: Path
) -> list[tuple[int, dict[str, Any]]]:
    """(file index, fields) of the questions named by --ids and --types, in file order."""
    seen = Unique("question id")
    for index, head in enumerate(heads):
        with located(path.name):
            seen.claim(head["id"], (index, "question_id"))
    missing = [name for name in ids or [] if name not in seen.first_seen]
    if missing:
        raise InputError(f"{path.name}: no question {', '.join(missing)} (the file has {len(heads)} questions)")
    chosen = [
        (index, head)
        for index, head in enumerate(heads)
        if (not ids or head["id"] in ids) and (not types or head["type"] in types)
    ]
    if not chosen:
        raise InputError(f"{path.name}: none of the named questions is of type {', '.join(types or [])}")
    return chosen


def _settings_key() -> str:
    """The ingest settings a new store is built with: part of a store's name, so other settings build anew."""
    from ripplecli.config import Settings

    return json.dumps(Settings().to_dict(), sort_keys=True)


def _sample(entry: dict[str, Any], index: int, head: dict[str, Any], settings: str, path: Path) -> Sample:
    """One question as a sample: its haystack as a conversation, its gold turns and sessions resolved."""
    conversation = _conversation(entry, index, path)
    gold, unresolved = _gold_turns(entry, conversation)
    sessions = {s.session_id for s in conversation.sessions}
    gold_sessions = [s for s in dict.fromkeys(head["answer_sessions"]) if s in sessions]
    unresolved += [s for s in head["answer_sessions"] if s not in sessions]
    question = Question(
        head["id"],
        0,
        head["question"],
        head["answer"],
        head["type"],
        gold,
        unresolved,
        answer_only=head["id"].endswith(ABSTENTION_SUFFIX),
        gold_sessions=gold_sessions,
    )
    return Sample(conversation, [question], haystack_hash(entry, settings), head["as_of"])


def _conversation(entry: dict[str, Any], index: int, path: Path) -> Conversation:
    """The question's haystack read by ripple's LongMemEval reader, its errors located in the whole file."""
    from ripplecli.formats.longmemeval import parse_longmemeval

    try:
        return parse_longmemeval(_distinct_sessions(entry), path.name)[0]
    except ShapeError as err:
        raise InputError(f"{path.name}: {json_path((index, *err.keys))}: {err.problem}") from None


def _distinct_sessions(entry: dict[str, Any]) -> dict[str, Any]:
    """The entry with a repeated haystack session id numbered (`id#2`): LongMemEval_S repeats a distractor session
    in a few haystacks, on another date; both copies are kept, as the benchmark has them."""
    ids = entry.get("haystack_session_ids")
    if not isinstance(ids, list) or len(set(map(str, ids))) == len(ids):
        return entry
    counts: dict[str, int] = {}
    renamed = []
    for given in ids:
        counts[str(given)] = counts.get(str(given), 0) + 1
        renamed.append(given if counts[str(given)] == 1 else f"{given}#{counts[str(given)]}")
    return {**entry, "haystack_session_ids": renamed}


def _gold_turns(entry: dict[str, Any], conversation: Conversation) -> tuple[list[str], list[str]]:
    """Ids of the `has_answer` turns, and those that name no stored turn (an empty one)."""
    from ripplecli.formats.longmemeval import turn_id

    stored = {t.turn_id for s in conversation.sessions for t in s.turns}
    marked = [
        turn_id(number, position)
        for number, session in enumerate(entry["haystack_sessions"], start=1)
        for position, turn in enumerate(session, start=1)
        if isinstance(turn, dict) and turn.get("has_answer") is True
    ]
    return [t for t in marked if t in stored], [t for t in marked if t not in stored]


def haystack_hash(entry: dict[str, Any], settings: str) -> str:
    """Content hash of a question's haystack and the ingest settings, naming its store so a re-run (in any mode)
    reuses it."""
    haystack = [entry.get(key) for key in ("haystack_session_ids", "haystack_dates", "haystack_sessions")]
    payload = json.dumps([haystack, settings], sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()
