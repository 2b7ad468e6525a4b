"""A damaged database file: one line from every command, doctor reports it, export --salvage saves what is readable."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import duckdb
import pytest
from chats import CHAT_3, run, session, stored_counts, write_chat

from ripplecli.store.db import DB_FILE

DAMAGED = re.compile(r"^ripple: error: the store's database file is damaged \(.+\); .+--salvage.+\n$")
BLOCKS_START = 3 * 4096  # DuckDB's file header and its two database headers come first
BLOCK_HEADER = 8  # each block starts with its checksum


def segment_of(store: Path, table: str, column: str) -> int:
    """Where in the database file the first stored segment of a column of a table starts."""
    con = duckdb.connect(str(store / DB_FILE), read_only=True)
    try:
        block, offset = con.execute(
            f"SELECT block_id, block_offset FROM pragma_storage_info('{table}') WHERE column_name = ? "
            "AND block_id >= 0 ORDER BY row_group_id, block_id, block_offset LIMIT 1",
            [column],
        ).fetchone()
        size = con.execute("SELECT block_size FROM pragma_database_size()").fetchone()[0]
    finally:
        con.close()
    return BLOCKS_START + block * size + BLOCK_HEADER + offset


def flip(path: Path, at: int, count: int = 8) -> None:
    """Flip bytes of a file in place, keeping its size and modification time (as a failing disk does). One 8-byte
    word by default: DuckDB's block checksum XORs a hash of each word, so the same change to two equal words (a run
    of 0xff in an index block's free-slot mask) cancels out and goes unseen."""
    info = path.stat()
    with path.open("r+b") as handle:
        handle.seek(at)
        data = handle.read(count)
        handle.seek(at)
        handle.write(bytes(b ^ 0xFF for b in data))
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))


def damage_table(store: Path, table: str = "memories", column: str = "restatement") -> None:
    flip(store / DB_FILE, segment_of(store, table, column) + 4)


@pytest.fixture
def damaged(store: Path) -> Path:
    """The two-session store with the block holding its memories' texts damaged."""
    damage_table(store)
    return store


COMMANDS = [
    ["memories", "list"],
    ["memories", "search", "hiking"],
    ["show", "m1"],
    ["export"],
    ["forget", "m1", "--yes"],
    ["doctor", "--repair"],
    ["graph", "stats"],
]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c[:2]))
def test_every_command_on_a_damaged_table_says_so_in_one_line(damaged, command):
    done = run(*command, "--store", str(damaged))
    assert done.exit_code == 2 and DAMAGED.match(done.stderr), done.output
    assert isinstance(done.exception, SystemExit)


def test_an_ingest_into_a_damaged_store_says_so_in_one_line(damaged, tmp_path):
    chat = write_chat(tmp_path / "third.json", [session(3, CHAT_3)], "ana-cal")
    done = run("ingest", str(chat), "--store", str(damaged))
    assert done.exit_code == 2 and DAMAGED.match(done.stderr.splitlines(keepends=True)[-1]), done.output


def test_doctor_reports_the_damaged_table_and_the_checks_it_stops(damaged):
    done = run("doctor", "--json", "--store", str(damaged))
    report = json.loads(done.stdout)
    checks = {c["check"]: c for c in report["checks"]}
    assert done.exit_code == 1 and not report["ok"]
    assert checks["database file"]["status"] == "problem" and "memories" in checks["database file"]["detail"]
    assert "--salvage" in checks["database file"]["detail"]
    assert checks["orphan edges"]["status"] == "problem" and "not checked" in checks["orphan edges"]["detail"]
    table = run("doctor", "--store", str(damaged))
    assert table.exit_code == 1 and "database file" in table.stdout and "Traceback" not in table.output


def test_a_file_duckdb_cannot_open_is_one_line_and_doctor_reports_it(store):
    flip(store / DB_FILE, 20)  # the file's own header
    listed = run("memories", "list", "--store", str(store))
    assert listed.exit_code == 2 and DAMAGED.match(listed.stderr), listed.output
    done = run("doctor", "--json", "--store", str(store))
    report = json.loads(done.stdout)
    assert done.exit_code == 1 and [c["check"] for c in report["checks"]] == ["database file"]
    assert "damaged" in report["checks"][0]["detail"]
    salvaged = run("export", "--salvage", "--out", str(store.parent / "saved.jsonl"), "--store", str(store))
    assert salvaged.exit_code == 2 and DAMAGED.match(salvaged.stderr)


