"""The interfaces stages hand each other: a sentence encoder, a local model, the vector and lexical indexes.

Only `runtime/` and `store/` implement them; everything else is written against these, so a test fake or another
backend fits without `Any` in a signature.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:  # annotations only: `ripple --help` and the registries must not load numpy
    import numpy as np

Hits = list[tuple[int, float]]  # (memory id, score), best first
Messages = list[dict[str, str]]


class Encoder(Protocol):
    """Maps texts to L2-normalised float32 vectors of a fixed dimension."""

    name: str
    dim: int

    def encode(self, texts: Sequence[str]) -> np.ndarray: ...


class LLM(Protocol):
    """A local instruction model: schema-constrained JSON, or free text."""

    def generate_json(self, messages: Messages, schema: dict[str, Any]) -> dict[str, Any]: ...

    def generate_text(self, messages: Messages) -> str: ...


class VectorIndex(Protocol):
    """Nearest memories by vector (hnswlib in `store/vectors.py`), rebuilt from the store's vectors table."""

    @property
    def count(self) -> int: ...

    def ids(self) -> set[int]: ...

    def add(self, ids: Sequence[int], vectors: np.ndarray) -> None: ...

    def remove(self, ids: Sequence[int]) -> None: ...

    def search(self, vector: np.ndarray, k: int, allowed: Callable[[int], bool] | None = None) -> Hits: ...

    def search_many(self, vectors: np.ndarray, k: int) -> list[Hits]: ...

    def search_older(self, vectors: np.ndarray, ids: Sequence[int], k: int, limit: int) -> list[Hits]: ...

    def get_vectors(self, ids: Sequence[int]) -> np.ndarray: ...

    def rebuild(self, ids: Sequence[int], vectors: np.ndarray) -> None: ...

    def save(self, version: int) -> None: ...

    @property
    def sealed(self) -> bool:
        """Whether the saved files carry checksums (the store saves an older ripple's again, with them)."""
        ...


class LexicalIndex(Protocol):
    """Memories by BM25 over their restatements (`store/lexical.py`), rebuilt from the memories table."""

    @property
    def count(self) -> int: ...

    def search(self, query: str, k: int) -> Hits: ...

    def save(self, folder: Path, version: int) -> None: ...
