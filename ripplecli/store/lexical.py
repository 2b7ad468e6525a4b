"""The lexical view: BM25 over memory restatements, tokenised exactly like the query side.

The scores are bm25s's (Lucene's BM25, k1 = 1.5, b = 0.75) and its file layout (a token-by-document score matrix in
CSC form, its vocabulary, its parameters), but built here with numpy: importing bm25s and the scipy.sparse it pulls
in cost ~0.25 s of every ingest, about a fifth of a small one. `build_scores` does bm25s's arithmetic in its order
and precision (float64, each score rounded once to float32), so every score is bit-identical to bm25s's (the tests
compare them, with bm25s installed as a test dependency), and an index saved by bm25s reads the same.
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ripplecli.cues import TOKENIZER_VERSION, content_tokens
from ripplecli.files import mapped_array, private_file, replace_folder, write_private_text
from ripplecli.protocols import Hits
from ripplecli.store.seals import check_folder, read_sealed, seal_folder, sealed_json

META_FILE = "ripple.json"
IDS_FILE = "ids.npy"
MODEL_FOLDER = "bm25s"

# The files bm25s saves its precomputed token-by-document scores in (a CSC matrix), its vocabulary, its parameters.
SCORE_FILES = {"data": "data.csc.index.npy", "indices": "indices.csc.index.npy", "indptr": "indptr.csc.index.npy"}
VOCAB_FILE = "vocab.index.json"
PARAMS_FILE = "params.index.json"
K1, B = 1.5, 0.75  # bm25s's defaults, with its default method (Lucene's)
# Documents tokenised at once. measured: rebuilding the index of a 20,000-message archive's store (3.1M words) took
# +277 MB of resident memory holding all its texts and tokens at once, +102 MB in chunks (bench/README.md)
CHUNK_DOCUMENTS = 2048


@dataclass
class Bm25Scores:
    """BM25 contributions per (token, document), as bm25s precomputes them; summing columns scores a query."""

    vocab: dict[str, int]
    data: np.ndarray
    indices: np.ndarray
    indptr: np.ndarray
    num_docs: int

    @classmethod
    def read(cls, model_folder: Path) -> Bm25Scores:
        """The scores saved in `model_folder` (by `write`, or by bm25s itself in older stores)."""
        arrays = {name: mapped_array(model_folder / file) for name, file in SCORE_FILES.items()}  # a query reads a few
        vocab = json.loads((model_folder / VOCAB_FILE).read_text(encoding="utf-8"))
        params = json.loads((model_folder / PARAMS_FILE).read_text(encoding="utf-8"))
        return cls(vocab, arrays["data"], arrays["indices"], arrays["indptr"], int(params["num_docs"]))

    def write(self, model_folder: Path) -> None:
        """Save the scores in bm25s's layout."""
        model_folder.mkdir(mode=0o700)
        for name, file in SCORE_FILES.items():
            with private_file(model_folder / file) as out:
                np.save(out, getattr(self, name))
        write_private_text(model_folder / VOCAB_FILE, json.dumps(self.vocab, ensure_ascii=False))
        params = {"k1": K1, "b": B, "method": "lucene", "idf_method": "lucene", "num_docs": self.num_docs}
        write_private_text(model_folder / PARAMS_FILE, json.dumps(params))

    def score(self, tokens: list[str]) -> np.ndarray:
        """Σ over the query's tokens (repeats count again, as in bm25s) of each document's contribution."""
        totals = np.zeros(self.num_docs, dtype=np.float32)
        for token in tokens:
            column = self.vocab[token]
            start, end = self.indptr[column], self.indptr[column + 1]
            totals[self.indices[start:end]] += self.data[start:end]
        return totals


