"""The sentence-transformers (torch) encoder: the reference the ONNX encoder is checked against."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ripplecli.config import force_offline
from ripplecli.errors import ModelError
from ripplecli.runtime.encoders import model_dir, model_name

BATCH_SIZE = 64


class SentenceTransformerEncoder:
    """Encodes with torch; slow to import (~6 s), so it is not the query-path default."""

    def __init__(self, model: str) -> None:
        force_offline()
        folder = model_dir(model)
        try:
            from sentence_transformers import SentenceTransformer
            from transformers.utils import logging as transformers_logging
        except ImportError as exc:
            raise ModelError(f"the sentence-transformers encoder needs its package installed ({exc})") from exc

        transformers_logging.disable_progress_bar()
        self._model = SentenceTransformer(str(folder), device="cpu")
        self.name = model_name(model)
        dim = self._model.get_embedding_dimension()
        if dim is None:  # no module of the folder sizes its vectors: not a sentence encoder
            raise ModelError(f"the sentence-transformers model in {folder} does not say its vector size")
        self.dim = int(dim)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """L2-normalised float32 vectors, one row per text."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        vectors = self._model.encode(
            list(texts),
            batch_size=BATCH_SIZE,
            convert_to_numpy=True,
            normalize_embeddings=True,
            show_progress_bar=False,
        )
        return np.ascontiguousarray(vectors, dtype=np.float32)
