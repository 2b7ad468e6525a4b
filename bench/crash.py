"""Crash safety (issue 7): SIGKILL `ripple ingest` at random moments, then check the store and finish the ingest.

.venv/bin/python bench/crash.py [--kills 20] [--conversation conv-30] [--sessions N] [--seed 0] [--json]

Each trial ingests the conversation into a fresh store and kills the process after a random delay: odd trials over
the whole length of an uninterrupted run (start-up, extraction, encoding), even ones in its last quarter (the write
transaction and the index saves). A run that finishes before its kill time is checked too but not counted; the
estimate of the run's length shrinks to it, so the script goes on until `--kills` processes were really killed.
After the kill `ripple doctor` must report no problem; re-running the ingest must end with exactly the memory,
edge and source counts of the uninterrupted run, and doctor must then be all ok.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import duckdb

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DATA = REPO.parent / "shared" / "data" / "locomo-dev.json"
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


def doctor(store: Path) -> tuple[int, list[str]]:
    """`ripple doctor --json`: exit code and the checks that are not ok."""
    if not (store / "ripple.duckdb").exists():
        return 0, ["no store yet"]
    done = subprocess.run([*RIPPLE, "doctor", "--json", "--store", str(store)], capture_output=True, text=True)
    try:
        report = json.loads(done.stdout)
    except ValueError:
        return done.returncode or 99, [done.stderr.strip()]
    return done.returncode, [f"{c['check']}: {c['status']}" for c in report["checks"] if c["status"] != "ok"]


def baseline(chat: Path, home: Path) -> tuple[float, dict[str, Any]]:
    """An uninterrupted run after a warm-up (the first run may export the encoder): its wall time and counts."""
    for name in ("warm-up", "baseline"):
        started = time.perf_counter()
        process = ingest(chat, home / name)
        _, err = process.communicate()
        if process.returncode != 0:
            raise SystemExit(f"the uninterrupted ingest failed: {err.decode()}")
    return time.perf_counter() - started, counts(home / "baseline")


def trial(number: int, chat: Path, home: Path, delay: float, expected: dict[str, Any]) -> dict[str, Any]:
    """Kill an ingest after `delay` seconds, check the store, re-run, compare."""
    store = home / f"trial-{number:02d}"
    process = ingest(chat, store)
    started = time.perf_counter()
    while time.perf_counter() - started < delay and process.poll() is None:
        time.sleep(0.02)
    ran = time.perf_counter() - started
    finished_first = process.poll() is not None
    if not finished_first:
        os.kill(process.pid, signal.SIGKILL)
    process.wait()
    after_kill = counts(store)
    kill_doctor, kill_findings = doctor(store)
    rerun = ingest(chat, store)
    _, err = rerun.communicate()
    final = counts(store)
    final_doctor, final_findings = doctor(store)
    ok = kill_doctor == 0 and rerun.returncode == 0 and final == expected and final_doctor == 0 and not final_findings
    return {
        "trial": number,
        "delay": round(delay, 2),
        "ran": round(ran, 2),
        "killed": not finished_first,
        "state_after_kill": "committed" if after_kill["memories"] else "nothing written",
        "doctor_after_kill": kill_doctor,
        "not_ok_after_kill": kill_findings,
        "rerun_exit": rerun.returncode,
        "rerun_error": err.decode().strip()[-300:] if rerun.returncode else "",
        "final": final,
        "not_ok_at_end": final_findings,
        "passed": ok,
    }


def kill_delay(rng: random.Random, number: int, seconds: float) -> float:
    """Odd trials anywhere in the run; even ones in its last quarter, where the transaction and index saves are."""
    low, high = (0.05, 0.75) if number % 2 else (0.75, 1.05)
    return rng.uniform(low, high) * seconds


def main(argv: list[str] | None = None) -> int:
    """Run the trials and print one line each, then the tally."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=20)
    parser.add_argument("--conversation", default="conv-30")
    parser.add_argument("--sessions", type=int, default=None, help="Only the first N sessions (a shorter run).")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory(prefix="ripple-crash-") as folder:
        home = Path(folder)
        chat = write_conversation(args.data, args.conversation, args.sessions, home)
        seconds, expected = baseline(chat, home)
        print(f"uninterrupted: {seconds:.1f} s, {expected}", file=sys.stderr)
        results: list[dict[str, Any]] = []
        kills = 0
        while kills < args.kills and len(results) < 3 * args.kills:
            result = trial(len(results) + 1, chat, home, kill_delay(rng, kills + 1, seconds), expected)
            results.append(result)
            print(_line(result), file=sys.stderr)
            kills += result["killed"]
            if not result["killed"]:  # this run was quicker than the estimate: aim the next kills inside it
                seconds = min(seconds, result["ran"])
    passed = sum(r["passed"] for r in results if r["killed"])
    summary = {
        "passed": passed,
        "kills": kills,
        "finished_before_kill": len(results) - kills,
        "all_checks_passed": all(r["passed"] for r in results),
        "baseline_seconds": round(seconds, 1),
        "expected": expected,
    }
    if args.json:
        print(json.dumps({**summary, "trials": results}, indent=2))
    extra = len(results) - kills
    print(f"{passed}/{kills} kills passed (+{extra} runs finished before their kill, checked too)", file=sys.stderr)
    return 0 if summary["all_checks_passed"] and kills == args.kills else 1


def _line(result: dict[str, Any]) -> str:
    """One trial, human readable."""
    verdict = "ok  " if result["passed"] else "FAIL"
    kill = f"killed at {result['delay']:5.1f} s" if result["killed"] else f"finished before {result['delay']:.1f} s"
    notes = ", ".join(result["not_ok_after_kill"]) or "all ok"
    return f"{verdict} #{result['trial']:02d} {kill}; {result['state_after_kill']}; doctor: {notes}" + (
        "" if result["passed"] else f"; final {result['final']} {result['not_ok_at_end']} {result['rerun_error']}"
    )


if __name__ == "__main__":
    sys.exit(main())
