"""Answers from assembled evidence: typed by rules (the default, never invented text), or the local model's.

Modules: `base` (the Answer type), `extractive`, `typed` (question typing and span choice), `llm` (the local
model, imported only when one is used: pydantic comes with it).
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable
from datetime import datetime
from typing import Any

from ripplecli.answer.base import NO_MODEL, NOT_FOUND, NOT_SURE, Answer, AnswerStream, ModelProvider
from ripplecli.errors import ModelError
from ripplecli.registry import ANSWER_MODES
from ripplecli.runtime.llm import CallLog
from ripplecli.trace import Evidence

__all__ = [
    "ANSWER_MODES",
    "NOT_FOUND",
    "NOT_SURE",
    "Answer",
    "AnswerStream",
    "ModelProvider",
    "answer_for",
    "extractive_answer",
    "rules_kept",
    "typed_answer",
]


_RULES = {"extractive_answer": "ripplecli.answer.extractive", "typed_answer": "ripplecli.answer.typed"}


def __getattr__(name: str) -> Any:
    """The rule answerers, imported when first used: an ask with `--no-answer` never loads their span rules."""
    if name in _RULES:
        return getattr(importlib.import_module(_RULES[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _by_type(question: str, evidence: list[Evidence], today: datetime | None = None) -> Answer:
    """The typed answer (rules), counting "how long ago" from the day the question is asked."""
    from ripplecli.answer.typed import typed_answer

    return typed_answer(question, evidence, today)


def _extracted(question: str, evidence: list[Evidence]) -> Answer:
    """The extractive answer (rules)."""
    from ripplecli.answer.extractive import extractive_answer

    return extractive_answer(question, evidence)


def _llm(
    question: str,
    evidence: list[Evidence],
    model: ModelProvider,
    log: CallLog,
    stream: AnswerStream | None,
    today: datetime | None = None,
) -> Answer:
    """--answer llm: the configured model must load (ModelError otherwise)."""
    from ripplecli.answer.llm import llm_answer

    return llm_answer(model.load(), question, evidence, log, stream, today=today)


RULES_TYPES = frozenset({"when"})  # auto keeps the rules for these: on dev dates they beat a 1.5B model (.64 vs .51 F1)
# 1: auto keeps the rules' worked-out dates and durations ("how many days ago…"); 0: asks the model. Measured on the
# 27 LongMemEval dev temporal questions (oracle sessions), Qwen2.5-Coder-1.5B: containment .333 -> .667.
WORKED_OUT = 1
VERDICT_TYPES = frozenset({"should", "yes-no"})  # auto keeps the rules' verdict when they weigh a reason against
# measured: on the 100 LoCoMo dev questions the rules leaned no twice, both right, where the 1.5B said "Likely yes"
# both times (F1 unchanged, .434); a small model overlooks the reason against (an allergy, a trip that went badly)


def _auto(
    question: str,
    evidence: list[Evidence],
    model: ModelProvider,
    log: CallLog,
    stream: AnswerStream | None,
    today: datetime | None = None,
) -> Answer:
    """--answer auto: the model when one is configured, else typed; the rules' answer where it was measured
    better (a when-question's date; a weighed no; with a model measured weaker, any answer of the asked kind);
    a model that cannot load falls back, noted."""
    if not model.configured:
        return _by_type(question, evidence, today)
    kept = rules_kept(question, evidence, model, today)
    if kept is not None:
        return kept
    try:
        llm = model.load()
    except ModelError as exc:
        fallback = _by_type(question, evidence, today)
        fallback.fallback = str(exc)
        return fallback
    from ripplecli.answer.llm import llm_answer

    return llm_answer(llm, question, evidence, log, stream, today=today)


def rules_kept(
    question: str, evidence: list[Evidence], model: ModelProvider, today: datetime | None = None
) -> Answer | None:
    """The rules' answer, noted, where auto keeps it over the configured model's; None: ask the model."""
    from ripplecli.answer.typed import question_type

    kind = question_type(question)
    if kind in RULES_TYPES:
        typed = _by_type(question, evidence, today)
        typed.note = "a when-question: the rules resolve its date (auto leaves the model out)"
        return typed
    if WORKED_OUT and _worked_out(question, evidence, today):
        typed = _by_type(question, evidence, today)
        typed.note = "a date or duration worked out from the chats' days: auto keeps the rules' arithmetic"
        return typed
    if kind not in VERDICT_TYPES and not model.rules_when_sure:
        return None
    typed = _by_type(question, evidence, today)
    if kind in VERDICT_TYPES and leans_no(typed):
        typed.note = "the rules weighed a reason against: auto keeps their no (the model overlooks such reasons)"
        return typed
    if model.rules_when_sure and typed.found and typed.sure:
        typed.note = "the rules found an answer of the asked kind: auto keeps it (measured better than this model)"
        return typed
    return None


def _worked_out(question: str, evidence: list[Evidence], today: datetime | None) -> bool:
    """Whether the rules work the answer out from the days of the events the question names."""
    from ripplecli.answer.chronology import chronology_answer

    return chronology_answer(question, evidence, today) is not None


def leans_no(answer: Answer) -> bool:
    """Whether a weighed yes-no or should answer says no (outright or likely) from the evidence it cites."""
    span = (answer.span or "").strip().lower()
    return answer.found and bool(answer.citations) and span in ("no", "likely no")


Answerer = Callable[[str, list[Evidence], ModelProvider, CallLog, AnswerStream | None, datetime | None], Answer]
ANSWERERS: dict[str, Answerer] = {
    "typed": lambda question, evidence, model, log, stream, today: _by_type(question, evidence, today),
    "extractive": lambda question, evidence, model, log, stream, today: _extracted(question, evidence),
    "llm": _llm,
    "auto": _auto,
}


def answer_for(
    mode: str,
    question: str,
    evidence: list[Evidence],
    model: ModelProvider = NO_MODEL,
    log: CallLog | None = None,
    stream: AnswerStream | None = None,
    today: datetime | None = None,
) -> Answer | None:
    """The answer of one recall in the requested mode (auto|typed|llm|extractive|none), timed; a model's
    answer goes to `stream` as it is written. `today` is the day the question is asked ("how long ago")."""
    if mode == "none":
        return None
    started = time.perf_counter()
    answer = ANSWERERS[mode](question, evidence, model, log or CallLog(), stream, today)
    answer.seconds = time.perf_counter() - started
    return answer
