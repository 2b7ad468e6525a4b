"""The lexical view: BM25 over memory restatements, tokenised exactly like the query side."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ripplecli.cues import TOKENIZER_VERSION, content_tokens
from ripplecli.files import mapped_array, replace_folder
from ripplecli.protocols import Hits

META_FILE = "ripple.json"
IDS_FILE = "ids.npy"
MODEL_FOLDER = "bm25s"

# The files bm25s saves its precomputed token-by-document scores in (a CSC matrix) and its vocabulary.
SCORE_FILES = {"data": "data.csc.index.npy", "indices": "indices.csc.index.npy", "indptr": "indptr.csc.index.npy"}
VOCAB_FILE = "vocab.index.json"


@dataclass
class Bm25Scores:
    """BM25 contributions per (token, document), as bm25s precomputes them; summing columns scores a query.

    Read straight from the saved arrays so the query path needs numpy only: importing bm25s (and the
    scipy.sparse it pulls in) costs ~0.13 s of every cold `ripple ask`.
    """

    vocab: dict[str, int]
    data: np.ndarray
    indices: np.ndarray
    indptr: np.ndarray
    num_docs: int

    @classmethod
    def of_retriever(cls, retriever) -> Bm25Scores:
        """The scores of an index built in this process."""
        scores = retriever.scores
        return cls(retriever.vocab_dict, scores["data"], scores["indices"], scores["indptr"], scores["num_docs"])

    @classmethod
    def read(cls, model_folder: Path) -> Bm25Scores:
        """The scores bm25s saved in `model_folder`."""
        arrays = {name: mapped_array(model_folder / file) for name, file in SCORE_FILES.items()}  # a query reads a few
        vocab = json.loads((model_folder / VOCAB_FILE).read_text(encoding="utf-8"))
        params = json.loads((model_folder / "params.index.json").read_text(encoding="utf-8"))
        return cls(vocab, arrays["data"], arrays["indices"], arrays["indptr"], int(params["num_docs"]))

    def score(self, tokens: list[str]) -> np.ndarray:
        """Σ over the query's tokens (repeats count again, as in bm25s) of each document's contribution."""
        totals = np.zeros(self.num_docs, dtype=np.float32)
        for token in tokens:
            column = self.vocab[token]
            start, end = self.indptr[column], self.indptr[column + 1]
            totals[self.indices[start:end]] += self.data[start:end]
        return totals


class Bm25Index:
    """bm25s scoring over our own tokens; row i of the corpus is memory `ids[i]`."""

    def __init__(self, ids: Sequence[int] | np.ndarray, retriever=None, scores: Bm25Scores | None = None) -> None:
        self.ids = np.asarray(ids, dtype=np.int64)
        self._retriever = retriever  # set when built in this process (needed to save)
        self._scores = scores or (Bm25Scores.of_retriever(retriever) if retriever is not None else None)

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
        if self._scores is None or k <= 0:
            return []
        tokens = [token for token in content_tokens(query) if token in self._scores.vocab]
        if not tokens:
            return []
        scores = self._scores.score(tokens)
        matched = np.flatnonzero(scores > 0)  # sorting only these keeps an ask's cost off the store's size
        top = matched[np.argsort(-scores[matched], kind="stable")[:k]]
        return [(int(self.ids[row]), float(scores[row])) for row in top]

    def save(self, folder: Path, version: int) -> None:
        """Write into a temp folder beside `folder`, then swap it in; a crash leaves the old or no index."""
        replace_folder(Path(folder), lambda staging: self._write(staging, version))

    def _write(self, staging: Path, version: int) -> None:
        """All files of the index, into a fresh folder."""
        if self._retriever is None and self._scores is not None:
            raise ValueError("an index read from disk is already saved; build a new one to save it elsewhere")
        np.save(staging / IDS_FILE, self.ids)
        if self._retriever is not None:
            self._retriever.save(str(staging / MODEL_FOLDER), show_progress=False)
        meta = {"version": version, "count": self.count, "tokenizer": TOKENIZER_VERSION}
        (staging / META_FILE).write_text(json.dumps(meta))

    @classmethod
    def load(cls, folder: Path) -> tuple[Bm25Index | None, int | None]:
        """The saved index and its version, or (None, None) when missing or unreadable."""
        folder = Path(folder)
        try:
            meta = json.loads((folder / META_FILE).read_text(encoding="utf-8"))
            ids = mapped_array(folder / IDS_FILE)
            model = folder / MODEL_FOLDER
            scores = Bm25Scores.read(model) if model.is_dir() else None  # no folder: no document had a token
        except (OSError, ValueError, KeyError):
            return None, None
        if len(ids) != meta["count"] or (scores is not None and scores.num_docs != len(ids)):
            return None, None
        if meta.get("tokenizer", 1) != TOKENIZER_VERSION:  # built with other tokens: a query would miss
            return None, None
        return cls(ids, scores=scores), int(meta["version"])
