"""The derived indexes: hnswlib vectors and bm25s lexical, on random data (fast)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ripplecli.store.lexical import Bm25Index
from ripplecli.store.seals import DamagedFile
from ripplecli.store.vectors import INITIAL_CAPACITY, HnswIndex

DIM = 32


def unit_vectors(count: int, seed: int = 0, dim: int = DIM) -> np.ndarray:
    """Random unit vectors: distinct enough that each is its own nearest neighbour."""
    vectors = np.random.default_rng(seed).normal(size=(count, dim)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


@pytest.fixture
def filled(tmp_path: Path) -> tuple[HnswIndex, np.ndarray]:
    vectors = unit_vectors(200)
    index = HnswIndex.open(tmp_path / "vectors.hnsw", DIM)
    index.add(list(range(100, 300)), vectors)
    return index, vectors


def test_each_vector_finds_itself(filled):
    index, vectors = filled
    hits = index.search(vectors[5], k=3)
    assert hits[0][0] == 105
    assert hits[0][1] == pytest.approx(1.0, abs=1e-5)
    assert hits[0][1] >= hits[1][1] >= hits[2][1]


def test_remove_hides_ids_and_updates_count(filled):
    index, vectors = filled
    index.remove([105, 106, 99999])
    assert index.count == 198
    assert all(label not in (105, 106) for label, _ in index.search(vectors[5], k=50))


def test_removed_id_can_be_added_again(filled):
    index, vectors = filled
    index.remove([105])
    index.add([105], vectors[7:8])
    assert index.count == 200
    assert {label for label, _ in index.search(vectors[7], k=2)} == {105, 107}


def test_new_ids_reuse_deleted_slots(filled):
    index, _ = filled
    index.remove(list(range(100, 110)))
    index.add(list(range(1000, 1010)), unit_vectors(10, seed=1))
    assert index.count == 200
    assert index.search(unit_vectors(10, seed=1)[3], k=1)[0][0] == 1003


def test_save_and_open_round_trip(filled, tmp_path):
    index, vectors = filled
    index.remove([105])
    index.save(version=7)
    reopened = HnswIndex.open(tmp_path / "vectors.hnsw", DIM)
    assert reopened.meta == {"count": 199, "version": 7, "dim": DIM}
    assert reopened.count == 199
    assert reopened.search(vectors[5], k=1)[0][0] != 105
    assert reopened.search(vectors[9], k=1)[0][0] == 109


def test_save_leaves_no_temp_files(filled, tmp_path):
    index, _ = filled
    index.save(version=1)
    index.save(version=2)
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "vectors.hnsw",
        "vectors.hnsw.links.json",  # the sidecar of the mapped search (tests/test_mapped_index.py)
        "vectors.hnsw.links.npy",
        "vectors.hnsw.meta.json",
    ]


def test_open_missing_is_empty(tmp_path):
    index = HnswIndex.open(tmp_path / "none.hnsw", DIM)
    assert index.meta is None
    assert index.count == 0
    assert index.search(unit_vectors(1)[0], k=5) == []
    assert index.search_many(unit_vectors(2), k=5) == [[], []]


def test_open_with_other_dim_starts_empty(filled, tmp_path):
    index, _ = filled
    index.save(version=3)
    other = HnswIndex.open(tmp_path / "vectors.hnsw", DIM * 2)
    assert other.meta is None
    assert other.count == 0


def test_allowed_filter(filled):
    index, vectors = filled
    even = index.search(vectors[0], k=20, allowed=lambda label: label % 2 == 0)
    assert len(even) == 20
    assert all(label % 2 == 0 for label, _ in even)
    few = index.search(vectors[0], k=20, allowed=lambda label: label in {100, 150, 250})
    assert sorted(label for label, _ in few) == [100, 150, 250]


def test_k_is_clipped_to_live_count(filled):
    index, vectors = filled
    index.remove(list(range(100, 290)))
    assert len(index.search(vectors[0], k=50)) == 10


def test_search_many_matches_search(filled):
    index, vectors = filled
    batched = index.search_many(vectors[:4], k=5)
    assert [hits[0][0] for hits in batched] == [100, 101, 102, 103]


@pytest.mark.parametrize("k", [5, 60, 500])
def test_search_older_keeps_the_nearest_with_lower_ids(filled, k):
    index, vectors = filled
    ids = list(range(150, 190))
    found = index.search_many(vectors[50:90], k)
    expected = [[(i, s) for i, s in hits if i < mid][:20] for mid, hits in zip(ids, found, strict=True)]
    assert index.search_older(vectors[50:90], ids, k, 20) == expected
    assert index.search_older(vectors[50:90], ids, 0, 20) == [[] for _ in ids]


def test_capacity_grows_past_initial(tmp_path):
    index = HnswIndex.open(tmp_path / "big.hnsw", 8)
    vectors = unit_vectors(INITIAL_CAPACITY + 500, dim=8)
    index.add(list(range(len(vectors) // 2)), vectors[: len(vectors) // 2])
    index.add(list(range(len(vectors) // 2, len(vectors))), vectors[len(vectors) // 2 :])
    assert index.count == len(vectors)


def test_get_vectors_and_rebuild(filled):
    index, vectors = filled
    np.testing.assert_allclose(index.get_vectors([102, 100]), vectors[[2, 0]], atol=1e-6)
    assert index.get_vectors([]).shape == (0, DIM)
    index.remove([101])
    with pytest.raises(KeyError):
        index.get_vectors([101])
    index.rebuild([1, 2], vectors[:2])
    assert index.count == 2
    assert index.search(vectors[1], k=1)[0][0] == 2


def _built(path: Path, vectors: np.ndarray) -> HnswIndex:
    """An index filled the way ingest fills one: batch after batch past the first capacity, with a deletion and
    the deleted slots reused, then saved."""
    index = HnswIndex.open(path, DIM)
    for start in range(0, len(vectors), 400):
        index.add(list(range(start, start + 400)), vectors[start : start + 400])
    index.remove(list(range(10, 20)))
    index.add(list(range(5000, 5010)), vectors[:10] * -1)
    index.save(version=1)
    return index


def test_two_builds_of_the_same_vectors_are_the_same_index(tmp_path):
    """Insertion on one thread (store/vectors.ADD_THREADS): two ingests of one chat give one graph, so one set of
    hits at every depth, and eval figures repeat run after run."""
    vectors = unit_vectors(INITIAL_CAPACITY + 576, seed=3)
    first = _built(tmp_path / "a.hnsw", vectors)
    second = _built(tmp_path / "b.hnsw", vectors)
    assert (tmp_path / "a.hnsw").read_bytes() == (tmp_path / "b.hnsw").read_bytes()
    queries = unit_vectors(50, seed=4)
    assert first.search_many(queries, k=60) == second.search_many(queries, k=60)
    rebuilt = HnswIndex(tmp_path / "c.hnsw", DIM)
    rebuilt.rebuild(list(range(len(vectors))), vectors)
    again = HnswIndex(tmp_path / "d.hnsw", DIM)
    again.rebuild(list(range(len(vectors))), vectors)
    assert rebuilt.search_many(queries, k=60) == again.search_many(queries, k=60)


TEXTS = [
    "Maya started pottery classes in Lisbon",
    "Jon bought a new guitar for the band",
    "Maya's pottery teacher praised her bowls",
    "The weather was rainy all week",
    "",
]


def test_bm25_search_ranks_matching_memories():
    index = Bm25Index.build([10, 11, 12, 13, 14], TEXTS)
    hits = index.search("pottery classes", k=5)
    assert [memory_id for memory_id, _ in hits][:1] == [10]
    assert {memory_id for memory_id, _ in hits} == {10, 12}
    assert all(score > 0 for _, score in hits)


def test_bm25_queries_without_known_tokens():
    index = Bm25Index.build([10, 11, 12, 13, 14], TEXTS)
    assert index.search("the and of", k=5) == []
    assert index.search("zeppelin", k=5) == []


def test_bm25_empty_corpus(tmp_path):
    for ids, texts in (([], []), ([1], ["the and"])):
        index = Bm25Index.build(ids, texts)
        assert index.search("pottery", k=5) == []
        index.save(tmp_path / "lexical", version=4)
        loaded, version = Bm25Index.load(tmp_path / "lexical")
        assert version == 4
        assert loaded.count == len(ids)
        assert loaded.search("pottery", k=5) == []


def test_bm25_built_from_streamed_rows_is_the_same_index():
    streamed = Bm25Index.from_rows(iter(zip([10, 11, 12, 13, 14], TEXTS, strict=True)))
    whole = Bm25Index.build([10, 11, 12, 13, 14], TEXTS)
    assert streamed.ids.tolist() == [10, 11, 12, 13, 14]
    assert streamed.search("pottery teacher", k=5) == whole.search("pottery teacher", k=5)


def test_bm25_save_load_round_trip(tmp_path):
    index = Bm25Index.build([10, 11, 12, 13, 14], TEXTS)
    index.save(tmp_path / "lexical", version=1)
    index.save(tmp_path / "lexical", version=9)
    loaded, version = Bm25Index.load(tmp_path / "lexical")
    assert version == 9
    assert loaded.search("guitar band", k=3) == index.search("guitar band", k=3)
    assert [p.name for p in tmp_path.iterdir()] == ["lexical"]


@pytest.mark.parametrize("chunk", [2048, 3, 1])
def test_bm25_scores_are_bm25s_own_to_the_bit(tmp_path, monkeypatch, chunk):
    """The index is built with numpy in bm25s's layout; every score must be bm25s's, bit for bit, and the query path
    (which sums the saved matrix itself) must score as bm25s does, however many documents are tokenised at once."""
    import numpy as np

    bm25s = pytest.importorskip("bm25s")
    monkeypatch.setattr("ripplecli.store.lexical.CHUNK_DOCUMENTS", chunk)
    from ripplecli.cues import content_tokens

    texts = [*TEXTS, "", "band band band practice practice", "the pottery pottery class"]
    corpus = [content_tokens(text) for text in texts]
    reference = bm25s.BM25()
    reference.index(corpus, show_progress=False)
    index = Bm25Index.build(list(range(len(texts))), texts)
    index.save(tmp_path / "lexical", version=1)
    loaded, _ = Bm25Index.load(tmp_path / "lexical")
    ours, theirs = loaded._scores, reference.scores
    for token, column in ours.vocab.items():
        mine = slice(ours.indptr[column], ours.indptr[column + 1])
        other = slice(theirs["indptr"][reference.vocab_dict[token]], theirs["indptr"][reference.vocab_dict[token] + 1])
        assert np.array_equal(ours.indices[mine], theirs["indices"][other])
        assert ours.data[mine].tobytes() == theirs["data"][other].tobytes()
    for query in ("pottery classes", "guitar band band", "rainy week pottery"):
        tokens = [t for t in content_tokens(query) if t in ours.vocab]
        assert np.array_equal(ours.score(tokens), reference.get_scores(tokens))
    with pytest.raises(ValueError, match="already saved"):
        loaded.save(tmp_path / "elsewhere", version=1)


def test_bm25_load_missing_or_damaged(tmp_path):
    assert Bm25Index.load(tmp_path / "absent") == (None, None)
    damaged = tmp_path / "damaged"
    damaged.mkdir()
    (damaged / "ripple.json").write_text("{not json")
    with pytest.raises(DamagedFile, match=r"ripple\.json is damaged"):  # the store reads around it, saying so
        Bm25Index.load(damaged)