def test_export_salvage_writes_every_readable_row_and_imports(damaged, tmp_path, fake_settings):
    out = tmp_path / "saved.jsonl"
    done = run("export", "--salvage", "--with-vectors", "--out", str(out), "--store", str(damaged))
    assert done.exit_code == 0, done.output
    assert done.stderr.startswith("salvaged ") and "lost (in damaged blocks):" in done.stderr
    assert "of memories" in done.stderr and "ripple import" in done.stderr
    header = json.loads(out.read_text().splitlines()[0])
    assert header["salvage"]["lost"]["memories"] > 0 and header["counts"]["source"] > 0
    imported = run("import", str(out), "--store", str(tmp_path / "new"))
    assert imported.exit_code == 0, imported.output
    assert stored_counts(tmp_path / "new")["sources"] == header["counts"]["source"]


def test_a_salvage_of_a_sound_store_is_its_export(store, tmp_path):
    run("export", "--with-vectors", "--out", str(tmp_path / "export.jsonl"), "--store", str(store))
    done = run("export", "--salvage", "--with-vectors", "--out", str(tmp_path / "salvage.jsonl"), "--store", str(store))
    assert done.exit_code == 0 and "every row was readable" in done.stderr
    exported, salvaged = ((tmp_path / f"{name}.jsonl").read_text().splitlines() for name in ("export", "salvage"))
    assert exported[1:] == salvaged[1:]


def test_a_salvage_reads_around_one_damaged_segment(tmp_path):
    """A table of many blocks with one damaged: every row is read but those of the 2048-row vectors it meets."""
    from ripplecli.store.salvage import RANGE, DamagedTables

    path = tmp_path / "big.duckdb"
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE t (id BIGINT, text VARCHAR)")
    con.execute("INSERT INTO t SELECT i, 'text number ' || i || repeat('x', 60) FROM range(200000) r(i)")
    con.close()
    store = tmp_path
    (store / DB_FILE).unlink(missing_ok=True)
    os.rename(path, store / DB_FILE)
    con = duckdb.connect(str(store / DB_FILE), read_only=True)
    segments = con.execute(
        "SELECT block_id, block_offset, count FROM pragma_storage_info('t') WHERE column_name = 'text' "
        "AND block_id >= 0 ORDER BY row_group_id, block_id, block_offset"
    ).fetchall()
    con.close()
    block, offset, _ = segments[len(segments) // 2]
    flip(store / DB_FILE, BLOCKS_START + block * 262144 + BLOCK_HEADER + offset + 4)
    con = duckdb.connect(str(store / DB_FILE), read_only=True)
    try:
        tables = DamagedTables(con)
        rows = tables.rows("t", ("id", "text"), "id")
    finally:
        con.close()
    lost = {i for i in range(200000)} - {row[0] for row in rows}
    in_block = [n for b, _, n in segments if b == block]
    assert tables.lost["t"] == len(lost) and lost == set(range(min(lost), max(lost) + 1))
    assert sum(in_block) <= len(lost) < sum(in_block) + 2 * RANGE and min(lost) % RANGE == 0


def _index_block_damaged(store: Path, tmp_path: Path) -> Path:
    """A copy of the store with one block damaged that holds an index (not in any table's storage, not the catalog's
    first block), found by trying each such block on its own copy."""
    con = duckdb.connect(str(store / DB_FILE), read_only=True)
    try:
        tables = [r[0] for r in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()]
        storage = "SELECT block_id FROM pragma_storage_info(?)"
        data = {r[0] for t in tables for r in con.execute(storage, [t]).fetchall()}
        total, size = con.execute("SELECT total_blocks, block_size FROM pragma_database_size()").fetchone()
    finally:
        con.close()
    for block in (b for b in range(1, total) if b not in data):
        copy = tmp_path / f"block-{block}"
        shutil.copytree(store, copy)
        flip(copy / DB_FILE, BLOCKS_START + block * size + BLOCK_HEADER + 16)
        done = run("doctor", "--json", "--store", str(copy))
        checks = {c["check"]: c["detail"] for c in json.loads(done.stdout)["checks"]}
        if "the index on" in checks["database file"]:
            return copy
        shutil.rmtree(copy)
    raise AssertionError("no block of an index found")


def test_a_damaged_index_is_flagged_and_repair_rebuilds_it_from_the_rows(store, tmp_path):
    damaged = _index_block_damaged(store, tmp_path)
    assert run("doctor", "--store", str(damaged)).exit_code == 1
    repaired = run("doctor", "--repair", "--json", "--store", str(damaged))
    report = json.loads(repaired.stdout)
    assert repaired.exit_code == 0 and any("rebuilding its damaged" in line for line in report["repaired"]), report
    assert {c["status"] for c in report["checks"]} == {"ok"}
    assert stored_counts(damaged) == stored_counts(store)
    assert run("show", "m1", "--store", str(damaged)).exit_code == 0
