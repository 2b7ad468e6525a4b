"""Every backend a registry names, as the Protocol it stands for, so mypy checks each class against its Protocol.

The registries (ripplecli.registry) import a backend by name when it is chosen, and a call site sees only `Any`:
without this module nothing would tell mypy that OnnxEncoder is an Encoder. It is never imported at run time (it
imports every backend); tests/test_conformance.py checks that it lists every registered backend.
"""

from __future__ import annotations

from ripplecli.protocols import LLM, Encoder
from ripplecli.recall.llm_planner import FreeLLMPlanner, LLMPlanner
from ripplecli.recall.llm_query import LLMQueryAnalyzer
from ripplecli.recall.planner import Planner, RulesPlanner
from ripplecli.recall.query import QueryAnalyzer, RulesQueryAnalyzer
from ripplecli.runtime.llm import LlamaCppLLM
from ripplecli.runtime.onnx_encoder import OnnxEncoder, OnnxInt8Encoder
from ripplecli.runtime.st_encoder import SentenceTransformerEncoder

ENCODERS: dict[str, type[Encoder]] = {
    "onnx": OnnxEncoder,
    "onnx-int8": OnnxInt8Encoder,
    "sentence-transformers": SentenceTransformerEncoder,
}
QUERY_ANALYZERS: dict[str, type[QueryAnalyzer]] = {"rules": RulesQueryAnalyzer, "llm": LLMQueryAnalyzer}
PLANNERS: dict[str, type[Planner]] = {"rules": RulesPlanner, "llm": LLMPlanner, "llm-free": FreeLLMPlanner}
LOCAL_MODELS: tuple[type[LLM], ...] = (LlamaCppLLM,)  # ripplecli.local_models loads it (no registry)
