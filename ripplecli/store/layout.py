"""The files of a store folder, named in one place: the store opens them, the derived indexes write them."""

DB_FILE = "ripple.duckdb"  # the source of truth
VECTOR_FILE = "vectors.hnsw"  # derived: the hnswlib index (store/vectors.py)
LEXICAL_DIR = "lexical"  # derived: BM25 (store/lexical.py)
RECALL_DIR = (
    "recall"  # derived: recall's keyed reads as arrays (store/recall_arrays.py) and the snapshot (store/snapshot.py)
)
RECALL_STAMP = "recall.json"  # in RECALL_DIR: the arrays' stamp and layout
