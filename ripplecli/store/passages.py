"""Passages of long memories: the encoder reads a memory's first ~190 words only (all-MiniLM-L6-v2: 256 word
pieces), so a longer memory (an assistant's answer) also gets one vector per later word window. The memory stays
one memory; its dense score is its best passage's. The passages table is the truth, `passages.hnsw` (labelled
memory_id * SLOTS + ordinal) a derived cache like the vector index, stamped with the vectors version."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from _duckdb import DuckDBPyConnection

# A window of this many words fits the encoder's 256 word pieces with room for markup and numbers (~1.35 pieces a
# word on LongMemEval assistant turns); the next window starts OVERLAP_WORDS before its end, so a sentence cut at a
# window's edge is read whole by one of the two.
WINDOW_WORDS = 180
OVERLAP_WORDS = 30
STRIDE_WORDS = WINDOW_WORDS - OVERLAP_WORDS
NAME_CHARS = 60  # a longer text before the first ": " is not a speaker's name
SLOTS = 1024  # passages a memory can have (labels memory_id * SLOTS + ordinal); a longer turn's tail is not read


@dataclass(frozen=True)
class Passage:
    """One word window of a memory's text: ordinal 0 is the window its own vector reads."""

    ordinal: int
    first_word: int  # in the text after the speaker's name
    end_word: int
    text: str  # the speaker's name, then the window's words (the name measured +7 points of dense recall)


def _split(restatement: str) -> tuple[str, list[str]]:
    """The speaker prefix ("Alice: ", or "") and the words after it."""
    name, sep, body = restatement.partition(": ")
    if not sep or len(name) > NAME_CHARS or "\n" in name:
        return "", restatement.split()
    return name + sep, body.split()


def cut(restatement: str) -> list[Passage]:
    """Every passage of a memory, in order; one (the whole text) when it fits one window."""
    prefix, words = _split(restatement)
    if len(words) <= WINDOW_WORDS:
        return [Passage(0, 0, len(words), restatement)]
    starts = list(range(0, len(words) - OVERLAP_WORDS, STRIDE_WORDS))[:SLOTS]
    return [
        Passage(n, start, min(start + WINDOW_WORDS, len(words)), prefix + " ".join(words[start : start + WINDOW_WORDS]))
        for n, start in enumerate(starts)
    ]


def later(restatement: str) -> list[Passage]:
    """The passages that need a vector of their own: all but the first, which the memory's vector reads."""
    return cut(restatement)[1:]


def label(memory_id: int, ordinal: int) -> int:
    """A passage's label in the passage index."""
    return memory_id * SLOTS + ordinal


def of_label(passage_label: int) -> tuple[int, int]:
    """(memory id, ordinal) of a passage label."""
    memory_id, ordinal = divmod(int(passage_label), SLOTS)
    return memory_id, ordinal


def insert(con: DuckDBPyConnection, rows: Sequence[tuple[int, Passage]], vectors: np.ndarray) -> None:
    """Passage rows of (memory id, passage) with their vectors (inside the writer's transaction)."""
    from ripplecli.store.writes import insert_columns

    if not rows:
        return
    insert_columns(
        con,
        "passages",
        {
            "memory_id": [mid for mid, _ in rows],
            "ordinal": [p.ordinal for _, p in rows],
            "first_word": [p.first_word for _, p in rows],
            "end_word": [p.end_word for _, p in rows],
            "vector": np.asarray(vectors, dtype=np.float32).reshape(len(rows), -1).tolist(),
        },
    )


def all_vectors(con: DuckDBPyConnection, dim: int) -> tuple[list[int], np.ndarray]:
    """Every passage's label and vector, the truth the passage index is rebuilt from."""
    rows = con.execute("SELECT memory_id, ordinal, vector FROM passages ORDER BY memory_id, ordinal").fetchall()
    matrix = np.array([r[2] for r in rows], dtype=np.float32).reshape(len(rows), dim)
    return [label(r[0], r[1]) for r in rows], matrix


# A memory longer than one window whose passages were never cut (its store was made before passages): by SQL's
# whitespace split, the same count as str.split() for the text after the speaker's name.
_LONG = f"len(regexp_split_to_array(trim(restatement), '\\s+')) > {WINDOW_WORDS}"


def missing(con: DuckDBPyConnection) -> list[tuple[int, str]]:
    """(memory id, restatement) of long memories that have no passage rows."""
    return [
        (int(mid), text)
        for mid, text in con.execute(
            f"SELECT memory_id, restatement FROM memories WHERE {_LONG} "
            "AND memory_id NOT IN (SELECT memory_id FROM passages) ORDER BY memory_id"
        ).fetchall()
        if len(cut(text)) > 1
    ]


def cut_all(memories: Iterable[tuple[int, str]]) -> list[tuple[int, Passage]]:
    """(memory id, passage) of every passage that needs a vector, in memory order."""
    return [(mid, p) for mid, text in memories for p in later(text)]


def best_passages(
    restatements: dict[int, str], vectors: Any, passages: Callable[[], Any], query: np.ndarray | None
) -> dict[int, tuple[Passage, int]]:
    """For each long memory, the passage nearest the query (its own vector's, the first, or a later one's) and how
    many it has; the first without a query or without passage vectors (a store from before them)."""
    best: dict[int, tuple[Passage, int]] = {}
    for mid, text in restatements.items():
        windows = cut(text)
        if len(windows) > 1:
            best[mid] = (_nearest(mid, windows, vectors, passages, query), len(windows))
    return best


def _nearest(mid: int, windows: list[Passage], vectors: Any, passages: Callable[[], Any], query: Any) -> Passage:
    """The window of a long memory whose vector is nearest the query."""
    if query is None:
        return windows[0]
    try:
        rows = np.vstack(
            [vectors.get_vectors([mid]), passages().get_vectors([label(mid, p.ordinal) for p in windows[1:]])]
        )
    except KeyError:
        return windows[0]
    return windows[int(np.argmax(rows @ query))]
