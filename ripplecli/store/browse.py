"""Read what the store holds: list memories by person, session or date, search them, show one in full."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ripplecli.cues import canonical_name
from ripplecli.errors import InputError
from ripplecli.inputs import naive_utc
from ripplecli.model import offset_of, shown_time
from ripplecli.protocols import Encoder
from ripplecli.store.db import Store
from ripplecli.store.schema import CUE_TABLES, SAID_WALL_CLOCK

MEMORY_COLUMNS = (
    "memory_id",
    "conversation_id",
    "session_id",
    "position",
    "restatement",
    "persons",
    "locations",
    "time_start",
    "time_end",
    "time_grounded",
    "session_ts",
    "extractor",
    "created",
    "run_id",
    "said_at",
)
# What a memory shows: when it was said, and the time its text refers to only when the text says when (the
# session-day interval stored for other memories feeds the graph, not the reader).
SEARCH_DEPTH = 50
FUSION_K = 60.0


@dataclass
class MemoryFilter:
    """Which memories to select; every given field narrows the selection (AND)."""

    ids: tuple[int, ...] = ()
    conversation: str | None = None
    session: str | None = None
    person: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    before: datetime | None = None

    @property
    def empty(self) -> bool:
        """True when nothing narrows the selection (every memory)."""
        return not self.ids and all(
            value is None
            for value in (self.conversation, self.session, self.person, self.since, self.until, self.before)
        )

    def where(self) -> tuple[str, list[Any]]:
        """A SQL condition on the memories table and its parameters."""
        clauses: list[str] = []
        params: list[Any] = []
        conditions: list[tuple[Any, str]] = [
            (list(self.ids) or None, "memory_id IN (SELECT unnest(?::BIGINT[]))"),
            (self.conversation, "conversation_id = ?"),
            (self.session, "session_id = ?"),
            (
                canonical_name(self.person) if self.person else None,
                "memory_id IN (SELECT memory_id FROM memory_persons WHERE person = ?)",
            ),
            *_said(self.since, ">="),
            *_said(self.until, "<="),
            *_said(self.before, "<"),
        ]
        for value, clause in conditions:
            if value is not None:
                clauses.append(clause)
                params.append(value)
        return (" AND ".join(clauses) or "TRUE"), params


def _said(bound: datetime | None, compare: str) -> list[tuple[Any, str]]:
    """A condition on when memories were said: a date or time without a zone is read on the clock where each was
    said (the day as its speakers lived it); one with a zone is an instant, compared in UTC."""
    if bound is None:
        return []
    if bound.tzinfo is not None:
        return [(naive_utc(bound), f"said_at {compare} ?")]
    return [(bound, f"{SAID_WALL_CLOCK} {compare} ?")]


def selected_ids(store: Store, selection: MemoryFilter) -> list[int]:
    """Memory ids matching a filter, in id order."""
    where, params = selection.where()
    rows = store.con.execute(f"SELECT memory_id FROM memories WHERE {where} ORDER BY memory_id", params).fetchall()
    return [r[0] for r in rows]


def list_memories(store: Store, selection: MemoryFilter, limit: int | None = None) -> list[dict[str, Any]]:
    """Memories matching the filter, oldest id first, as plain dicts."""
    where, params = selection.where()
    columns = ", ".join(f"m.{c}" for c in MEMORY_COLUMNS)
    sql = (
        f"SELECT {columns}, c.title, m.said_offset FROM memories m LEFT JOIN conversations c USING (conversation_id) "
        f"WHERE m.memory_id IN (SELECT memory_id FROM memories WHERE {where}) ORDER BY m.memory_id"
    )
    if limit is not None:
        sql += f" LIMIT {int(limit)}"
    return [_memory_dict(row) for row in store.con.execute(sql, params).fetchall()]


def search_memories(store: Store, encoder: Callable[[], Encoder], text: str, k: int) -> list[dict[str, Any]]:
    """Lexical (BM25) and dense (hnswlib) hits fused by reciprocal rank, with each view's rank."""
    if not text.strip():
        raise InputError("the search text is empty")
    views = {"lexical": store.lexical_index().search(text, SEARCH_DEPTH)}
    if store.count("vectors"):
        vector = encoder().encode([text])[0]
        views["dense"] = store.vector_index().search(vector, SEARCH_DEPTH)
    fused: dict[int, float] = {}
    ranks: dict[int, dict[str, int]] = {}
    for view, hits in views.items():
        for rank, (mid, _score) in enumerate(hits, start=1):
            fused[mid] = fused.get(mid, 0.0) + 1.0 / (FUSION_K + rank)
            ranks.setdefault(mid, {})[view] = rank
    best = sorted(fused, key=lambda m: (-fused[m], m))[:k]
    found = {m["memory_id"]: m for m in list_memories(store, MemoryFilter(ids=tuple(best)))}
    return [{**found[mid], "score": round(fused[mid], 6), "views": ranks[mid]} for mid in best if mid in found]


