"""Where data lives and the tunable parameters, with the papers' values as defaults."""

from __future__ import annotations

import logging
import os
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

OFFLINE_ENV = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "TOKENIZERS_PARALLELISM": "false",
}
# onnxruntime (1.32, Linux) otherwise keeps a telemetry queue (a device id, the Python path, OS, CPU) in
# ~/.cache/Microsoft/DeveloperTools/.onnxruntime/ and, in a process that lives past ~10 s, looks up
# mobile.events.data.microsoft.com. It reads the variable once, when it is imported; `disable_telemetry_events()`
# does not stop either. Set, not defaulted: ripple sends nothing whatever the environment says.
NO_TELEMETRY_ENV = {"ORT_DISABLE_TELEMETRY": "1"}


def force_offline() -> None:
    """Switch Hugging Face libraries to offline mode and onnxruntime's telemetry off before any of them is imported."""
    for key, value in OFFLINE_ENV.items():
        os.environ.setdefault(key, value)
    disable_telemetry()


def disable_telemetry() -> None:
    """Keep onnxruntime from writing or sending telemetry; runs when ripplecli is imported, before onnxruntime is."""
    if "onnxruntime" in sys.modules and any(os.environ.get(k) != v for k, v in NO_TELEMETRY_ENV.items()):
        logging.getLogger(__name__).warning(
            "onnxruntime was imported before ripple, so its telemetry stays on in this process: "
            "set ORT_DISABLE_TELEMETRY=1 before importing it"
        )
    os.environ.update(NO_TELEMETRY_ENV)


def data_home() -> Path:
    """The default store folder: $RIPPLE_HOME, else the platform's user data dir / ripple."""
    env = os.environ.get("RIPPLE_HOME")
    if env:
        return Path(env).expanduser()
    import platformdirs

    return Path(platformdirs.user_data_dir("ripple"))


def cache_home() -> Path:
    """Derived artefacts shared by stores (the exported ONNX encoder): $RIPPLE_CACHE or the user cache dir."""
    env = os.environ.get("RIPPLE_CACHE")
    if env:
        return Path(env).expanduser()
    import platformdirs

    return Path(platformdirs.user_cache_dir("ripple"))


def models_home() -> Path:
    """Where `ripple models pull` puts models, shared by every store: $RIPPLE_MODELS, else the platform's user data
    dir / ripple-models. Never inside a store folder (the default store is user data dir / ripple), where a new
    store would find files that are not its own and refuse to be made."""
    env = os.environ.get("RIPPLE_MODELS")
    if env:
        return Path(env).expanduser()
    import platformdirs

    return Path(platformdirs.user_data_dir("ripple-models"))


@dataclass
class GraphParams:
    """Edge thresholds and caps (docs/method.md, the memory graph); recorded in the store's meta at creation."""

    semantic_threshold: float = 0.85
    semantic_cap: int = 6
    structural_threshold: float = 0.60
    structural_cap: int = 6
    candidate_pool: int = 20
    beta_persons: float = 0.5
    beta_locations: float = 0.2
    beta_time: float = 0.3
    tau_days: float = 7.0
    structural_scoring: str = "discriminative"  # or "paper": literal Jaccard over all cues
    contiguity_span: int = 1
    cue_max_df: float = 0.05  # cues in more than this share of a conversation's memories carry no signal


@dataclass
class Settings:
    """What a store is built with: encoder, extractor, windows and graph parameters."""

    encoder_backend: str = "onnx"
    encoder_model: str = "all-MiniLM-L6-v2"
    extractor: str = "rules"
    window_turns: int = 40
    window_overlap: int = 2
    graph: GraphParams = field(default_factory=GraphParams)

    def to_dict(self) -> dict:
        """A JSON-ready view for the store's meta table."""
        return asdict(self)
