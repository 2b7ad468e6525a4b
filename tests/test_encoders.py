"""The encoders: the ONNX export must reproduce sentence-transformers' vectors exactly enough to swap them."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import ClassVar

import numpy as np
import pytest

from ripplecli.errors import InputError, ModelError
from ripplecli.runtime import export_onnx as export_module
from ripplecli.runtime.encoders import EncoderLoading, load_encoder, load_encoder_soon, model_dir
from ripplecli.runtime.onnx_encoder import OnnxEncoder, _length_batches, encoder_key, ensure_exported

SENTENCES = [
    "Maya started pottery classes last week.",
    "Jon said he'd sold his old guitar to pay for the trip to Lisbon.",
    "ok",
    "",
    "What did Caroline paint after the support group meeting on 8 May 2023?",
    "I love the sunrise photo you took at the lake!!! 🌅",
    "We adopted two cats, Luna and Oliver, in 2021.",
    "My grandmother's recipe uses cardamom, saffron and rose water.",
    "The deadline moved from Friday to next Tuesday because the client asked for more tests.",
    "Jon: yeah yeah yeah",
    "Melanie went camping with her kids in the mountains and they roasted marshmallows.",
    "naïve café résumé — déjà vu",
    "1234 5678 90",
    "She is reading 'Becoming' by Michelle Obama and finds it inspiring.",
    "Tomorrow I'm flying to Tokyo for a conference on distributed databases.",
    "The charity race raised money for mental health awareness.",
    "word " * 400,
    "Is it still raining there?",
    "Gina lost her job at Door Dash and decided to open an online clothing store.",
    "Thanks!",
]


@pytest.fixture(scope="session")
def onnx_encoder(shared_cache: Path) -> OnnxEncoder:
    """Built before the per-test environment exists, so point RIPPLE_CACHE at the session cache explicitly."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("RIPPLE_CACHE", str(shared_cache))
        return OnnxEncoder("all-MiniLM-L6-v2")


def test_unknown_backend_is_an_input_error():
    with pytest.raises(InputError, match="no-such-backend"):
        load_encoder("no-such-backend")


def test_missing_model_folder_is_named(tmp_path):
    missing = tmp_path / "not-a-model"
    with pytest.raises(ModelError, match="not-a-model"):
        load_encoder("onnx", str(missing))


def test_an_encoder_loaded_on_its_own_thread_is_the_one_loaded_directly(shared_cache, monkeypatch):
    """Through the real ONNX encoder: the background load gives the process's one instance, and its vectors."""
    monkeypatch.setenv("RIPPLE_CACHE", str(shared_cache))
    loading = EncoderLoading("onnx", "all-MiniLM-L6-v2")
    encoder = loading.result()
    assert encoder is load_encoder("onnx", "all-MiniLM-L6-v2")
    assert encoder.encode(["Maya started pottery classes."]).shape == (1, encoder.dim)


def test_a_failed_background_load_raises_where_the_encoder_is_taken(tmp_path):
    with pytest.raises(InputError, match="no-such-backend"):
        EncoderLoading("no-such-backend", "x")  # refused in the caller's thread
    loading = EncoderLoading("onnx", str(tmp_path / "not-a-model"))
    with pytest.raises(ModelError, match="not-a-model"):
        loading.result()


class Unready:
    """A backend whose one-time work is not done yet: a guessed load must leave it to the foreground."""

    built_on: ClassVar[list[str]] = []

    def __init__(self, model: str) -> None:
        import threading

        Unready.built_on.append(threading.current_thread().name)
        self.name, self.dim = model, 3

    @classmethod
    def ready(cls, model: str) -> bool:
        return False


def test_a_guessed_load_leaves_one_time_work_to_the_foreground(monkeypatch):
    import threading

    from ripplecli.registry import ENCODERS

    monkeypatch.setitem(ENCODERS, "unready", "test_encoders:Unready")
    loading = load_encoder_soon("unready", "guess", if_ready=True)
    assert load_encoder_soon("unready", "guess", if_ready=True) is loading  # started once
    encoder = loading.result()
    assert Unready.built_on == [threading.current_thread().name] and encoder.name == "guess"


class Brief:
    """A backend that loads differently for a process that encodes a sentence or two."""

    def __init__(self, model: str, few: bool = False) -> None:
        self.name, self.dim, self.few = model, 3, few

    @classmethod
    def for_few(cls, model: str) -> Brief:
        return cls(model, few=True)


