"""A crash or a second process never costs data: SIGKILLed ingests (bench/crash.py), read commands on a busy store."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from chats import CHAT_1, CHAT_2, CHAT_3, SECRET, SECRET_CHAT, new_memory, run, session, write_chat
from conftest import use_fake_extractor

from ripplecli.api import Memory
from ripplecli.store.db import Store
from ripplecli.store.seals import read_sealed, sealed_json

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
    result = run(*command, "--store", str(path))
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
        saved, _ = read_sealed(sidecar)  # as a killed run leaves them: sealed, from the version before its commit
        sidecar.write_text(sealed_json({**saved, "version": 0}))
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


@pytest.mark.slow
def test_a_full_disk_under_real_commands_costs_nothing(locomo_dev):
    """bench/crash.py --disk-full, briefly: ingest, forget and repair on a nearly full tmpfs (skipped unless root)."""
    done = subprocess.run(
        [sys.executable, str(REPO / "bench" / "crash.py"), "--disk-full", "--points", "2", "--sessions", "2",
         "--data", str(locomo_dev), "--json"],
        capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    report = json.loads(done.stdout)
    if "skipped" in report:
        pytest.skip(report["skipped"])
    assert done.returncode == 0, done.stderr
    assert report["stopped_by_the_full_disk"] > 0 and report["one_line"] == report["stopped_by_the_full_disk"]
    assert report["tracebacks"] == report["damaged_after"] == 0 and report["final_exact"] == report["trials"]


@pytest.mark.slow
def test_damaged_files_of_a_real_store_never_give_other_evidence(locomo_dev):
    """bench/crash.py --corrupt, briefly: the vector index, recall's arrays and the database, flipped and cut."""
    done = subprocess.run(
        [sys.executable, str(REPO / "bench" / "crash.py"), "--corrupt", "--flips", "1", "--sessions", "2",
         "--only", "vectors.hnsw,recall/recall.bin,ripple.duckdb", "--data", str(locomo_dev), "--json"],
        capture_output=True, text=True, timeout=1200,
    )  # fmt: skip
    report = json.loads(done.stdout)
    assert done.returncode == 0, done.stderr
    assert report["cases"] == 9 and report["reads"]["silently_wrong"] == report["reads"]["traceback"] == 0
    assert report["derived_restored"] == report["derived_cases"] == 6


# --- a forget killed between its deletion and the file rewrite ------------------------------------------------
class Killed(Exception):
    """Stands for SIGKILL at one step of a forget: nothing after it runs, not even `close()`."""


def _files_holding(folder: Path, token: str) -> list[str]:
    """Every file of a store folder whose bytes hold the token."""
    return sorted(
        str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file() and token.encode() in p.read_bytes()
    )


@pytest.fixture
def secret_store(tmp_path, fake_settings, fake_extractor) -> tuple[Path, Path]:
    """Two conversations: ana-ben, whose session s3 holds a unique token, and ana-cal (its chat file returned)."""
    chat = write_chat(tmp_path / "chat.json", [session(1, CHAT_1), session(2, CHAT_2), session(3, SECRET_CHAT)])
    other = write_chat(tmp_path / "other.json", [session(4, CHAT_3)], "ana-cal")
    with new_memory(tmp_path / "store", fake_settings) as memory:
        memory.ingest(chat)
        memory.ingest(other)
    return tmp_path / "store", other


def _stop_at(mp: pytest.MonkeyPatch, step: str) -> None:
    """Make one step of the forget's rewrite stop the process (as a kill would, with the deletion committed)."""

    def stop(*args, **kwargs):
        raise Killed(step)

    if step == "swap":  # the compacted copy is written, the swap into place is not
        real = os.replace
        mp.setattr(os, "replace", lambda a, b: stop() if ".compact.tmp" in str(a) else real(a, b))
    else:
        mp.setattr(Store, step, stop)


NEXT_WRITERS = {
    "doctor --repair": lambda store, chat: ["doctor", "--repair", "--store", store],
    "forget again": lambda store, chat: ["forget", "--session", "s3", "--yes", "--store", store],
    "no-op ingest": lambda store, chat: ["ingest", chat, "--store", store],
}


@pytest.mark.parametrize(
    "step, writer",
    [
        ("rebuild_vector_index", "doctor --repair"),
        ("refresh_lexical_index", "forget again"),
        ("compact", "no-op ingest"),
        ("swap", "doctor --repair"),
    ],
)
def test_a_forget_stopped_after_its_deletion_is_reported_and_finished_by_the_next_writer(secret_store, step, writer):
    """The rewrite is an obligation recorded with the deletion: doctor reports it, the next writer pays it."""
    store, chat = secret_store
    memory = Memory(store)
    with pytest.MonkeyPatch.context() as mp:
        _stop_at(mp, step)
        with pytest.raises(Killed):
            memory.forget(session="s3")
    memory.store.con.close()  # the process dies here: no close(), no index healing
    assert _files_holding(store, SECRET)  # the deleted text still sits in some file
    found = run("doctor", "--json", "--store", str(store))
    assert found.exit_code == 1, found.output
    (owed,) = [c for c in json.loads(found.stdout)["checks"] if c["status"] == "problem"]
    assert owed["check"] == "unfinished forget" and "doctor --repair" in owed["detail"]
    done = run(*NEXT_WRITERS[writer](str(store), str(chat)))
    assert done.exit_code == 0, done.output
    assert _files_holding(store, SECRET) == []
    healed = json.loads(run("doctor", "--json", "--store", str(store)).stdout)
    assert healed["ok"] and {c["status"] for c in healed["checks"]} == {"ok"}, healed
    with Memory(store, read_only=True) as after:
        assert after.store.count("memories") == 9 and after.store.count("sources") == 9


def test_doctor_repair_says_it_finished_the_rewrite(secret_store):
    store, _ = secret_store
    memory = Memory(store)
    with pytest.MonkeyPatch.context() as mp:
        _stop_at(mp, "compact")
        with pytest.raises(Killed):
            memory.forget(session="s3")
    memory.store.con.close()
    repaired = json.loads(run("doctor", "--repair", "--json", "--store", str(store)).stdout)
    assert any("interrupted forget" in line for line in repaired["repaired"]) and repaired["ok"]


def _crash_bench():
    """bench/crash.py as a module (bench/ is not a package; its modules import each other as a script's do)."""
    if str(REPO / "bench") not in sys.path:
        sys.path.insert(0, str(REPO / "bench"))
    spec = importlib.util.spec_from_file_location("crash_bench", REPO / "bench" / "crash.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_sigkilled_forgets_leave_no_forgotten_text_after_the_next_writer(secret_store, tmp_path):
    """Real SIGKILLs of `ripple forget` at spread moments (bench/crash.py --forget runs two dozen on LoCoMo)."""
    bench = _crash_bench()
    base, chat = secret_store
    setup = {
        "home": tmp_path,
        "base": base,
        "conversation": "ana-ben",
        "chat": chat,
        "words": [SECRET, "Lena"],
        "writers": ("doctor --repair", "forget again"),
    }  # fmt: skip (an ingest would need the fake encoder)
    setup.update(bench.forget_baseline(base, tmp_path, "ana-ben"))
    results = bench.forget_trials(setup, kills=3, seed=3, log=lambda line: None)
    summary = bench.forget_summary(results, setup)
    assert summary["kills"] == 3 and summary["stores_holding_forgotten_text"] == 0, results
    assert summary["all_checks_passed"], json.dumps(results, indent=1, default=str)
