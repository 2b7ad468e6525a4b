"""See everything, remove anything: memories list/search/show, and forget down to the bytes on disk."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest
from chats import (
    CHAT_1,
    CHAT_2,
    CHAT_3,
    SECRET,
    SECRET_CHAT,
    new_memory,
    run,
    session,
    stored_counts,
    write_chat,
)

from ripplecli.api import Memory


@pytest.fixture
def store(tmp_path, fake_settings, fake_extractor) -> Path:
    """Two conversations; session s3 of ana-ben holds a unique token."""
    chat = write_chat(tmp_path / "chat.json", [session(1, CHAT_1), session(2, CHAT_2), session(3, SECRET_CHAT)])
    other = write_chat(tmp_path / "other.json", [session(4, CHAT_3)], "ana-cal")
    with new_memory(tmp_path / "store", fake_settings) as memory:
        memory.ingest(chat)
        memory.ingest(other)
    return tmp_path / "store"


def files_holding(folder: Path, token: str) -> list[str]:
    """Every file under `folder` whose bytes contain `token` (binary files included)."""
    needle = token.encode()
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file() and needle in p.read_bytes())


def secret_id(path: Path) -> int:
    """The memory holding the unique token."""
    with Memory(path, read_only=True) as memory:
        (hit,) = [m for m in memory.list_memories() if SECRET in m["restatement"]]
    return hit["memory_id"]


# --- inspect ---------------------------------------------------------------------------------------
def test_memories_list_filters_and_json(store):
    everything = json.loads(run("memories", "list", "--store", str(store), "--json").stdout)
    assert len(everything) == 11 and [m["memory_id"] for m in everything] == sorted(m["memory_id"] for m in everything)
    lena = json.loads(run("memories", "list", "--person", "Lena", "--store", str(store), "--json").stdout)
    assert lena and all("lena" in m["persons"] for m in lena)
    s2 = json.loads(run("memories", "list", "--session", "s2", "--store", str(store), "--json").stdout)
    assert {m["session_id"] for m in s2} == {"s2"} and len(s2) == 4
    window = ["--since", "2023-05-02", "--until", "2023-05-03", "--limit", "5"]
    dated = json.loads(run("memories", "list", *window, "--store", str(store), "--json").stdout)
    assert len(dated) == 5 and {m["session_id"] for m in dated} <= {"s2", "s3"}
    s3 = json.loads(
        run(
            "memories", "list", "--since", "2023-05-03", "--until", "2023-05-03", "--store", str(store), "--json"
        ).stdout
    )
    assert {m["session_id"] for m in s3} == {"s3"}  # a bare --until date includes its whole day
    table = run("memories", "list", "--conversation", "ana-cal", "--store", str(store))
    assert table.exit_code == 0 and "Aspen" in table.stdout and "2 memories" in table.stdout


def test_memories_search_uses_both_views(store):
    result = run("memories", "search", "locker code gym", "--store", str(store), "--json")
    assert result.exit_code == 0, result.output
    first = json.loads(result.stdout)[0]
    assert SECRET in first["restatement"] and set(first["views"]) == {"lexical", "dense"}
    table = run("memories", "search", "locker", "--store", str(store), "--k", "2")
    assert table.exit_code == 0 and "lexical#1" in table.stdout


def test_show_gives_cues_sources_and_edges(store):
    mid = secret_id(store)
    shown = json.loads(run("show", f"m{mid}", "--store", str(store), "--json").stdout)
    assert shown["memory_id"] == mid and SECRET in shown["cues"]["concepts"]
    assert [s["turn_id"] for s in shown["sources"]] == ["D3:1"] and shown["sources"][0]["speaker"] == "Ana"
    assert "contiguity" in shown["edges"]
    table = run("show", str(mid), "--store", str(store))
    assert table.exit_code == 0 and "source turns" in table.stdout and "contiguity" in table.stdout


@pytest.mark.parametrize(
    "args, message",
    [
        (["show", "m999"], "no memory m999"),
        (["show", "x1"], "not a memory id"),
        (["show", "99999999999999999999999"], "not a memory id"),  # past BIGINT: was DuckDB's error and its SQL
        (["show", "m²"], "not a memory id"),  # a digit to str.isdigit, not to int(): was a ValueError traceback
        (["show", "m" + "9" * 5000], "not a memory id"),
    ],
)
def test_show_bad_ids_are_one_line(store, args, message):
    result = run(*args, "--store", str(store))
    assert result.exit_code == 2 and message in result.stderr and len(result.stderr.strip().splitlines()) == 1


# --- forget ----------------------------------------------------------------------------------------
def test_forgotten_text_is_in_no_file_of_the_store(store):
    assert files_holding(store, SECRET)  # the WAL, the BM25 vocabulary, ... hold it before
    mid = secret_id(store)
    result = run("forget", f"m{mid}", "--yes", "--store", str(store), "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["memory_ids"] == [mid]
    assert report["counts"] == {
        "memories": 1, "edges": 1, "vectors": 1, "cues": 5, "provenance": 1, "sources": 1
    }  # fmt: skip
    assert files_holding(store, SECRET) == []
    with Memory(store, read_only=True) as memory:
        assert memory.store.count("memories") == 10 and memory.doctor()["ok"]
        assert all(c["status"] == "ok" for c in memory.doctor()["checks"])


def test_forget_asks_first_and_no_leaves_everything(store):
    before = stored_counts(store)
    mid = secret_id(store)
    result = run("forget", str(mid), "--store", str(store), stdin="n\n")
    assert result.exit_code == 1
    assert "will forget: 1 memory, 1 edge, 1 vector, 5 cues, 1 provenance link, 1 source turn" in result.stderr
    assert "nothing was forgotten" in result.stderr and stored_counts(store) == before
    unanswered = run("forget", str(mid), "--store", str(store), stdin="")  # a script without --yes
    assert unanswered.exit_code == 1 and "Aborted" not in unanswered.output
    assert "nothing was forgotten (to forget without being asked, pass --yes)" in unanswered.stderr
    assert stored_counts(store) == before
    agreed = run("forget", str(mid), "--store", str(store), stdin="y\n")
    assert agreed.exit_code == 0 and "forgot: 1 memory, 1 edge" in agreed.stdout


def test_a_surviving_cue_keeps_only_the_forms_its_holders_said(store):
    """A cue outlives a forgotten memory when others hold it, but the words only the forgotten one used go."""
    mid = secret_id(store)
    with Memory(store) as memory:
        con = memory.store.con
        kept = con.execute("SELECT memory_id FROM memories WHERE restatement LIKE '%cabin%'").fetchone()[0]
        con.execute("INSERT INTO memory_cues VALUES (?, 'network'), (?, 'network')", [kept, mid])
        forms = [("network", "network"), ("networkingly", "network"), ("cabin", "network")]
        con.executemany("INSERT INTO cue_forms VALUES (?, ?)", forms)
    assert run("forget", f"m{mid}", "--yes", "--store", str(store)).exit_code == 0
    with Memory(store, read_only=True) as memory:
        rows = memory.store.con.execute("SELECT form FROM cue_forms WHERE cue = 'network' ORDER BY form").fetchall()
    assert [r[0] for r in rows] == ["cabin", "network"]
    assert files_holding(store, "networkingly") == []


def test_forget_a_conversation_removes_it_everywhere(store):
    result = run("forget", "--conversation", "ana-ben", "--yes", "--store", str(store))
    assert result.exit_code == 0, result.output
    with Memory(store, read_only=True) as memory:
        con = memory.store.con
        assert [r[0] for r in con.execute("SELECT DISTINCT conversation_id FROM memories").fetchall()] == ["ana-cal"]
        assert con.execute("SELECT count(*) FROM sources WHERE conversation_id = 'ana-ben'").fetchone()[0] == 0
        assert [r[0] for r in con.execute("SELECT conversation_id FROM conversations").fetchall()] == ["ana-cal"]
        ids = {r[0] for r in con.execute("SELECT memory_id FROM memories").fetchall()}
        ends = {r[0] for r in con.execute("SELECT src FROM edges UNION SELECT dst FROM edges").fetchall()}
        assert ends <= ids and memory.doctor()["ok"]
    assert files_holding(store, "Lena") == [] and files_holding(store, SECRET) == []


def test_keep_sources_keeps_turns_and_reingest_does_not_resurrect(store, tmp_path):
    result = run("forget", "--session", "s3", "--keep-sources", "--yes", "--store", str(store), "--json")
    assert json.loads(result.stdout)["counts"]["sources"] == 0
    with Memory(store) as memory:
        assert memory.store.count("sources") == 11 and memory.store.count("memories") == 9
        report = memory.ingest(tmp_path / "chat.json")
        assert report.memories == 0 and report.duplicates == 9
        assert memory.doctor()["checks"][5]["status"] == "ok"  # memories without sources: none


def test_forget_by_person_and_date(store):
    with Memory(store) as memory:
        plan = memory.forget(person="LENA", dry_run=True)
        assert plan.memory_ids and plan.counts["memories"] == len(plan.memory_ids)
        early = memory.forget(before=datetime(2023, 5, 2))
        assert early.counts["memories"] == 3 and early.counts["sources"] == 3
        assert memory.list_memories(until=datetime(2023, 5, 1, 23, 59)) == []
        assert memory.forget(before=datetime(2023, 5, 2)).empty


def test_recall_in_the_same_process_no_longer_finds_a_forgotten_memory(store):
    with Memory(store) as memory:
        mid = secret_id_in(memory)
        assert mid in [e.memory_id for e in memory.recall("locker code gym", k=5).evidence]
        memory.forget(mid)
        assert mid not in [e.memory_id for e in memory.recall("locker code gym", k=5).evidence]
        assert all(SECRET not in e.restatement for e in memory.recall("locker code", k=20).evidence)


def secret_id_in(memory: Memory) -> int:
    """The secret memory's id through an open Memory."""
    return next(m["memory_id"] for m in memory.list_memories() if SECRET in m["restatement"])


