"""Backends chosen by name: one `Registry` style for every pluggable part, and the registries themselves.

A registry maps a name to "module:attr", imported only when chosen, so listing the choices (the CLI's help and
completion) loads nothing. A backend class that declares `needs_llm = True` is built with the local model
(taken from a provider, so the model loads only when such a class is chosen); others are built with no arguments.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from ripplecli.errors import InputError
from ripplecli.protocols import LLM

LLMProvider = Callable[[], LLM]


class Registry(dict[str, str]):
    """name -> "module:attr" for one kind of backend; unknown names are a user error listing the choices."""

    def __init__(self, kind: str, entries: dict[str, str]):
        super().__init__(entries)
        self.kind = kind

    @property
    def names(self) -> list[str]:
        """The choices, in registration order (the CLI lists them in this order)."""
        return list(self)

    def load(self, name: str) -> Any:
        """Import the backend registered under `name`."""
        try:
            target = self[name]
        except KeyError:
            raise InputError(f"unknown {self.kind} '{name}' (choose from: {', '.join(sorted(self))})") from None
        module_name, attr = target.split(":")
        return getattr(importlib.import_module(module_name), attr)

    def create(self, name: str, llm: LLMProvider | None = None, *extra: Any) -> Any:
        """An instance of the backend: `cls(model, *extra)` for one that needs the local model, else `cls()`."""
        cls = self.load(name)
        if getattr(cls, "needs_llm", False):
            if llm is None:
                raise InputError(f"the {self.kind} '{name}' needs a local model")
            return cls(llm(), *extra)
        return cls()


def resolve(registry: dict[str, str], kind: str, name: str) -> Any:
    """Import the backend registered under `name` in a plain mapping (the `Registry.load` of older callers)."""
    return Registry(kind, registry).load(name)


# --- the registries ------------------------------------------------------------------------------
ENCODERS = Registry(
    "encoder backend",
    {
        "onnx": "ripplecli.runtime.onnx_encoder:OnnxEncoder",
        "onnx-int8": "ripplecli.runtime.onnx_encoder:OnnxInt8Encoder",
        "sentence-transformers": "ripplecli.runtime.st_encoder:SentenceTransformerEncoder",
    },
)
# ripple ingest --format NAME -> the reader module's FORMAT (a ChatFormat: its signature, its parser, what it reads);
# auto-detection (ripplecli.formats.load) tries the signatures in this order. A new reader is one module declaring
# FORMAT and one line here.
FORMATS = Registry(
    "format",
    {
        "native": "ripplecli.formats.native:FORMAT",
        "locomo": "ripplecli.formats.locomo:FORMAT",
        "longmemeval": "ripplecli.formats.longmemeval:FORMAT",
        "chatgpt": "ripplecli.formats.chatgpt:FORMAT",
        "claude": "ripplecli.formats.claude:FORMAT",
        "discord": "ripplecli.formats.discord:FORMAT",
        "telegram": "ripplecli.formats.telegram:FORMAT",
        "whatsapp": "ripplecli.formats.whatsapp:FORMAT",
        "slack": "ripplecli.formats.slack:FORMAT",
        "notes": "ripplecli.formats.notes:FORMAT",
    },
)
EXTRACTORS = Registry(  # ripple ingest --extractor NAME
    "extractor",
    {
        "rules": "ripplecli.extract.rules:RulesExtractor",
        "llm": "ripplecli.extract.llm:LLMExtractor",
    },
)
QUERY_ANALYZERS = Registry(  # ripple ask --analyzer NAME
    "analyzer",
    {
        "rules": "ripplecli.recall.query:RulesQueryAnalyzer",
        "llm": "ripplecli.recall.llm_query:LLMQueryAnalyzer",
    },
)
PLANNERS = Registry(  # ripple ask --planner NAME
    "planner",
    {
        "rules": "ripplecli.recall.planner:RulesPlanner",
        "llm": "ripplecli.recall.llm_planner:LLMPlanner",
        "llm-free": "ripplecli.recall.llm_planner:FreeLLMPlanner",
    },
)
QUERIERS = Registry(  # who writes CABLE's antecedent queries
    "CABLE querier",
    {
        "rules": "ripplecli.graph.antecedents:RulesQuerier",
        "llm": "ripplecli.graph.antecedents:LLMQuerier",
    },
)
VERIFIERS = Registry(  # who accepts CABLE's candidate links
    "CABLE verifier",
    {
        "rules": "ripplecli.graph.verifiers:RulesVerifier",
        "llm": "ripplecli.graph.verifiers:LLMVerifier",
    },
)
ANSWER_MODES = ("auto", "typed", "llm", "extractive", "none")  # ripple ask --answer NAME (ripplecli.answer)
EVAL_ANSWERS = ("none", "typed", "extractive", "llm", "auto")  # ripple eval locomo --answer NAME (eval.runner)
LONGMEMEVAL_TYPES = (  # ripple eval longmemeval --types NAME: LongMemEval's question types (eval.longmemeval)
    "single-session-user",
    "single-session-assistant",
    "single-session-preference",
    "multi-session",
    "temporal-reasoning",
    "knowledge-update",
)
LINKS: dict[str, dict[str, str]] = {  # ripple ingest --links NAME: which querier and verifier build the links
    "cable": {"querier": "rules", "verifier": "rules"},
    "cable-llm": {"querier": "llm", "verifier": "llm"},
}
