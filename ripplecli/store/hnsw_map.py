"""A saved hnswlib index searched in place: one ask reads the few hundred vectors its search visits, not the file.

`hnswlib.Index.load_index` reads the whole file (170 MB at 100K memories, ~0.2 s of CPU per process, and its
freeing at exit); a one-shot ask needs a handful of its pages. `MappedHnsw` memory-maps the file and runs the same
search as hnswlib 0.8 (`searchKnn`: greedy descent through the upper layers, then the ef-bounded best-first
search of layer 0), with hnswlib's own distance function (a tiny brute-force index per batch of neighbours) and a
copy of libstdc++'s binary heap, whose order among equal distances decides which of tied vectors a search keeps.
So the hits are hnswlib's, bit for bit. A sidecar written when the index is saved (`LINKS_SUFFIX`) holds what the
file can only give by reading all of it: where each element's upper-layer links start, and label -> element.

File layout (hnswlib's saveIndex): a 96-byte header, then `count` fixed-size layer-0 records (link count and
delete mark, neighbour ids, the vector, the label), then per element a 4-byte size and its upper-layer links.
"""

from __future__ import annotations

import functools
import mmap
import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from ripplecli.files import replacing
from ripplecli.store import seals
from ripplecli.store.seals import read_sealed, seal_file, sealed_json

try:
    import hnswlib
except ImportError:  # the wheel-built copy of hnswlib 0.8 that ripple installs on Python 3.11 (no compiler)
    import hnswlib_noderag as hnswlib  # same API, byte-identical index files; store/vectors.py takes it from here

HEADER = struct.Struct("<QQQQQQiIQQQdQ")  # offsetLevel0 … ef_construction, as hnswlib writes them
LINKS_SUFFIX = ".links.npy"  # beside vectors.hnsw
STAMP_SUFFIX = ".links.json"
DELETE_MARK = 0x01  # in byte 2 of an element's layer-0 link header


class Header(NamedTuple):
    """The index parameters hnswlib writes first, in its order."""

    offset_level0: int
    max_elements: int
    element_count: int  # hnswlib's cur_element_count (not `count`: that is tuple.count)
    element_size: int
    label_offset: int
    data_offset: int
    max_level: int
    entry: int
    max_m: int
    max_m0: int
    m: int
    mult: float
    ef_construction: int


def _header(raw: Any) -> Header:
    """The index parameters from the first bytes of the file."""
    return Header._make(HEADER.unpack_from(raw, 0))


def layout(raw: Any) -> tuple[Header, np.ndarray]:
    """The header of an index file's bytes and where each element's upper-layer links start (0: none); ValueError
    when the bytes are not a whole index (hnswlib writes without checking: a full disk leaves a short file)."""
    if len(raw) < HEADER.size:
        raise ValueError(f"{len(raw)} bytes, shorter than the header")
    head = _header(raw)
    count, size = head.element_count, head.element_size
    start = HEADER.size + count * size
    if count < 0 or size <= 0 or start > len(raw):
        raise ValueError(f"{len(raw)} bytes, not the {count} elements the header names")
    offsets = np.zeros(count, dtype=np.int64)
    position, data = start, bytes(raw[start:])
    for element in range(count):  # variable-length records: only a walk finds them (~0.1 s at 100K, at save time)
        if position + 4 > len(raw):
            raise ValueError(f"{len(raw)} bytes, cut inside the links of element {element}")
        (length,) = struct.unpack_from("<I", data, position - start)
        if length:
            offsets[element] = position + 4
        position += 4 + length
    if position != len(raw):
        raise ValueError(f"{len(raw)} bytes where the index holds {position}")
    return head, offsets


def build_links(path: Path) -> None:
    """Write the sidecar of the index file at `path` (once per save): upper-layer offsets and the label map, sealed
    (store/seals.py) with the size and time of the index file it describes."""
    raw = np.memmap(path, dtype=np.uint8, mode="r")
    head, offsets = layout(raw)
    count, size = head.element_count, head.element_size
    records = raw[HEADER.size : HEADER.size + count * size].reshape(count, size)
    label_at = head.label_offset
    labels = records[:, label_at : label_at + 8].copy().view(np.uint64)[:, 0].astype(np.int64)
    order = np.argsort(labels, kind="stable")
    table = np.stack([offsets, labels[order], order.astype(np.int64)])
    info = path.stat()
    with replacing(path.with_name(path.name + LINKS_SUFFIX), path.with_name(path.name + STAMP_SUFFIX)) as temps:
        with temps[0].open("wb") as out:
            np.save(out, table)
        stamp = {"size": info.st_size, "mtime_ns": info.st_mtime_ns, "links": seal_file(temps[0])}
        temps[1].write_text(sealed_json(stamp))


