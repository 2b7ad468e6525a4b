"""The lexical view: BM25 over memory restatements, tokenised exactly like the query side."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import numpy as np

from ripplecli.cues import content_tokens

META_FILE = "ripple.json"
IDS_FILE = "ids.npy"
MODEL_FOLDER = "bm25s"

Hits = list[tuple[int, float]]


class Bm25Index:
    """bm25s scoring over our own tokens; row i of the corpus is memory `ids[i]`."""

    def __init__(self, ids: list[int], retriever=None) -> None:
        self.ids = np.asarray(ids, dtype=np.int64)
        self._retriever = retriever  # None when no document has a single token

    @classmethod
    def build(cls, ids: list[int], texts: list[str]) -> Bm25Index:
        """Index `texts` (one per memory id)."""
        if len(ids) != len(texts):
            raise ValueError("ids and texts differ in length")
        corpus = [content_tokens(text) for text in texts]
        if not any(corpus):
            return cls(ids)
        import bm25s

        retriever = bm25s.BM25()
        retriever.index(corpus, show_progress=False)
        return cls(ids, retriever)

    @property
    def count(self) -> int:
        """Indexed memories."""
        return len(self.ids)

    def search(self, query: str, k: int) -> Hits:
        """(memory id, BM25 score) best first; memories sharing no query token are left out."""
        if self._retriever is None or k <= 0:
            return []
        vocabulary = self._retriever.vocab_dict
        tokens = [token for token in content_tokens(query) if token in vocabulary]
        if not tokens:
            return []
        scores = self._retriever.get_scores(tokens)
        top = np.argsort(-scores, kind="stable")[:k]
        return [(int(self.ids[row]), float(scores[row])) for row in top if scores[row] > 0]

    def save(self, folder: Path, version: int) -> None:
        """Write into a temp folder beside `folder`, then swap it in; a crash leaves the old or no index."""
        folder = Path(folder)
        folder.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(dir=folder.parent, prefix=f".{folder.name}.", suffix=".tmp"))
        try:
            self._write(staging, version)
            _swap_in(staging, folder)
        finally:
            shutil.rmtree(staging, ignore_errors=True)

    def _write(self, staging: Path, version: int) -> None:
        """All files of the index, into a fresh folder."""
        np.save(staging / IDS_FILE, self.ids)
        if self._retriever is not None:
            self._retriever.save(str(staging / MODEL_FOLDER), show_progress=False)
        (staging / META_FILE).write_text(json.dumps({"version": version, "count": self.count}))

    @classmethod
    def load(cls, folder: Path) -> tuple[Bm25Index | None, int | None]:
        """The saved index and its version, or (None, None) when missing or unreadable."""
        folder = Path(folder)
        try:
            meta = json.loads((folder / META_FILE).read_text(encoding="utf-8"))
            ids = np.load(folder / IDS_FILE).tolist()
            retriever = _load_retriever(folder / MODEL_FOLDER)
        except (OSError, ValueError, KeyError):
            return None, None
        if len(ids) != meta["count"]:
            return None, None
        return cls(ids, retriever), int(meta["version"])


def _load_retriever(model_folder: Path):
    """The saved bm25s model, or None for an index without tokens."""
    if not model_folder.is_dir():
        return None
    import bm25s

    return bm25s.BM25.load(str(model_folder), show_progress=False)


def _swap_in(staging: Path, folder: Path) -> None:
    """Rename `staging` to `folder`, moving an existing folder aside first (rename cannot replace a dir)."""
    if not folder.exists():
        os.rename(staging, folder)
        return
    retired = Path(tempfile.mkdtemp(dir=folder.parent, prefix=f".{folder.name}.", suffix=".old"))
    os.rename(folder, retired / folder.name)
    os.rename(staging, folder)
    shutil.rmtree(retired, ignore_errors=True)
