"""Take a store elsewhere: one JSONL document out (stable order), and back into an empty store."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime
from typing import Any

import numpy as np

from ripplecli.errors import InputError, StoreError
from ripplecli.files import escape_c1
from ripplecli.store import schema
from ripplecli.store.browse import MEMORY_COLUMNS
from ripplecli.store.db import Store
from ripplecli.store.schema import CUE_TABLES
from ripplecli.store.writes import insert_columns
from ripplecli.wording import counted

FORMAT = "ripple-export"
FORMAT_VERSION = 1
Encode = Callable[[list[str]], np.ndarray]

# kind -> (table, columns, ORDER BY); memories and vectors are assembled separately.
TABLES: dict[str, tuple[str, tuple[str, ...], str]] = {
    "conversation": ("conversations", ("conversation_id", "speakers", "title"), "conversation_id"),
    "run": (
        "ingest_runs",
        (
            "run_id",
            "file",
            "file_hash",
            "started",
            "seconds",
            "new_sources",
            "duplicates",
            "memories",
            "edges",
            "failures",
            "status",
        ),
        "run_id",
    ),
    "source": (
        "sources",
        (
            "source_id",
            "conversation_id",
            "session_id",
            "turn_id",
            "position",
            "speaker",
            "text",
            "session_ts",
            "content_hash",
            "run_id",
            "said_at",
            "role",
            "said_offset",
        ),
        "source_id",
    ),
    "memory": (
        "memories",
        (*MEMORY_COLUMNS, "said_offset"),
        "memory_id",
    ),
    "cue_form": ("cue_forms", ("form", "cue"), "form, cue"),
    "edge": ("edges", ("src", "dst", "channel", "weight", "info"), "src, dst, channel, weight, info"),
    "failure": ("failures", ("run_id", "stage", "location", "error", "raw_output"), "ALL"),
}
TIMESTAMPS = {"started", "session_ts", "time_start", "time_end", "created", "said_at"}
SAID_AT_SINCE = 3  # exports of older schemas have no said-at times, titles or roles: filled as a migration does


def record_line(record: dict[str, Any]) -> str:
    """One JSONL line: sorted keys, no spaces, UTF-8 kept, so equal stores give equal bytes (DEL and C1 controls
    escaped as well, so an export printed on a terminal cannot drive it)."""
    line = json.dumps(record, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=_iso)
    return escape_c1(line) + "\n"


def _iso(value: Any) -> str:
    """Datetimes as ISO 8601."""
    if isinstance(value, datetime):
        return value.isoformat()
    raise TypeError(f"cannot export {type(value).__name__}")


Rows = Callable[[str, tuple[str, ...], str], list[tuple[Any, ...]]]  # (table, columns, ORDER BY) -> rows


def export_lines(store: Store, with_vectors: bool = False) -> Iterator[str]:
    """The whole store as JSONL: meta first, then every table in a fixed order, vectors last when asked."""
    meta = dict(sorted((k, json.loads(v)) for k, v in store.con.execute("SELECT key, value FROM meta").fetchall()))
    counts = {kind: store.count(table) for kind, (table, _, _) in TABLES.items()}
    counts["vector"] = store.count("vectors") if with_vectors else 0
    yield record_line(header(meta, store.schema_version(), counts))
    for record in records(_sql_rows(store), with_vectors):
        yield record_line(record)


def header(meta: dict[str, Any], schema_version: int, counts: dict[str, int]) -> dict[str, Any]:
    """An export's first line: what it is, the store's meta and how many records of each kind follow."""
    return {
        "kind": "meta",
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "schema_version": schema_version,
        "meta": meta,
        "counts": counts,
    }


def _sql_rows(store: Store) -> Rows:
    """Rows of a table straight from the database."""
    return lambda table, columns, order: store.con.execute(
        f"SELECT {', '.join(columns)} FROM {table} ORDER BY {order}"
    ).fetchall()


def records(rows: Rows, with_vectors: bool) -> Iterator[dict[str, Any]]:
    """Every record of an export after its meta line, from the rows `rows` gives (every row, or what a damaged file
    still gives): each memory with its cues and source ids."""
    cues = {
        key: _grouped(rows(table, ("memory_id", column), f"memory_id, {column}"))
        for key, (table, column) in CUE_TABLES.items()
    }
    provenance = _grouped(rows("provenance", ("memory_id", "source_id"), "memory_id, source_id"))
    for kind, (table, columns, order) in TABLES.items():
        for row in rows(table, columns, order):
            record = {"kind": kind, **dict(zip(columns, row, strict=True))}
            if kind == "memory":
                mid = record["memory_id"]
                record["cues"] = {key: cues[key].get(mid, []) for key in CUE_TABLES}
                record["sources"] = provenance.get(mid, [])
            yield record
    if with_vectors:
        for mid, vector in rows("vectors", ("memory_id", "vector"), "memory_id"):
            yield {"kind": "vector", "memory_id": mid, "vector": [float(x) for x in vector]}


def _grouped(pairs: list[tuple[Any, ...]]) -> dict[int, list[Any]]:
    """(key, value) rows folded into key -> [values] in row order."""
    grouped: dict[int, list[Any]] = {}
    for key, value in pairs:
        grouped.setdefault(key, []).append(value)
    return grouped


# --- import ------------------------------------------------------------------------------------
def read_document(lines: Iterable[str], label: str) -> tuple[dict[str, Any], dict[str, list[dict[str, Any]]]]:
    """Parse and check an export: its meta line and its records grouped by kind."""
    records: dict[str, list[dict[str, Any]]] = {kind: [] for kind in [*TABLES, "vector"]}
    header: dict[str, Any] | None = None
    for number, text in enumerate(lines, start=1):
        if not text.strip():
            continue
        record = _parse(text, f"{label}:{number}")
        kind = record.get("kind")
        if number == 1:
            header = _check_header(record, label)
        elif kind in records:
            records[kind].append(record)
        else:
            raise InputError(f"{label}:{number}: unknown record kind {kind!r}")
    if header is None:
        raise InputError(f"{label}: empty file, not a ripple export")
    found = {kind: len(rows) for kind, rows in records.items()}
    expected = {kind: int(header.get("counts", {}).get(kind, 0)) for kind in records}
    if found != expected:
        wrong = ", ".join(f"{k} {found[k]}/{expected[k]}" for k in records if found[k] != expected[k])
        raise InputError(f"{label}: truncated or edited export (records found/expected: {wrong})")
    return header, records


def _parse(text: str, where: str) -> dict[str, Any]:
    """One JSON object per line."""
    try:
        record = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{where}: not JSON ({exc.msg})") from None
    except ValueError as exc:  # a number past Python's digit limit
        raise InputError(f"{where}: not JSON ({str(exc).splitlines()[0]})") from None
    except RecursionError:
        raise InputError(f"{where}: not JSON (nested too deeply)") from None
    if not isinstance(record, dict):
        raise InputError(f"{where}: expected a JSON object")
    return record


def _check_header(record: dict[str, Any], label: str) -> dict[str, Any]:
    """The first line must be this format's meta record, of a schema this ripple knows."""
    if record.get("kind") != "meta" or record.get("format") != FORMAT:
        raise InputError(f"{label}: not a ripple export (first line is not its meta record)")
    version = record.get("schema_version")
    known = isinstance(version, int) and 1 <= version <= schema.LATEST_VERSION
    if record.get("format_version") != FORMAT_VERSION or not known:
        raise InputError(
            f"{label}: export format {record.get('format_version')} / schema {record.get('schema_version')} "
            f"is not what this ripple reads ({FORMAT_VERSION} / schema up to {schema.LATEST_VERSION})"
        )
    return record