def show_memory(store: Store, memory_id: int) -> dict[str, Any]:
    """One memory with its cues, source turns and edges in every channel."""
    found = list_memories(store, MemoryFilter(ids=(memory_id,)))
    if not found:
        raise InputError(f"no memory m{memory_id} in store {store.path}")
    (memory,) = found
    memory["cues"] = {
        key: [
            r[0]
            for r in store.con.execute(
                f"SELECT {column} FROM {table} WHERE memory_id = ? ORDER BY {column}", [memory_id]
            ).fetchall()
        ]
        for key, (table, column) in CUE_TABLES.items()
    }
    memory["sources"] = memory_sources(store, memory_id)
    memory["edges"] = memory_edges(store, memory_id)
    return memory


def memory_sources(store: Store, memory_id: int) -> list[dict[str, Any]]:
    """The raw turns a memory was made from."""
    rows = store.con.execute(
        "SELECT s.source_id, s.conversation_id, s.session_id, s.turn_id, s.speaker, s.role, s.text, s.session_ts, "
        "s.said_at, s.said_offset FROM provenance p JOIN sources s USING (source_id) WHERE p.memory_id = ? "
        "ORDER BY s.source_id",
        [memory_id],
    ).fetchall()
    keys = ("source_id", "conversation_id", "session_id", "turn_id", "speaker", "role", "text", "timestamp", "said_at")
    return [_plain(_said_shown(dict(zip([*keys, "said_offset"], row, strict=True)))) for row in rows]


def memory_edges(store: Store, memory_id: int) -> dict[str, list[dict[str, Any]]]:
    """Edges touching a memory, per channel, strongest first, with the neighbour's restatement."""
    rows = store.con.execute(
        "SELECT e.channel, CASE WHEN e.src = ? THEN e.dst ELSE e.src END AS other, e.weight, m.restatement "
        "FROM edges e LEFT JOIN memories m ON m.memory_id = CASE WHEN e.src = ? THEN e.dst ELSE e.src END "
        "WHERE e.src = ? OR e.dst = ? ORDER BY e.channel, e.weight DESC, other",
        [memory_id] * 4,
    ).fetchall()
    channels: dict[str, list[dict[str, Any]]] = {}
    for channel, other, weight, text in rows:
        channels.setdefault(channel, []).append({"memory_id": other, "weight": weight, "restatement": text})
    return channels


def _memory_dict(row: tuple) -> dict[str, Any]:
    """A memories row (and its conversation's title) as a JSON-ready dict: `said_at` apart from `refers_to`."""
    record = _said_shown(dict(zip([*MEMORY_COLUMNS, "title", "said_offset"], row, strict=True)))
    start, end = record.pop("time_start"), record.pop("time_end")
    grounded = record.pop("time_grounded")
    refers = grounded and start is not None
    record["refers_to"] = _plain({"start": start, "end": end}) if refers else None
    return _plain(record)


def _said_shown(record: dict[str, Any]) -> dict[str, Any]:
    """`said_at` as ripple shows it, on the clock where it was said with its offset when known (the row's
    `said_offset` is folded into it)."""
    record["said_at"] = shown_time(record["said_at"], offset_of(record.pop("said_offset")))
    return record


def _plain(record: dict[str, Any]) -> dict[str, Any]:
    """Datetimes as ISO strings so the dict is JSON-ready and stable."""
    return {k: v.isoformat() if isinstance(v, datetime) else v for k, v in record.items()}
