"""The encoder's optimised copy: written on first open, reused after, written again when stale or damaged."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from ripplecli.runtime import onnx_session
from ripplecli.runtime.onnx_session import COPY_DATA, COPY_MODEL, COPY_STAMP, open_session, optimised_copy

INPUT = np.linspace(-1, 1, 64, dtype=np.float32).reshape(1, 64)


def write_model(path: Path, seed: int) -> np.ndarray:
    """A small ONNX graph, y = relu(x @ W + b) @ W2, with weights big enough to go to the data file; its answer."""
    rng = np.random.default_rng(seed)
    w, b, w2 = (rng.standard_normal(shape).astype(np.float32) for shape in ((64, 64), (64,), (64, 8)))
    graph = helper.make_graph(
        [
            helper.make_node("MatMul", ["x", "w"], ["xw"]),
            helper.make_node("Add", ["xw", "b"], ["h"]),
            helper.make_node("Relu", ["h"], ["r"]),
            helper.make_node("MatMul", ["r", "w2"], ["y"]),
        ],
        "tiny",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8])],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b"), numpy_helper.from_array(w2, "w2")],
    )
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return np.maximum(INPUT @ w + b, 0) @ w2


def run(session) -> np.ndarray:
    """The session's output for the fixed input."""
    return session.run(None, {"x": INPUT})[0]


@pytest.fixture
def model(tmp_path: Path) -> tuple[Path, np.ndarray]:
    path = tmp_path / "model.onnx"
    return path, write_model(path, seed=1)


def test_first_open_writes_the_copy_and_later_opens_reuse_it(model, monkeypatch: pytest.MonkeyPatch) -> None:
    path, expected = model
    first = run(open_session(path))
    copy = optimised_copy(path)
    assert sorted(p.name for p in copy.iterdir()) == sorted([COPY_MODEL, COPY_DATA, COPY_STAMP])
    assert [p.name for p in path.parent.iterdir() if p.name.startswith(".")] == []  # no temp folder left
    written = {p.name: p.stat().st_mtime_ns for p in copy.iterdir()}

    def no_rewrite(*_args):
        raise AssertionError("the copy was written again")

    monkeypatch.setattr(onnx_session, "_open_and_save", no_rewrite)
    again = run(open_session(path))
    assert {p.name: p.stat().st_mtime_ns for p in copy.iterdir()} == written
    np.testing.assert_array_equal(again, first)
    np.testing.assert_allclose(first, expected, rtol=1e-5, atol=1e-5)


def test_a_changed_model_gets_a_new_copy(model) -> None:
    path, _ = model
    open_session(path)
    expected = write_model(path, seed=2)
    os.utime(path, ns=(1, 1))  # a different stamp even on a file system with coarse mtimes
    np.testing.assert_allclose(run(open_session(path)), expected, rtol=1e-5, atol=1e-5)
    stamp = json.loads((optimised_copy(path) / COPY_STAMP).read_text())
    assert stamp["model"] == [path.stat().st_size, 1]


@pytest.mark.parametrize("damage", ["truncated weights", "garbage graph", "missing weights"])
def test_a_damaged_copy_falls_back_and_is_written_again(model, damage: str, caplog) -> None:
    path, expected = model
    open_session(path)
    copy = optimised_copy(path)
    if damage == "truncated weights":
        (copy / COPY_DATA).write_bytes((copy / COPY_DATA).read_bytes()[:100])
    elif damage == "garbage graph":
        (copy / COPY_MODEL).write_bytes(b"not a model")
    else:
        (copy / COPY_DATA).unlink()
    with caplog.at_level(logging.WARNING, logger=onnx_session.__name__):
        np.testing.assert_allclose(run(open_session(path)), expected, rtol=1e-5, atol=1e-5)
    assert "unreadable" in caplog.text
    np.testing.assert_allclose(run(open_session(path)), expected, rtol=1e-5, atol=1e-5)  # the rewritten copy
    assert (copy / COPY_DATA).stat().st_size > 100


def test_a_copy_that_cannot_be_written_costs_nothing_but_speed(model, monkeypatch: pytest.MonkeyPatch) -> None:
    path, expected = model

    def full_disk(*_args):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(onnx_session, "_move_into_place", full_disk)
    np.testing.assert_allclose(run(open_session(path)), expected, rtol=1e-5, atol=1e-5)
    assert sorted(p.name for p in path.parent.iterdir()) == ["model.onnx"]
