"""Integrity checks of a store (`ripple doctor`) and the repair of what can be rebuilt from the DuckDB tables."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import asdict, dataclass

from ripplecli.files import read_json_object
from ripplecli.store import schema
from ripplecli.store.db import LEXICAL_DIR, RECALL_DIR, VECTOR_FILE, Store, leftovers, remove_leftovers
from ripplecli.wording import counted

OK, STALE, PROBLEM = "ok", "stale", "problem"  # stale: a derived cache that is rebuilt on next use; not a failure


@dataclass
class Finding:
    """One check's outcome: ok, stale (rebuilt automatically) or problem (exit 1)."""

    check: str
    status: str
    detail: str

    def to_dict(self) -> dict[str, str]:
        """JSON-ready."""
        return asdict(self)


def _count_sql(store: Store, sql: str) -> int:
    """A single count."""
    row = store.con.execute(sql).fetchone()
    return int(row[0]) if row else 0


def _rows_check(name: str, sql: str, what: tuple[str, str]) -> Callable[[Store], Finding]:
    """A check that passes when `sql` counts zero rows; `what` is a hit in the singular and the plural."""

    def check(store: Store) -> Finding:
        found = _count_sql(store, sql)
        return Finding(name, PROBLEM if found else OK, counted(found, *what) if found else "none")

    return check


# name: (table.column pairs, what a hit is: one, several)
ORPHAN_CHECKS: dict[str, tuple[tuple[tuple[str, str], ...], tuple[str, str]]] = {
    "orphan edges": (
        (("edges", "src"), ("edges", "dst")),
        ("edge touches a missing memory", "edges touch a missing memory"),
    ),
    "orphan cues": (
        (("memory_persons", "memory_id"), ("memory_locations", "memory_id"), ("memory_cues", "memory_id")),
        ("cue row of a missing memory", "cue rows of a missing memory"),
    ),
    "orphan provenance": (
        (("provenance", "memory_id"),),
        ("provenance row of a missing memory", "provenance rows of a missing memory"),
    ),
    "orphan vectors": ((("vectors", "memory_id"),), ("vector of a missing memory", "vectors of a missing memory")),
}
ORPHAN_COLUMNS = tuple(pair for pairs, _ in ORPHAN_CHECKS.values() for pair in pairs)


def orphan_count_sql(pairs: tuple[tuple[str, str], ...]) -> str:
    """Rows (each counted once) of these tables whose memory column points at no memory."""
    columns: dict[str, list[str]] = {}
    for table, column in pairs:
        columns.setdefault(table, []).append(column)
    counts = [
        f"(SELECT count(*) FROM {table} WHERE "
        + " OR ".join(f"{c} NOT IN (SELECT memory_id FROM memories)" for c in cols)
        + ")"
        for table, cols in columns.items()
    ]
    return "SELECT " + " + ".join(counts)


ORPHANS = {name: (orphan_count_sql(pairs), what) for name, (pairs, what) in ORPHAN_CHECKS.items()}
INTEGRITY: dict[str, tuple[str, tuple[str, str]]] = {
    "memories without sources": (
        "SELECT count(*) FROM memories WHERE memory_id NOT IN "
        "(SELECT p.memory_id FROM provenance p JOIN sources s USING (source_id))",
        (
            "memory cites no stored turn (forgotten with --keep-sources off?)",
            "memories cite no stored turn (forgotten with --keep-sources off?)",
        ),
    ),
    "memories without vectors": (
        "SELECT count(*) FROM memories WHERE memory_id NOT IN (SELECT memory_id FROM vectors)",
        ("memory has no vector", "memories have no vector"),
    ),
    "duplicate source turns": (
        "SELECT count(*) FROM (SELECT conversation_id, turn_id FROM sources GROUP BY ALL HAVING count(*) > 1)",
        ("turn stored twice", "turns stored twice"),
    ),
}


def check_schema(store: Store) -> Finding:
    """The schema version this ripple expects."""
    version = store.schema_version()
    status = OK if version == schema.LATEST_VERSION else PROBLEM
    return Finding("schema version", status, f"{version} (this ripple: {schema.LATEST_VERSION})")


def check_vector_index(store: Store) -> Finding:
    """The saved hnswlib index against the vectors table, read without rebuilding it."""
    from ripplecli.store.vectors import HnswIndex

    count, version = store.count("vectors"), store.version("vectors")
    index = HnswIndex.open(store.path / VECTOR_FILE, store.encoder_dim)
    saved = index.meta
    if saved is None:
        if count == 0:
            return Finding("vector index", OK, "empty")
        rebuilt = f"missing or unreadable; rebuilt from {counted(count, 'vector')} on next use"
        return Finding("vector index", STALE, rebuilt)
    if saved["version"] != version:
        return Finding("vector index", STALE, f"version {saved['version']} < store {version}; rebuilt on next use")
    if index.count != count or not _same_labels(store, index):
        return Finding("vector index", PROBLEM, f"{counted(index.count, 'vector')} in hnswlib, {count} in the store")
    return Finding("vector index", OK, f"{counted(count, 'vector')}, version {version}")