@pytest.mark.parametrize(
    "args, message",
    [
        ([], "say what to forget"),
        (["--before", "soon"], "--before: 'soon' is not a date"),
        (["m-3"], "not a memory id"),
        (["m99999999999999999999999"], "not a memory id"),
    ],
)
def test_forget_mistakes_are_one_line_exit_2(store, args, message):
    before = stored_counts(store)
    result = run("forget", *args, "--yes", "--store", str(store))
    assert result.exit_code == 2 and message in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert stored_counts(store) == before


def test_forget_nothing_matching_changes_nothing(store):
    before = stored_counts(store)
    result = run("forget", "--person", "nobody", "--yes", "--store", str(store))
    assert result.exit_code == 0 and "nothing matches" in result.stdout and stored_counts(store) == before


def test_forgotten_ids_are_not_reused(tmp_path, fake_settings) -> None:
    """A client holding a forgotten memory id must never reach a newer memory through it."""
    from ripplecli.api import Memory, NewTurn

    with Memory(tmp_path / "store") as memory:
        memory.configure(fake_settings)
        first = memory.remember([NewTurn("Ana", "I adopted a cat named Miso.")])
        memory.forget(*first)
        second = memory.remember([NewTurn("Ana", "I started pottery classes.")])
    assert min(second) > max(first)
