"""The store: one DuckDB file (source of truth) plus derived indexes rebuilt from it when stale."""

from __future__ import annotations

import json
import logging
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ripplecli.errors import StoreBusyError, StoreError, known_failure
from ripplecli.protocols import LexicalIndex, VectorIndex
from ripplecli.store import schema
from ripplecli.store.layout import (
    DB_FILE,
    LEXICAL_DIR,
    PASSAGE_FILE,
    RECALL_DIR,
    VECTOR_FILE,
    is_leftover,
    is_own,
)
from ripplecli.store.placement import check_new_store, check_writable, folder_error, no_store_here
from ripplecli.store.seals import DamagedFile, warn_damaged
from ripplecli.store.writes import StoreWrites
from ripplecli.wording import counted

if TYPE_CHECKING:
    from _duckdb import DuckDBPyConnection

    from ripplecli.store.recall_arrays import RecallArrays
    from ripplecli.store.snapshot import Snapshot
    from ripplecli.store.vectors import HnswIndex

DEFAULT_DIM = 384  # all-MiniLM-L6-v2, the default encoder
log = logging.getLogger("ripplecli")

_LOCK_PID = re.compile(r"PID (\d+)")
# Meta key set in a forget's deleting transaction and cleared only in the rewritten file: while it is set, deleted
# text may still sit in DuckDB's free blocks or in a derived index, and the next writer finishes the rewrite.
REWRITE_OWED = "rewrite_owed"


def leftovers(path: Path) -> list[Path]:
    """Temp files and folders an interrupted save left behind (they may hold old text)."""
    if not path.is_dir():
        return []
    return sorted(p for p in path.iterdir() if is_leftover(p.name))


def remove_leftovers(path: Path) -> list[Path]:
    """Delete what `leftovers` finds; returns the paths removed."""
    import shutil

    found = leftovers(path)
    for item in found:
        if item.is_dir():
            shutil.rmtree(item, ignore_errors=True)
        else:
            item.unlink(missing_ok=True)
    return found


def _private_folder(path: Path) -> None:
    """Create the store folder readable by its owner only: it holds private conversations."""
    path.mkdir(parents=True, exist_ok=True)
    os.chmod(path, 0o700)


def protect(path: Path) -> None:
    """Make ripple's files in a store folder owner-only (0600, its folders 0700): they hold private conversations.
    Only ripple's own entries (store/layout.py) are touched, never what else a folder holds; ripple writes its
    files 0600 from the start, so this is for those DuckDB creates (its WAL) and those of older stores."""
    if not path.is_dir():
        return
    for entry in path.iterdir():
        if not is_own(entry.name) or entry.is_symlink():
            continue
        if not entry.is_dir():
            _chmod(entry, 0o600)
            continue
        _chmod(entry, 0o700)
        for folder, dirs, files in os.walk(entry):  # a folder of ripple's holds only ripple's files
            for name in dirs:
                _chmod(Path(folder) / name, 0o700)
            for name in files:
                _chmod(Path(folder) / name, 0o600)


def _chmod(path: Path, mode: int) -> None:
    """chmod that ignores a file removed meanwhile (the WAL comes and goes) and never follows a symlink."""
    with suppress(FileNotFoundError):
        if not path.is_symlink():
            os.chmod(path, mode)


def _connect(db_path: Path, read_only: bool) -> DuckDBPyConnection:
    """Open DuckDB, turning its lock conflict into one clear line naming the other process."""
    from ripplecli.store.engine import duckdb  # imported here: an ask read from the snapshot never needs it

    try:
        return duckdb.connect(str(db_path), read_only=read_only)
    except duckdb.Error as exc:
        message = str(exc)
        known = known_failure(exc)  # a damaged file, a full disk (replaying the WAL writes)
        if known is not None:
            raise known from None
        if not isinstance(exc, duckdb.IOException):
            raise
        if "lock" not in message.lower():
            raise StoreError(f"store {db_path.parent}: cannot open: {message.splitlines()[0]}") from None
        match = _LOCK_PID.search(message)
        holder = f"process {match.group(1)}" if match else "another process"
        raise StoreBusyError(f"store {db_path.parent} is in use by {holder}") from None


