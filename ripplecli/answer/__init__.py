"""Answers from assembled evidence: typed by rules (the default, never invented text), or the local model's.

Modules: `base` (the Answer type), `extractive`, `typed` (question typing and span choice), `llm` (the local
model, imported only when one is used: pydantic comes with it).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from ripplecli.answer.base import NO_MODEL, NOT_FOUND, Answer, AnswerStream, ModelProvider
from ripplecli.answer.extractive import extractive_answer
from ripplecli.answer.typed import typed_answer
from ripplecli.errors import ModelError
from ripplecli.registry import ANSWER_MODES
from ripplecli.runtime.llm import CallLog
from ripplecli.trace import Evidence

__all__ = [
    "ANSWER_MODES",
    "NOT_FOUND",
    "Answer",
    "AnswerStream",
    "ModelProvider",
    "answer_for",
    "extractive_answer",
    "typed_answer",
]


def _llm(
    question: str, evidence: list[Evidence], model: ModelProvider, log: CallLog, stream: AnswerStream | None
) -> Answer:
    """--answer llm: the configured model must load (ModelError otherwise)."""
    from ripplecli.answer.llm import llm_answer

    return llm_answer(model.load(), question, evidence, log, stream)


def _auto(
    question: str, evidence: list[Evidence], model: ModelProvider, log: CallLog, stream: AnswerStream | None
) -> Answer:
    """--answer auto: the model when one is configured, else typed; a model that cannot load falls back, noted."""
    if not model.configured:
        return typed_answer(question, evidence)
    try:
        llm = model.load()
    except ModelError as exc:
        fallback = typed_answer(question, evidence)
        fallback.fallback = str(exc)
        return fallback
    from ripplecli.answer.llm import llm_answer

    return llm_answer(llm, question, evidence, log, stream)


Answerer = Callable[[str, list[Evidence], ModelProvider, CallLog, AnswerStream | None], Answer]
ANSWERERS: dict[str, Answerer] = {
    "typed": lambda question, evidence, model, log, stream: typed_answer(question, evidence),
    "extractive": lambda question, evidence, model, log, stream: extractive_answer(question, evidence),
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
) -> Answer | None:
    """The answer of one recall in the requested mode (auto|typed|llm|extractive|none), timed; a model's
    answer goes to `stream` as it is written."""
    if mode == "none":
        return None
    started = time.perf_counter()
    answer = ANSWERERS[mode](question, evidence, model, log or CallLog(), stream)
    answer.seconds = time.perf_counter() - started
    return answer
