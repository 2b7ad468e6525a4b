"""A full disk never costs data or prints a traceback: one line, exit 1, and the same command then finishes."""

from __future__ import annotations

import errno
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import duckdb
import numpy as np
import pytest
from chats import CHAT_3, run, session, stored_counts, write_chat

from ripplecli.store import db, vectors
from ripplecli.store.vectors import HnswIndex

DISK_FULL = re.compile(
    r"^ripple: error: disk full while [^;\n]+; nothing was lost; free space and run the same command again\n$"
)
DIM = 8


def _index(path: Path, count: int) -> HnswIndex:
    index = HnswIndex(path, DIM)
    index.add(list(range(1, count + 1)), np.random.default_rng(count).normal(size=(count, DIM)).astype(np.float32))
    return index


class ShortSave:
    """hnswlib's index with a save that stops halfway without a word, as its ofstream does on a full disk."""

    def __init__(self, real) -> None:
        self._real = real

    def __getattr__(self, name: str):
        return getattr(self._real, name)

    def save_index(self, name: str) -> None:
        self._real.save_index(name)
        os.truncate(name, os.path.getsize(name) // 2)


def test_an_index_save_cut_short_by_a_full_disk_keeps_the_saved_index(tmp_path, monkeypatch):
    path = tmp_path / "vectors.hnsw"
    _index(path, 40).save(1)
    saved = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    index = _index(path, 60)
    index._index = ShortSave(index._index)
    monkeypatch.setattr(vectors.shutil, "disk_usage", lambda folder: shutil._ntuple_diskusage(1 << 30, 1 << 30, 0))
    with pytest.raises(OSError) as raised:
        index.save(2)
    assert raised.value.errno == errno.ENOSPC
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == saved  # the good pair kept, no temp file left
    from ripplecli.errors import known_failure

    assert str(known_failure(raised.value)) == (
        "disk full while writing vectors.hnsw; nothing was lost; free space and run the same command again"
    )


class FullDiskCommits:
    """A DuckDB connection whose commits fail as they do on a full disk (DuckDB has ended the transaction when it
    says so: a rollback after it fails with `no transaction is active`)."""

    def __init__(self, real) -> None:
        self._real = real

    def __getattr__(self, name: str):
        return getattr(self._real, name)

    def execute(self, sql: str, *args):
        if sql == "COMMIT":
            self._real.execute("ROLLBACK")
            raise duckdb.TransactionException(
                'TransactionContext Error: Failed to commit: Could not write file "ripple.duckdb.wal": '
                "No space left on device"
            )
        return self._real.execute(sql, *args)


def test_a_commit_on_a_full_disk_is_one_line_and_the_same_command_then_finishes(store, tmp_path, monkeypatch):
    chat = write_chat(tmp_path / "third.json", [session(3, CHAT_3)], "ana-cal")
    shutil.copytree(store, tmp_path / "reference")
    assert run("ingest", str(chat), "--store", str(tmp_path / "reference")).exit_code == 0
    before = stored_counts(store)
    real = db._connect
    with monkeypatch.context() as patch:
        patch.setattr(db, "_connect", lambda path, read_only: FullDiskCommits(real(path, read_only)))
        failed = run("ingest", str(chat), "--store", str(store))
    assert failed.exit_code == 1 and DISK_FULL.match(failed.stderr), failed.output
    assert "committing to the database" in failed.stderr and stored_counts(store) == before
    again = run("ingest", str(chat), "--store", str(store))
    assert again.exit_code == 0, again.output
    assert stored_counts(store) == stored_counts(tmp_path / "reference")


# --- a real full disk: a small tmpfs (mounting one needs root; skipped elsewhere) -----------------------------
@pytest.fixture
def small_disk(tmp_path: Path):
    """A 48 MiB tmpfs, unmounted after the test."""
    folder = tmp_path / "disk"
    folder.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=48m", "tmpfs", str(folder)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip() or mounted.returncode}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], capture_output=True)


def fill(disk: Path, leave: int) -> Path:
    """A file that takes all but `leave` bytes of the disk."""
    filler = disk / "filler"
    with filler.open("wb") as out:
        left = shutil.disk_usage(disk).free - leave
        while left > 0:
            try:
                left -= out.write(b"\0" * min(left, 1 << 20))
            except OSError:
                break
    return filler


def rows(store: Path) -> dict[str, int]:
    """Row counts of every table but the ingest log (a failed run is logged as such)."""
    return {table: count for table, count in stored_counts(store).items() if table != "ingest_runs"}


def doctor_ok(store: Path) -> bool:
    done = run("doctor", "--json", "--store", str(store))
    return done.exit_code == 0 and {c["status"] for c in json.loads(done.stdout)["checks"]} == {"ok"}


@pytest.mark.parametrize("leave", [0, 8_000, 16_000, 40_000, 400_000])  # commit, indexes, snapshot (on tmpfs here)
def test_an_ingest_on_a_full_disk_is_one_line_and_the_same_ingest_then_finishes(store, tmp_path, small_disk, leave):
    chat = write_chat(tmp_path / "third.json", [session(3, CHAT_3)], "ana-cal")
    shutil.copytree(store, tmp_path / "reference")
    assert run("ingest", str(chat), "--store", str(tmp_path / "reference")).exit_code == 0
    shutil.copytree(store, small_disk / "store")
    filler = fill(small_disk, leave)
    first = run("ingest", str(chat), "--store", str(small_disk / "store"))
    assert first.exit_code == 0 or (first.exit_code == 1 and DISK_FULL.match(first.stderr)), first.output
    assert not isinstance(first.exception, Exception) or isinstance(first.exception, SystemExit)
    assert run("doctor", "--json", "--store", str(small_disk / "store")).exit_code == 0  # nothing is damaged
    filler.unlink()
    again = run("ingest", str(chat), "--store", str(small_disk / "store"))
    assert again.exit_code == 0, again.output
    assert rows(small_disk / "store") == rows(tmp_path / "reference")
    assert doctor_ok(small_disk / "store")


@pytest.mark.parametrize("leave", [0, 1_000_000])  # the deleting commit; the file rewrite that scrubs the text
def test_a_forget_on_a_full_disk_is_one_line_and_the_same_forget_then_finishes(store, tmp_path, small_disk, leave):
    chat = write_chat(tmp_path / "third.json", [session(3, CHAT_3)], "ana-cal")
    assert run("ingest", str(chat), "--store", str(store)).exit_code == 0
    forget = ["forget", "--conversation", "ana-cal", "--yes", "--store"]
    shutil.copytree(store, tmp_path / "reference")
    assert run(*forget, str(tmp_path / "reference")).exit_code == 0
    shutil.copytree(store, small_disk / "store")
    filler = fill(small_disk, leave)
    first = run(*forget, str(small_disk / "store"))
    assert first.exit_code == 1 and DISK_FULL.match(first.stderr.splitlines(keepends=True)[-1]), first.output
    after = json.loads(run("doctor", "--json", "--store", str(small_disk / "store")).stdout)
    assert {c["check"] for c in after["checks"] if c["status"] == "problem"} <= {"unfinished forget"}
    filler.unlink()
    assert run(*forget, str(small_disk / "store")).exit_code == 0
    assert rows(small_disk / "store") == rows(tmp_path / "reference") and doctor_ok(small_disk / "store")
    assert not [p for p in (small_disk / "store").rglob("*") if p.is_file() and b"cabin" in p.read_bytes()]


def test_an_export_onto_a_full_disk_is_one_line_and_leaves_no_file(store, small_disk):
    fill(small_disk, 0)
    done = run("export", "--out", str(small_disk / "backup.jsonl"), "--store", str(store))
    assert done.exit_code == 1 and DISK_FULL.match(done.stderr), done.output
    assert "writing backup.jsonl" in done.stderr and not (small_disk / "backup.jsonl").exists()
    assert [p.name for p in small_disk.iterdir()] == ["filler"]
