"""The dense index over memory vectors: hnswlib labelled by memory id, saved atomically with a sidecar."""

from __future__ import annotations

import errno
import os
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from ripplecli.errors import DISK_FULL_CODES
from ripplecli.files import replacing
from ripplecli.protocols import Hits
from ripplecli.store import seals
from ripplecli.store.hnsw_map import (
    MappedHnsw,
    build_links,
    check_links,
    hnswlib,
    layout,
    links_stamp,
    search_is_hnswlibs,
)
from ripplecli.store.seals import DamagedFile, read_sealed, seal_file, sealed_json

SPACE = "cosine"
M = 16
EF_CONSTRUCTION = 200
EF_SEARCH = 64
INITIAL_CAPACITY = 1024
FULL_DISK_BYTES = 1 << 20  # a short index file with less than this free beside it: the disk filled while saving
# Insertions run on one thread: hnswlib links each new vector to the graph as it stands, so several threads adding
# at once build a different graph on every run (the same chat ingested twice gave other deep hits for 12-15 of the
# dev split's 760 questions). One thread with the fixed seed (init_index's random_seed, 100) builds the same graph,
# byte for byte, every time. Searches stay parallel: they only read the graph.
ADD_THREADS = 1


def exact_hits(
    candidates: list[int], vectors_of: Callable[[Sequence[int]], np.ndarray], query: np.ndarray, k: int
) -> Hits:
    """The k candidates nearest the query by brute force (both indexes' fallback where the graph cannot answer)."""
    if not candidates:
        return []
    similarities = vectors_of(candidates) @ (query / max(float(np.linalg.norm(query)), 1e-12))
    best = np.argsort(-similarities, kind="stable")[:k]
    return [(candidates[i], float(similarities[i])) for i in best]


class _SavedIndex:
    """What the whole and the mapped index share: the sidecar's figures, live ids, the brute-force fallback."""

    dim: int
    _meta: dict | None

    @staticmethod
    def _saved_meta(path: Path, dim: int, whole: bool = False) -> dict | None:
        """The sidecar of the index file at `path` when it is there for `dim` and the file exists; else None. Raises
        DamagedFile when the sidecar or the file fails its seal (every chunk with `whole`; store/seals.py)."""
        return saved_meta(path, dim, whole)

    @property
    def meta(self) -> dict | None:
        """What the sidecar says about the saved index: {"count", "version", "dim"}, or None."""
        if self._meta is None:
            return None
        return {key: self._meta[key] for key in ("count", "version", "dim")}

    @property
    def sealed(self) -> bool:
        """Whether the saved files carry checksums (an older ripple's do not: the next writer saves them again)."""
        return self._meta is not None and self._meta.get("sealed", True)

    def ids(self) -> set[int]:
        """Live (not deleted) memory ids, for integrity checks."""
        raise NotImplementedError

    def search_many(self, vectors: np.ndarray, k: int) -> list[Hits]:
        """One hit list per query row."""
        raise NotImplementedError

    def search_older(self, vectors: np.ndarray, ids: Sequence[int], k: int, limit: int) -> list[Hits]:
        """Per query row, the first `limit` of its k nearest (best first) whose id is below the row's own id: a new
        memory's graph candidates."""
        found = self.search_many(vectors, k)
        return [[(i, s) for i, s in hits if i < mid][:limit] for mid, hits in zip(ids, found, strict=True)]

    def get_vectors(self, ids: Sequence[int]) -> np.ndarray:
        """The stored (unit-length) vectors of live memory ids, in the order given."""
        raise NotImplementedError

    def _exact_search(self, query: np.ndarray, k: int, allowed: Callable[[int], bool] | None) -> Hits:
        """Brute force over the live (and allowed) vectors, where the graph cannot fill k."""
        candidates = [label for label in self.ids() if allowed is None or allowed(label)]
        return exact_hits(candidates, self.get_vectors, query, k)


