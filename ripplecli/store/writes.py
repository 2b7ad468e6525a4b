"""The write statements the write path and CABLE need beyond `Store.insert` (no SQL outside store/)."""

from __future__ import annotations

import json
from typing import Any

from ripplecli.store.db import Store


def upsert_conversation(store: Store, conversation_id: str, speakers: list[str], title: str | None) -> None:
    """The conversation row: its speaker list replaced by `speakers`, its title by a newer one (kept when None)."""
    store.con.execute(
        "INSERT INTO conversations (conversation_id, speakers, title) VALUES (?, ?, ?) ON CONFLICT DO UPDATE "
        "SET speakers = excluded.speakers, title = coalesce(excluded.title, conversations.title)",
        [conversation_id, speakers, title],
    )


def record_run(store: Store, run: dict[str, Any]) -> None:
    """The ingest_runs row of one run: file, hash, seconds, counts, edges per channel, failures, status."""
    store.con.execute(
        "INSERT OR REPLACE INTO ingest_runs VALUES (?, ?, ?, now()::TIMESTAMP, ?, ?, ?, ?, ?, ?, ?)",
        [
            run["run_id"],
            run["file"],
            run["content_hash"],
            run["seconds"],
            run["new_sources"],
            run["duplicates"],
            run["memories"],
            json.dumps(run["edges"], sort_keys=True),
            run["failures"],
            run["status"],
        ],
    )


def delete_incoming(store: Store, channel: str, ids: list[int]) -> None:
    """Drop one channel's edges into these memories (CABLE redoes a batch's links)."""
    store.con.execute("DELETE FROM edges WHERE channel = ? AND dst IN (SELECT unnest(?))", [channel, ids])


def delete_cable_done(store: Store, variant: str, ids: list[int]) -> None:
    """Forget that a CABLE variant processed these memories."""
    store.con.execute("DELETE FROM cable_done WHERE variant = ? AND memory_id IN (SELECT unnest(?))", [variant, ids])
