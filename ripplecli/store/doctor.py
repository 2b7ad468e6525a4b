"""Integrity checks of a store (`ripple doctor`) and the repair of what can be rebuilt from the DuckDB tables."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from ripplecli.errors import DamagedStoreError, known_failure
from ripplecli.protocols import Encoder
from ripplecli.store import schema
from ripplecli.store.db import DB_FILE, LEXICAL_DIR, RECALL_DIR, VECTOR_FILE, Store, leftovers, remove_leftovers
from ripplecli.store.seals import DamagedFile
from ripplecli.wording import counted

REPAIR_BATCH = 256  # passages encoded at a time by a repair (the encoder's memory stays small)
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
    "orphan vectors": (
        (("vectors", "memory_id"), ("passages", "memory_id")),
        ("vector of a missing memory", "vectors of a missing memory"),
    ),
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


def check_database(store: Store) -> Finding:
    """Every column of every table read through, and every index looked into (DuckDB checks each block's checksum
    as it reads it)."""
    damage = database_damage(store)
    if damage.tables:
        names = ", ".join(damage.tables)
        return Finding("database file", PROBLEM, f"damaged: {names} cannot be read whole ({damage.first}); {SALVAGE}")
    if damage.indexes:
        names = ", ".join(damage.indexes)
        detail = f"damaged: the index on {names} cannot be read ({damage.first}); `ripple doctor --repair` rebuilds it"
        return Finding("database file", PROBLEM, detail)
    return Finding("database file", OK, f"{counted(damage.rows, 'row')} in {counted(damage.count, 'table')} and "
                   f"{counted(damage.indexed, 'index', 'indexes')} read whole")  # fmt: skip


@dataclass
class DatabaseDamage:
    """What of the database file cannot be read: tables (their rows are lost) and indexes (rebuilt from the rows)."""

    tables: list[str]
    indexes: list[str]
    first: str  # DuckDB's word on the first damaged block
    rows: int
    count: int
    indexed: int


def database_damage(store: Store) -> DatabaseDamage:
    """Read every column of every table, then look keys up through every index: a table scan never reads an index,
    and a lookup loads the index nodes on its path (INDEX_PROBES keys spread over each index's range)."""
    tables = [r[0] for r in store.con.execute(TABLES_SQL).fetchall()]
    damage = DatabaseDamage([], [], "", 0, len(tables), 0)
    for table in tables:
        row = _readable(store, damage, f'SELECT count(*), bit_xor(hash(COLUMNS(*))) FROM "{table}"')
        if row is None:
            damage.tables.append(table)
        else:
            damage.rows += int(row[0])
    for table, columns in _indexes(store):
        if table in damage.tables:
            continue
        damage.indexed += 1
        names = ", ".join(f'"{c}"' for c in columns)
        keys = store.con.execute(PROBE_KEYS_SQL.format(columns=names, table=table, probes=INDEX_PROBES)).fetchall()
        lookup = f'SELECT count(*) FROM "{table}" WHERE ' + " AND ".join(f'"{c}" = ?' for c in columns)
        if any(_readable(store, damage, lookup, list(key)) is None for key in keys):
            damage.indexes.append(f"{table} ({', '.join(columns)})")
    return damage


def _readable(store: Store, damage: DatabaseDamage, sql: str, params: list | None = None) -> tuple | None:
    """One row of a query, or None when it meets a damaged block (noted in `damage`)."""
    try:
        return store.con.execute(sql, params or []).fetchone() or (0,)
    except Exception as exc:
        if not isinstance(known_failure(exc), DamagedStoreError):
            raise
        damage.first = damage.first or str(exc).strip().splitlines()[0]
        return None


def _indexes(store: Store) -> list[tuple[str, tuple[str, ...]]]:
    """(table, key columns) of every primary key and index of the database."""
    columns = {(r[0], r[1]) for r in store.con.execute(COLUMNS_SQL).fetchall()}
    found = {(t, tuple(c)) for t, c in store.con.execute(KEYS_SQL).fetchall() if c}
    for table, expressions in store.con.execute(INDEXES_SQL).fetchall():
        names = tuple(part.strip().strip("'\"") for part in str(expressions).strip("[]").split(","))
        found.add((table, names))
    return sorted((t, c) for t, c in found if all((t, name) in columns for name in c))


INDEX_PROBES = 16  # keys looked up per index: measured ~1.5 ms a lookup on a loaded 2-core machine
PROBE_KEYS_SQL = (
    "SELECT {columns} FROM (SELECT {columns}, row_number() OVER (ORDER BY {columns}) AS n, count(*) OVER () AS total "
    "FROM (SELECT DISTINCT {columns} FROM \"{table}\")) WHERE (n - 1) % greatest(total // {probes}, 1) = 0 OR n = total"
)
COLUMNS_SQL = "SELECT table_name, column_name FROM duckdb_columns() WHERE database_name = current_database()"
KEYS_SQL = (
    "SELECT table_name, constraint_column_names FROM duckdb_constraints() WHERE database_name = current_database() "
    "AND constraint_type IN ('PRIMARY KEY', 'UNIQUE')"
)
INDEXES_SQL = "SELECT table_name, expressions FROM duckdb_indexes() WHERE database_name = current_database()"
TABLES_SQL = "SELECT table_name FROM duckdb_tables() WHERE database_name = current_database() ORDER BY table_name"
SALVAGE = "`ripple export --salvage --out FILE` saves every row that can still be read"
REBUILT = "`ripple doctor --repair` rebuilds it"


def _damaged(check: str, damage: DamagedFile, meanwhile: str) -> Finding:
    """A derived file that fails its checksums: reads go around it, the next writer or a repair rebuilds it."""
    return Finding(check, PROBLEM, f"{damage}; {meanwhile}; {REBUILT}")


def _older(check: str) -> Finding:
    """Derived files an older ripple saved, without checksums."""
    return Finding(check, STALE, "saved without checksums by an older ripple; saved again by the next writer")


def check_vector_index(store: Store) -> Finding:
    """The saved hnswlib index (every byte against its checksums) against the vectors table, without rebuilding."""
    from ripplecli.store.hnsw_map import check_links, links_stamp
    from ripplecli.store.vectors import HnswIndex

    count, version = store.count("vectors"), store.version("vectors")
    path = store.path / VECTOR_FILE
    try:
        index = HnswIndex.open(path, store.encoder_dim)
        stamp = links_stamp(path)
        if stamp is not None:
            check_links(path, stamp, whole=True)
    except DamagedFile as damage:
        return _damaged("vector index", damage, "asks search the stored vectors meanwhile")
    saved = index.meta
    if saved is None:
        if count == 0:
            return Finding("vector index", OK, "empty")
        rebuilt = f"missing or unreadable; rebuilt from {counted(count, 'vector')} on next use"
        return Finding("vector index", STALE, rebuilt)
    if saved["version"] != version:
        return Finding("vector index", STALE, f"saved at version {saved['version']}, the store is at {version}; "
                       "rebuilt on next use")  # fmt: skip
    if not index.sealed:
        return _older("vector index")
    if index.count != count:
        return Finding("vector index", PROBLEM, f"{counted(index.count, 'vector')} in hnswlib, {count} in the store")
    differ = _differing_ids(store, "vectors", index.ids())
    if differ:
        return Finding("vector index", PROBLEM, f"{counted(count, 'vector')} in hnswlib and in the store, but "
                       f"{counted(differ, 'memory id differs', 'memory ids differ')}")  # fmt: skip
    return Finding("vector index", OK, f"{counted(count, 'vector')}, version {version}")


def _differing_ids(store: Store, table: str, held: set[int]) -> int:
    """How many memory ids a derived index and a table do not share."""
    stored = {r[0] for r in store.con.execute(f"SELECT memory_id FROM {table}").fetchall()}
    return len(held ^ stored)


def check_passages(store: Store) -> Finding:
    """Long memories whose later passages have no vectors (a store made before passages): the dense view reads only
    their first ~190 words until a repair encodes the rest."""
    from ripplecli.store.passages import missing

    lacking = len(missing(store.con))
    if lacking:
        what = counted(lacking, "long memory has", "long memories have")
        return Finding("passages", STALE, f"{what} no passage vectors; `ripple doctor --repair` encodes them")
    return Finding("passages", OK, counted(store.count("passages"), "passage"))


def build_passages(store: Store, encoder: Callable[[], Encoder]) -> str | None:
    """Encode the passages of long memories that have none (a store made before passages), in one transaction."""
    from ripplecli.store import passages

    rows = passages.cut_all(passages.missing(store.con))
    if not rows:
        return None
    encode = encoder().encode
    texts = [p.text for _, p in rows]
    vectors = np.vstack([encode(texts[at : at + REPAIR_BATCH]) for at in range(0, len(texts), REPAIR_BATCH)])
    with store.transaction():
        store.add_passages(rows, vectors)
        store.bump("vectors")
    memories = counted(len({mid for mid, _ in rows}), "long memory", "long memories")
    return f"encoded {counted(len(rows), 'passage')} of {memories}"


def check_recall_arrays(store: Store) -> Finding:
    """The saved keyed-read arrays (every byte against their checksums) against the memories table."""
    from ripplecli.store.recall_arrays import RecallArrays, read_stamp

    count, version = store.count("memories"), store.version("memories")
    folder = store.path / RECALL_DIR
    try:
        arrays = RecallArrays.open(folder, version, whole=True)
    except DamagedFile as damage:
        return _damaged("recall arrays", damage, "asks read the tables meanwhile")
    if arrays is None:
        saved = read_stamp(folder)
        if saved is None:
            why = "missing or saved by an older ripple"
        elif saved.get("version") != version:
            why = f"built from version {saved.get('version')}, the store is at {version}"
        else:
            why = "unreadable"
        return Finding("recall arrays", STALE, f"{why}; rebuilt by the next writer (asks read the tables meanwhile)")
    stored = [r[0] for r in store.con.execute("SELECT memory_id FROM memories ORDER BY memory_id").fetchall()]
    if arrays.ids.tolist() != stored:
        return Finding("recall arrays", PROBLEM, f"{counted(arrays.count, 'memory')} saved, {count} in the store"
                       + (", but other ids" if arrays.count == count else ""))  # fmt: skip
    return Finding("recall arrays", OK, f"{counted(count, 'memory')}, version {version}")


def check_lexical_index(store: Store) -> Finding:
    """The saved BM25 index (every byte against its checksums) against the memories table."""
    from ripplecli.store.lexical import META_FILE, Bm25Index

    count, version = store.count("memories"), store.version("memories")
    folder = store.path / LEXICAL_DIR
    try:
        index, saved = Bm25Index.load(folder, whole=True)
    except DamagedFile as damage:
        return _damaged("lexical index", damage, "asks rebuild it in memory meanwhile")
    if index is None:
        if count == 0:
            return Finding("lexical index", OK, "empty")
        why = "unreadable" if (folder / META_FILE).exists() else "missing"
        return Finding("lexical index", STALE, f"{why}; rebuilt on next use")
    if saved != version:
        return Finding("lexical index", STALE, f"built from version {saved}, the store is at {version}; "
                       "rebuilt on next use")  # fmt: skip
    if not index.sealed:
        return _older("lexical index")
    differ = _differing_ids(store, "memories", set(index.ids.tolist()))
    if differ:
        held = f"{counted(index.count, 'memory')} indexed, {count} in the store"
        return Finding("lexical index", PROBLEM, held + (f", but {differ} ids differ" if index.count == count else ""))
    return Finding("lexical index", OK, f"{counted(count, 'memory')}, version {version}")


def check_snapshot(store: Store) -> Finding:
    """What a cold ask reads instead of the database (store/snapshot.py): sealed, and describing the file as it is."""
    from ripplecli.store.snapshot import Snapshot, read_ready

    if not store.read_only:
        return Finding("snapshot", OK, "written again when this command closes the store")
    folder = store.path / RECALL_DIR
    try:
        ready = read_ready(folder)
        current = ready is not None and Snapshot.open(folder, store.path / DB_FILE, schema.LATEST_VERSION)
    except DamagedFile as damage:
        return _damaged("snapshot", damage, "asks open the database meanwhile")
    if ready is None:
        why = "missing or written by an older ripple"
    elif not current:
        why = "describes another state of the database file"
    else:
        return Finding("snapshot", OK, "describes the database file as it is")
    return Finding("snapshot", STALE, f"{why}; written by the next writer (asks open the database meanwhile)")


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
    "database file": check_database,
    **{name: _rows_check(name, sql, what) for name, (sql, what) in {**ORPHANS, **INTEGRITY}.items()},
    "vector index": check_vector_index,
    "passages": check_passages,
    "lexical index": check_lexical_index,
    "recall arrays": check_recall_arrays,
    "snapshot": check_snapshot,
    "leftover temp files": check_leftovers,
    "unfinished forget": check_rewrite_owed,
}


