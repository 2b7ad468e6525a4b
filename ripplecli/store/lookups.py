"""Recall's keyed reads by SQL: a batch of memory ids or cues per query, so an ask reads what it needs."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from ripplecli.store import queries
from ripplecli.store.db import Store
from ripplecli.store.reads import CUE_COLUMNS, SourceRow
from ripplecli.store.schema import SAID_WALL_CLOCK


def _column(table: str) -> str:
    """The value column of a cue table (refuses any other table name)."""
    if table not in CUE_COLUMNS:
        raise ValueError(f"not a cue table: {table}")
    return CUE_COLUMNS[table]


class SqlReads:
    """The keyed reads as SQL on the open store (what `recall_arrays.RecallArrays` answers without SQL)."""

    def __init__(self, store: Store) -> None:
        self.store = store

    @property
    def count(self) -> int:
        """Number of memories."""
        return self.store.count("memories")

    def sources_of(self, ids: Sequence[int]) -> list[SourceRow]:
        """The memories' source turns in chat order (queries.memory_sources)."""
        return queries.memory_sources(self.store, list(ids))

    def previous_turns_of(self, ids: Sequence[int]) -> list[tuple[int, str, str, str, str]]:
        """The turn before each source turn of the memories (queries.previous_turns)."""
        return queries.previous_turns(self.store, list(ids))

    def memory_rows_of(self, ids: Sequence[int]) -> tuple[dict[int, str], dict[int, tuple[str, datetime | None]]]:
        """memory id -> restatement, and memory id -> (conversation, said at), for the given ids, in one query."""
        rows = self.store.con.execute(
            "SELECT memory_id, restatement, conversation_id, said_at FROM memories "
            "WHERE memory_id IN (SELECT unnest($1::BIGINT[]))",
            [list(ids)],
        ).fetchall()
        return {mid: text for mid, text, _, _ in rows}, {
            mid: (conversation, said) for mid, _, conversation, said in rows
        }

    def restatements_of(self, ids: Sequence[int]) -> dict[int, str]:
        """memory id -> restatement, for the given ids."""
        rows = self.store.con.execute(
            "SELECT memory_id, restatement FROM memories WHERE memory_id IN (SELECT unnest($1::BIGINT[]))", [list(ids)]
        )
        return dict(rows.fetchall())

    # Keyed reads return flat rows grouped here: DuckDB's GROUP BY with a list() aggregate cost more than the lookup
    # itself (on a 100K-memory store 5.8 against 3.5 ms of CPU for 30 ids), and Python groups a few hundred rows in
    # microseconds.

    def cues_of(self, table: str, ids: Sequence[int]) -> dict[int, set[str]]:
        """memory id -> its values in one cue table (concepts, persons or places), for the given ids."""
        column = _column(table)
        rows = self.store.con.execute(
            f"SELECT memory_id, {column} FROM {table} WHERE memory_id IN (SELECT unnest($1::BIGINT[]))", [list(ids)]
        )
        found: dict[int, set[str]] = {}
        for mid, value in rows.fetchall():
            found.setdefault(mid, set()).add(value)
        return found

    def cue_sets_of(self, ids: Sequence[int]) -> dict[str, dict[int, set[str]]]:
        """cue table -> memory id -> its values there, for the given ids: all three cue tables in one query."""
        selects = " UNION ALL ".join(
            f"SELECT '{table}', memory_id, {column} FROM {table} WHERE memory_id IN (SELECT unnest($1::BIGINT[]))"
            for table, column in CUE_COLUMNS.items()
        )
        found: dict[str, dict[int, set[str]]] = {table: {} for table in CUE_COLUMNS}
        for table, mid, value in self.store.con.execute(selects, [list(ids)]).fetchall():
            found[table].setdefault(mid, set()).add(value)
        return found

    def holders_of(self, table: str, values: Sequence[str]) -> dict[str, list[int]]:
        """cue -> the memories holding it, by id, for the given cues of one cue table."""
        column = _column(table)
        rows = self.store.con.execute(
            f"SELECT {column}, memory_id FROM {table} WHERE {column} IN (SELECT unnest($1::VARCHAR[]))", [list(values)]
        )
        found: dict[str, list[int]] = {}
        for value, mid in rows.fetchall():
            found.setdefault(value, []).append(mid)
        return {value: sorted(held) for value, held in found.items()}

    def holder_counts(self, values: Sequence[str]) -> dict[str, int]:
        """concept cue -> how many memories hold it, for the given cues."""
        rows = self.store.con.execute(
            "SELECT cue, count(*) FROM memory_cues WHERE cue IN (SELECT unnest($1::VARCHAR[])) GROUP BY cue",
            [list(values)],
        )
        return dict(rows.fetchall())

    def cue_values(self, table: str) -> list[str]:
        """Every distinct value of a cue table, in the order memories first name them (names and places: few)."""
        column = _column(table)
        rows = self.store.con.execute(
            f"SELECT {column} FROM {table} GROUP BY {column} ORDER BY min(memory_id), min(rowid)"
        )
        return [r[0] for r in rows.fetchall()]

    def forms_of(self, forms: Sequence[str]) -> dict[str, str]:
        """Surface form -> the cue it stands for, for the given forms only."""
        rows = self.store.con.execute(
            "SELECT form, min(cue) FROM cue_forms WHERE form IN (SELECT unnest($1::VARCHAR[])) GROUP BY form",
            [list(forms)],
        )
        return dict(rows.fetchall())

    def contiguity_of(self, ids: Sequence[int]) -> dict[int, set[int]]:
        """memory id -> the memories contiguous with it (either direction), for the given ids."""
        wanted = list(ids)
        rows = self.store.con.execute(  # two keyed halves: one OR of both cost a third more
            "SELECT src, dst FROM edges WHERE channel = 'contiguity' AND src IN (SELECT unnest($1::BIGINT[])) "
            "UNION ALL "
            "SELECT src, dst FROM edges WHERE channel = 'contiguity' AND dst IN (SELECT unnest($1::BIGINT[]))",
            [wanted],
        ).fetchall()
        rows.sort()  # each set filled in (src, dst) order, as before: an int set's order can follow its insertions
        asked = set(wanted)
        found: dict[int, set[int]] = {}
        for src, dst in rows:
            if src in asked:
                found.setdefault(src, set()).add(dst)
            if dst in asked:
                found.setdefault(dst, set()).add(src)
        return found

    def first_speakers_of(self, ids: Sequence[int]) -> dict[int, str]:
        """memory id -> the speaker of its first source turn, for the given ids."""
        rows = self.store.con.execute(
            "SELECT p.memory_id, arg_min(s.speaker, s.position) FROM provenance p JOIN sources s USING (source_id) "
            "WHERE p.memory_id IN (SELECT unnest($1::BIGINT[])) GROUP BY p.memory_id",
            [list(ids)],
        )
        return dict(rows.fetchall())

    def grounded_within(self, start: datetime, end: datetime) -> list[int]:
        """Memories whose text names a time overlapping [start, end], by id."""
        rows = self.store.con.execute(
            "SELECT memory_id FROM memories WHERE time_grounded AND time_start IS NOT NULL "
            "AND time_start <= $2 AND time_end >= $1 ORDER BY memory_id",
            [start, end],
        )
        return [r[0] for r in rows.fetchall()]

    def said_within(self, start: datetime, end: datetime) -> list[int]:
        """Memories said within [start, end] on the clock where they were said, by id."""
        rows = self.store.con.execute(
            f"SELECT memory_id FROM memories WHERE {SAID_WALL_CLOCK} BETWEEN $1 AND $2 ORDER BY memory_id", [start, end]
        )
        return [r[0] for r in rows.fetchall()]

    def placed_of(self, ids: Sequence[int]) -> dict[int, tuple[str, datetime | None]]:
        """memory id -> (conversation, said at), for the given ids."""
        rows = self.store.con.execute(
            "SELECT memory_id, conversation_id, said_at FROM memories WHERE memory_id IN (SELECT unnest($1::BIGINT[]))",
            [list(ids)],
        )
        return {mid: (conversation, said) for mid, conversation, said in rows.fetchall()}

    def said_offsets_of(self, ids: Sequence[int]) -> dict[int, int]:
        """memory id -> the UTC offset (seconds) where it was said, for those of the given ids said with a zone."""
        rows = self.store.con.execute(
            "SELECT memory_id, said_offset FROM memories WHERE said_offset IS NOT NULL "
            "AND memory_id IN (SELECT unnest($1::BIGINT[]))",
            [list(ids)],
        )
        return dict(rows.fetchall())

    def grounded_of(self, ids: Sequence[int]) -> dict[int, tuple[datetime, datetime]]:
        """memory id -> (start, end) of the time its text names, for those of the given ids that name one."""
        rows = self.store.con.execute(
            "SELECT memory_id, time_start, time_end FROM memories WHERE time_grounded AND time_start IS NOT NULL "
            "AND memory_id IN (SELECT unnest($1::BIGINT[]))",
            [list(ids)],
        )
        return {mid: (start, end) for mid, start, end in rows.fetchall()}
