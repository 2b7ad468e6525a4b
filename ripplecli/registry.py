"""Backends chosen by name: one `Registry` style for every pluggable part, and the registries themselves.

A registry maps a name to "module:attr", imported only when chosen, so listing the choices (the CLI's help and
completion) loads nothing. A backend class that declares `needs_llm = True` is built with the local model
(taken from a provider, so the model loads only when such a class is chosen); others are built with no arguments.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ripplecli.errors import InputError
from ripplecli.protocols import LLM

LLMProvider = Callable[[], LLM]


@dataclass(frozen=True)
class FormatEntry:
    """A chat format as the registry lists it, its reader not imported: where the reader module's FORMAT is, what
    `ripple ingest --help` says of it, and its detection priority (of readers equally sure of an input, the higher
    reads it)."""

    target: str  # "module:FORMAT", a ripplecli.formats.fields.ChatFormat
    summary: str  # what the format is, where the file comes from: one line of the help's table
    priority: int = 0


class Registry(dict[str, Any]):
    """name -> "module:attr" (or an entry whose `target` is that) for one kind of backend; unknown names are a user
    error listing the choices."""

    def __init__(self, kind: str, entries: dict[str, Any]):
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
        module_name, attr = (target.target if isinstance(target, FormatEntry) else target).split(":")
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
# ripple ingest --format NAME -> the reader module's FORMAT (a ChatFormat: how it recognises its files, its parser,
# what it reads), with the line `ripple ingest --help` lists for it (in this order, the README's) and its priority:
# auto-detection (ripplecli.formats.detect) asks every reader of the input's kind how sure it is, and of readers
# equally sure (a JSON object with two formats' keys) the higher priority reads it. A new reader is one module
# declaring FORMAT and one entry here.
FORMATS = Registry(
    "format",
    {
        "chatgpt": FormatEntry("ripplecli.formats.chatgpt:FORMAT", "conversations.json from ChatGPT's data export", 60),
        "claude": FormatEntry("ripplecli.formats.claude:FORMAT", "conversations.json from Claude's data export", 50),
        "telegram": FormatEntry(
            "ripplecli.formats.telegram:FORMAT", "Telegram Desktop's JSON export (result.json)", 30
        ),
        "whatsapp": FormatEntry("ripplecli.formats.whatsapp:FORMAT", 'a chat\'s "Export chat" .txt (or its zip)'),
        "slack": FormatEntry("ripplecli.formats.slack:FORMAT", "the workspace export (zip or folder)"),
        "discord": FormatEntry("ripplecli.formats.discord:FORMAT", "DiscordChatExporter JSON", 40),
        "messenger": FormatEntry(
            "ripplecli.formats.messenger:FORMAT", "a Facebook Messenger or Instagram chat's message_1.json", 20
        ),
        "notes": FormatEntry("ripplecli.formats.notes:FORMAT", ".md / .txt you wrote, a memory per paragraph"),
        "native": FormatEntry(
            "ripplecli.formats.native:FORMAT", "ripple's own JSON (sessions of speaker + text turns)", 90
        ),
        "locomo": FormatEntry("ripplecli.formats.locomo:FORMAT", "the LoCoMo benchmark's samples", 80),
        "longmemeval": FormatEntry("ripplecli.formats.longmemeval:FORMAT", "the LongMemEval benchmark's entries", 70),
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