def build_scores(corpus: Iterable[Sequence[str]]) -> Bm25Scores | None:
    """The BM25 contribution of each token of each document, as bm25s computes it: the idf of a token from the
    number of documents holding it (math.log, rounded to float32), times tf / (k1 (1 - b + b |d| / avgdl) + tf) in
    float64, rounded once to float32; each token's column lists its documents in order. The corpus is read a chunk
    at a time, so building holds the store's (token, document) counts, not its tokens. None: no token anywhere."""
    vocab: dict[str, int] = {}
    tokens, documents, counts, lengths = [], [], [], []
    first = 0
    for chunk in _chunks(corpus, CHUNK_DOCUMENTS):
        sizes = np.array([len(document) for document in chunk], dtype=np.int64)
        ids = np.fromiter((vocab.setdefault(t, len(vocab)) for d in chunk for t in d), np.int64, int(sizes.sum()))
        local = np.repeat(np.arange(len(chunk), dtype=np.int64), sizes)
        pairs, held = np.unique(ids * len(chunk) + local, return_counts=True)  # by token, then document
        token, document = np.divmod(pairs, len(chunk))
        tokens.append(token.astype(np.int32))
        documents.append((document + first).astype(np.int32))
        counts.append(held.astype(np.int32))
        lengths.append(sizes)
        first += len(chunk)
    if not vocab:
        return None
    token_of = np.concatenate(tokens)
    order = np.argsort(token_of, kind="stable")  # chunks come in document order: CSC order
    token_of = token_of[order]
    document_of = np.concatenate(documents)[order]
    tf = np.concatenate(counts)[order].astype(np.float64)
    length = np.concatenate(lengths)
    held = np.bincount(token_of, minlength=len(vocab))
    idf = np.array([math.log(1 + (first - n + 0.5) / (n + 0.5)) for n in held.tolist()], dtype=np.float32)
    tfc = tf / (K1 * ((1 - B) + B * length[document_of] / length.mean()) + tf)
    indptr = np.zeros(len(vocab) + 1, dtype=np.int32)
    np.cumsum(held, out=indptr[1:])
    data = (idf[token_of].astype(np.float64) * tfc).astype(np.float32)
    return Bm25Scores(vocab, data, document_of, indptr, first)


def _chunks(corpus: Iterable[Sequence[str]], size: int) -> Iterator[list[Sequence[str]]]:
    """The corpus in lists of `size` documents."""
    iterator = iter(corpus)
    while chunk := list(itertools.islice(iterator, size)):
        yield chunk


class Bm25Index:
    """BM25 scoring over our own tokens; row i of the corpus is memory `ids[i]`."""

    def __init__(
        self,
        ids: Sequence[int] | np.ndarray,
        scores: Bm25Scores | None = None,
        saved: bool = False,
        sealed: bool = True,
    ) -> None:
        self.ids = np.asarray(ids, dtype=np.int64)
        self._scores = scores  # None: no document had a token
        self._saved = saved  # read from disk (saving it elsewhere is refused: build a new one)
        self.sealed = sealed  # False: read from files an older ripple saved without checksums

    @classmethod
    def build(cls, ids: list[int], texts: list[str]) -> Bm25Index:
        """Index `texts` (one per memory id)."""
        if len(ids) != len(texts):
            raise ValueError("ids and texts differ in length")
        return cls.from_rows(zip(ids, texts, strict=True))

    @classmethod
    def from_rows(cls, rows: Iterable[tuple[int, str]]) -> Bm25Index:
        """Index (memory id, text) rows as a store's query streams them: one chunk's texts held at a time."""
        ids: list[int] = []

        def corpus() -> Iterator[list[str]]:
            for memory_id, text in rows:
                ids.append(memory_id)
                yield content_tokens(text)

        scores = build_scores(corpus())
        return cls(ids, scores)

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
        if self._saved:
            raise ValueError("an index read from disk is already saved; build a new one to save it elsewhere")
        with private_file(staging / IDS_FILE) as out:
            np.save(out, self.ids)
        if self._scores is not None:
            self._scores.write(staging / MODEL_FOLDER)
        meta = {"version": version, "count": self.count, "tokenizer": TOKENIZER_VERSION}
        write_private_text(staging / META_FILE, sealed_json({**meta, "files": seal_folder(staging)}))

    @classmethod
    def load(cls, folder: Path, whole: bool = False) -> tuple[Bm25Index | None, int | None]:
        """The saved index and its version, or (None, None) when missing or unreadable. Raises DamagedFile when a
        file fails its seal (store/seals.py; every chunk with `whole`)."""
        folder = Path(folder)
        meta, sealed = read_sealed(folder / META_FILE)
        if meta is None:
            return None, None
        if sealed:
            check_folder(folder, meta.get("files"), whole)
        try:
            ids = mapped_array(folder / IDS_FILE)
            model = folder / MODEL_FOLDER
            scores = Bm25Scores.read(model) if model.is_dir() else None  # no folder: no document had a token
            if len(ids) != meta["count"] or (scores is not None and scores.num_docs != len(ids)):
                return None, None
        except (OSError, ValueError, KeyError, EOFError):
            return None, None
        if meta.get("tokenizer", 1) != TOKENIZER_VERSION:  # built with other tokens: a query would miss
            return None, None
        return cls(ids, scores, saved=True, sealed=sealed), int(meta["version"])