def open_database(db_path: Path) -> DuckDBPyConnection:
    """A bare read-only connection to a store's database file, without its schema check or snapshot: what a salvage
    of a damaged file reads through (raises DamagedStoreError when DuckDB cannot open it at all)."""
    return _connect(db_path, True)


def _create_database(db_path: Path) -> None:
    """Migrate a new database under a temp name, then link it in: a kill never leaves a half-built schema."""
    temp = db_path.with_name(f".{db_path.name}.{os.getpid()}.tmp")
    con = _connect(temp, False)
    try:
        schema.migrate(con)
    finally:
        con.close()
    os.chmod(temp, 0o600)
    try:
        os.link(temp, db_path)  # unlike rename, never replaces a store another process created meanwhile
    except FileExistsError:
        pass
    finally:
        temp.unlink(missing_ok=True)


class Store(StoreWrites):
    """A store folder: the DuckDB connection, its meta, and lazily opened derived indexes; its writes of the
    pipeline's rows are StoreWrites' methods (store/writes.py)."""

    def __init__(
        self, path: Path, con: DuckDBPyConnection | None, read_only: bool, snapshot: Snapshot | None = None
    ) -> None:
        self.path = path
        self._con = con  # None: connected on first use (a read-only store opened on its snapshot)
        self.snapshot = snapshot  # what the last writer left for asks that need no SQL (store/snapshot.py)
        self.read_only = read_only
        self._vectors: VectorIndex | None = None
        self._passages: HnswIndex | None = None
        self._lexical: LexicalIndex | None = None
        self._meta: dict[str, str] | None = None  # a read-only store's meta, read once (no one writes it meanwhile)
        self.healed: list[str] = []  # what opening for writing finished for an interrupted command
        self.closed = False

    @classmethod
    def open(cls, path: Path, *, create: bool = True, read_only: bool = False) -> Store:
        """Open (and with `create`, initialise) the store folder at `path`."""
        path = Path(path).expanduser()
        db_path = path / DB_FILE
        try:
            if path.exists() and not path.is_dir():
                raise StoreError(f"store {path}: not a folder")
            if not db_path.exists():
                if not create:
                    raise no_store_here(path)
                read_only = False
                check_new_store(path)
                _private_folder(path)
                _create_database(db_path)
            elif not read_only:
                check_writable(path)
        except OSError as exc:  # a read-only disk, a file where a folder should be, a folder of someone else's
            raise folder_error(path, exc) from None
        if read_only:
            from ripplecli.store.snapshot import Snapshot

            try:
                found = Snapshot.open(path / RECALL_DIR, db_path, schema.LATEST_VERSION)
            except DamagedFile as damage:
                warn_damaged(damage, writable=False)
                found = None
            if found is not None:
                return cls(path, None, True, snapshot=found)
        store = cls(path, _connect(db_path, read_only), read_only)
        store._check_schema()
        if not read_only:  # we hold the lock: temp files of an interrupted save are nobody's, and may hold old text
            remove_leftovers(path)
            finished = store.finish_owed_rewrite()  # a killed forget's text must not outlive the next writer
            store.healed = [finished] if finished else []
        return store

    def _check_schema(self) -> None:
        """Refuse a store from a newer ripple; migrate an older one (read-only: by a short writable open first)."""
        version = schema.current_version(self.con) if not self.read_only else self.schema_version()
        if version > schema.LATEST_VERSION:
            raise StoreError(
                f"store {self.path}: schema version {version} is newer than this ripple "
                f"(knows {schema.LATEST_VERSION}); upgrade ripple"
            )
        if version < schema.LATEST_VERSION:
            if self.read_only:  # migrated once by a short writable open, then read as asked
                self.con.close()
                Store.open(self.path, create=False).close()
                self.con = _connect(self.path / DB_FILE, True)
                self._meta = None
                return
            schema.migrate(self.con)
            os.chmod(self.path / DB_FILE, 0o600)
            self._heal_derived_indexes()  # a migration may change what the indexes are built from

    def schema_version(self) -> int:
        """The schema version without creating anything (works on read-only stores)."""
        if self.snapshot is not None:
            return self.snapshot.schema
        return schema.read_version(self.con)

    @property
    def con(self) -> DuckDBPyConnection:
        """The DuckDB connection, opened on first use when the store was opened on its snapshot."""
        if self._con is None:
            self._con = _connect(self.path / DB_FILE, self.read_only)
            if self.snapshot is not None and not self.snapshot.describes(self.path / DB_FILE):
                self.snapshot, self._meta = None, None  # a writer came and went: from now on, only the database
        return self._con

    @con.setter
    def con(self, con: DuckDBPyConnection) -> None:
        self._con = con

    def close(self, failing: bool = False) -> None:
        """Close the connection (again: nothing to do). A writer first makes sure the derived indexes match what is
        committed, then, its connection closed, stamps the snapshot the next asks read instead of the database.

        `failing`: a failure is on its way (a full disk, say), and it is what the command reports: closing does what
        it can, and what fails meanwhile is left to the next writer, not raised over it."""
        try:
            self._close_writing()
        except Exception as exc:
            self._close_connection(quietly=True)
            if not failing:
                raise
            log.debug("closing after a failure: %s", exc)
        except BaseException:
            self._close_connection(quietly=True)
            raise

    def _close_writing(self) -> None:
        """close()'s work: heal, close the connection, stamp the snapshot."""
        from ripplecli.store import snapshot

        if self.closed:
            return
        facts = None
        if not self.read_only:
            self._heal_derived_indexes()
            facts = snapshot.recorded_facts(self)
        self._close_connection()
        if facts is not None:
            protect(self.path)
            snapshot.stamp(self.path / RECALL_DIR, self.path / DB_FILE, facts)

    def _close_connection(self, quietly: bool = False) -> None:
        """Close the DuckDB connection; `quietly` when a failure is already on its way (its closing may fail too)."""
        self.closed = True
        if self._con is None:
            return
        try:
            self._con.close()
        except Exception:
            if not quietly:
                raise

    def _heal_derived_indexes(self) -> None:
        """Rebuild an index this writer or a killed one committed past but never saved, or that is damaged or was
        saved without checksums by an older ripple (when fresh: a few small reads, and each file's checksums within
        store/seals.py's budget). Every writer's close passes here, so the next ask finds the recall arrays current."""
        if not self._lexical_current():
            self.refresh_lexical_index()
        if self.recall_arrays() is None:
            self.save_recall_arrays()
        if not self._vectors_current():
            self._vectors = None
            index = self.vector_index(whole=True)  # loaded, or rebuilt from the table and saved
            if not index.sealed:  # current, but saved by an older ripple: saved again, with its seal
                index.save(self.version("vectors"))
        if not self._passages_current():
            self._passages = None
            self.passage_index()  # rebuilt from the table and saved
        from ripplecli.store.vectors import ensure_links

        damage = ensure_links(self.path / VECTOR_FILE)  # an older ripple's store gets the readers' sidecar once
        if damage is not None:
            warn_damaged(damage, writable=True)

    def _lexical_current(self) -> bool:
        """Whether the saved lexical index is intact, sealed and built from the committed memories (a store with no
        memories needs none)."""
        from ripplecli.store.lexical import Bm25Index

        try:
            index, version = Bm25Index.load(self.path / LEXICAL_DIR)
        except DamagedFile as damage:
            warn_damaged(damage, writable=True)
            return False
        fresh = index is not None and index.sealed and version == self.version("memories")
        return fresh or (index is None and not self.count("memories"))

    def _vectors_current(self) -> bool:
        """Whether the saved vector index is intact, sealed and holds what the vectors table holds (a store with no
        vectors needs none)."""
        return self._index_current(VECTOR_FILE, "vectors", sealed=True)

    def _passages_current(self) -> bool:
        """Whether the saved passage index is intact and holds what the passages table holds (none needs none)."""
        return self._index_current(PASSAGE_FILE, "passages", sealed=False)

    def _index_current(self, name: str, table: str, *, sealed: bool) -> bool:
        """Whether the vector file `name` is intact (and sealed, when asked) and holds what `table` holds."""
        from ripplecli.store.vectors import saved_meta

        try:
            saved = saved_meta(self.path / name, self.encoder_dim)
        except DamagedFile as damage:
            warn_damaged(damage, writable=True)
            return False
        count = self.count(table)
        if saved is None:
            return count == 0
        return (saved["sealed"] or not sealed) and self._vectors_saved(saved, count)

    def _damaged(self, damage: DamagedFile) -> None:
        """Say that a damaged derived file is read around (a writer rebuilds it; a reader reads the database)."""
        warn_damaged(damage, writable=not self.read_only)

    def compact(self, clear_meta: str | None = None) -> None:
        """Rewrite the database into a fresh file and swap it in: deleted rows linger in DuckDB's free blocks.

        `clear_meta` is removed from the fresh copy only, so the swap itself is what clears it.
        """
        db_path = self.path / DB_FILE
        fresh = self.path / f".{DB_FILE}.compact.tmp"
        for leftover in (fresh, fresh.with_name(fresh.name + ".wal")):
            leftover.unlink(missing_ok=True)
        self.con.execute("CHECKPOINT")
        name = self.con.execute("SELECT current_database()").fetchone()[0]  # type: ignore[index]  # always a row
        quoted = str(fresh).replace("'", "''")
        try:
            self.con.execute(f"ATTACH '{quoted}' AS ripple_compact")
            self.con.execute(f'COPY FROM DATABASE "{name}" TO ripple_compact')
            if clear_meta is not None:
                self.con.execute("DELETE FROM ripple_compact.meta WHERE key = ?", [clear_meta])
            self.con.execute("CHECKPOINT ripple_compact")
        except BaseException:
            with suppress(Exception):
                self.con.execute("DETACH ripple_compact")
            for leftover in (fresh, fresh.with_name(fresh.name + ".wal")):  # a full disk gets its space back now
                leftover.unlink(missing_ok=True)
            raise
        self.con.execute("DETACH ripple_compact")
        self.con.close()  # checkpoints: no WAL of the old file survives to be replayed onto the new one
        os.chmod(fresh, 0o600)
        os.replace(fresh, db_path)
        self.con = _connect(db_path, False)

    # --- meta -------------------------------------------------------------------------------
    def rewrite(self) -> None:
        """Rebuild both derived indexes, then rewrite the database file without the forget marker (the swap clears
        it): what a forget owes so no file keeps the deleted text."""
        self.rebuild_vector_index()
        self.refresh_lexical_index()
        self.save_recall_arrays()
        self.compact(clear_meta=REWRITE_OWED)
        remove_leftovers(self.path)

    def rewrite_owed(self) -> dict | None:
        """What an interrupted forget deleted but did not yet scrub from the files (None when nothing is owed)."""
        return self.get_meta(REWRITE_OWED)

    def finish_owed_rewrite(self) -> str | None:
        """Finish the rewrite a killed forget owes (a writer does this on open); returns what was done, if anything."""
        owed = self.rewrite_owed()
        if owed is None or self.read_only:
            return None
        self.rewrite()
        return (
            f"finished the file rewrite an interrupted forget owed ({counted(owed.get('memories'), 'memory')}, "
            f"{counted(owed.get('sources'), 'source turn')})"
        )

    def get_meta(self, key: str, default: Any = None) -> Any:
        """A JSON value from the meta table (a read-only store reads the whole table once: DuckDB lets no writer in
        while it is open, and an ask reads five keys)."""
        if self.read_only:
            if self._meta is None and self.snapshot is not None:
                self._meta = self.snapshot.meta
            if self._meta is None:
                self._meta = self.meta_table()
            raw = self._meta.get(key)
            return json.loads(raw) if raw is not None else default
        row = self.con.execute("SELECT value FROM meta WHERE key = ?", [key]).fetchone()
        return json.loads(row[0]) if row else default

    def meta_table(self) -> dict[str, str]:
        """The whole meta table, key -> its stored JSON text."""
        return dict(self.con.execute("SELECT key, value FROM meta").fetchall())

    def set_meta(self, key: str, value: Any) -> None:
        """Store a JSON value in the meta table (inside the caller's transaction, if any)."""
        self.con.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", [key, json.dumps(value, sort_keys=True)])

    def version(self, key: str) -> int:
        """A change counter ("vectors", "memories"); derived indexes record the version they were built from."""
        return int(self.get_meta(f"{key}_version", 0))

    def bump(self, key: str) -> None:
        """Mark the vectors or memories as changed (inside the writing transaction)."""
        self.set_meta(f"{key}_version", self.version(key) + 1)

    # --- writing ----------------------------------------------------------------------------
    @contextmanager
    def transaction(self) -> Iterator[None]:
        """All-or-nothing: an exception (or a kill) leaves the store as it was before the block."""
        self.con.execute("BEGIN TRANSACTION")
        try:
            yield
        except BaseException:
            self._rollback()
            raise
        self.con.execute("COMMIT")  # a commit that fails (a full disk) has ended the transaction: nothing to roll back
        protect(self.path)  # the WAL DuckDB just wrote holds turn text too

    def _rollback(self) -> None:
        """Roll back after a failure; a rollback that fails too (DuckDB already ended the transaction, or a full disk
        invalidated the database) must not hide the failure that is on its way."""
        try:
            self.con.execute("ROLLBACK")
        except Exception as exc:
            log.debug("rollback after a failure: %s", exc)

    @property
    def encoder_dim(self) -> int:
        """Width of the stored vectors (the encoder's, recorded at first ingest; MiniLM's 384 before that)."""
        return int(self.get_meta("encoder_dim", DEFAULT_DIM))

    def next_id(self, table: str, column: str) -> int:
        """The next never-used integer id of a table (one writer at a time, so no race).

        Forgotten ids are not handed out again: a client holding an old id must not reach a new memory.
        """
        row = self.con.execute(f"SELECT coalesce(max({column}), 0) + 1 FROM {table}").fetchone()
        return max(int(row[0]) if row else 1, int(self.get_meta(f"{table}_high_water", 0)) + 1)

    def keep_high_water(self, table: str, column: str) -> None:
        """Remember the highest id ever used before rows are deleted (inside the deleting transaction)."""
        row = self.con.execute(f"SELECT max({column}) FROM {table}").fetchone()
        highest = max(int(row[0] or 0) if row else 0, int(self.get_meta(f"{table}_high_water", 0)))
        self.set_meta(f"{table}_high_water", highest)

    # --- derived indexes ---------------------------------------------------------------------
    def vector_index(self, whole: bool = False) -> VectorIndex:
        """The hnswlib index, rebuilt from the vectors table when its count or version disagrees.

        A read-only store first searches the saved file in place (a one-shot ask reads a few pages of it, whatever
        the store's size); `whole` loads it into memory instead, for a process that will ask many questions."""
        from ripplecli.store.vectors import HnswIndex

        if self._vectors is None and self.read_only and not whole:
            self._vectors = self._mapped_vector_index()
        if self._vectors is None or (whole and not isinstance(self._vectors, HnswIndex)):
            dim = self.encoder_dim
            try:
                index, damaged = HnswIndex.open(self.path / VECTOR_FILE, dim), False
            except DamagedFile as damage:
                self._damaged(damage)
                index, damaged = HnswIndex(self.path / VECTOR_FILE, dim), True
            count = self.count("vectors")
            saved = index.meta or {}
            if not self._vectors_saved(saved, count) and (count or saved or damaged):
                if not damaged:
                    log.warning("vector index is stale (%s); rebuilding it from %d stored vectors", saved, count)
                self._fill_from_table(index)
            self._vectors = index
        return self._vectors

    def _mapped_vector_index(self) -> VectorIndex | None:
        """The saved index searched in place, when it is current; else None."""
        from ripplecli.store.vectors import MappedIndex

        try:
            mapped = MappedIndex.open(self.path / VECTOR_FILE, self.encoder_dim)
        except DamagedFile as damage:  # the index file, or only the mapped search's sidecar: loaded whole instead
            self._damaged(damage)
            return None
        if mapped is None or not self._vectors_saved(mapped.meta, self.count("vectors")):
            return None
        return mapped

    def _vectors_saved(self, saved: dict | None, count: int) -> bool:
        """Whether a saved vector index (its sidecar's count and version) holds what the vectors table holds now."""
        saved = saved or {}
        return (saved.get("count"), saved.get("version")) == (count, self.version("vectors"))

    def rebuild_vector_index(self) -> None:
        """Rebuild the hnswlib indexes from the vectors and passages tables and save them: no deleted slot (or its
        bytes) survives."""
        from ripplecli.store.vectors import HnswIndex

        self._vectors = HnswIndex(self.path / VECTOR_FILE, self.encoder_dim)
        self._fill_from_table(self._vectors)
        self._passages = HnswIndex(self.path / PASSAGE_FILE, self.encoder_dim)
        self._fill_passages(self._passages)

    def passage_index(self) -> HnswIndex:
        """The long memories' passage vectors (store/passages.py), rebuilt from the passages table when the saved
        file's count or vectors version disagrees (the passages are written with the vectors, in one transaction)."""
        from ripplecli.store.vectors import HnswIndex

        if self._passages is None:
            path, dim = self.path / PASSAGE_FILE, self.encoder_dim
            try:
                index = HnswIndex.open(path, dim)
            except DamagedFile as damage:
                self._damaged(damage)
                index = HnswIndex(path, dim)
            count = self.count("passages")
            if not self._vectors_saved(index.meta, count) and (count or index.meta):
                self._fill_passages(index)
            self._passages = index
        return self._passages

    def _fill_passages(self, index: HnswIndex) -> None:
        """Rebuild the passage index from its table, and save it when the store is writable."""
        from ripplecli.store import passages

        index.rebuild(*passages.all_vectors(self.con, self.encoder_dim))
        if not self.read_only:
            index.save(self.version("vectors"))

    def _fill_from_table(self, index: VectorIndex) -> None:
        """Rebuild `index` from the vectors table, the source of truth, and save it when the store is writable."""
        index.rebuild(*self.all_vectors())
        if not self.read_only:
            index.save(self.version("vectors"))

    def save_vector_index(self) -> None:
        """Persist the in-memory vector index after a commit (atomic: temp file + rename)."""
        if self._vectors is not None:
            self._vectors.save(self.version("vectors"))
        if self._passages is not None or self.count("passages"):
            self.passage_index().save(self.version("vectors"))

    def drop_vector_index(self) -> None:
        """Forget the in-memory indexes (after a rollback) so they are reloaded from disk."""
        self._vectors = None
        self._passages = None

    def lexical_index(self) -> LexicalIndex:
        """The BM25 index over restatements, rebuilt when the store changed since it was built."""
        if self._lexical is None:
            from ripplecli.store.lexical import Bm25Index

            try:
                index, version = Bm25Index.load(self.path / LEXICAL_DIR)
            except DamagedFile as damage:
                self._damaged(damage)
                index, version = None, None
            unsealed = index is not None and not index.sealed and not self.read_only  # a writer seals older files
            if index is None or version != self.version("memories") or unsealed:
                index = Bm25Index.from_rows(self._restatements())
                if not self.read_only:
                    index.save(self.path / LEXICAL_DIR, self.version("memories"))
            self._lexical = index
        return self._lexical

    def _restatements(self, window: int = 4096) -> Iterator[tuple[int, str]]:
        """Every memory's (id, restatement) in id order, a window of ids at a time: one query over the table sorts
        and holds all its text (measured: +64 MB against +33 MB for a 20,000-message archive's 3.1M words)."""
        row = self.con.execute("SELECT min(memory_id), max(memory_id) FROM memories").fetchone()
        first, last = row if row and row[0] is not None else (0, -1)
        for start in range(first, last + 1, window):
            yield from self.con.execute(
                "SELECT memory_id, restatement FROM memories WHERE memory_id >= ? AND memory_id < ? ORDER BY memory_id",
                [start, start + window],
            ).fetchall()

    def recall_arrays(self) -> RecallArrays | None:
        """Recall's keyed reads saved as arrays, when they hold the committed memories; else None (read by SQL)."""
        from ripplecli.store.recall_arrays import RecallArrays

        if self.snapshot is not None:
            return self.snapshot.arrays
        try:
            return RecallArrays.open(self.path / RECALL_DIR, self.version("memories"))
        except DamagedFile as damage:
            self._damaged(damage)
            return None

    def save_recall_arrays(self) -> None:
        """Write recall's arrays from the committed tables (a writer's close, a forget's rewrite, a repair)."""
        from ripplecli.store.recall_arrays import build

        build(self, self.path / RECALL_DIR)

    def refresh_lexical_index(self) -> None:
        """Rebuild and save the lexical index now (end of an ingest), so asks find it fresh."""
        self._lexical = None
        self.lexical_index()

    # --- reading ----------------------------------------------------------------------------
    def count(self, table: str) -> int:
        """Row count of a table."""
        if self.snapshot is not None and table in self.snapshot.counts:
            return self.snapshot.counts[table]
        row = self.con.execute(f"SELECT count(*) FROM {table}").fetchone()
        return int(row[0]) if row else 0

    def people(self) -> tuple[list[str], dict[str, str], str | None]:
        """Every speaker of every stored chat (as written), conversation -> its export's title, and the name the
        store owner's turns are stored under (None when no export marked one)."""
        if self.snapshot is not None:
            return self.snapshot.speakers, self.snapshot.titles, self.snapshot.owner
        speakers = [r[0] for r in self.con.execute("SELECT DISTINCT unnest(speakers) FROM conversations").fetchall()]
        titles = self.con.execute("SELECT conversation_id, title FROM conversations WHERE title IS NOT NULL").fetchall()
        owner = self.con.execute(  # the speaker most turns marked as the owner's carry (it may have been renamed)
            "SELECT speaker FROM sources WHERE role = 'owner' GROUP BY speaker ORDER BY count(*) DESC, speaker LIMIT 1"
        ).fetchone()
        return speakers, dict(titles), owner[0] if owner else None

    def all_vectors(self) -> tuple[list[int], Any]:
        """Every stored vector, the source of truth the ANN index is rebuilt from."""
        import numpy as np

        rows = self.con.execute("SELECT memory_id, vector FROM vectors ORDER BY memory_id").fetchall()
        dim = self.encoder_dim
        matrix = np.array([r[1] for r in rows], dtype=np.float32).reshape(len(rows), dim)
        return [r[0] for r in rows], matrix
