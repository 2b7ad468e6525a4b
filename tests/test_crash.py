"""A crash or a second process never costs data: SIGKILLed ingests (bench/crash.py), read commands on a busy store."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from chats import CHAT_1, CHAT_2, new_memory, run, session, write_chat
from conftest import use_fake_extractor

REPO = Path(__file__).resolve().parent.parent
READ_COMMANDS = [
    ["graph", "stats"],
    ["memories", "list"],
    ["memories", "search", "hiking"],
    ["show", "m1"],
    ["export"],
    ["doctor"],
    ["ask", "where did Ana go hiking?"],
]


@pytest.mark.parametrize("command", READ_COMMANDS, ids=lambda c: " ".join(c[:2]))
def test_read_commands_on_a_store_being_written_say_who_holds_it(held_store, command):
    path, holder = held_store
    started = time.perf_counter()
    result = run(*command, "--store", str(path))
    assert time.perf_counter() - started < 1.0
    assert result.exit_code == 3, result.output
    assert result.stderr.strip() == f"ripple: error: store {path} is in use by process {holder.pid}"


@pytest.mark.parametrize("command", [["forget", "m1", "--yes"], ["doctor", "--repair"]], ids=["forget", "repair"])
def test_write_commands_on_a_busy_store_are_exit_3(held_store, command):
    path, holder = held_store
    result = run(*command, "--store", str(path))
    assert result.exit_code == 3 and f"in use by process {holder.pid}" in result.stderr


def test_a_rerun_heals_indexes_a_killed_run_committed_past(tmp_path, fake_settings, monkeypatch):
    """A kill after the commit but before the index saves: the next writer (even a no-op ingest) rebuilds them."""
    use_fake_extractor(monkeypatch)
    chat = write_chat(tmp_path / "chat.json", [session(1, CHAT_1), session(2, CHAT_2)])
    with new_memory(tmp_path / "store", fake_settings) as memory:
        memory.ingest(chat)
    for sidecar in (tmp_path / "store" / "lexical" / "ripple.json", tmp_path / "store" / "vectors.hnsw.meta.json"):
        sidecar.write_text(json.dumps({**json.loads(sidecar.read_text()), "version": 0}))
    stale = json.loads(run("doctor", "--json", "--store", str(tmp_path / "store")).stdout)
    assert {c["check"] for c in stale["checks"] if c["status"] == "stale"} == {"vector index", "lexical index"}
    rerun = run("ingest", str(chat), "--store", str(tmp_path / "store"), "--json")
    assert rerun.exit_code == 0 and json.loads(rerun.stdout)[0]["memories"] == 0
    healed = json.loads(run("doctor", "--json", "--store", str(tmp_path / "store")).stdout)
    assert {c["status"] for c in healed["checks"]} == {"ok"}


@pytest.mark.slow
def test_sigkilled_ingests_leave_a_clean_store_and_finish_exactly(locomo_dev):
    """Three kills of a real `ripple ingest` (bench/crash.py runs twenty on the whole conversation)."""
    done = subprocess.run(
        [sys.executable, str(REPO / "bench" / "crash.py"), "--kills", "3", "--sessions", "3", "--seed", "7",
         "--data", str(locomo_dev), "--json"],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    report = json.loads(done.stdout)
    assert done.returncode == 0 and report["passed"] == 3, done.stderr
    assert report["expected"]["memories"] == report["expected"]["sources"] > 0
