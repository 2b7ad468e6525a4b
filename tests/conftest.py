"""Shared test fixtures: a temporary data dir for every test, fakes for the encoder (and later the LLM)."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from ripplecli.cues import content_tokens
from ripplecli.runtime.base import ENCODERS

REPO = Path(__file__).resolve().parent.parent
SAMPLE_CHATS = REPO / "sample_chats"
LOCOMO_DEV = REPO.parent / "shared" / "data" / "locomo-dev.json"


class FakeEncoder:
    """Deterministic hashed bag-of-words vectors: shared words give high cosine, no model needed."""

    name = "fake-bow"
    dim = 64

    def __init__(self, model: str = "fake") -> None:
        self.model = model

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for token in content_tokens(text) or ["<empty>"]:
                bucket = int(hashlib.md5(token.encode()).hexdigest()[:8], 16) % self.dim
                out[row, bucket] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.maximum(norms, 1e-12)


@pytest.fixture(scope="session")
def shared_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One encoder cache per test session: the ONNX export happens once, not per test."""
    return tmp_path_factory.mktemp("ripple-cache")


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, shared_cache: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own RIPPLE_HOME so no test touches the user's data."""
    home = tmp_path / "ripple-home"
    monkeypatch.setenv("RIPPLE_HOME", str(home))
    monkeypatch.setenv("RIPPLE_CACHE", str(shared_cache))
    monkeypatch.setenv("COLUMNS", "120")
    monkeypatch.delenv("RIPPLE_MODEL", raising=False)
    return home


@pytest.fixture
def fake_encoder(monkeypatch: pytest.MonkeyPatch) -> type[FakeEncoder]:
    """Register the fake encoder under the backend name "fake"."""
    monkeypatch.setitem(ENCODERS, "fake", "conftest:FakeEncoder")
    return FakeEncoder


@pytest.fixture
def fake_settings(fake_encoder):
    """Store settings that use the fake encoder (unit tests that need no model)."""
    from ripplecli.config import Settings

    return Settings(encoder_backend="fake", encoder_model="fake")


@pytest.fixture
def locomo_dev() -> Path:
    """The LoCoMo dev split shipped beside the repo (skips when absent)."""
    if not LOCOMO_DEV.exists():
        pytest.skip("shared/data/locomo-dev.json is not beside the repo")
    return LOCOMO_DEV


def cpu_count() -> int:
    """Cores available, for tests that report timings."""
    return os.cpu_count() or 1