def diagnose(store: Store) -> list[Finding]:
    """Run every check (one that cannot read the damaged database reports that, and the others still run). A file
    DuckDB cannot open at all raises DamagedStoreError here, and is the whole report (`unopenable`)."""
    store.con.execute("SELECT 1")  # a store opened on its snapshot connects now
    return [_checked(name, check, store) for name, check in CHECKS.items()]


def _checked(name: str, check: Callable[[Store], Finding], store: Store) -> Finding:
    """One check's finding; a problem when the rows it reads are in a damaged part of the database file."""
    try:
        return check(store)
    except Exception as exc:
        if not isinstance(known_failure(exc), DamagedStoreError):
            raise
        return Finding(name, PROBLEM, "not checked: the rows it reads are in a damaged part of the database file")


def unopenable(path: Path, failure: Exception) -> dict[str, object]:
    """The report on a store whose database file DuckDB cannot open at all (`ripple doctor --json`'s shape)."""
    finding = Finding("database file", PROBLEM, str(failure))
    return {**summary([finding]), "repaired": [], "store": str(path)}


def repair(store: Store, encoder: Callable[[], Encoder] | None = None) -> list[str]:
    """Finish an interrupted forget's rewrite, drop orphan rows (they point at nothing), encode missing passages
    (with `encoder`), rebuild the derived indexes, remove temp leftovers."""
    done = _rebuild_damaged_indexes(store)
    finished = store.finish_owed_rewrite()  # opening for writing has normally done it already
    done += [*store.healed, *([finished] if finished else [])]
    with store.transaction():
        for table, column in ORPHAN_COLUMNS:
            gone = store.con.execute(
                f"DELETE FROM {table} WHERE {column} NOT IN (SELECT memory_id FROM memories)"
            ).fetchone()
            if gone and gone[0]:
                done.append(f"removed {counted(gone[0], 'orphan row')} from {table}")
    done += [f"removed {p.name}" for p in remove_leftovers(store.path)]
    built = build_passages(store, encoder) if encoder is not None else None
    done += [built] if built else []
    store.rebuild_vector_index()
    shutil.rmtree(store.path / LEXICAL_DIR, ignore_errors=True)  # a saved index at the current version is reused
    store.refresh_lexical_index()
    store.save_recall_arrays()
    done.append(
        f"rebuilt the vector index ({store.count('vectors')}), the lexical index and the recall arrays "
        f"({counted(store.count('memories'), 'memory')}) from the tables"
    )
    return done


def _rebuild_damaged_indexes(store: Store) -> list[str]:
    """When an index is damaged but every row reads, rewrite the database file from its rows: the copy builds every
    index afresh. Damaged rows cannot be rebuilt: the repair then stops at the first it meets, saying so in one
    line. (Only then: the copy needs as much free space as the file.)"""
    damage = database_damage(store)
    if damage.tables or not damage.indexes:
        return []
    store.compact()
    return [f"rewrote the database file, rebuilding its damaged {counted(len(damage.indexes), 'index', 'indexes')} "
            f"({', '.join(damage.indexes)}) from the rows"]  # fmt: skip


def summary(findings: list[Finding]) -> dict[str, object]:
    """The JSON document of `ripple doctor --json`."""
    return {"ok": not any(f.status == PROBLEM for f in findings), "checks": [f.to_dict() for f in findings]}
