"""LoCoMo as an evaluation set: conversations, their questions and normalised gold evidence turn ids."""

from __future__ import annotations

import gzip
import hashlib
import json
import re
import zlib
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from pathlib import Path
from typing import Any

from ripplecli.errors import InputError
from ripplecli.model import Conversation

CATEGORIES: dict[int, str] = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
ASKED_CATEGORIES = (1, 2, 3, 4)
_EVIDENCE_ID = re.compile(r"D:?(\d+):(\d+)")
_SEPARATORS = re.compile(r"[;,\s]+")
_GZIP_MAGIC = b"\x1f\x8b"


@dataclass
class Question:
    """One question with its gold turns resolved against its conversation (LoCoMo's, and LongMemEval's)."""

    conversation_id: str
    index: int
    text: str
    answer: str
    category: int | str  # LoCoMo's 1-5; LongMemEval's question type
    gold: list[str]
    unresolved: list[str] = field(default_factory=list)
    answer_only: bool = False  # unanswerable by design (LoCoMo category 5, LongMemEval `_abs`): asked for answers
    gold_sessions: list[str] = field(default_factory=list)  # LongMemEval's answer sessions (session-level recall)


@dataclass
class Sample:
    """A conversation to ingest plus the questions asked of it, dated at its last session."""

    conversation: Conversation
    questions: list[Question]
    content_hash: str
    as_of: datetime | None

    @property
    def sample_id(self) -> str:
        """The LoCoMo sample id (e.g. conv-26), or the LongMemEval question id."""
        return self.conversation.conversation_id

    @cached_property
    def session_of(self) -> dict[str, str]:
        """The session of each turn id."""
        return {t.turn_id: s.session_id for s in self.conversation.sessions for t in s.turns}


def normalise_evidence_id(raw: str) -> str | None:
    """`D:11:26` -> `D11:26`, `D30:05` -> `D30:5`; None when the text is no turn id at all."""
    match = _EVIDENCE_ID.fullmatch(raw.strip())
    return f"D{int(match.group(1))}:{int(match.group(2))}" if match else None


def split_evidence(evidence: Any) -> list[str]:
    """Evidence entries as single ids: `"D8:6; D9:17"` is two; non-strings are ignored."""
    entries = evidence if isinstance(evidence, list) else [evidence]
    return [piece for entry in entries if isinstance(entry, str) for piece in _SEPARATORS.split(entry) if piece]


def resolve_evidence(evidence: Any, turn_ids: dict[str, str]) -> tuple[list[str], list[str]]:
    """Gold turn ids of the conversation (deduplicated, in order) and the raw ids that resolve to no turn."""
    gold: list[str] = []
    unresolved: list[str] = []
    for raw in split_evidence(evidence):
        turn_id = turn_ids.get(normalise_evidence_id(raw) or "")
        if turn_id is None:
            unresolved.append(raw)
        elif turn_id not in gold:
            gold.append(turn_id)
    return gold, unresolved


def load_samples(path: Path, wanted: list[str] | None = None) -> list[Sample]:
    """Read and check a LoCoMo file; every problem is an InputError raised before any work starts."""
    from ripplecli.formats.locomo import parse_locomo

    raw_samples = _raw_samples(path)
    conversations = _parse(parse_locomo, raw_samples, path)
    samples = [_sample(conversation, raw) for conversation, raw in zip(conversations, raw_samples, strict=True)]
    chosen = _choose(samples, wanted, path)
    for sample in chosen:
        if not any(q.category in ASKED_CATEGORIES for q in sample.questions):
            raise InputError(f"{path.name}: conversation '{sample.sample_id}' has no questions of categories 1-4")
    return chosen


def _raw_samples(path: Path) -> list[dict[str, Any]]:
    """The JSON samples, each with a `conversation` object and a `qa` list."""
    samples = read_entries(path, "LoCoMo samples")
    for index, sample in enumerate(samples):
        if not isinstance(sample, dict) or not isinstance(sample.get("conversation"), dict):
            raise InputError(f"{path.name}: sample {index} has no 'conversation' object; not a LoCoMo file")
        if not isinstance(sample.get("qa"), list):
            raise InputError(f"{path.name}: sample {index} has no 'qa' list; not a LoCoMo evaluation file")
    return samples


def read_entries(path: Path, what: str) -> list[Any]:
    """The entries of an evaluation file: a JSON list (or one object), gzip-compressed or not (LongMemEval ships
    .json.gz); an unreadable, non-JSON or empty file is one InputError."""
    try:
        raw = path.read_bytes()
        data = json.loads((gzip.decompress(raw) if raw.startswith(_GZIP_MAGIC) else raw).decode("utf-8"))
    except (OSError, EOFError, zlib.error, UnicodeDecodeError) as err:
        raise InputError(f"{path}: cannot read: {getattr(err, 'strerror', None) or err}") from None
    except json.JSONDecodeError as err:
        raise InputError(f"{path.name}: not JSON: {err.msg} (line {err.lineno})") from None
    entries = data if isinstance(data, list) else [data]
    if not entries:
        raise InputError(f"{path.name}: holds no {what}")
    return entries


def _parse(parser: Any, raw_samples: list[dict[str, Any]], path: Path) -> list[Conversation]:
    """The chat of every sample, with the format reader's one-line errors."""
    from ripplecli.formats.fields import ShapeError, json_path

    try:
        return parser(raw_samples, path.name)
    except ShapeError as err:
        raise InputError(f"{path.name}: {json_path(err.keys)}: {err.problem}") from None


def _sample(conversation: Conversation, raw: dict[str, Any]) -> Sample:
    """Questions of one sample with gold evidence resolved against its turns."""
    turn_ids = {
        normalise_evidence_id(t.turn_id) or t.turn_id: t.turn_id for s in conversation.sessions for t in s.turns
    }
    questions = [_question(conversation.conversation_id, index, qa, turn_ids) for index, qa in enumerate(raw["qa"])]
    stamps = [s.timestamp for s in conversation.sessions if s.timestamp is not None]
    return Sample(conversation, questions, conversation_hash(raw["conversation"]), max(stamps, default=None))


def _question(conversation_id: str, index: int, qa: Any, turn_ids: dict[str, str]) -> Question:
    """One qa entry; a missing question text or category is an InputError naming where."""
    where = f"conversation '{conversation_id}' qa[{index}]"
    if not isinstance(qa, dict) or not isinstance(qa.get("question"), str):
        raise InputError(f"{where}: has no 'question' text")
    category = qa.get("category")
    if category not in CATEGORIES:
        raise InputError(f"{where}: category must be one of 1-5, not {category!r}")
    gold, unresolved = resolve_evidence(qa.get("evidence", []), turn_ids)
    answer = qa.get("answer", qa.get("adversarial_answer", ""))
    return Question(conversation_id, index, qa["question"], str(answer), category, gold, unresolved, category == 5)


def _choose(samples: list[Sample], wanted: list[str] | None, path: Path) -> list[Sample]:
    """The conversations named by --conversations, in the order given; all when none are named."""
    if not wanted:
        return samples
    by_id = {s.sample_id: s for s in samples}
    missing = [name for name in wanted if name not in by_id]
    if missing:
        raise InputError(f"{path.name}: no conversation {', '.join(missing)} (has: {', '.join(by_id)})")
    return [by_id[name] for name in dict.fromkeys(wanted)]


def conversation_hash(conversation: dict[str, Any]) -> str:
    """Content hash of a conversation's JSON, naming its store so a second run reuses it."""
    payload = json.dumps(conversation, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()
