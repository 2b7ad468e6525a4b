"""Every write of the pipeline's rows: typed rows in (ripplecli.model), table rows out, so the tables' columns are
spelled here and in schema.py only. Rows go in bulk, one statement per table and batch (see `insert_columns`)."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ripplecli.model import Edge, IngestReport, NewMemory, PendingTurn
from ripplecli.store.schema import CUE_TABLES

if TYPE_CHECKING:
    import numpy as np
    from _duckdb import DuckDBPyConnection

    from ripplecli.store.passages import Passage


def insert_columns(
    con: DuckDBPyConnection, table: str, rows: Mapping[str, Sequence[Any]], *, skip_existing: bool = False
) -> int:
    """Insert column lists in one statement (unnest), far faster than executemany. For the store's own modules,
    which name their table and columns (an import writes the tables as its file lists them)."""
    columns = list(rows)
    count = len(rows[columns[0]]) if columns else 0
    if count == 0:
        return 0
    selects = ", ".join(f"unnest(${i + 1}) AS {name}" for i, name in enumerate(columns))
    con.execute(
        f"INSERT {'OR IGNORE ' if skip_existing else ''}INTO {table} ({', '.join(columns)}) SELECT {selects}",
        [list(rows[name]) for name in columns],
    )
    return count


class StoreWrites:
    """The writes of the ingest and of CABLE, as the Store's methods (mixed into Store, whose connection and ids
    they use; each runs inside the caller's transaction)."""

    con: DuckDBPyConnection
    next_id: Callable[[str, str], int]

    def upsert_conversation(self, conversation_id: str, speakers: list[str], title: str | None) -> None:
        """The conversation row: its speaker list replaced by `speakers`, its title by a newer one (kept when None)."""
        self.con.execute(
            "INSERT INTO conversations (conversation_id, speakers, title) VALUES (?, ?, ?) ON CONFLICT DO UPDATE "
            "SET speakers = excluded.speakers, title = coalesce(excluded.title, conversations.title)",
            [conversation_id, speakers, title],
        )

    def add_turns(self, conversation_id: str, turns: Sequence[PendingTurn], run_id: int) -> dict[str, int]:
        """The source rows of a conversation's new turns; returns turn id -> the source id it was given."""
        first = self.next_id("sources", "source_id")
        ids = {p.turn.turn_id: first + i for i, p in enumerate(turns)}
        insert_columns(
            self.con,
            "sources",
            {
                "source_id": [ids[p.turn.turn_id] for p in turns],
                "conversation_id": [conversation_id] * len(turns),
                "session_id": [p.session.session_id for p in turns],
                "turn_id": [p.turn.turn_id for p in turns],
                "position": [p.position for p in turns],
                "speaker": [p.turn.speaker for p in turns],
                "text": [p.turn.text for p in turns],
                "session_ts": [p.session.timestamp for p in turns],
                "content_hash": [p.content_hash for p in turns],
                "run_id": [run_id] * len(turns),
                "said_at": [p.said_at for p in turns],
                "said_offset": [p.said_offset for p in turns],
                "role": [p.turn.role for p in turns],
                "message_key": [p.message_key for p in turns],
            },
        )
        return ids

    def add_memories(self, memories: Sequence[NewMemory], run_id: int) -> None:
        """The memory rows, their provenance, their person, location and concept cues, and the cue vocabulary."""
        drafts = [m.draft for m in memories]
        now = datetime.now().replace(microsecond=0)
        insert_columns(
            self.con,
            "memories",
            {
                "memory_id": [m.memory_id for m in memories],
                "conversation_id": [m.conversation_id for m in memories],
                "session_id": [m.session_id for m in memories],
                "position": [m.position for m in memories],
                "restatement": [d.restatement for d in drafts],
                "persons": [list(d.persons) for d in drafts],
                "locations": [list(d.locations) for d in drafts],
                "time_start": [d.time_start for d in drafts],
                "time_end": [d.time_end for d in drafts],
                "time_grounded": [d.time_grounded for d in drafts],
                "session_ts": [m.session_ts for m in memories],
                "extractor": [d.extractor for d in drafts],
                "created": [now] * len(memories),
                "run_id": [run_id] * len(memories),
                "said_at": [m.said_at for m in memories],
                "said_offset": [m.said_offset for m in memories],
            },
        )
        links = [(m.memory_id, source) for m in memories for source in m.sources]
        insert_columns(self.con, "provenance", {"memory_id": [m for m, _ in links], "source_id": [s for _, s in links]})
        self._add_cues(memories)

    def _add_cues(self, memories: Sequence[NewMemory]) -> None:
        """Person, location and concept cue rows, and the form -> concept vocabulary for query matching."""
        for key, (table, column) in CUE_TABLES.items():
            pairs = [(m.memory_id, v) for m in memories for v in dict.fromkeys(getattr(m.draft, key))]
            insert_columns(self.con, table, {"memory_id": [m for m, _ in pairs], column: [v for _, v in pairs]})
        forms = {
            (form, cue)
            for d in (m.draft for m in memories)
            for cue in d.concepts
            for form in {cue, *d.concept_forms.get(cue, [])}
            if form
        }
        ordered = sorted(forms)
        insert_columns(
            self.con, "cue_forms", {"form": [f for f, _ in ordered], "cue": [c for _, c in ordered]}, skip_existing=True
        )

    def add_vectors(self, memory_ids: list[int], vectors: np.ndarray) -> None:
        """The memories' vectors, the source of truth the ANN index is rebuilt from (one row of `vectors` each)."""
        insert_columns(self.con, "vectors", {"memory_id": memory_ids, "vector": vectors.tolist()})

    def add_passages(self, rows: Sequence[tuple[int, Passage]], vectors: np.ndarray) -> None:
        """Long memories' later passages with their vectors (store/passages.py)."""
        from ripplecli.store.passages import insert

        insert(self.con, rows, vectors)

    def add_edges(self, edges: Sequence[Edge], infos: Sequence[str] | None = None) -> None:
        """Edge rows; `infos` (CABLE's) says for each why it was made, as JSON."""
        rows: dict[str, Sequence[Any]] = {
            "src": [e.src for e in edges],
            "dst": [e.dst for e in edges],
            "channel": [e.channel for e in edges],
            "weight": [e.weight for e in edges],
        }
        insert_columns(self.con, "edges", rows if infos is None else {**rows, "info": list(infos)})

    def delete_incoming(self, channel: str, memory_ids: list[int]) -> None:
        """Drop one channel's edges into these memories (CABLE redoes a batch's links)."""
        self.con.execute("DELETE FROM edges WHERE channel = ? AND dst IN (SELECT unnest(?))", [channel, memory_ids])

    def replace_cable_done(self, variant: str, memory_ids: list[int], run_ids: list[int], links: list[int]) -> None:
        """Record that a CABLE variant processed these memories (in these ingest runs) and how many links each got."""
        self.con.execute(
            "DELETE FROM cable_done WHERE variant = ? AND memory_id IN (SELECT unnest(?))", [variant, memory_ids]
        )
        insert_columns(
            self.con,
            "cable_done",
            {"memory_id": memory_ids, "variant": [variant] * len(memory_ids), "run_id": run_ids, "links": links},
        )

    def add_failures(self, run_id: int, failures: list[dict[str, Any]]) -> None:
        """Rows of the `failures` table for one run: stage, location, error and the raw output when there is one."""
        if failures:
            columns = {key: [f.get(key) for f in failures] for key in ("stage", "location", "error", "raw_output")}
            insert_columns(self.con, "failures", {"run_id": [run_id] * len(failures), **columns})

    def record_run(self, report: IngestReport, content_hash: str, status: str = "done") -> None:
        """The ingest_runs row of one run: file, hash, seconds, counts, edges per channel, failures, status."""
        self.con.execute(
            "INSERT OR REPLACE INTO ingest_runs VALUES (?, ?, ?, now()::TIMESTAMP, ?, ?, ?, ?, ?, ?, ?)",
            [
                report.run_id,
                report.file,
                content_hash,
                report.seconds,
                report.new_sources,
                report.duplicates,
                report.memories,
                json.dumps(report.edges, sort_keys=True),
                report.failures,
                status,
            ],
        )