def test_a_load_for_few_sentences_uses_the_backends_lighter_load_and_the_first_load_decides(monkeypatch):
    from ripplecli.registry import ENCODERS

    monkeypatch.setitem(ENCODERS, "brief", "test_encoders:Brief")
    assert load_encoder_soon("brief", "one", few=True).result().few
    assert load_encoder("brief", "one").few  # the same instance: the process loads it once
    assert not load_encoder("brief", "two").few and not load_encoder("brief", "two", few=True).few


def test_a_memory_that_loads_its_encoder_soon_recalls_the_same(store):
    """Memory.recall starts the encoder's load before its imports and lexical/cue views; the evidence is unchanged."""
    from ripplecli.api import Memory

    question = "Where is Maya going?"
    with Memory(store, read_only=True, create=False) as soon:
        found_soon = soon.recall(question, k=10)
        assert soon._encoder_loading is None and soon._encoder is not None
    with Memory(store, read_only=True, create=False) as direct:
        assert direct.encoder is not None  # loaded before the recall, in this thread
        found_direct = direct.recall(question, k=10)
    assert found_soon.evidence and found_soon.trace.seeds
    assert [e.memory_id for e in found_soon.evidence] == [e.memory_id for e in found_direct.evidence]
    assert found_soon.trace.seeds == found_direct.trace.seeds


def test_packaged_model_resolves_locally():
    assert (model_dir("all-MiniLM-L6-v2") / "tokenizer.json").is_file()


def test_other_poolings_are_refused_by_onnx(tmp_path):
    (tmp_path / "config.json").write_text('{"hidden_size": 8}')
    (tmp_path / "modules.json").write_text(
        json.dumps([{"path": "", "type": "x.Transformer"}, {"path": "1_Pooling", "type": "x.Pooling"}])
    )
    (tmp_path / "1_Pooling").mkdir()
    (tmp_path / "1_Pooling" / "config.json").write_text('{"pooling_mode_cls_token": true}')
    with pytest.raises(ModelError, match="mean pooling"):
        OnnxEncoder(str(tmp_path))


def test_encoder_key_follows_content(tmp_path):
    (tmp_path / "model.safetensors").write_bytes(b"weights")
    (tmp_path / "tokenizer.json").write_text("{}")
    first = encoder_key(tmp_path)
    assert encoder_key(tmp_path) == first
    (tmp_path / "tokenizer.json").write_text('{"changed": 1}')
    assert encoder_key(tmp_path) != first


def test_long_texts_do_not_pad_short_ones():
    batches = list(_length_batches([3, 256, 4, 5, *[10] * 100]))
    assert sorted(row for batch in batches for row in batch) == list(range(104))
    assert [1] in batches
    assert all(len(batch) <= 64 for batch in batches)


@pytest.mark.slow
def test_onnx_vectors_are_unit_length(onnx_encoder):
    vectors = onnx_encoder.encode(SENTENCES)
    assert vectors.dtype == np.float32
    assert vectors.shape == (len(SENTENCES), onnx_encoder.dim) == (len(SENTENCES), 384)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert onnx_encoder.name == "all-MiniLM-L6-v2"


@pytest.mark.slow
def test_empty_input_gives_empty_matrix(onnx_encoder):
    assert onnx_encoder.encode([]).shape == (0, 384)


@pytest.mark.slow
def test_order_does_not_depend_on_batching(onnx_encoder):
    single = np.vstack([onnx_encoder.encode([text]) for text in SENTENCES[:6]])
    np.testing.assert_allclose(onnx_encoder.encode(SENTENCES[:6]), single, atol=1e-5)


@pytest.mark.slow
def test_sharing_the_cores_gives_the_same_vectors(onnx_encoder):
    busy = threading.Event()
    alone = onnx_encoder.encode(SENTENCES * 3)
    busy.set()
    assert np.array_equal(onnx_encoder.encode_sharing(SENTENCES * 3, busy), alone)  # one-thread runs
    busy.clear()
    assert np.array_equal(onnx_encoder.encode_sharing(SENTENCES * 3, busy), alone)