def links_stamp(path: Path) -> dict | None:
    """The sidecar's stamp when it describes the index file as it is now; None when absent, stale or unsealed (an
    older ripple's: the next writer writes it again). Raises DamagedFile when its stamp fails its own seal."""
    stamp, sealed = read_sealed(path.with_name(path.name + STAMP_SUFFIX))
    if stamp is None or not sealed or not path.with_name(path.name + LINKS_SUFFIX).is_file():
        return None
    try:
        info = path.stat()
    except OSError:  # no index file: the sidecar describes nothing
        return None
    return stamp if (stamp.get("size"), stamp.get("mtime_ns")) == (info.st_size, info.st_mtime_ns) else None


def links_current(path: Path) -> bool:
    """Whether the sidecar describes the index file as it is now."""
    return links_stamp(path) is not None


def check_links(path: Path, stamp: dict, whole: bool = False) -> None:
    """Raise DamagedFile unless the sidecar's table is as it was written."""
    seals.check_file(path.with_name(path.name + LINKS_SUFFIX), stamp.get("links"), whole)


@functools.cache
def search_is_hnswlibs() -> bool:
    """Whether the installed hnswlib is one whose search MappedHnsw repeats: hnswlib 0.8.0, or the wheel-built fork
    hnswlib-noderag 0.8.2 (same search, checked hit for hit); one stat of its dist-info folder (importlib.metadata
    would scan every installed package)."""
    module = getattr(hnswlib, "__file__", None)
    known = {"hnswlib": "hnswlib-0.8.0.dist-info", "hnswlib_noderag": "hnswlib_noderag-0.8.2.dist-info"}
    dist_info = known.get(hnswlib.__name__)
    return module is not None and dist_info is not None and Path(module).with_name(dist_info).is_dir()


class StdHeap:
    """std::priority_queue with hnswlib's CompareByFirst, step for step as libstdc++ moves its elements."""

    def __init__(self) -> None:
        self.items: list[tuple[float, int]] = []

    def __len__(self) -> int:
        return len(self.items)

    def top(self) -> tuple[float, int]:
        return self.items[0]

    def push(self, item: tuple[float, int]) -> None:
        self.items.append(item)
        self._sift_up(len(self.items) - 1, 0, item)

    def pop(self) -> None:
        items = self.items
        if len(items) > 1:
            value = items[-1]
            items[-1] = items[0]
            self._adjust(0, len(items) - 1, value)
        items.pop()

    def _sift_up(self, hole: int, top: int, value: tuple[float, int]) -> None:
        """libstdc++ __push_heap."""
        items = self.items
        parent = (hole - 1) // 2
        while hole > top and items[parent][0] < value[0]:
            items[hole] = items[parent]
            hole = parent
            parent = (hole - 1) // 2
        items[hole] = value

    def _adjust(self, hole: int, length: int, value: tuple[float, int]) -> None:
        """libstdc++ __adjust_heap over items[:length]."""
        items, top, child = self.items, hole, hole
        while child < (length - 1) // 2:
            child = 2 * (child + 1)
            if items[child][0] < items[child - 1][0]:
                child -= 1
            items[hole] = items[child]
            hole = child
        if (length & 1) == 0 and child == (length - 2) // 2:
            child = 2 * (child + 1)
            items[hole] = items[child - 1]
            hole = child - 1
        self._sift_up(hole, top, value)


