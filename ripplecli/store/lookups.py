"""Keyed reads for recall: a batch of memory ids or cues per query, so an ask reads what it needs, not the store."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from ripplecli.store.db import Store

CUE_COLUMNS = {"memory_cues": "cue", "memory_persons": "person", "memory_locations": "location"}


def _column(table: str) -> str:
    """The value column of a cue table (refuses any other table name)."""
    if table not in CUE_COLUMNS:
        raise ValueError(f"not a cue table: {table}")
    return CUE_COLUMNS[table]


def restatements_of(store: Store, ids: Sequence[int]) -> dict[int, str]:
    """memory id -> restatement, for the given ids."""
    rows = store.con.execute(
        "SELECT memory_id, restatement FROM memories WHERE memory_id IN (SELECT unnest($1::BIGINT[]))", [list(ids)]
    )
    return dict(rows.fetchall())


def cues_of(store: Store, table: str, ids: Sequence[int]) -> dict[int, set[str]]:
    """memory id -> its values in one cue table (concepts, persons or places), for the given ids."""
    column = _column(table)
    rows = store.con.execute(
        f"SELECT memory_id, list({column}) FROM {table} WHERE memory_id IN (SELECT unnest($1::BIGINT[])) "
        "GROUP BY memory_id",
        [list(ids)],
    )
    return {mid: set(values) for mid, values in rows.fetchall()}


def holders_of(store: Store, table: str, values: Sequence[str]) -> dict[str, list[int]]:
    """cue -> the memories holding it, by id, for the given cues of one cue table."""
    column = _column(table)
    rows = store.con.execute(
        f"SELECT {column}, list(memory_id ORDER BY memory_id) FROM {table} "
        f"WHERE {column} IN (SELECT unnest($1::VARCHAR[])) GROUP BY {column}",
        [list(values)],
    )
    return dict(rows.fetchall())


def holder_counts(store: Store, values: Sequence[str]) -> dict[str, int]:
    """concept cue -> how many memories hold it, for the given cues."""
    rows = store.con.execute(
        "SELECT cue, count(*) FROM memory_cues WHERE cue IN (SELECT unnest($1::VARCHAR[])) GROUP BY cue",
        [list(values)],
    )
    return dict(rows.fetchall())


def cue_values(store: Store, table: str) -> list[str]:
    """Every distinct value of a cue table, in the order memories first name them (names and places: few)."""
    column = _column(table)
    rows = store.con.execute(f"SELECT {column} FROM {table} GROUP BY {column} ORDER BY min(memory_id), min(rowid)")
    return [r[0] for r in rows.fetchall()]


def forms_of(store: Store, forms: Sequence[str]) -> dict[str, str]:
    """Surface form -> the cue it stands for, for the given forms only."""
    rows = store.con.execute(
        "SELECT form, min(cue) FROM cue_forms WHERE form IN (SELECT unnest($1::VARCHAR[])) GROUP BY form",
        [list(forms)],
    )
    return dict(rows.fetchall())


def contiguity_of(store: Store, ids: Sequence[int]) -> dict[int, set[int]]:
    """memory id -> the memories contiguous with it (either direction), for the given ids."""
    wanted = list(ids)
    rows = store.con.execute(
        "SELECT src, dst FROM edges WHERE channel = 'contiguity' AND (src IN (SELECT unnest($1::BIGINT[])) "
        "OR dst IN (SELECT unnest($1::BIGINT[]))) ORDER BY src, dst",
        [wanted],
    ).fetchall()
    asked = set(wanted)
    found: dict[int, set[int]] = {}
    for src, dst in rows:
        if src in asked:
            found.setdefault(src, set()).add(dst)
        if dst in asked:
            found.setdefault(dst, set()).add(src)
    return found


def first_speakers_of(store: Store, ids: Sequence[int]) -> dict[int, str]:
    """memory id -> the speaker of its first source turn, for the given ids."""
    rows = store.con.execute(
        "SELECT p.memory_id, arg_min(s.speaker, s.position) FROM provenance p JOIN sources s USING (source_id) "
        "WHERE p.memory_id IN (SELECT unnest($1::BIGINT[])) GROUP BY p.memory_id",
        [list(ids)],
    )
    return dict(rows.fetchall())


def grounded_within(store: Store, start: datetime, end: datetime) -> list[int]:
    """Memories whose text names a time overlapping [start, end], by id."""
    rows = store.con.execute(
        "SELECT memory_id FROM memories WHERE time_grounded AND time_start IS NOT NULL "
        "AND time_start <= $2 AND time_end >= $1 ORDER BY memory_id",
        [start, end],
    )
    return [r[0] for r in rows.fetchall()]


def said_within(store: Store, start: datetime, end: datetime) -> list[int]:
    """Memories said within [start, end], by id."""
    rows = store.con.execute(
        "SELECT memory_id FROM memories WHERE said_at BETWEEN $1 AND $2 ORDER BY memory_id", [start, end]
    )
    return [r[0] for r in rows.fetchall()]


def placed_of(store: Store, ids: Sequence[int]) -> dict[int, tuple[str, datetime | None]]:
    """memory id -> (conversation, said at), for the given ids."""
    rows = store.con.execute(
        "SELECT memory_id, conversation_id, said_at FROM memories WHERE memory_id IN (SELECT unnest($1::BIGINT[]))",
        [list(ids)],
    )
    return {mid: (conversation, said) for mid, conversation, said in rows.fetchall()}


def grounded_of(store: Store, ids: Sequence[int]) -> dict[int, tuple[datetime, datetime]]:
    """memory id -> (start, end) of the time its text names, for those of the given ids that name one."""
    rows = store.con.execute(
        "SELECT memory_id, time_start, time_end FROM memories WHERE time_grounded AND time_start IS NOT NULL "
        "AND memory_id IN (SELECT unnest($1::BIGINT[]))",
        [list(ids)],
    )
    return {mid: (start, end) for mid, start, end in rows.fetchall()}
