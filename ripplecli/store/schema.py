"""Ordered, recorded schema migrations; each runs in its own transaction."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from _duckdb import DuckDBPyConnection

# A memory draft's cue field -> the table and column of its rows (persons, locations, concepts)
CUE_TABLES: dict[str, tuple[str, str]] = {
    "persons": ("memory_persons", "person"),
    "locations": ("memory_locations", "location"),
    "concepts": ("memory_cues", "cue"),
}

SCHEMA_V1 = """
CREATE TABLE meta (key VARCHAR PRIMARY KEY, value VARCHAR NOT NULL);
CREATE TABLE conversations (
    conversation_id VARCHAR PRIMARY KEY,
    speakers VARCHAR[] NOT NULL
);
CREATE TABLE sources (
    source_id BIGINT PRIMARY KEY,
    conversation_id VARCHAR NOT NULL,
    session_id VARCHAR NOT NULL,
    turn_id VARCHAR NOT NULL,
    position INTEGER NOT NULL,
    speaker VARCHAR NOT NULL,
    text VARCHAR NOT NULL,
    session_ts TIMESTAMP,
    content_hash VARCHAR NOT NULL,
    run_id BIGINT NOT NULL
);
CREATE TABLE memories (
    memory_id BIGINT PRIMARY KEY,
    conversation_id VARCHAR NOT NULL,
    session_id VARCHAR NOT NULL,
    position INTEGER NOT NULL,
    restatement VARCHAR NOT NULL,
    persons VARCHAR[] NOT NULL,
    locations VARCHAR[] NOT NULL,
    time_start TIMESTAMP,
    time_end TIMESTAMP,
    time_grounded BOOLEAN NOT NULL,
    session_ts TIMESTAMP,
    extractor VARCHAR NOT NULL,
    created TIMESTAMP NOT NULL,
    run_id BIGINT NOT NULL
);
CREATE TABLE provenance (memory_id BIGINT NOT NULL, source_id BIGINT NOT NULL);
CREATE TABLE vectors (memory_id BIGINT PRIMARY KEY, vector FLOAT[] NOT NULL);
CREATE TABLE memory_persons (memory_id BIGINT NOT NULL, person VARCHAR NOT NULL);
CREATE TABLE memory_locations (memory_id BIGINT NOT NULL, location VARCHAR NOT NULL);
CREATE TABLE memory_cues (memory_id BIGINT NOT NULL, cue VARCHAR NOT NULL);
CREATE TABLE cue_forms (form VARCHAR NOT NULL, cue VARCHAR NOT NULL, PRIMARY KEY (form, cue));
CREATE TABLE edges (
    src BIGINT NOT NULL,
    dst BIGINT NOT NULL,
    channel VARCHAR NOT NULL,
    weight DOUBLE NOT NULL,
    info VARCHAR
);
CREATE TABLE ingest_runs (
    run_id BIGINT PRIMARY KEY,
    file VARCHAR NOT NULL,
    file_hash VARCHAR NOT NULL,
    started TIMESTAMP NOT NULL,
    seconds DOUBLE,
    new_sources INTEGER,
    duplicates INTEGER,
    memories INTEGER,
    edges VARCHAR,
    failures INTEGER,
    status VARCHAR NOT NULL
);
CREATE TABLE failures (
    run_id BIGINT NOT NULL,
    stage VARCHAR NOT NULL,
    location VARCHAR NOT NULL,
    error VARCHAR NOT NULL,
    raw_output VARCHAR
);
CREATE INDEX sources_hash ON sources (content_hash);
CREATE INDEX sources_turn ON sources (conversation_id, turn_id);
CREATE INDEX provenance_memory ON provenance (memory_id);
CREATE INDEX persons_person ON memory_persons (person);
CREATE INDEX locations_location ON memory_locations (location);
CREATE INDEX cues_cue ON memory_cues (cue);
CREATE INDEX cues_memory ON memory_cues (memory_id);
CREATE INDEX edges_src ON edges (src);
CREATE INDEX edges_dst ON edges (dst);
"""

CABLE_DONE = """
CREATE TABLE cable_done (
    memory_id BIGINT NOT NULL,
    variant VARCHAR NOT NULL,
    run_id BIGINT NOT NULL,
    links INTEGER NOT NULL,
    PRIMARY KEY (memory_id, variant)
);
"""


# Long memories' later word windows and their vectors (store/passages.py): the encoder reads ~190 words.
PASSAGES_TABLE = """
CREATE TABLE passages (
    memory_id BIGINT NOT NULL,
    ordinal INTEGER NOT NULL,
    first_word INTEGER NOT NULL,
    end_word INTEGER NOT NULL,
    vector FLOAT[] NOT NULL
);
CREATE INDEX passages_memory ON passages (memory_id);
"""


# Rows from before schema 3 get the session's date as when they were said (all older stores knew) and no role;
# importing an older export fills its rows the same way.
SAID_AT_BACKFILL = """
UPDATE sources SET said_at = session_ts, role = '';
UPDATE memories SET said_at = session_ts;
"""
# Conversation titles; when each turn and memory was said, apart from the time its text refers to; turn roles.
SAID_AND_TITLES = (
    """