class MappedHnsw:
    """The read side of a saved hnswlib cosine index, from a memory map of its file (see the module docstring)."""

    def __init__(self, path: Path, dim: int) -> None:
        self.dim = dim
        with path.open("rb") as handle:
            self._map = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        self._raw = np.frombuffer(self._map, dtype=np.uint8)  # a plain array: np.memmap's hooks cost per index
        head = _header(self._raw)
        self.count = head.element_count
        self._entry, self._max_level = head.entry, head.max_level
        self._max_m0, self._max_m = head.max_m0, head.max_m
        size, data_at = head.element_size, head.data_offset
        records = self._raw[HEADER.size : HEADER.size + self.count * size].reshape(self.count, size)
        self._links0 = records[:, : 4 * (self._max_m0 + 1)]
        self._vectors = records[:, data_at : data_at + 4 * dim]
        self._label_bytes = records[:, head.label_offset : head.label_offset + 8]
        table = np.load(path.with_name(path.name + LINKS_SUFFIX), mmap_mode="r")
        self._upper, self._sorted_labels, self._elements = table[0], table[1], table[2]

    # --- what HnswIndex offers readers ------------------------------------------------------------
    def labels(self) -> np.ndarray:
        """Every element's label (memory id), deleted ones included."""
        return np.asarray(self._sorted_labels)

    def elements_of(self, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Element numbers of these labels, and which labels the index holds (others get some element's number)."""
        at = np.minimum(np.searchsorted(self._sorted_labels, labels), len(self._sorted_labels) - 1)
        return np.asarray(self._elements[at]), np.asarray(self._sorted_labels[at]) == labels

    def vectors_of(self, elements: np.ndarray) -> np.ndarray:
        """The stored (unit-length) vectors of these elements, in order."""
        rows = np.ascontiguousarray(self._vectors[elements])
        return rows.view(np.float32).reshape(len(elements), self.dim)

    def search(
        self, query: np.ndarray, k: int, ef: int, deleted: int, allowed: Callable[[int], bool] | None = None
    ) -> list[tuple[int, float]] | None:
        """hnswlib's knn_query for one query: (label, distance) by distance then label; None when it finds fewer
        than k (hnswlib raises then)."""
        distance = _Distances(self, _normalised(query, self.dim), max(self._max_m0, self._max_m, 1))
        current, best = self._entry, float(distance.of([self._entry])[0])
        for level in range(self._max_level, 0, -1):
            changed = True
            while changed:
                changed = False
                neighbours = self._upper_links(current, level)
                for candidate, d in zip(neighbours, distance.of(neighbours), strict=True):
                    if d < best:
                        best, current, changed = float(d), candidate, True
        plain = deleted == 0 and allowed is None
        top = self._layer0(current, max(ef, k), distance, plain, allowed)
        while len(top) > k:
            top.pop()
        found = sorted((d, self._label(element)) for d, element in top.items)
        return [(label, d) for d, label in found] if len(found) == k else None

    # --- the search ---------------------------------------------------------------------------------
    def _layer0(
        self, entry: int, ef: int, distance: _Distances, plain: bool, allowed: Callable[[int], bool] | None
    ) -> StdHeap:
        """searchBaseLayerST: the ef best elements reachable from `entry` in layer 0 (`plain`: hnswlib's bare-bone
        search, for an index without deleted elements searched without a filter)."""
        top, candidates, visited = StdHeap(), StdHeap(), {entry}
        if plain or self._keeps(entry, allowed):
            d = float(distance.of([entry])[0])
            lower = d
            top.push((d, entry))
            candidates.push((-d, entry))
        else:
            lower = float(np.finfo(np.float32).max)
            candidates.push((-lower, entry))
        while len(candidates):
            negative, node = candidates.top()
            if -negative > lower and (plain or len(top) == ef):
                break
            candidates.pop()
            fresh = [n for n in dict.fromkeys(self._links0_of(node)) if n not in visited]
            visited.update(fresh)
            for candidate, d in zip(fresh, distance.of(fresh), strict=True):
                d = float(d)
                if len(top) < ef or lower > d:
                    candidates.push((-d, candidate))
                    if plain or self._keeps(candidate, allowed):
                        top.push((d, candidate))
                    while len(top) > ef:
                        top.pop()
                    if len(top):
                        lower = top.top()[0]
        return top

    def _keeps(self, element: int, allowed: Callable[[int], bool] | None) -> bool:
        """Not marked deleted, and allowed by the filter."""
        deleted = int(self._links0[element, 2]) & DELETE_MARK
        return not deleted and (allowed is None or allowed(self._label(element)))

    def _label(self, element: int) -> int:
        return int(self._label_bytes[element].view(np.uint64)[0])

    def _links0_of(self, element: int) -> list[int]:
        header = self._links0[element]
        size = int(header[0]) | int(header[1]) << 8
        return header[4 : 4 + 4 * size].view(np.uint32).tolist()

    def _upper_links(self, element: int, level: int) -> list[int]:
        start = int(self._upper[element]) + (level - 1) * 4 * (self._max_m + 1)
        size = int(self._raw[start]) | int(self._raw[start + 1]) << 8
        return self._raw[start + 4 : start + 4 + 4 * size].view(np.uint32).tolist()


class _Distances:
    """hnswlib's inner-product distance from one query, computed by hnswlib itself, so every comparison of the
    search sees the very float hnswlib's would: a brute-force index of one neighbour list's size, refilled per
    batch (a new label slot is overwritten in place; slots beyond the batch hold older vectors and are ignored)."""

    def __init__(self, index: MappedHnsw, query: np.ndarray, capacity: int) -> None:
        self._index, self._query = index, query
        self._batch = hnswlib.BFIndex(space="ip", dim=index.dim)
        self._batch.init_index(max_elements=capacity)
        self._capacity, self._filled = capacity, 0

    def of(self, elements: list[int]) -> list[float]:
        count = len(elements)
        if count == 0:
            return []
        if count > self._capacity:  # never for hnswlib's own lists (at most maxM0 long)
            self.__init__(self._index, self._query, count)  # type: ignore[misc]  # made again, larger
        self._batch.add_items(self._index.vectors_of(np.asarray(elements, dtype=np.int64)), np.arange(count))
        self._filled = max(self._filled, count)
        slots, distances = self._batch.knn_query(self._query, k=self._filled, num_threads=1)
        found = [0.0] * count
        for slot, distance in zip(slots[0].tolist(), distances[0].tolist(), strict=True):
            if slot < count:
                found[slot] = distance
        return found


def _normalised(query: np.ndarray, dim: int) -> np.ndarray:
    """The query as hnswlib's cosine index normalises it before a search (its own code, through a 1-vector index)."""
    one = hnswlib.Index(space="cosine", dim=dim)
    one.init_index(max_elements=1)
    one.add_items(np.asarray(query, dtype=np.float32).reshape(1, dim), [0])
    return np.asarray(one.get_items([0], return_type="numpy"), dtype=np.float32).reshape(1, dim)
