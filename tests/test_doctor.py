"""`ripple doctor`: integrity checks with exit 1 on a problem, --repair from the DuckDB tables, the fuzz corpus."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import numpy as np
import pytest
from chats import CHAT_1, new_memory, run, session, write_chat

from ripplecli.store.db import DB_FILE, LEXICAL_DIR, VECTOR_FILE
from ripplecli.store.lexical import Bm25Index

FUZZ = Path(__file__).parent / "fuzz"


def doctor(store: Path, *extra: str) -> tuple[int, dict[str, str]]:
    """Exit code and status per check."""
    result = run("doctor", "--store", str(store), "--json", *extra)
    report = json.loads(result.stdout)
    return result.exit_code, {c["check"]: c["status"] for c in report["checks"]}


def sql(store: Path, statement: str) -> None:
    """Damage the store behind ripple's back."""
    con = duckdb.connect(str(store / DB_FILE))
    con.execute(statement)
    con.close()


def test_a_healthy_store_is_all_ok(store):
    code, statuses = doctor(store)
    assert code == 0 and set(statuses.values()) == {"ok"} and len(statuses) == 16
    table = run("doctor", "--store", str(store))
    assert table.exit_code == 0 and "orphan edges" in table.stdout and "lexical index" in table.stdout


@pytest.mark.parametrize(
    "damage, check",
    [
        ("INSERT INTO edges VALUES (1, 999, 'semantic', 0.9, NULL)", "orphan edges"),
        ("INSERT INTO memory_cues VALUES (999, 'ghost')", "orphan cues"),
        ("INSERT INTO provenance VALUES (999, 1)", "orphan provenance"),
        ("DELETE FROM provenance WHERE memory_id = 2", "memories without sources"),
        ("INSERT INTO sources SELECT * REPLACE (99 AS source_id) FROM sources WHERE source_id = 1",
         "duplicate source turns"),
    ],
)  # fmt: skip
def test_a_problem_is_exit_1_and_orphans_are_repaired(store, damage, check):
    sql(store, damage)
    code, statuses = doctor(store)
    assert code == 1 and statuses[check] == "problem"
    assert [name for name, status in statuses.items() if status != "ok"] == [check, "snapshot"]  # stale: db changed
    code, statuses = doctor(store, "--repair")
    fixable = check.startswith("orphan")
    assert (code == 0) == fixable and (statuses[check] == "ok") == fixable


def test_stale_derived_indexes_are_not_problems_and_repair_rebuilds_them(store):
    (store / VECTOR_FILE).unlink()
    sql(store, "UPDATE meta SET value = '7' WHERE key = 'memories_version'")
    (store / f".{VECTOR_FILE}.abc.tmp").write_bytes(b"half")
    code, statuses = doctor(store)
    assert code == 0
    assert {k: v for k, v in statuses.items() if v != "ok"} == {
        "vector index": "stale", "lexical index": "stale", "recall arrays": "stale", "snapshot": "stale",
        "leftover temp files": "stale",
    }  # fmt: skip
    result = run("doctor", "--store", str(store), "--repair")
    assert result.exit_code == 0 and "rebuilt the vector index (7)" in result.stdout
    code, statuses = doctor(store)
    assert code == 0 and set(statuses.values()) == {"ok"}


def test_an_index_that_claims_to_be_fresh_but_is_not_is_a_problem(store):
    index, version = Bm25Index.load(store / LEXICAL_DIR)
    assert index is not None and version is not None
    Bm25Index.build([1, 2], ["one text", "two texts"]).save(store / LEXICAL_DIR, version)
    code, statuses = doctor(store)
    assert code == 1 and statuses["lexical index"] == "problem"
    assert doctor(store, "--repair")[0] == 0


def test_vector_index_with_the_wrong_labels_is_a_problem(store, fake_settings):
    from ripplecli.store.vectors import HnswIndex

    meta = json.loads((store / (VECTOR_FILE + ".meta.json")).read_text())
    wrong = HnswIndex(store / VECTOR_FILE, meta["dim"])
    wrong.add(list(range(100, 107)), np.eye(7, meta["dim"], dtype=np.float32))
    wrong.save(meta["version"])
    code, statuses = doctor(store)
    assert code == 1 and statuses["vector index"] == "problem"


def test_doctor_on_a_missing_store_is_one_line(tmp_path):
    result = run("doctor", "--store", str(tmp_path / "none"))
    assert result.exit_code == 2 and "no ripple store here" in result.stderr


def test_doctor_stays_clean_after_the_fuzz_corpus(tmp_path, fake_settings, fake_extractor):
    with new_memory(tmp_path / "store", fake_settings) as memory:
        memory.ingest(write_chat(tmp_path / "seed.json", [session(1, CHAT_1)]))
    codes = {run("ingest", str(path), "--store", str(tmp_path / "store")).exit_code for path in FUZZ.glob("*.json")}
    assert codes <= {0, 2} and 0 in codes and 2 in codes
    code, statuses = doctor(tmp_path / "store")
    assert code == 0 and set(statuses.values()) == {"ok"}, statuses
