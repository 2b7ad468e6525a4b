"""The compact WordPiece of a one-shot ask: the real tokenizer's ids for plain ASCII, None for anything else."""

from __future__ import annotations

import json
import string
from pathlib import Path

import pytest
from conftest import SAMPLE_CHATS
from hypothesis import given, settings
from hypothesis import strategies as st

from ripplecli.runtime.encoders import model_dir
from ripplecli.runtime.onnx_encoder import OnnxEncoder, _load_tokenizer, _pad_id, max_length
from ripplecli.runtime.wordpiece import WordPiece, save_compact

MODEL = "all-MiniLM-L6-v2"


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory):
    """The real tokenizer and the compact copy saved from it."""
    folder = model_dir(MODEL)
    real = _load_tokenizer(folder)
    path = tmp_path_factory.mktemp("wordpiece") / "wordpiece.txt"
    assert save_compact(real, _pad_id(folder, real), path)
    compact = WordPiece.load(path, max_length(folder))
    assert compact is not None
    return real, compact


def sample_texts() -> list[str]:
    """Every turn of the sample chats, and text shaped to reach each rule."""
    turns = [turn["text"] for path in SAMPLE_CHATS.glob("*.json") for turn in _turns(json.loads(path.read_text()))]
    shaped = ["", "   ", "Hello, WORLD!! e-mail: a@b.c", "unaffable", "x" * 101, "a" * 100, "word " * 400]
    return [*turns, *shaped, "tab\there\nnewline\r", "5'11\" (about) 180cm; $40 & 20% off ~ {ok}"]


def _turns(chat) -> list[dict]:
    """The turns of a native sample chat."""
    return [turn for session in chat["sessions"] for turn in session["turns"]]


def test_plain_ascii_gets_the_real_tokenizers_ids(pair) -> None:
    real, compact = pair
    for text in sample_texts():
        assert compact.ids(text) == real.encode(text).ids, text


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=string.printable, max_size=80))
def test_any_printable_ascii_gets_the_real_tokenizers_ids(pair, text: str) -> None:
    real, compact = pair
    ids = compact.ids(text)
    assert ids is None or ids == real.encode(text).ids


@pytest.mark.parametrize("text", ["café", "naïve question", "😀 hi", "中文", "a\x00b", "a\vb", "a [MASK] b", "[cls]"])
def test_other_text_is_left_to_the_real_tokenizer(pair, text: str) -> None:
    assert pair[1].ids(text) is None


def test_a_tokenizer_of_another_kind_gets_no_compact_copy(pair, tmp_path: Path) -> None:
    real, _ = pair
    config = json.loads(real.to_str())
    config["normalizer"]["lowercase"] = False  # a cased model: lowercasing would change its ids
    from tokenizers import Tokenizer

    assert not save_compact(Tokenizer.from_str(json.dumps(config)), 0, tmp_path / "w.txt")
    assert not (tmp_path / "w.txt").exists() and WordPiece.load(tmp_path / "w.txt", 256) is None


@pytest.mark.slow
def test_a_one_shot_encoder_gives_the_same_vectors_with_or_without_the_copy() -> None:
    import numpy as np

    texts = ["What did Caroline research after the support group?", "Où est la gare ?", "[MASK]"]
    full = OnnxEncoder(MODEL)  # writes the compact copy beside the export, if it is not there yet
    few = OnnxEncoder.for_few(MODEL)
    assert few._wordpiece is not None and few._tokenizer is None  # plain ASCII alone needs no real tokenizer
    assert np.allclose(few.encode(texts[:1]), full.encode(texts[:1]), atol=1e-6) and few._tokenizer is None
    assert np.allclose(few.encode(texts), full.encode(texts), atol=1e-6) and few._tokenizer is not None