class HnswIndex(_SavedIndex):
    """Approximate cosine search; the store's DuckDB table is the truth, this file only a derived cache."""

    def __init__(self, path: Path, dim: int, index: hnswlib.Index | None = None, meta: dict | None = None) -> None:
        self.path = Path(path)
        self.dim = dim
        self._meta = meta
        self._index = index if index is not None else _new_index(dim, INITIAL_CAPACITY)
        self._labels: set[int] = set(self._index.get_ids_list())  # deleted labels included
        self._deleted: set[int] = set(meta.get("deleted", [])) & self._labels if meta else set()

    @classmethod
    def open(cls, path: Path, dim: int) -> HnswIndex:
        """Load `path` when its sidecar describes it; otherwise start empty with meta None (caller rebuilds). Raises
        DamagedFile when a file fails its seal: the whole file is read to load it, so every chunk is checked."""
        meta = cls._saved_meta(Path(path), dim, whole=True)
        if meta is None:
            return cls(path, dim)
        saved = hnswlib.Index(space=SPACE, dim=dim)
        try:
            saved.load_index(str(path), allow_replace_deleted=True)
        except RuntimeError:
            return cls(path, dim)
        index = cls(path, dim, saved, meta)
        return index if index.count == meta.get("count") else cls(path, dim)

    @property
    def count(self) -> int:
        """Live (not deleted) vectors."""
        return len(self._labels) - len(self._deleted)

    def ids(self) -> set[int]:
        """Live (not deleted) memory ids, for integrity checks."""
        return self._labels - self._deleted

    def add(self, ids: Sequence[int], vectors: np.ndarray) -> None:
        """Insert or replace the vectors of these memory ids."""
        labels = np.asarray(ids, dtype=np.int64).reshape(-1)
        data = np.ascontiguousarray(vectors, dtype=np.float32).reshape(len(labels), self.dim)
        if len(set(labels.tolist())) != len(labels):
            raise ValueError("duplicate ids in one add")
        for label in self._deleted.intersection(labels.tolist()):
            self._index.unmark_deleted(label)
            self._deleted.discard(label)
        known = np.fromiter((label in self._labels for label in labels.tolist()), bool, len(labels))
        if known.any():
            self._index.add_items(data[known], labels[known], num_threads=ADD_THREADS)
        if not known.all():
            self._add_new(labels[~known], data[~known])

    def _add_new(self, labels: np.ndarray, data: np.ndarray) -> None:
        """Add unseen labels, reusing deleted slots first and doubling the capacity when full."""
        needed = len(self._labels) + len(labels)
        capacity = self._index.get_max_elements()
        if needed > capacity:
            self._index.resize_index(max(needed, 2 * capacity))
        self._index.add_items(data, labels, num_threads=ADD_THREADS, replace_deleted=True)
        self._labels.update(labels.tolist())
        if self._deleted:  # some deleted labels were overwritten; hnswlib does not say which
            self._labels = set(self._index.get_ids_list())
            self._deleted &= self._labels

    def remove(self, ids: Sequence[int]) -> None:
        """Mark these memory ids deleted; ids not in the index are ignored."""
        for label in set(ids) & (self._labels - self._deleted):
            self._index.mark_deleted(label)
            self._deleted.add(label)

    def search(self, vector: np.ndarray, k: int, allowed: Callable[[int], bool] | None = None) -> Hits:
        """(memory id, cosine similarity) best first; exact search when the graph cannot fill k."""
        k = min(k, self.count)
        if k <= 0:
            return []
        query = np.asarray(vector, dtype=np.float32).reshape(1, self.dim)
        self._index.set_ef(max(EF_SEARCH, k))
        try:
            labels, distances = self._index.knn_query(query, k=k, filter=allowed)
        except RuntimeError:  # fewer than k reachable: a selective filter or many deletions
            return self._exact_search(query[0], k, allowed)
        return _hits(labels[0], distances[0])

    def search_many(self, vectors: np.ndarray, k: int) -> list[Hits]:
        """One hit list per query row, searched in parallel."""
        found = self._knn_rows(vectors, k)
        if found is None:  # nothing to find, or fewer than k reachable: row by row (search's fallbacks)
            return [self.search(query, k) for query in self._rows(vectors)]
        return [_hits(row_labels, row_distances) for row_labels, row_distances in zip(*found, strict=True)]

    def search_older(self, vectors: np.ndarray, ids: Sequence[int], k: int, limit: int) -> list[Hits]:
        """As _SavedIndex.search_older, filtered as arrays: a 500-memory batch asks for 520 neighbours a row."""
        found = self._knn_rows(vectors, k)
        if found is None:
            return super().search_older(vectors, ids, k, limit)
        labels, distances = found
        older = labels < np.asarray(ids, dtype=labels.dtype)[:, None]
        return [
            _hits(row_labels[keep][:limit], row_distances[keep][:limit])
            for row_labels, row_distances, keep in zip(labels, distances, older, strict=True)
        ]

    def _rows(self, vectors: np.ndarray) -> np.ndarray:
        """Query vectors as float32 rows."""
        return np.asarray(vectors, dtype=np.float32).reshape(-1, self.dim)

    def _knn_rows(self, vectors: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray] | None:
        """hnswlib's labels and distances for every row at once, k clipped to the live count; None when k is 0 or
        the graph cannot fill k."""
        k = min(k, self.count)
        if k <= 0:
            return None
        self._index.set_ef(max(EF_SEARCH, k))
        try:
            return self._index.knn_query(self._rows(vectors), k=k)
        except RuntimeError:
            return None

    def get_vectors(self, ids: Sequence[int]) -> np.ndarray:
        """The stored (unit-length) vectors of live memory ids, in the order given."""
        if len(ids) == 0:
            return np.zeros((0, self.dim), dtype=np.float32)
        missing = set(ids) - (self._labels - self._deleted)
        if missing:
            raise KeyError(f"no vector for memory ids {sorted(missing)[:5]}")
        return np.asarray(self._index.get_items(list(ids)), dtype=np.float32)  # a list of lists in older forks

    def rebuild(self, ids: Sequence[int], vectors: np.ndarray) -> None:
        """Replace the contents with exactly these vectors (compacts deleted slots)."""
        self._index = _new_index(self.dim, max(INITIAL_CAPACITY, len(ids)))
        self._labels, self._deleted = set(), set()
        self.add(ids, vectors)

    def save(self, version: int) -> None:
        """Write the index and its sidecar (with the index file's seal) into temp files, then move both into place:
        readers never see half, and a failure while writing (a full disk) leaves the saved pair as it was."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        meta = {"count": self.count, "version": version, "dim": self.dim, "deleted": sorted(self._deleted)}
        with replacing(self.path, _meta_path(self.path)) as (index_temp, meta_temp):  # both written, then both moved
            meta["file"] = self._write_whole(index_temp)
            meta_temp.write_text(sealed_json(meta))
        self._meta = meta
        ensure_links(self.path)

    def _write_whole(self, temp: Path) -> dict:
        """hnswlib's save into `temp`, checked to be whole (it does not check its own writes), and its seal."""
        self._index.save_index(str(temp))
        try:
            layout(np.memmap(temp, dtype=np.uint8, mode="r") if temp.stat().st_size else b"")
        except ValueError as exc:
            raise short_write(temp, self.path, str(exc)) from None
        return seal_file(temp)


