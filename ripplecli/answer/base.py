"""What an answerer returns, and how it reaches a local model without holding the whole store."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ripplecli.errors import ModelError
from ripplecli.protocols import LLM
from ripplecli.trace import Answer  # part of the recall result; answerers build it

NOT_FOUND = "not found in your chats"
NOT_SURE = "not sure"  # the span of an answer whose evidence holds nothing of the kind the question asks for
__all__ = ["NOT_FOUND", "NOT_SURE", "NO_MODEL", "Answer", "AnswerStream", "ModelProvider"]


@dataclass
class ModelProvider:
    """The local model as an answerer needs it: whether one is configured, and a loader (ModelError if unusable)."""

    configured: bool
    load: Callable[[], LLM]
    rules_when_sure: bool = False  # its catalogue entry measured the rules' sure answers better than its own


def _no_model() -> LLM:
    """The loader where no model is configured: asking for the model's answer is then a one-line error."""
    raise ModelError("no local model configured: pass --model PATH, set RIPPLE_MODEL, or choose --answer typed")


NO_MODEL = ModelProvider(False, _no_model)


@dataclass
class AnswerStream:
    """Where a model's answer goes while it is written: `started(model, prompt tokens)`, then each piece."""

    started: Callable[[str, int], None]
    token: Callable[[str], None]
    finished: Callable[[], None] = lambda: None
