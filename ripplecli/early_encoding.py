"""Encoding a batch's restatements on a second thread while the extractor parses it: ONNX Runtime and the
tokenizer release the GIL, so the encoder and spaCy share the two cores instead of taking turns. While the caller
parses, an encoder that can (OnnxEncoder.encode_sharing) runs on one core; while the caller waits for vectors, on
all of them."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from ripplecli.model import Window


@dataclass
class EncodingAhead:
    """Restatements an extractor said it will write for a batch, and their vectors being computed."""

    texts: list[str]
    vectors: Future | None  # None: nothing to encode


class EarlyEncoder:
    """A one-thread pool that encodes ahead when the extractor can tell its restatements without parsing (the
    rules one: `restatements(windows)`); otherwise each batch is encoded after its extraction, as before. Vectors
    are taken only when the drafts' restatements equal the foreseen ones, so the store is what it would be."""

    def __init__(self, encoder, extractor, enabled: bool = True) -> None:
        self.encoder = encoder
        restate: Callable[[Sequence[Window]], list[str]] | None = getattr(extractor, "restatements", None)
        self._restate = restate if enabled else None
        self._pool: ThreadPoolExecutor | None = None
        self._caller_busy = threading.Event()  # set except while the caller waits in vectors()
        self._caller_busy.set()

    def __enter__(self) -> EarlyEncoder:
        if self._restate is not None:
            self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ripple-encode")
        return self

    def __exit__(self, *exc: object) -> None:
        if self._pool is not None:  # an interrupted ingest waits for the batch being encoded, drops the rest
            self._pool.shutdown(wait=True, cancel_futures=True)

    def submit(self, windows: Callable[[], Sequence[Window]]) -> EncodingAhead | None:
        """Start encoding what the extractor will restate from these windows (built only when used)."""
        if self._pool is None or self._restate is None:
            return None
        texts = self._restate(windows())
        return EncodingAhead(texts, self._pool.submit(self._encode, texts) if texts else None)

    def _encode(self, texts: list[str]) -> np.ndarray:
        """On the pool's thread: sharing the cores with the caller when the encoder knows how."""
        sharing = getattr(self.encoder, "encode_sharing", None)
        return sharing(texts, self._caller_busy) if sharing is not None else self.encoder.encode(texts)

    def vectors(self, foreseen: EncodingAhead | None, texts: list[str]) -> np.ndarray:
        """The vectors of `texts`: those encoded ahead when foreseen right, else encoded now."""
        if foreseen is not None and foreseen.vectors is not None:
            self._caller_busy.clear()  # the caller only waits now: the encoder may take every core
            try:
                encoded = foreseen.vectors.result()
            finally:
                self._caller_busy.set()
            if foreseen.texts == texts:
                return encoded
        return self.encoder.encode(texts) if texts else np.zeros((0, 1))