def short_write(temp: Path, target: Path, why: str) -> OSError:
    """The error for a file hnswlib wrote short without saying so: a full disk when the disk is (nearly) full, else
    an I/O error; either way the good file at `target` is left in place."""
    full = shutil.disk_usage(temp.parent).free < FULL_DISK_BYTES
    code = errno.ENOSPC if full else errno.EIO
    return OSError(code, f"{os.strerror(code)} (wrote {why})", str(target))


def saved_meta(path: Path, dim: int, whole: bool = False) -> dict | None:
    """What the sidecar of the index file at `path` records, when it is there for `dim` and the file exists, after
    checking both against their seals; else None. An older ripple's sidecar has no seal: it is returned as it is,
    marked {"sealed": False}, and trusted (the next writer saves a sealed one)."""
    meta, sealed = read_sealed(_meta_path(path))
    if meta is None or meta.get("dim") != dim or not path.is_file():
        return None
    if sealed:
        seals.check_file(path, meta.get("file"), whole)
    return {**meta, "sealed": sealed}


def ensure_links(path: Path) -> DamagedFile | None:
    """Write the mapped search's sidecar for the saved index at `path` when it is missing, stale or damaged and the
    installed hnswlib is one the mapped search repeats (else no reader would use it); best effort (without it,
    readers load the index whole, as before; a full disk is raised all the same). Returns the damage it wrote over,
    if any."""
    damage = None
    try:
        if not path.is_file() or not search_is_hnswlibs():
            return None
        try:
            stamp = links_stamp(path)
            if stamp is not None:
                check_links(path, stamp)
        except DamagedFile as found:
            damage, stamp = found, None
        if stamp is None:
            build_links(path)
    except OSError as exc:
        if exc.errno in DISK_FULL_CODES:  # said, as every full disk is (readers load the index whole meanwhile)
            raise
    except ValueError:
        pass
    return damage


