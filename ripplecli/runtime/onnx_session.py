"""Opening the encoder's onnxruntime session quickly: every `ripple ask` is a new process that opens it once.

Opening the exported model costs a protobuf parse of ~90 MB of weights and a graph optimisation pass on every
start. So the first open also saves the optimised graph beside the model, its weights in a separate data file,
and later opens read that copy with optimisations off: about a third of the CPU time, the same vectors. The copy
records what it was made from (the model file's size and mtime, the onnxruntime version); when any of that
changes, or the copy cannot be opened, the model itself is opened and the copy written again.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
from pathlib import Path
from typing import Any

from ripplecli.files import read_json_object

log = logging.getLogger(__name__)

COPY_SUFFIX = ".optimised"  # model.onnx -> model.optimised/ beside it
COPY_MODEL = "model.onnx"
COPY_DATA = "model.onnx.data"  # the weights, named relative to COPY_MODEL inside the copy
COPY_STAMP = "source.json"
MIN_EXTERNAL_BYTES = 1024  # smaller tensors stay inside the graph file


def open_session(model: Path, *, prepack: bool = True, threads: int | None = None) -> Any:
    """A CPU session for `model`, from its optimised copy when that is current (see the module docstring).

    `prepack=False` leaves the weights as they are read instead of re-laying them out for the matrix kernels: the
    session opens in ~10 ms instead of ~50, its first sentence costs a few ms more, encoding many is ~5% slower
    (2-core AMD EPYC, MiniLM), and vectors differ in the seventh decimal (another summation order). A process that
    encodes one question (a cold `ripple ask`) gains; an ingest does not.
    `threads`: how many threads one run may use (default: every core)."""
    import onnxruntime

    copy = optimised_copy(model)
    stamp = source_stamp(model)
    if read_json_object(copy / COPY_STAMP) == stamp:
        try:
            level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
            return _session(copy / COPY_MODEL, level, prepack=prepack, threads=threads)
        except Exception as exc:  # onnxruntime's errors derive from Exception only
            log.warning("the optimised encoder copy %s is unreadable (%s); writing it again", copy, exc)
    return _open_and_save(model, copy, stamp, prepack, threads)


def optimised_copy(model: Path) -> Path:
    """The folder that holds the optimised copy of `model`."""
    return model.with_name(model.stem + COPY_SUFFIX)


def source_stamp(model: Path) -> dict[str, Any]:
    """What a copy is valid for: the model file as it is now and the onnxruntime that optimised it."""
    import onnxruntime

    info = model.stat()
    return {"model": [info.st_size, info.st_mtime_ns], "onnxruntime": onnxruntime.__version__}


def _session(
    path: Path, level: Any, save_to: Path | None = None, prepack: bool = True, threads: int | None = None
) -> Any:
    """An onnxruntime CPU session using `threads` (default every core); `save_to` also writes the optimised graph
    and weights."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads or os.cpu_count() or 1
    options.graph_optimization_level = level
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")  # spinning threads starve a busy laptop
    if not prepack:
        options.add_session_config_entry("session.disable_prepacking", "1")
    if save_to is not None:
        options.optimized_model_filepath = str(save_to)
        options.add_session_config_entry("session.optimized_model_external_initializers_file_name", COPY_DATA)
        options.add_session_config_entry(
            "session.optimized_model_external_initializers_min_size_in_bytes", str(MIN_EXTERNAL_BYTES)
        )
    return onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def _open_and_save(model: Path, copy: Path, stamp: dict[str, Any], prepack: bool, threads: int | None) -> Any:
    """Open `model` with optimisations on, writing its optimised copy on the way; without the copy if that fails.

    ORT_ENABLE_EXTENDED, not ALL: the optimisations ALL adds are layout changes for convolutions (none in this
    model) that onnxruntime marks as specific to the machine that made them."""
    import onnxruntime

    level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    temp = copy.with_name(f".{copy.name}.{os.getpid()}.tmp")
    try:
        shutil.rmtree(temp, ignore_errors=True)
        temp.mkdir(parents=True)
        session = _session(model, level, save_to=temp / COPY_MODEL, prepack=prepack, threads=threads)
        (temp / COPY_STAMP).write_text(json.dumps(stamp), encoding="utf-8")
        _move_into_place(temp, copy)
        return session
    except Exception as exc:  # a read-only or full cache: run without the copy
        log.debug("could not write the optimised encoder copy %s: %s", copy, exc)
        return _session(model, level, prepack=prepack, threads=threads)
    finally:
        shutil.rmtree(temp, ignore_errors=True)


def _move_into_place(temp: Path, copy: Path) -> None:
    """Replace a stale or damaged copy with the finished `temp` folder (a reader never sees half a copy)."""
    if copy.exists():
        old = copy.with_name(f".{copy.name}.{os.getpid()}.old")
        os.replace(copy, old)
        shutil.rmtree(old, ignore_errors=True)
    try:
        os.replace(temp, copy)
    except OSError:  # another process put its copy in place first; keep that one
        log.debug("another process wrote %s first", copy)