def _same_labels(store: Store, index) -> bool:
    """The index holds exactly the stored memory ids."""
    stored = {r[0] for r in store.con.execute("SELECT memory_id FROM vectors").fetchall()}
    return index.ids() == stored


def check_recall_arrays(store: Store) -> Finding:
    """The saved keyed-read arrays against the memories table."""
    from ripplecli.store.recall_arrays import META_FILE, RecallArrays

    count, version = store.count("memories"), store.version("memories")
    folder = store.path / RECALL_DIR
    arrays = RecallArrays.open(folder, version)
    if arrays is None:
        saved = read_json_object(folder / META_FILE)
        why = "missing or unreadable" if saved is None else f"version {saved.get('version')} < store {version}"
        return Finding("recall arrays", STALE, f"{why}; rebuilt by the next writer (asks read the tables meanwhile)")
    stored = [r[0] for r in store.con.execute("SELECT memory_id FROM memories ORDER BY memory_id").fetchall()]
    if arrays.ids.tolist() != stored:
        return Finding("recall arrays", PROBLEM, f"{counted(arrays.count, 'memory')} saved, {count} in the store")
    return Finding("recall arrays", OK, f"{counted(count, 'memory')}, version {version}")


def check_lexical_index(store: Store) -> Finding:
    """The saved BM25 index against the memories table."""
    from ripplecli.store.lexical import Bm25Index

    count, version = store.count("memories"), store.version("memories")
    index, saved = Bm25Index.load(store.path / LEXICAL_DIR)
    if index is None:
        status = OK if count == 0 else STALE
        return Finding("lexical index", status, "empty" if count == 0 else "missing; rebuilt on next use")
    if saved != version:
        return Finding("lexical index", STALE, f"version {saved} < store {version}; rebuilt on next use")
    stored = {r[0] for r in store.con.execute("SELECT memory_id FROM memories").fetchall()}
    if set(index.ids.tolist()) != stored:
        return Finding("lexical index", PROBLEM, f"{counted(index.count, 'memory')} indexed, {count} in the store")
    return Finding("lexical index", OK, f"{counted(count, 'memory')}, version {version}")


def check_leftovers(store: Store) -> Finding:
    """Temp files from an interrupted save (harmless, but they may hold old text)."""
    found = leftovers(store.path)
    if not found:
        return Finding("leftover temp files", OK, "none")
    return Finding("leftover temp files", STALE, ", ".join(p.name for p in found))


def check_rewrite_owed(store: Store) -> Finding:
    """A forget killed between its deletion and the file rewrite: the deleted text may still be on disk."""
    owed = store.rewrite_owed()
    if owed is None:
        return Finding("unfinished forget", OK, "none")
    return Finding(
        "unfinished forget",
        PROBLEM,
        f"an interrupted forget of {counted(owed.get('memories'), 'memory')} left their text in the files; "
        "run `ripple doctor --repair` (any command that writes also finishes it)",
    )


CHECKS: dict[str, Callable[[Store], Finding]] = {
    "schema version": check_schema,
    **{name: _rows_check(name, sql, what) for name, (sql, what) in {**ORPHANS, **INTEGRITY}.items()},
    "vector index": check_vector_index,
    "lexical index": check_lexical_index,
    "recall arrays": check_recall_arrays,
    "leftover temp files": check_leftovers,
    "unfinished forget": check_rewrite_owed,
}


def diagnose(store: Store) -> list[Finding]:
    """Run every check."""
    return [check(store) for check in CHECKS.values()]


def repair(store: Store) -> list[str]:
    """Finish an interrupted forget's rewrite, drop orphan rows (they point at nothing), rebuild both derived
    indexes, remove temp leftovers."""
    finished = store.finish_owed_rewrite()  # opening for writing has normally done it already
    done = [*store.healed, *([finished] if finished else [])]
    with store.transaction():
        for table, column in ORPHAN_COLUMNS:
            gone = store.con.execute(
                f"DELETE FROM {table} WHERE {column} NOT IN (SELECT memory_id FROM memories)"
            ).fetchone()
            if gone and gone[0]:
                done.append(f"removed {counted(gone[0], 'orphan row')} from {table}")
    done += [f"removed {p.name}" for p in remove_leftovers(store.path)]
    store.rebuild_vector_index()
    shutil.rmtree(store.path / LEXICAL_DIR, ignore_errors=True)  # a saved index at the current version is reused
    store.refresh_lexical_index()
    store.save_recall_arrays()
    done.append(
        f"rebuilt the vector index ({store.count('vectors')}), the lexical index and the recall arrays "
        f"({counted(store.count('memories'), 'memory')}) from the tables"
    )
    return done


def summary(findings: list[Finding]) -> dict[str, object]:
    """The JSON document of `ripple doctor --json`."""
    return {"ok": not any(f.status == PROBLEM for f in findings), "checks": [f.to_dict() for f in findings]}
