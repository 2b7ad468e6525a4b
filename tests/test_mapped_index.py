"""The saved vector index searched in place gives hnswlib's own hits, ties and all, and is used only when current."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from ripplecli.store.hnsw_map import StdHeap, links_current
from ripplecli.store.vectors import HnswIndex, MappedIndex

DIM = 24


def saved_index(folder: Path, count: int = 1500, copies: int = 3, deleted: int = 0) -> tuple[HnswIndex, np.ndarray]:
    """A saved index whose vectors repeat `copies` times (exact ties, like a store of repeated chats)."""
    rng = np.random.default_rng(7)
    distinct = rng.normal(size=(count // copies, DIM)).astype(np.float32)
    vectors = np.tile(distinct, (copies, 1))
    index = HnswIndex.open(folder / "vectors.hnsw", DIM)
    index.add(list(range(10, 10 + len(vectors))), vectors)
    if deleted:
        index.remove(list(range(10, 10 + deleted)))
    index.save(version=3)
    return index, vectors


def queries(vectors: np.ndarray, count: int = 60) -> np.ndarray:
    """Stored vectors, slightly and strongly perturbed, and random ones."""
    rng = np.random.default_rng(11)
    picked = vectors[rng.integers(0, len(vectors), count)]
    noise = rng.normal(size=picked.shape).astype(np.float32) * rng.choice([0.0, 0.05, 0.5, 3.0], (count, 1))
    return (picked + noise).astype(np.float32)


@pytest.mark.parametrize("deleted", [0, 40])
def test_mapped_search_gives_hnswlibs_hits(tmp_path: Path, deleted: int) -> None:
    index, vectors = saved_index(tmp_path, deleted=deleted)
    mapped = MappedIndex.open(tmp_path / "vectors.hnsw", DIM)
    assert mapped is not None and mapped.count == index.count and mapped.meta == index.meta
    for query in queries(vectors):
        for k in (1, 10, 30, 80):
            assert mapped.search(query, k) == index.search(query, k)
    assert mapped.search_many(vectors[:5], 7) == index.search_many(vectors[:5], 7)
    assert mapped.search_older(vectors[:5], [3, 9, 27, 81, 243], 30, 4) == index.search_older(
        vectors[:5], [3, 9, 27, 81, 243], 30, 4
    )


def test_filters_and_the_exact_fallback_match(tmp_path: Path) -> None:
    index, vectors = saved_index(tmp_path, deleted=10)
    mapped = MappedIndex.open(tmp_path / "vectors.hnsw", DIM)
    assert mapped is not None
    for query in queries(vectors, 20):
        for allowed in (lambda m: m % 3 == 0, lambda m: m < 40):  # the second allows fewer than k: brute force
            assert mapped.search(query, 30, allowed=allowed) == index.search(query, 30, allowed=allowed)


def test_vectors_and_ids_are_the_saved_ones(tmp_path: Path) -> None:
    index, _ = saved_index(tmp_path, deleted=5)
    mapped = MappedIndex.open(tmp_path / "vectors.hnsw", DIM)
    assert mapped is not None and mapped.ids() == index.ids()
    ids = [500, 17, 1000, 15]
    np.testing.assert_array_equal(mapped.get_vectors(ids), index.get_vectors(ids))
    for gone in ([10], [99999]):  # deleted, never stored
        with pytest.raises(KeyError):
            mapped.get_vectors(gone)
    with pytest.raises(TypeError, match="read-only"):
        mapped.add([1], np.zeros((1, DIM), np.float32))


def test_every_write_to_a_mapped_index_is_refused_as_read_only(tmp_path: Path) -> None:
    """remove takes ids only (the VectorIndex protocol): it was `add` under another name, so a call failed on its
    missing argument instead of saying the index is read-only."""
    saved_index(tmp_path, count=50, copies=1)
    mapped = MappedIndex.open(tmp_path / "vectors.hnsw", DIM)
    assert mapped is not None
    for write in (lambda: mapped.remove([1]), lambda: mapped.rebuild([1], np.zeros((1, DIM), np.float32))):
        with pytest.raises(TypeError, match="read-only"):
            write()


def test_a_stale_or_missing_sidecar_is_not_used(tmp_path: Path) -> None:
    index, _ = saved_index(tmp_path)
    path = tmp_path / "vectors.hnsw"
    assert links_current(path)
    index._index.save_index(str(path))  # the file rewritten by hnswlib alone (an older ripple): the sidecar is stale
    os.utime(path, ns=(1, 1))
    assert not links_current(path) and MappedIndex.open(path, DIM) is None
    index.save(version=4)  # a save writes it again
    assert MappedIndex.open(path, DIM) is not None
    (tmp_path / "vectors.hnsw.links.npy").unlink()
    assert MappedIndex.open(path, DIM) is None


# What std::priority_queue<pair<float, unsigned>, vector<...>, CompareByFirst> pops (libstdc++, g++ 13) for the
# pushes and pops of `tied_pushes_and_pops`: among equal keys, the order only its heap moves decide.
LIBSTDCXX_POPS = [0, 2, 5, 9, 12, 10, 7, 8, 19, 22, 23, 28, 30, 33, 27, 36, 40, 44, 41, 49, 42, 38, 58, 45, 43, 56]
LIBSTDCXX_POPS += [55, 54, 15, 50, 21, 17, 39, 29, 24, 47, 4]


def test_the_heap_pops_ties_in_libstdcxx_order() -> None:
    heap, popped, x = StdHeap(), [], 12345
    for step in range(60):  # keys 0, 1, 2 only: every pop chooses among ties
        x = (x * 1103515245 + 12345) % 2**32
        if len(heap) and (x >> 16) % 3 == 0:
            popped.append(heap.top()[1])
            heap.pop()
        else:
            heap.push((float((x >> 16) % 3), step))
    while len(heap):
        popped.append(heap.top()[1])
        heap.pop()
    assert popped == LIBSTDCXX_POPS


def test_a_read_only_store_maps_the_index_and_loads_it_whole_on_request(tmp_path: Path, fake_settings, monkeypatch):
    from conftest import SAMPLE_CHATS, use_fake_extractor

    from ripplecli.api import Memory

    use_fake_extractor(monkeypatch)
    with Memory(tmp_path / "store") as writer:
        writer.configure(fake_settings)
        writer.ingest(SAMPLE_CHATS / "dinner.json")
    with Memory(tmp_path / "store", read_only=True, create=False) as memory:
        assert isinstance(memory.store.vector_index(), MappedIndex)
        first = memory.recall("Should Alex take Maya to Harbor Grill?", k=5, answer="none")
        assert isinstance(memory.store.vector_index(whole=True), HnswIndex)
        again = memory.recall("Should Alex take Maya to Harbor Grill?", k=5, answer="none")
    assert [e.memory_id for e in first.evidence] == [e.memory_id for e in again.evidence]