class MappedIndex(_SavedIndex):
    """The read side of a saved index, searched in place through a memory map (store/hnsw_map.py): what a one-shot
    ask on a read-only store uses, so its cost does not grow with the file. Same hits, vectors and errors as
    HnswIndex's; it never writes."""

    def __init__(self, path: Path, dim: int, meta: dict) -> None:
        self.path = Path(path)
        self.dim = dim
        self._meta = meta
        self._file = MappedHnsw(self.path, dim)
        self._deleted: set[int] = set(meta.get("deleted", []))

    @classmethod
    def open(cls, path: Path, dim: int) -> MappedIndex | None:
        """The mapped index when the installed hnswlib searches as it does and the file, its sidecar and its meta
        agree; else None (the caller loads it whole). Raises DamagedFile when a file fails its seal."""
        meta = cls._saved_meta(Path(path), dim)
        stamp = links_stamp(Path(path)) if meta is not None and search_is_hnswlibs() else None
        if meta is None or stamp is None:
            return None
        check_links(Path(path), stamp)
        try:
            index = cls(path, dim, meta)
        except (OSError, ValueError):
            return None
        return index if index.count == meta.get("count") else None

    @property
    def count(self) -> int:
        """Live (not deleted) vectors."""
        return self._file.count - len(self._deleted)

    def ids(self) -> set[int]:
        """Live (not deleted) memory ids."""
        return set(self._file.labels().tolist()) - self._deleted

    def search(self, vector: np.ndarray, k: int, allowed: Callable[[int], bool] | None = None) -> Hits:
        """(memory id, cosine similarity) best first, as HnswIndex.search gives them."""
        k = min(k, self.count)
        if k <= 0:
            return []
        query = np.asarray(vector, dtype=np.float32).reshape(self.dim)
        found = self._file.search(query, k, max(EF_SEARCH, k), len(self._deleted), allowed)
        if found is None:  # where hnswlib raises: fewer than k reachable
            return self._exact_search(query, k, allowed)
        return [(label, 1.0 - distance) for label, distance in found]

    def search_many(self, vectors: np.ndarray, k: int) -> list[Hits]:
        """One hit list per query row."""
        return [self.search(query, k) for query in np.asarray(vectors, dtype=np.float32).reshape(-1, self.dim)]

    def get_vectors(self, ids: Sequence[int]) -> np.ndarray:
        """The stored (unit-length) vectors of live memory ids, in the order given."""
        if len(ids) == 0:
            return np.zeros((0, self.dim), dtype=np.float32)
        wanted = np.asarray(list(ids), dtype=np.int64)
        elements, known = self._file.elements_of(wanted)
        missing = set(wanted[~known].tolist()) | (self._deleted & set(wanted.tolist()))
        if missing:
            raise KeyError(f"no vector for memory ids {sorted(missing)[:5]}")
        return self._file.vectors_of(elements)

    def add(self, ids: Sequence[int], vectors: np.ndarray) -> None:
        raise TypeError("a mapped vector index is read-only")

    def remove(self, ids: Sequence[int]) -> None:
        raise TypeError("a mapped vector index is read-only")

    def rebuild(self, ids: Sequence[int], vectors: np.ndarray) -> None:
        raise TypeError("a mapped vector index is read-only")

    def save(self, version: int) -> None:
        raise TypeError("a mapped vector index is read-only")


def _new_index(dim: int, capacity: int) -> hnswlib.Index:
    """An empty cosine index with the project's graph parameters."""
    index = hnswlib.Index(space=SPACE, dim=dim)
    index.init_index(max_elements=capacity, ef_construction=EF_CONSTRUCTION, M=M, allow_replace_deleted=True)
    index.set_ef(EF_SEARCH)
    return index


def _hits(labels: np.ndarray, distances: np.ndarray) -> Hits:
    """hnswlib's cosine distances as similarities."""
    return [(int(label), 1.0 - float(distance)) for label, distance in zip(labels, distances, strict=True)]


def _meta_path(path: Path) -> Path:
    """The sidecar beside the index file."""
    return path.with_name(path.name + ".meta.json")
