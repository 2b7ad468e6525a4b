"""Answers from assembled evidence: extractive by default (never invented text), the local model when configured."""

from __future__ import annotations

import re
from typing import Any

from ripplecli.cues import content_tokens
from ripplecli.trace import Evidence

ANSWER_MODES = ("auto", "llm", "extractive", "none")
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
MAX_SENTENCES = 3
LOOK_AT = 8


def extractive_answer(question: str, evidence: list[Evidence]) -> dict[str, Any]:
    """The evidence sentences that best cover the question's words, each cited by memory id."""
    wanted = set(content_tokens(question))
    pool = []
    for e in evidence[:LOOK_AT]:
        for sentence in _SENTENCE.split(e.restatement):
            words = set(content_tokens(sentence))
            if words & wanted:
                pool.append((e, sentence.strip(), words & wanted))
    chosen: list[tuple[Evidence, str]] = []
    covered: set[str] = set()
    while pool and len(chosen) < MAX_SENTENCES:
        best = max(pool, key=lambda item: (len(item[2] - covered), -item[0].rank))
        if not best[2] - covered:
            break
        chosen.append((best[0], best[1]))
        covered |= best[2]
        pool.remove(best)
    if not chosen:
        return {"method": "extractive", "text": "", "citations": [], "note": "no evidence sentence matches"}
    text = " ".join(f"{sentence} [m{e.memory_id}]" for e, sentence in chosen)
    return {"method": "extractive", "text": text, "citations": [e.memory_id for e, _ in chosen]}


def _none(memory: Any, question: str, evidence: list[Evidence], log: Any) -> dict[str, Any] | None:
    """--answer none: evidence only."""
    return None


def _extractive(memory: Any, question: str, evidence: list[Evidence], log: Any) -> dict[str, Any] | None:
    """--answer extractive: evidence sentences, never invented text."""
    return extractive_answer(question, evidence)


def _llm(memory: Any, question: str, evidence: list[Evidence], log: Any) -> dict[str, Any] | None:
    """--answer llm: the configured model must load (ModelError otherwise)."""
    from ripplecli.llm_answer import llm_answer

    return llm_answer(memory.llm, question, evidence, log)


def _auto(memory: Any, question: str, evidence: list[Evidence], log: Any) -> dict[str, Any] | None:
    """--answer auto: the model when one is configured, else extractive; an unusable model falls back, noted."""
    from ripplecli.errors import ModelError
    from ripplecli.models import resolve_model

    if resolve_model(memory.model) is None:
        return extractive_answer(question, evidence)
    from ripplecli.llm_answer import llm_answer  # pydantic comes with it: only when a model is configured

    try:
        llm = memory.llm
    except ModelError as exc:
        fallback = extractive_answer(question, evidence)
        fallback["fallback"] = str(exc)
        return fallback
    return llm_answer(llm, question, evidence, log)


ANSWERERS = {"none": _none, "extractive": _extractive, "llm": _llm, "auto": _auto}


def answer_for(mode: str, memory: Any, question: str, evidence: list[Evidence], log: Any) -> dict[str, Any] | None:
    """The answer of one recall in the requested mode (auto|llm|extractive|none)."""
    return ANSWERERS[mode](memory, question, evidence, log)
