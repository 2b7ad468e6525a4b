"""A read-only open reads the last writer's snapshot instead of the database, only while the file is as stamped."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from datetime import datetime
from pathlib import Path

from chats import run
from conftest import SAMPLE_CHATS, opened_read_only

from ripplecli.api import Memory
from ripplecli.store.db import DB_FILE, RECALL_DIR
from ripplecli.store.snapshot import READY_FILE, Snapshot, _writer_holds

AS_OF = datetime(2026, 6, 1)
QUESTION = "Should Alex take Maya to Harbor Grill?"


def recalled(path: Path) -> tuple[str, str]:
    """Evidence and trace of one recall through a read-only store."""
    with Memory(path, read_only=True, create=False) as memory:
        result = memory.recall(QUESTION, k=10, as_of=AS_OF, answer="typed")
        assert result.answer is not None
        return repr(result.evidence), repr(replace(result.answer, seconds=0.0))


def test_a_read_only_open_after_a_writer_reads_the_snapshot_and_answers_the_same(sample_store, monkeypatch) -> None:
    store = opened_read_only(sample_store)
    assert store.snapshot is not None and store._con is None
    assert store.count("memories") > 100 and store.get_meta("settings")["encoder_backend"] == "fake"
    store.close()
    from_snapshot = recalled(sample_store)
    monkeypatch.setattr(Snapshot, "open", classmethod(lambda cls, *args: None))
    assert recalled(sample_store) == from_snapshot


def test_an_ask_on_the_snapshot_never_imports_the_database_engine(sample_store) -> None:
    code = (
        "import sys\nfrom ripplecli.store.db import Store\n"
        f"store = Store.open({str(sample_store)!r}, create=False, read_only=True)\n"
        "from ripplecli.recall.index import RecallIndex\nindex = RecallIndex.open(store)\n"
        "assert index.texts.get(1) and store.people()[0]\n"
        "print(sorted(m for m in sys.modules if 'duckdb' in m))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_sql_still_works_on_a_snapshot_store(sample_store) -> None:
    store = opened_read_only(sample_store)
    assert store.snapshot is not None
    sources = store.count("sources")  # no snapshot figure: the connection opens now
    assert store._con is not None and sources == store.con.execute("SELECT count(*) FROM sources").fetchone()[0]
    store.close()


def test_a_database_changed_behind_the_stamp_is_opened_instead(sample_store) -> None:
    import duckdb

    con = duckdb.connect(str(sample_store / DB_FILE))
    con.execute("UPDATE conversations SET title = 'Renamed behind ripple''s back'")
    con.close()
    store = opened_read_only(sample_store)
    assert store.snapshot is None
    assert set(store.people()[1].values()) == {"Renamed behind ripple's back"}
    store.close()


def test_a_snapshot_store_that_connects_after_a_writer_came_and_went_reads_the_database(sample_store) -> None:
    import duckdb

    store = opened_read_only(sample_store)
    assert store.snapshot is not None and store.count("memories") > 100
    con = duckdb.connect(str(sample_store / DB_FILE))
    con.execute("UPDATE meta SET value = '99' WHERE key = 'memories_version'")
    con.close()
    assert store.version("memories") != 99  # the snapshot still answers, until the connection opens
    assert store.con is not None and store.snapshot is None and store.version("memories") == 99
    store.close()


def test_a_wal_or_another_stamp_keeps_the_snapshot_out(sample_store) -> None:
    wal = sample_store / (DB_FILE + ".wal")
    wal.write_bytes(b"")
    assert opened_read_only(sample_store).snapshot is None
    wal.unlink()
    assert opened_read_only(sample_store).snapshot is not None
    ready = sample_store / RECALL_DIR / READY_FILE
    stamp = json.loads(ready.read_text())
    ready.write_text(json.dumps({**stamp, "schema": stamp["schema"] + 1}))  # written by another ripple
    assert opened_read_only(sample_store).snapshot is None
    ready.write_text("{not json")
    assert opened_read_only(sample_store).snapshot is None


def test_every_writer_restamps_so_asks_see_what_it_wrote(sample_store) -> None:
    memory = Memory(sample_store)
    memory.ingest(SAMPLE_CHATS / "dinner.json")  # nothing new, but the writer closes
    memory.close()
    assert opened_read_only(sample_store).snapshot is not None
    before = opened_read_only(sample_store).count("memories")
    from ripplecli.api import NewTurn

    with Memory(sample_store) as memory:
        memory.remember(NewTurn("Alex", "The Harbor Grill closed for good in May.", AS_OF), conversation="news")
    store = opened_read_only(sample_store)
    assert store.snapshot is not None and store.count("memories") == before + 1
    assert store.recall_arrays().restatements_of([store.count("memories")])  # type: ignore[union-attr]


def test_a_store_held_by_a_writer_is_found_without_taking_a_lock(held_store) -> None:
    path, holder = held_store
    assert _writer_holds(path / DB_FILE) is True
    result = run("ask", "anything", "--store", str(path))
    assert result.exit_code == 3 and f"in use by process {holder.pid}" in result.stderr
    holder.kill()
    holder.wait()
    assert _writer_holds(path / DB_FILE) is False
