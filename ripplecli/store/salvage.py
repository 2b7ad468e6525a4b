"""What a damaged database file still gives, as an export (`ripple export --salvage`): every row DuckDB can read.

DuckDB checks each block's checksum as it reads it, and a table's rows lie in many blocks (one per column segment
of each row group). So a table is read in ranges of row ids, which DuckDB narrows to the blocks that hold them: one
range per vector of 2048 rows, the unit DuckDB reads a column in (a range that meets a damaged block fails whole,
however narrow). The rows of a failing range are counted lost. Every readable row is written in `ripple export`'s
format and order, which `ripple import` reads into a new store; the header says what was lost.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ripplecli.errors import DamagedStoreError, known_failure
from ripplecli.store import schema
from ripplecli.store.portable import TABLES, header, record_line, records
from ripplecli.wording import counted

if TYPE_CHECKING:
    from _duckdb import DuckDBPyConnection

RANGE = 2048  # rows a query reads: DuckDB's vector size (ranges start at its multiples, as DuckDB's vectors do)


@dataclass
class Salvage:
    """The export's lines, and per table the rows read and the rows lost."""

    lines: list[str]
    read: dict[str, int]
    lost: dict[str, int]
    notes: list[str] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        """Whether every row could be read."""
        return not any(self.lost.values())

    def summary(self, target: str) -> str:
        """The line a salvage ends with: what was written where, what was lost, and what to do with it."""
        written = f"salvaged {counted(len(self.lines) - 1, 'record')} into {target}"
        if self.complete:
            return f"{written}; every row was readable"
        lost = ", ".join(counted(n, "row") + f" of {table}" for table, n in sorted(self.lost.items()) if n)
        notes = "".join(f"; {note}" for note in self.notes)
        return f"{written}; lost (in damaged blocks): {lost}{notes}; `ripple import` makes a new store of it"


class DamagedTables:
    """Rows of a damaged database's tables, each read once, in whatever ranges can still be read."""

    def __init__(self, con: DuckDBPyConnection) -> None:
        self.con = con
        self.read: dict[str, int] = {}
        self.lost: dict[str, int] = {}
        self._rows: dict[str, list[tuple[Any, ...]]] = {}

    def rows(self, table: str, columns: tuple[str, ...], order: str) -> list[tuple[Any, ...]]:
        """The readable rows of a table, as `columns` (None for a column an older schema lacks), in row-id order."""
        known = self._columns(table)
        present = [c for c in columns if c in known]
        key = f"{table}:{','.join(present)}"
        if key not in self._rows:
            found = self._readable(table, present)
            self._rows[key] = found
            self.read[table] = max(self.read.get(table, 0), len(found))
            total = self._count(table)
            self.lost[table] = max(self.lost.get(table, 0), total - len(found) if total is not None else 0)
        at = {c: i for i, c in enumerate(present)}
        rows = [tuple(row[at[c]] if c in at else None for c in columns) for row in self._rows[key]]
        keys = [columns.index(c) for c in _order_columns(order, columns)]
        return sorted(rows, key=lambda row: tuple((row[i] is None, row[i]) for i in keys))

    def _columns(self, table: str) -> set[str]:
        """The table's columns, from the catalog (read when the file was opened)."""
        sql = "SELECT column_name FROM duckdb_columns() WHERE database_name = current_database() AND table_name = ?"
        return {r[0] for r in self.con.execute(sql, [table]).fetchall()}

    def _count(self, table: str) -> int | None:
        """The table's row count, from its metadata (None when even that cannot be read)."""
        try:
            row = self.con.execute(f"SELECT count(*) FROM {table}").fetchone()
        except Exception as exc:
            _damage_only(exc)
            return None
        return int(row[0]) if row else 0

    def _readable(self, table: str, columns: list[str]) -> list[tuple[Any, ...]]:
        """Every row that can be read, range by range."""
        if not columns:
            return []
        try:
            row = self.con.execute(f"SELECT max(rowid) FROM {table}").fetchone()
        except Exception as exc:
            _damage_only(exc)
            return []
        end = int(row[0]) + 1 if row and row[0] is not None else 0
        found: list[tuple[Any, ...]] = []
        for start in range(0, end, RANGE):
            found += self._range(table, columns, start, min(start + RANGE, end))
        return found

    def _range(self, table: str, columns: list[str], start: int, end: int) -> list[tuple[Any, ...]]:
        """The rows of [start, end), or none when they meet a damaged block (DuckDB reads a column a vector of
        2048 rows at a time, so no narrower range could be read around it)."""
        return self._try(table, columns, start, end) or []

    def _try(self, table: str, columns: list[str], start: int, end: int) -> list[tuple[Any, ...]] | None:
        """The rows with row ids in [start, end), or None when their blocks cannot be read."""
        sql = f"SELECT {', '.join(columns)} FROM {table} WHERE rowid >= ? AND rowid < ? ORDER BY rowid"
        try:
            return self.con.execute(sql, [start, end]).fetchall()
        except Exception as exc:
            _damage_only(exc)
            return None


def _order_columns(order: str, columns: tuple[str, ...]) -> list[str]:
    """The columns an export's ORDER BY names (`ALL`: every column), so a salvage lists rows as an export does."""
    named = [part.strip() for part in order.split(",")]
    return list(columns) if named == ["ALL"] else [c for c in named if c in columns]


def _damage_only(exc: Exception) -> None:
    """Re-raise anything but a damaged block (a salvage reads around those only)."""
    if not isinstance(known_failure(exc), DamagedStoreError):
        raise exc


def salvage(con: DuckDBPyConnection, with_vectors: bool) -> Salvage:
    """Every readable row of the store's database as an export's lines, and what was read and lost."""
    tables = DamagedTables(con)
    found = list(records(tables.rows, with_vectors))
    notes = []
    if with_vectors:
        found, dropped = _whole_vectors(found)
        if dropped:
            notes.append(f"{dropped} salvaged memories have no readable vector: no vector written (import encodes)")
    meta = _meta(tables.rows("meta", ("key", "value"), "key"))
    counts = Counter(record["kind"] for record in found)
    document = header(meta, _schema_version(con), {kind: counts.get(kind, 0) for kind in [*TABLES, "vector"]})
    document["salvage"] = {"lost": {t: n for t, n in sorted(tables.lost.items()) if n}}
    lines = [record_line(document), *(record_line(record) for record in found)]
    return Salvage(lines, tables.read, tables.lost, notes)


def _whole_vectors(found: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
    """The records with vectors only when every salvaged memory has one (an import takes all or encodes all)."""
    vectors = {r["memory_id"] for r in found if r["kind"] == "vector"}
    memories = {r["memory_id"] for r in found if r["kind"] == "memory"}
    missing = len(memories - vectors)
    if missing:
        return [r for r in found if r["kind"] != "vector"], missing
    return [r for r in found if r["kind"] != "vector" or r["memory_id"] in memories], 0


def _meta(rows: list[tuple[Any, ...]]) -> dict[str, Any]:
    """The meta table's readable keys (a value that is no longer JSON is left out)."""
    meta = {}
    for key, value in rows:
        try:
            meta[key] = json.loads(value)
        except (TypeError, ValueError):
            continue
    return dict(sorted(meta.items()))


def _schema_version(con: DuckDBPyConnection) -> int:
    """The schema the rows were written under (this ripple's when its table cannot be read)."""
    try:
        return schema.read_version(con) or schema.LATEST_VERSION
    except Exception as exc:
        _damage_only(exc)
        return schema.LATEST_VERSION