def ensure_empty(store: Store) -> None:
    """Import only into a new store: merging two histories would clash on ids."""
    held = {table: store.count(table) for table in ("memories", "sources", "conversations")}
    if any(held.values()) or store.get_meta("settings") is not None:
        raise StoreError(
            f"store {store.path} is not empty ({counted(held['memories'], 'memory')}, "
            f"{counted(held['sources'], 'source')}); "
            "import into a new store (--store NEW_FOLDER)"
        )


def import_records(store: Store, header: dict[str, Any], records: dict[str, list[dict]], encode: Encode) -> None:
    """Write every record in one transaction; vectors come from the file or are re-encoded."""
    ensure_empty(store)
    vectors = _vectors(records, encode)
    with store.transaction():
        for key, value in header["meta"].items():
            store.set_meta(key, value)
        for kind, (table, columns, _) in TABLES.items():
            rows = records[kind]
            insert_columns(store.con, table, {c: [_value(c, r.get(c)) for r in rows] for c in columns})
        memories = records["memory"]
        for key, (table, column) in CUE_TABLES.items():
            pairs = [(m["memory_id"], v) for m in memories for v in m.get("cues", {}).get(key, [])]
            insert_columns(store.con, table, {"memory_id": [p[0] for p in pairs], column: [p[1] for p in pairs]})
        links = [(m["memory_id"], s) for m in memories for s in m.get("sources", [])]
        provenance = {"memory_id": [m for m, _ in links], "source_id": [s for _, s in links]}
        insert_columns(store.con, "provenance", provenance)
        insert_columns(store.con, "vectors", {"memory_id": [m["memory_id"] for m in memories], "vector": vectors})
        if header["schema_version"] < SAID_AT_SINCE:
            store.con.execute(schema.SAID_AT_BACKFILL)
        schema.fill_message_keys(store.con)  # derived from the turns, so not in the export


def _vectors(records: dict[str, list[dict]], encode: Encode) -> list[list[float]]:
    """One vector per memory in memory order: from the file when exported, else encoded now."""
    memories = records["memory"]
    given = {v["memory_id"]: v["vector"] for v in records["vector"]}
    if given:
        missing = [m["memory_id"] for m in memories if m["memory_id"] not in given]
        if missing:
            raise InputError(f"export has vectors but none for memories {missing[:5]}")
        return [given[m["memory_id"]] for m in memories]
    if not memories:
        return []
    return [v.tolist() for v in encode([m["restatement"] for m in memories])]


def _value(column: str, value: Any) -> Any:
    """JSON values back to column types (timestamps)."""
    if column in TIMESTAMPS and isinstance(value, str):
        return datetime.fromisoformat(value)
    return value
