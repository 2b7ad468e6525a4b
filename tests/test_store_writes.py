"""The store owns every write: no write statement is spelled outside ripplecli/store/, and the pipeline hands the
store typed rows (ripplecli.model), never a table name and columns."""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path

import numpy as np

from ripplecli.model import Edge, IngestReport, MemoryDraft, NewMemory, PendingTurn, Session, Turn
from ripplecli.store.db import Store

PACKAGE = Path(__file__).resolve().parent.parent / "ripplecli"
WRITE_SQL = re.compile(r"\b(INSERT\s+(OR\s+\w+\s+)?INTO|UPDATE\s+\w+\s+SET|DELETE\s+FROM|CREATE\s+TABLE)\b", re.I)
TABLE_INSERT = re.compile(r"\.insert\(\s*[\"']")  # store.insert("edges", {...}): a table name handed over


def test_no_write_statement_or_table_insert_outside_the_store() -> None:
    outside = [path for path in PACKAGE.rglob("*.py") if "store" not in path.relative_to(PACKAGE).parts[:1]]
    spelled = [
        f"{path.relative_to(PACKAGE)}:{text[: match.start()].count(chr(10)) + 1}"
        for path in outside
        for text in [path.read_text()]
        for pattern in (WRITE_SQL, TABLE_INSERT)
        for match in pattern.finditer(text)
    ]
    assert spelled == []
    assert not hasattr(Store, "insert")  # the generic insert of a table named by its caller is gone


def test_typed_rows_round_trip_through_the_store(tmp_path: Path) -> None:
    day = datetime(2024, 3, 2, 10, 0)
    session = Session("s1", day, [])
    turns = [PendingTurn(session, Turn("t1", "Ana", "We sail at nine.", role="owner"), 0, "h1")]
    draft = MemoryDraft("Ana sails at nine.", ["t1"], persons=["Ana"], concepts=["sail"])
    draft.concept_forms["sail"] = ["sails"]
    report = IngestReport(file="chat.json", new_sources=1, memories=1, edges={"contiguity": 0}, run_id=7)
    store = Store.open(tmp_path / "store")
    try:
        with store.transaction():
            store.set_meta("encoder_dim", 4)
            store.upsert_conversation("c", ["Ana"], "Sailing")
            source_ids = store.add_turns("c", turns, run_id=7)
            store.add_memories([NewMemory(1, "c", "s1", 0, day, day, [source_ids["t1"]], draft)], run_id=7)
            store.add_vectors([1], np.ones((1, 4), dtype=np.float32))
            store.add_edges([Edge(1, 1, "semantic", 0.5)], ['{"why": "test"}'])
            store.replace_cable_done("antecedent", [1], [7], [0])
            store.add_failures(7, [{"stage": "extract", "location": "c", "error": "boom"}])
            store.record_run(report, "hash")
        one = lambda sql: store.con.execute(sql).fetchall()  # noqa: E731
        assert one("SELECT turn_id, speaker, said_at, role, run_id FROM sources") == [("t1", "Ana", day, "owner", 7)]
        assert one("SELECT restatement, persons, said_at FROM memories") == [("Ana sails at nine.", ["Ana"], day)]
        assert one("SELECT memory_id, source_id FROM provenance") == [(1, source_ids["t1"])]
        assert one("SELECT * FROM memory_persons") == [(1, "Ana")] and one("SELECT * FROM memory_cues") == [(1, "sail")]
        assert sorted(one("SELECT form, cue FROM cue_forms")) == [("sail", "sail"), ("sails", "sail")]
        assert one("SELECT vector FROM vectors") == [([1.0] * 4,)]
        assert one("SELECT info FROM edges") == [('{"why": "test"}',)]
        assert one("SELECT variant, run_id, links FROM cable_done") == [("antecedent", 7, 0)]
        assert one("SELECT stage, raw_output FROM failures") == [("extract", None)]
        assert one("SELECT file, file_hash, edges, status FROM ingest_runs") == [
            ("chat.json", "hash", '{"contiguity": 0}', "done")
        ]
        assert one("SELECT speakers, title FROM conversations") == [(["Ana"], "Sailing")]
    finally:
        store.close()
