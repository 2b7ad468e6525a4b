"""The files of a store folder, named in one place: the store opens them, the derived indexes write them."""

DB_FILE = "ripple.duckdb"  # the source of truth
VECTOR_FILE = "vectors.hnsw"  # derived: the hnswlib index (store/vectors.py)
PASSAGE_FILE = "passages.hnsw"  # derived: the long memories' later passages, hnswlib too (store/passages.py)
LEXICAL_DIR = "lexical"  # derived: BM25 (store/lexical.py)
RECALL_DIR = (
    "recall"  # derived: recall's keyed reads as arrays (store/recall_arrays.py) and the snapshot (store/snapshot.py)
)
RECALL_STAMP = "recall.json"  # in RECALL_DIR: the arrays' stamp and layout

# Every entry ripple makes in a store folder is one of these names, a file named after one (`ripple.duckdb.wal`,
# `vectors.hnsw.meta.json`) or a dot-named temp of an interrupted save (`.lexical.k3j2.tmp`): ripple reads, changes
# and tidies nothing else there, so a store made by an older ripple in a folder holding other files leaves them be.
OWN_NAMES = (DB_FILE, VECTOR_FILE, PASSAGE_FILE, LEXICAL_DIR, RECALL_DIR)
LEFTOVER_SUFFIXES = (".tmp", ".old", ".wal")  # a temp file or folder, a swapped-out one, a temp database's WAL


def is_own(name: str) -> bool:
    """Whether an entry of a store folder is ripple's (see OWN_NAMES)."""
    base = name[1:] if name.startswith(".") else name
    return any(base == own or base.startswith(own + ".") for own in OWN_NAMES)


def is_leftover(name: str) -> bool:
    """Whether an entry of a store folder is the temp of an interrupted save (it may hold old text)."""
    return name.startswith(".") and name.endswith(LEFTOVER_SUFFIXES) and is_own(name)
