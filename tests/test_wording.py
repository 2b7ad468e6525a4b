"""Counts in what ripple prints read as English: "1 memory", "2 memories", "1 edge touches…"."""

from __future__ import annotations

import json

import duckdb
from chats import run

from ripplecli.store.db import DB_FILE
from ripplecli.wording import counted, plural_of


def test_a_count_takes_the_number_of_its_noun() -> None:
    assert [counted(n, "memory") for n in (0, 1, 2)] == ["0 memories", "1 memory", "2 memories"]
    assert counted(1200, "turn") == "1,200 turns" and counted(None, "memory") == "? memories"
    assert counted(1, "edge touches a memory", "edges touch a memory") == "1 edge touches a memory"
    words = ("edge", "day", "match", "box", "key")
    assert [plural_of(w) for w in words] == ["edges", "days", "matches", "boxes", "keys"]


def test_commands_say_one_memory_and_json_keeps_its_keys(store) -> None:
    listed = run("memories", "list", "--limit", "1", "--store", str(store))
    assert "1 memory" in listed.stdout and "1 memories" not in listed.stdout
    con = duckdb.connect(str(store / DB_FILE))
    con.execute("INSERT INTO edges VALUES (1, 999, 'semantic', 0.9, NULL)")
    con.close()
    checked = json.loads(run("doctor", "--store", str(store), "--json").stdout)
    (orphans,) = [c for c in checked["checks"] if c["check"] == "orphan edges"]
    assert orphans["detail"] == "1 edge touches a missing memory"
    done = run("forget", "1", "--yes", "--store", str(store), "--json")
    assert set(json.loads(done.stdout)["counts"]) == {"memories", "edges", "vectors", "cues", "provenance", "sources"}
