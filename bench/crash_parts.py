"""What the crash bench's modes share: the ripple command, a conversation in its own file, ingest, counts, traces."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import duckdb

RIPPLE = [sys.executable, "-c", "from ripplecli.cli import main; main()"]


def write_conversation(data: Path, sample_id: str, sessions: int | None, folder: Path) -> Path:
    """One LoCoMo sample (optionally its first N sessions) in its own file."""
    samples = json.loads(data.read_text(encoding="utf-8"))
    (sample,) = [s for s in samples if s["sample_id"] == sample_id]
    if sessions:
        conversation = sample["conversation"]
        keep = {f"session_{i}" for i in range(1, sessions + 1)}
        sample = {
            **sample,
            "conversation": {
                k: v
                for k, v in conversation.items()
                if not k.startswith("session_") or k.removesuffix("_date_time") in keep
            },
        }
    path = folder / f"{sample_id}.json"
    path.write_text(json.dumps([sample]), encoding="utf-8")
    return path


def ingest(chat: Path, store: Path) -> subprocess.Popen:
    """Start `ripple ingest` as its own process."""
    return subprocess.Popen(
        [*RIPPLE, "ingest", str(chat), "--store", str(store)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )


def ingest_whole(chat: Path, store: Path, what: str) -> None:
    """An uninterrupted `ripple ingest`; its failure ends the benchmark with its error."""
    process = ingest(chat, store)
    _, err = process.communicate()
    if process.returncode != 0:
        raise SystemExit(f"{what} failed: {err.decode()}")


def counts(store: Path) -> dict[str, Any]:
    """Memories, sources and edges per channel, read straight from DuckDB (no ripple code involved)."""
    if not (store / "ripple.duckdb").exists():
        return {"memories": 0, "sources": 0, "edges": {}}
    con = duckdb.connect(str(store / "ripple.duckdb"), read_only=True)
    try:
        one = lambda sql: con.execute(sql).fetchone()[0]  # noqa: E731
        edges = dict(con.execute("SELECT channel, count(*) FROM edges GROUP BY channel ORDER BY channel").fetchall())
        return {"memories": one("SELECT count(*) FROM memories"), "sources": one("SELECT count(*) FROM sources"),
                "edges": edges}  # fmt: skip
    finally:
        con.close()


def words_only_in(forgotten: Path, kept: Path) -> list[str]:
    """Distinctive words of the forgotten chat: its most frequent long words (and speakers) the kept chat lacks."""
    kept_text = kept.read_text(encoding="utf-8")
    text = forgotten.read_text(encoding="utf-8")
    counts: dict[str, int] = {}
    for word in re.findall(r"[A-Za-z]{7,}", text):
        if word not in kept_text:
            counts[word] = counts.get(word, 0) + 1
    return sorted(counts, key=lambda w: (-counts[w], w))[:8]


def files_holding(store: Path, words: list[str]) -> list[str]:
    """Every file of the store folder whose bytes hold one of the words."""
    needles = [w.encode() for w in words]
    return sorted(
        str(p.relative_to(store)) for p in store.rglob("*") if p.is_file() and any(n in p.read_bytes() for n in needles)
    )