ALTER TABLE conversations ADD COLUMN title VARCHAR;
ALTER TABLE sources ADD COLUMN said_at TIMESTAMP;
ALTER TABLE sources ADD COLUMN role VARCHAR DEFAULT '';
ALTER TABLE memories ADD COLUMN said_at TIMESTAMP;
"""
    + SAID_AT_BACKFILL
)

# Where each turn and memory was said: said_at's UTC offset in seconds when the export gave a zone (said_at is then
# UTC), NULL when it gave none (said_at is then the wall-clock time it wrote). Days are read on the wall clock
# (SAID_WALL_CLOCK), so "10 March" finds what was said on the evening of 10 March in California. Older rows keep
# NULL: their zone is not known.
SAID_OFFSETS = """
ALTER TABLE sources ADD COLUMN said_offset INTEGER;
ALTER TABLE memories ADD COLUMN said_offset INTEGER;
"""
# When a row was said on the clock where it was said (SQL over sources or memories).
SAID_WALL_CLOCK = "(said_at + to_seconds(coalesce(said_offset, 0)))"


def _sql(script: str) -> Callable[[DuckDBPyConnection], None]:
    """A migration step that runs a SQL script."""

    def run(con: DuckDBPyConnection) -> None:
        con.execute(script)

    return run


# Notes' paragraphs are dated by their file, which a copy changes: their identity is their text alone (the notes
# reader's conversations are `keyed_by_text`, and their ids start so).
KEYED_BY_TEXT = "note-"


def add_message_keys(con: DuckDBPyConnection) -> None:
    """Each turn's message identity (ripplecli.store.identity): a re-export of a stored chat under another name is
    recognised by its messages. Not indexed: one bulk probe per ingest scans the column (measured: 41 ms for
    10,000 keys against 1,000,000 rows on 2 cores; an index cut a 50-key probe from 17 to 6 ms but made inserts
    28 % slower and the 10,000-key probe 67 ms)."""
    con.execute("ALTER TABLE sources ADD COLUMN message_key BIGINT")
    fill_message_keys(con)


def fill_message_keys(con: DuckDBPyConnection) -> None:
    """Compute the key of every turn that has none, as the ingest would have: its said-at time (none for notes),
    its text and its repeat number within its conversation in position order."""
    from ripplecli.store.identity import Repeats

    rows = con.execute(
        "SELECT source_id, conversation_id, said_at, text FROM sources WHERE message_key IS NULL "
        "ORDER BY conversation_id, position, source_id"
    ).fetchall()
    repeats: dict[str, Repeats] = {}
    keys = []
    for _, conversation_id, said_at, text in rows:
        when = None if conversation_id.startswith(KEYED_BY_TEXT) else said_at
        keys.append(repeats.setdefault(conversation_id, Repeats()).key(when, text))
    if rows:
        con.execute(
            "UPDATE sources SET message_key = k.key FROM (SELECT unnest($1::BIGINT[]) AS id, "
            "unnest($2::BIGINT[]) AS key) k WHERE sources.source_id = k.id",
            [[row[0] for row in rows], keys],
        )


MIGRATIONS: list[tuple[int, str, Callable[[DuckDBPyConnection], None]]] = [
    (1, "initial schema: sources, memories, cues, vectors, edges, runs", _sql(SCHEMA_V1)),
    (2, "cable_done: memories CABLE has processed, so linking resumes", _sql(CABLE_DONE)),
    (3, "conversation titles, said-at times of turns and memories, turn roles", _sql(SAID_AND_TITLES)),
    (4, "UTC offsets of where turns and memories were said", _sql(SAID_OFFSETS)),
    (5, "message keys: a turn's identity by its time and text, whatever file it came in", add_message_keys),
    (6, "passages: vectors of a long memory's later word windows (store/passages.py)", _sql(PASSAGES_TABLE)),
]

LATEST_VERSION = MIGRATIONS[-1][0]


def current_version(con: DuckDBPyConnection) -> int:
    """The highest applied migration, 0 for a new file (whose migrations table this creates)."""
    con.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations "
        "(version INTEGER PRIMARY KEY, name VARCHAR NOT NULL, applied TIMESTAMP NOT NULL)"
    )
    return read_version(con)


def read_version(con: DuckDBPyConnection) -> int:
    """The highest applied migration without creating anything (read-only connections); 0 for a new file."""
    from ripplecli.store.engine import duckdb  # a store read from its snapshot never imports the engine

    try:
        row = con.execute("SELECT max(version) FROM schema_migrations").fetchone()
    except duckdb.CatalogException:
        return 0
    return int(row[0] or 0) if row else 0


def migrate(con: DuckDBPyConnection) -> list[int]:
    """Apply pending migrations in order, each in a transaction; returns the versions applied."""
    applied = []
    for version, name, step in MIGRATIONS:
        if version <= current_version(con):
            continue
        con.execute("BEGIN TRANSACTION")
        try:
            step(con)
            con.execute("INSERT INTO schema_migrations VALUES (?, ?, now()::TIMESTAMP)", [version, name])
            con.execute("COMMIT")
        except Exception:
            con.execute("ROLLBACK")
            raise
        applied.append(version)
    return applied