@pytest.mark.slow
def test_onnx_matches_sentence_transformers(onnx_encoder):
    reference = load_encoder("sentence-transformers", "all-MiniLM-L6-v2")
    assert reference.dim == onnx_encoder.dim
    np.testing.assert_allclose(onnx_encoder.encode(SENTENCES), reference.encode(SENTENCES), atol=1e-5)
    assert reference.encode([]).shape == (0, 384)


@pytest.mark.slow
def test_export_is_reused(onnx_encoder, monkeypatch):
    exported = ensure_exported(model_dir("all-MiniLM-L6-v2"))
    written_at = exported.stat().st_mtime_ns

    def refuse(*_args):
        raise AssertionError("exported twice")

    monkeypatch.setattr(export_module, "export_onnx", refuse)
    again = OnnxEncoder("all-MiniLM-L6-v2")
    assert exported.stat().st_mtime_ns == written_at
    files = sorted(p.name for p in exported.parent.iterdir() if p.is_file())
    assert files == ["model.onnx", "wordpiece.txt"]  # and its optimised copy (a folder); the compact tokenizer
    np.testing.assert_allclose(again.encode(SENTENCES[:3]), onnx_encoder.encode(SENTENCES[:3]), atol=1e-6)


@pytest.mark.slow
def test_failed_export_leaves_no_file(tmp_path, monkeypatch):
    import torch

    def crash(_module, _args, path, **_kwargs):
        Path(path).write_bytes(b"half an onnx file")
        raise RuntimeError("exporter crashed")

    monkeypatch.setenv("RIPPLE_CACHE", str(tmp_path))
    monkeypatch.setattr(torch.onnx, "export", crash)
    with pytest.raises(ModelError, match="exporter crashed"):
        ensure_exported(model_dir("all-MiniLM-L6-v2"))
    leftovers = [p.name for p in tmp_path.rglob("*") if p.is_file() and p.name != "keys.json"]
    assert leftovers == []


@pytest.mark.slow
def test_int8_encoder_is_opt_in_named_apart_and_close_to_fp32(onnx_encoder):
    """The quantised encoder gives vectors near the fp32 ones under its own name, so a store records which it used."""
    int8 = load_encoder("onnx-int8")
    assert int8.name == "all-MiniLM-L6-v2-int8" != onnx_encoder.name and int8.dim == onnx_encoder.dim
    texts = [text for text in SENTENCES if text]
    cosines = np.sum(int8.encode(texts) * onnx_encoder.encode(texts), axis=1)
    assert cosines.min() > 0.9
    folder = ensure_exported(model_dir("all-MiniLM-L6-v2")).parent
    assert (folder / "model.int8.onnx").is_file()


@pytest.mark.slow
def test_a_store_keeps_the_encoder_it_was_built_with(tmp_path, fake_extractor):
    """An int8 store reopens with int8; a store built before it existed (no backend chosen) stays fp32."""
    from chats import CHAT_1, new_memory, session, write_chat

    from ripplecli.api import Memory
    from ripplecli.config import Settings

    chat = write_chat(tmp_path / "chat.json", [session(1, CHAT_1)])
    with new_memory(tmp_path / "int8", Settings(encoder_backend="onnx-int8")) as memory:
        memory.ingest(chat)
    with new_memory(tmp_path / "fp32", Settings()) as memory:
        memory.ingest(chat)
    with Memory(tmp_path / "int8") as int8, Memory(tmp_path / "fp32") as fp32:
        assert int8.encoder.name == int8.store.get_meta("encoder_name") == "all-MiniLM-L6-v2-int8"
        assert fp32.encoder.name == fp32.store.get_meta("encoder_name") == "all-MiniLM-L6-v2"


def test_a_fast_exit_waits_for_an_encoder_still_loading(monkeypatch):
    """It may be writing the optimised copy into the cache; cut short, that would leave a temp folder behind."""
    import os
    import threading
    import time

    from ripplecli import cli
    from ripplecli.runtime.encoders import LOADING_THREAD

    finished, exits = [], []
    monkeypatch.setattr(os, "_exit", exits.append)
    monkeypatch.setattr(cli.logging, "shutdown", lambda: None)  # pytest's own log handlers stay open
    loading = threading.Thread(target=lambda: (time.sleep(0.2), finished.append(True)), name=LOADING_THREAD)
    loading.start()
    cli._leave_now(3)
    assert finished == [True] and exits == [3]
