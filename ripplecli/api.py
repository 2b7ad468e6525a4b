"""The library face of ripple: open a store, ingest, recall, stats. The CLI and MCP server call only this."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from ripplecli.answer import ANSWER_MODES
from ripplecli.config import Settings, data_home, force_offline
from ripplecli.errors import InputError, StoreError
from ripplecli.ingest import Ingestor, IngestReport, Progress, file_hash
from ripplecli.model import Conversation
from ripplecli.store.db import Store


class Memory:
    """One ripple store: `Memory(path).ingest("chat.json")`, `.recall("question")`, `.stats()`."""

    def __init__(self, path: str | Path | None = None, *, read_only: bool = False, create: bool = True):
        force_offline()
        self.path = Path(path).expanduser() if path else data_home()
        self.store = Store.open(self.path, create=create and not read_only, read_only=read_only)
        self.settings = self._settings()
        self._encoder: Any = None
        self._recaller: Any = None

    def close(self) -> None:
        """Release the store (and its lock)."""
        self.store.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- configuration ------------------------------------------------------------------------
    def _settings(self) -> Settings:
        """Settings recorded in the store, so every later write uses what the store was built with."""
        recorded = self.store.get_meta("settings")
        if recorded is None:
            return Settings()
        from ripplecli.config import GraphParams

        graph = GraphParams(**recorded.pop("graph", {}))
        return Settings(**recorded, graph=graph)

    def configure(self, settings: Settings) -> None:
        """Choose encoder/extractor/graph parameters for a store that has no memories yet."""
        if self.store.count("memories"):
            raise StoreError(f"store {self.path}: already has memories; settings are fixed at creation")
        self.settings = settings

    @property
    def encoder(self):
        """The encoder named in the settings, loaded on first use (never on commands that don't encode)."""
        if self._encoder is None:
            from ripplecli.runtime.encoders import load_encoder

            self._encoder = load_encoder(self.settings.encoder_backend, self.settings.encoder_model)
        return self._encoder

    def _record_settings(self) -> None:
        """Write settings and encoder identity into meta on first ingest (inside a transaction)."""
        if self.store.get_meta("settings") is None:
            with self.store.transaction():
                self.store.set_meta("settings", self.settings.to_dict())
                self.store.set_meta("encoder_name", self.encoder.name)
                self.store.set_meta("encoder_dim", int(self.encoder.dim))

    def _extractor(self, name: str | None):
        """The extractor chosen by name from the registry."""
        from ripplecli.extract.base import EXTRACTORS
        from ripplecli.registry import resolve

        return resolve(EXTRACTORS, "extractor", name or self.settings.extractor)()

    # --- write ------------------------------------------------------------------------------
    def ingest(
        self,
        path: str | Path,
        *,
        fmt: str = "auto",
        extractor: str | None = None,
        progress: Progress | None = None,
    ) -> IngestReport:
        """Ingest a chat file; a bad file raises InputError and writes nothing."""
        from ripplecli.formats import read_conversations

        path = Path(path)
        conversations = read_conversations(path, fmt)
        return self.ingest_conversations(
            conversations, label=str(path), content_hash=file_hash(path), extractor=extractor, progress=progress
        )

    def ingest_conversations(
        self,
        conversations: Sequence[Conversation],
        *,
        label: str = "<api>",
        content_hash: str = "",
        extractor: str | None = None,
        progress: Progress | None = None,
    ) -> IngestReport:
        """Ingest already parsed conversations (used by the API, the evaluation and MCP)."""
        self._record_settings()
        ingestor = Ingestor(self.store, self.settings, self.encoder, self._extractor(extractor), progress)
        return ingestor.ingest(conversations, label, content_hash)

    # --- read -------------------------------------------------------------------------------
    def stats(self) -> dict[str, Any]:
        """Graph and store statistics (`ripple graph stats`); never loads the encoder."""
        from ripplecli.graph.stats import graph_stats

        return graph_stats(self.store)

    def recall(
        self,
        question: str,
        *,
        k: int = 30,
        mode: str = "ripple",
        rounds: int = 1,
        as_of: datetime | None = None,
        answer: str = "none",
    ):
        """Associative recall: evidence, the trace of how it was found, and optionally an answer."""
        from ripplecli.recall.pipeline import Recaller, RecallParams

        if answer not in ANSWER_MODES:
            raise InputError(f"unknown answer mode '{answer}' (choose from: {', '.join(ANSWER_MODES)})")
        if self._recaller is None:
            self._recaller = Recaller(self.store, lambda: self.encoder)
        result = self._recaller.recall(question, RecallParams(k=k, mode=mode, rounds=rounds, as_of=as_of))
        if answer in ("auto", "extractive"):
            from ripplecli.answer import extractive_answer

            result.answer = extractive_answer(question, result.evidence)
        return result
