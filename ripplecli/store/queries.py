"""The read queries the rest of ripple asks the store, one named function per query shape (no SQL outside store/)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from ripplecli.store.db import Store
from ripplecli.store.schema import SAID_WALL_CLOCK

CUE_TABLES = ("memory_cues", "memory_persons", "memory_locations")
EdgeRow = tuple[int, int, float, str | None]


# --- memories ------------------------------------------------------------------------------------
def memory_ids(store: Store) -> list[int]:
    """Every memory id, in order."""
    return [int(r[0]) for r in store.con.execute("SELECT memory_id FROM memories ORDER BY memory_id").fetchall()]


def memory_ids_of_run(store: Store, run_id: int) -> list[int]:
    """The memories one ingest run wrote, in order."""
    rows = store.con.execute("SELECT memory_id FROM memories WHERE run_id = ? ORDER BY memory_id", [run_id])
    return [int(r[0]) for r in rows.fetchall()]


def placed_restatements(store: Store) -> list[tuple[int, str, str, datetime | None]]:
    """(memory id, restatement, conversation, said at) of every memory."""
    return store.con.execute("SELECT memory_id, restatement, conversation_id, said_at FROM memories").fetchall()


def zoned_said_times(store: Store) -> list[tuple[int, datetime]]:
    """(memory id, when it was said on the clock where it was said) of the memories said with a known zone."""
    return store.con.execute(
        f"SELECT memory_id, {SAID_WALL_CLOCK} FROM memories WHERE said_offset IS NOT NULL"
    ).fetchall()


def cue_pairs(store: Store, table: str) -> list[tuple[int, str]]:
    """(memory id, cue) of one cue table (concepts, persons or locations), by memory id."""
    if table not in CUE_TABLES:
        raise ValueError(f"not a cue table: {table}")
    return store.con.execute(f"SELECT * FROM {table} ORDER BY memory_id").fetchall()


def cue_forms(store: Store) -> dict[str, str]:
    """Surface form -> the cue it stands for (the query side's vocabulary)."""
    return dict(store.con.execute("SELECT form, min(cue) FROM cue_forms GROUP BY form").fetchall())


def grounded_times(store: Store) -> list[tuple[int, datetime, datetime]]:
    """(memory id, start, end) of memories whose text says when."""
    return store.con.execute(
        "SELECT memory_id, time_start, time_end FROM memories WHERE time_grounded AND time_start IS NOT NULL"
    ).fetchall()


def conversation_speakers(store: Store, conversation_id: str) -> list[str]:
    """The stored speaker list of one conversation (empty when it is new)."""
    rows = store.con.execute("SELECT speakers FROM conversations WHERE conversation_id = ?", [conversation_id])
    row = rows.fetchone()
    return list(row[0]) if row else []


def first_speakers(store: Store) -> list[tuple[int, str]]:
    """(memory id, speaker of its first source turn) for every memory."""
    return store.con.execute(
        "SELECT p.memory_id, arg_min(s.speaker, s.position) FROM provenance p "
        "JOIN sources s USING (source_id) GROUP BY p.memory_id"
    ).fetchall()


def memory_sources(
    store: Store, ids: list[int]
) -> list[tuple[int, str, str, str, str, datetime | None, datetime | None, int, int | None]]:
    """(memory id, turn id, session id, speaker, text, session time, said at, position, said offset) of the
    memories' source turns, in chat order."""
    return store.con.execute(
        "SELECT p.memory_id, s.turn_id, s.session_id, s.speaker, s.text, s.session_ts, s.said_at, s.position,"
        " s.said_offset FROM provenance p "
        "JOIN sources s USING (source_id) WHERE p.memory_id IN (SELECT unnest($1)) ORDER BY s.position",
        [ids],
    ).fetchall()


def previous_turns(store: Store, ids: list[int]) -> list[tuple[int, str, str, str, str]]:
    """(memory id, its turn's text, and turn id, speaker and text of the other speaker's turn just before it), for
    each source turn of the memories, last turn first."""
    return store.con.execute(
        "SELECT p.memory_id, s.text, prev.turn_id, prev.speaker, prev.text FROM provenance p "
        "JOIN sources s USING (source_id) JOIN sources prev ON prev.conversation_id = s.conversation_id "
        "AND prev.session_id = s.session_id AND prev.position = s.position - 1 AND prev.speaker <> s.speaker "
        "WHERE p.memory_id IN (SELECT unnest($1)) ORDER BY s.position DESC",
        [ids],
    ).fetchall()


def stored_persons(store: Store) -> list[str]:
    """Every person any memory names."""
    return [r[0] for r in store.con.execute("SELECT DISTINCT person FROM memory_persons").fetchall()]


# --- edges ---------------------------------------------------------------------------------------
def edge_pairs(store: Store, channel: str) -> list[tuple[int, int]]:
    """(src, dst) of one channel's edges."""
    return store.con.execute("SELECT src, dst FROM edges WHERE channel = ?", [channel]).fetchall()


def all_edges(store: Store) -> list[tuple[int, int, str]]:
    """(src, dst, channel) of every edge."""
    return store.con.execute("SELECT src, dst, channel FROM edges").fetchall()


def edges_touching(store: Store, nodes: set[int], channel: str) -> list[EdgeRow]:
    """(src, dst, weight, info) of the channel's edges with either end in `nodes`."""
    if not nodes:
        return []
    return store.con.execute(
        "SELECT src, dst, weight, info FROM edges WHERE channel = $2 AND "
        "(src IN (SELECT unnest($1)) OR dst IN (SELECT unnest($1)))",
        [sorted(nodes), channel],
    ).fetchall()


def degrees(store: Store, nodes: set[int]) -> list[tuple[str, int, int]]:
    """(channel, node, edge count) of the nodes, every channel."""
    return store.con.execute(
        "SELECT channel, node, count(*) FROM (SELECT channel, src AS node FROM edges UNION ALL "
        "SELECT channel, dst FROM edges) WHERE node IN (SELECT unnest($1)) GROUP BY channel, node",
        [sorted(nodes)],
    ).fetchall()


# --- the graph builder's candidates ----------------------------------------------------------------
HOLDER_TABLES = {"person": ("memory_persons", "person"), "location": ("memory_locations", "location")}


def recent_holders(store: Store, kind: str, values: list[str], per_value: int) -> list[tuple[str, int]]:
    """(value, memory id) of the most recent `per_value` memories holding each person or location."""
    table, column = HOLDER_TABLES[kind]
    return store.con.execute(
        f"SELECT {column}, memory_id FROM (SELECT {column}, memory_id, row_number() OVER "
        f"(PARTITION BY {column} ORDER BY memory_id DESC) AS r FROM {table} "
        f"WHERE {column} IN (SELECT unnest($1))) WHERE r <= {int(per_value)}",
        [values],
    ).fetchall()


def cue_rows(store: Store, ids: list[int]) -> list[tuple[Any, ...]]:
    """What structural scoring compares, per memory: conversation, session, position, persons, locations, time."""
    return store.con.execute(
        "SELECT memory_id, conversation_id, session_id, position, persons, locations, time_start, "
        "time_end, time_grounded FROM memories WHERE memory_id IN (SELECT unnest($1))",
        [ids],
    ).fetchall()


def person_location_counts(store: Store, cues: list[str]) -> list[tuple[str, int]]:
    """How many memories name each person or location."""
    return store.con.execute(
        "SELECT cue, count(*) FROM (SELECT person AS cue FROM memory_persons UNION ALL "
        "SELECT location FROM memory_locations) WHERE cue IN (SELECT unnest($1)) GROUP BY cue",
        [cues],
    ).fetchall()


def last_memory_before(store: Store, conversation: str, session: str, position: int) -> int | None:
    """The stored memory just before `position` in a session."""
    row = store.con.execute(
        "SELECT memory_id FROM memories WHERE conversation_id = ? AND session_id = ? AND position < ? "
        "ORDER BY position DESC, memory_id DESC LIMIT 1",
        [conversation, session, position],
    ).fetchone()
    return int(row[0]) if row else None


# --- ingest ----------------------------------------------------------------------------------------
def turn_hashes(store: Store, conversation_id: str) -> dict[str, str]:
    """turn id -> content hash of one conversation's stored turns."""
    rows = store.con.execute("SELECT turn_id, content_hash FROM sources WHERE conversation_id = ?", [conversation_id])
    return dict(rows.fetchall())




def message_holders(store: Store, keys: Sequence[int]) -> dict[int, set[str]]:
    """Of these message keys, those stored, each with the conversations that hold it: one probe for a whole file."""
    if not keys:
        return {}
    rows = store.con.execute(
        "SELECT DISTINCT message_key, conversation_id FROM sources WHERE message_key IN (SELECT unnest(?::BIGINT[]))",
        [list(keys)],
    )
    holders: dict[int, set[str]] = {}
    for key, conversation_id in rows.fetchall():
        holders.setdefault(int(key), set()).add(conversation_id)
    return holders


def turn_ids(store: Store, conversation_id: str) -> set[str]:
    """The turn ids one conversation already uses."""
    return set(turn_hashes(store, conversation_id))


def next_position(store: Store, conversation_id: str) -> int:
    """The position a new turn of the conversation takes."""
    row = store.con.execute(
        "SELECT coalesce(max(position), -1) FROM sources WHERE conversation_id = ?", [conversation_id]
    ).fetchone()
    return int(row[0]) + 1 if row else 0


# --- CABLE -----------------------------------------------------------------------------------------
def cable_pending(store: Store, variant: str) -> list[int]:
    """Memories a CABLE variant has not processed in their current run (a reused id counts as new)."""
    rows = store.con.execute(
        "SELECT m.memory_id FROM memories m LEFT JOIN cable_done d ON d.memory_id = m.memory_id "
        "AND d.variant = ? AND d.run_id = m.run_id WHERE d.memory_id IS NULL ORDER BY m.memory_id",
        [variant],
    ).fetchall()
    return [int(r[0]) for r in rows]


def memory_views(store: Store, ids: list[int]) -> list[tuple[Any, ...]]:
    """(id, conversation, first speaker, restatement, persons, session time, run) per memory, by id."""
    return store.con.execute(
        "SELECT m.memory_id, m.conversation_id, coalesce(s.speaker, ''), m.restatement, m.persons, m.session_ts, "
        "m.run_id FROM memories m LEFT JOIN (SELECT p.memory_id, arg_min(src.speaker, src.position) AS speaker "
        "FROM provenance p JOIN sources src USING (source_id) WHERE p.memory_id IN (SELECT unnest($1)) "
        "GROUP BY p.memory_id) s USING (memory_id) WHERE m.memory_id IN (SELECT unnest($1)) ORDER BY m.memory_id",
        [ids],
    ).fetchall()


def concept_cues_of(store: Store, ids: list[int]) -> list[tuple[int, str]]:
    """(memory id, concept cue) of these memories."""
    return store.con.execute(
        "SELECT memory_id, cue FROM memory_cues WHERE memory_id IN (SELECT unnest($1))", [ids]
    ).fetchall()


def concept_cue_counts(store: Store, cues: list[str]) -> list[tuple[str, int]]:
    """How many memories hold each concept cue."""
    return store.con.execute(
        "SELECT cue, count(*) FROM memory_cues WHERE cue IN (SELECT unnest($1)) GROUP BY cue", [cues]
    ).fetchall()


def word_counts(store: Store, words: list[str]) -> list[tuple[str, int]]:
    """How many restatements contain each word (as a lower-case substring)."""
    return store.con.execute(
        "SELECT w, (SELECT count(*) FROM memories WHERE contains(lower(restatement), w)) FROM unnest($1) AS t(w)",
        [words],
    ).fetchall()


# --- figures ---------------------------------------------------------------------------------------
def time_span(store: Store) -> tuple[datetime | None, datetime | None]:
    """The earliest start and latest end of the memories' times."""
    row = store.con.execute("SELECT min(time_start), max(time_end) FROM memories").fetchone()
    return (row[0], row[1]) if row else (None, None)


def distinct_cue_counts(store: Store) -> tuple[int, int, int]:
    """Distinct persons, locations and concept cues."""
    row = store.con.execute(
        "SELECT (SELECT count(DISTINCT person) FROM memory_persons), "
        "(SELECT count(DISTINCT location) FROM memory_locations), (SELECT count(DISTINCT cue) FROM memory_cues)"
    ).fetchone()
    return (int(row[0]), int(row[1]), int(row[2])) if row else (0, 0, 0)


def session_count(store: Store) -> int:
    """Distinct (conversation, session) pairs."""
    row = store.con.execute("SELECT count(DISTINCT (conversation_id, session_id)) FROM sources").fetchone()
    return int(row[0]) if row else 0


def ingest_seconds(store: Store) -> float:
    """Seconds the store's ingest runs that stored turns took together (the evaluation's cost per store: a re-run
    that finds every turn stored adds nothing)."""
    row = store.con.execute("SELECT coalesce(sum(seconds), 0) FROM ingest_runs WHERE new_sources > 0").fetchone()
    return float(row[0]) if row else 0.0
