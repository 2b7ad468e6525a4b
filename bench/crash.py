"""Crash safety: SIGKILL `ripple ingest` (issue 7) or `ripple forget` (issue 12) at random moments, then check.

.venv/bin/python bench/crash.py [--kills 20] [--conversation conv-30] [--sessions N] [--seed 0] [--json]
.venv/bin/python bench/crash.py --forget [--kills 24] [--conversation conv-30] [--keep conv-26] [--sessions N]
.venv/bin/python bench/crash.py --disk-full [--points 10] [--conversation conv-30] [--keep conv-26] [--sessions N]
.venv/bin/python bench/crash.py --corrupt [--flips 3] [--only FILE,…] [--conversation conv-30] [--sessions N]

Each trial ingests the conversation into a fresh store and kills the process after a random delay: odd trials over
the whole length of an uninterrupted run (start-up, extraction, encoding), even ones in its last quarter (the write
transaction and the index saves). A run that finishes before its kill time is checked too but not counted; the
estimate of the run's length shrinks to it, so the script goes on until `--kills` processes were really killed.
After the kill `ripple doctor` must report no problem; re-running the ingest must end with exactly the memory,
edge and source counts of the uninterrupted run, and doctor must then be all ok.

With --forget, a store holding two conversations is built once; each trial copies it and kills
`ripple forget --conversation C --yes` (odd trials anywhere in the run, even ones anywhere after the confirmation
line: the deletion, the index rebuilds, the file rewrite). Then: when the kill left forgotten words in some file
of the store, `ripple doctor` must say so (exit 1); the next command that writes (in turn `doctor --repair`, the
same forget again, a no-op re-ingest) must leave no file of the store folder holding any of the forgotten
conversation's words, doctor all ok, and the counts of an uninterrupted forget (or, when the kill came before the
deletion committed, the whole store as it was: then the forget is re-run).

With --disk-full (issue 31), the store lives on a small tmpfs (mounting one needs root: without it the mode says why
and exits 0) and each trial fills the disk to leave a few bytes to a few MB free before a command that writes: an
ingest of a second conversation, a forget of it, `doctor --repair`. The command must finish or say in one line
`disk full while …; nothing was lost; free space and run the same command again` (exit 1), never a traceback; doctor
must then find nothing damaged (an unfinished forget is flagged, as it should be); once the space is freed the same
command must finish, with the counts of an uninterrupted run and doctor all ok.

With --corrupt (issue 31), every file of a built store is damaged in turn (bytes flipped at seeded offsets, the file
cut in half, emptied; its time kept). Then asks and `memories search` must give the evidence of the sound store or a
one-line error, never other evidence and never a traceback; doctor must flag the damage unless every read is the
same as before (bytes no command reads: DuckDB's free blocks); `doctor --repair` must restore the store. A damaged
database file cannot be rebuilt from itself: there, `export --salvage` must save every readable row into an export
that `ripple import` takes.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from crash_parts import RIPPLE, counts, files_holding, ingest, ingest_whole, words_only_in, write_conversation

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DATA = REPO.parent / "shared" / "data" / "locomo-dev.json"


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
        ingest_whole(chat, home / name, "the uninterrupted ingest")
    return time.perf_counter() - started, counts(home / "baseline")


def trial(number: int, chat: Path, home: Path, delay: float, expected: dict[str, Any]) -> dict[str, Any]:
    """Kill an ingest after `delay` seconds, check the store, re-run, compare."""
    store = home / f"trial-{number:02d}"
    process = ingest(chat, store)
    started = time.perf_counter()
    finished_first = not kill_after(process, started, delay)
    ran = time.perf_counter() - started
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


def kill_after(process: subprocess.Popen, aim: float, delay: float) -> bool:
    """SIGKILL the process `delay` seconds after the moment `aim`, unless it ends first; True when it was killed."""
    while time.perf_counter() - aim < delay and process.poll() is None:
        time.sleep(0.005)
    killed = process.poll() is None
    if killed:
        os.kill(process.pid, signal.SIGKILL)
    process.wait()
    return killed


def kill_delay(rng: random.Random, number: int, seconds: float) -> float:
    """Odd trials anywhere in the run; even ones in its last quarter, where the transaction and index saves are."""
    low, high = (0.05, 0.75) if number % 2 else (0.75, 1.05)
    return rng.uniform(low, high) * seconds


def main(argv: list[str] | None = None) -> int:
    """Run the trials and print one line each, then the tally."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=20)
    parser.add_argument("--forget", action="store_true", help="Kill `ripple forget` instead of `ripple ingest`.")
    parser.add_argument("--keep", default="conv-26", help="With --forget: the conversation that stays.")
    parser.add_argument("--conversation", default="conv-30")
    parser.add_argument("--sessions", type=int, default=None, help="Only the first N sessions (a shorter run).")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--disk-full", action="store_true", help="Fill a small tmpfs before commands that write.")
    parser.add_argument("--points", type=int, default=10, help="With --disk-full: free-space points per command.")
    parser.add_argument("--corrupt", action="store_true", help="Damage every file of a store in turn.")
    parser.add_argument("--flips", type=int, default=3, help="With --corrupt: flipped offsets per file.")
    parser.add_argument("--only", default=None, help="With --corrupt: these files only (comma-separated paths).")
    args = parser.parse_args(argv)
    if args.forget:
        return run_forget_mode(args)
    if args.disk_full:
        from crash_modes import run_disk_full_mode

        return run_disk_full_mode(args)
    if args.corrupt:
        from crash_modes import run_corrupt_mode

        return run_corrupt_mode(args)
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


# --- kills during `ripple forget` ---------------------------------------------------------------------------
NEXT_WRITERS = ("doctor --repair", "forget again", "no-op ingest")


def forget_command(store: Path, conversation: str) -> list[str]:
    """`ripple forget --conversation C --yes` on a store."""
    return [*RIPPLE, "forget", "--conversation", conversation, "--yes", "--store", str(store)]


def build_two_conversation_store(args: argparse.Namespace, home: Path) -> tuple[Path, Path, Path]:
    """The base store (the kept conversation, then the forgotten one) and the two chat files."""
    kept = write_conversation(args.data, args.keep, args.sessions, home)
    forgotten = write_conversation(args.data, args.conversation, args.sessions, home)
    for chat in (kept, forgotten):
        ingest_whole(chat, home / "base", "building the base store")
    return home / "base", kept, forgotten


def forget_baseline(base: Path, home: Path, conversation: str) -> dict[str, Any]:
    """An uninterrupted forget on a copy: total seconds, when its confirmation line came, the counts after."""
    store = home / "baseline-forget"
    shutil.copytree(base, store)
    started = time.perf_counter()
    process = subprocess.Popen(forget_command(store, conversation), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert process.stderr is not None
    first_line = process.stderr.readline()
    planned = time.perf_counter() - started
    rest = process.stderr.read()
    process.wait()
    if process.returncode != 0 or b"will forget" not in first_line:
        raise SystemExit(f"the uninterrupted forget failed: {(first_line + rest).decode()}")
    return {"seconds": time.perf_counter() - started, "planned": planned, "expected": counts(store)}


def next_writer(kind: str, store: Path, conversation: str, chat: Path) -> subprocess.CompletedProcess:
    """The next command that opens the store for writing after the kill."""
    commands = {
        "doctor --repair": [*RIPPLE, "doctor", "--repair", "--json", "--store", str(store)],
        "forget again": forget_command(store, conversation),
        "no-op ingest": [*RIPPLE, "ingest", str(chat), "--store", str(store)],
    }
    return subprocess.run(commands[kind], capture_output=True, text=True)


def kill_forget(store: Path, conversation: str, delay: float, after_confirmation: bool) -> tuple[bool, float]:
    """Start the forget, SIGKILL it `delay` seconds after its start (or after its confirmation line, which comes
    just before the deleting transaction); (killed, seconds it ran)."""
    process = subprocess.Popen(forget_command(store, conversation), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert process.stderr is not None
    started = time.perf_counter()
    aim = started
    if after_confirmation:
        process.stderr.readline()
        aim = time.perf_counter()
    killed = kill_after(process, aim, delay)
    process.stderr.close()
    return killed, time.perf_counter() - started


def forget_trial(number: int, setup: dict[str, Any], delay: float) -> dict[str, Any]:
    """Kill a forget on a fresh copy of the base store, check what doctor says, run the next writer, grep."""
    store = setup["home"] / f"forget-{number:02d}"
    shutil.copytree(setup["base"], store)
    late = number % 2 == 0
    killed, ran = kill_forget(store, setup["conversation"], delay, after_confirmation=late)
    committed = counts(store)["memories"] == setup["expected"]["memories"]
    held_after_kill = files_holding(store, setup["words"])
    kill_doctor, kill_findings = doctor(store)
    writers = setup.get("writers", NEXT_WRITERS)
    writer = writers[(number - 1) % len(writers)]
    done = next_writer(writer, store, setup["conversation"], setup["chat"])
    if not committed:  # the kill came before the deletion committed: nothing was forgotten; forget it now
        subprocess.run(forget_command(store, setup["conversation"]), capture_output=True)
    held_at_end = files_holding(store, setup["words"])
    final_doctor, final_findings = doctor(store)
    flagged = kill_doctor == 1 or not committed  # forgotten text on disk must be a problem doctor reports
    ok = (not held_after_kill or flagged) and done.returncode == 0 and not held_at_end
    ok = ok and final_doctor == 0 and not final_findings and counts(store) == setup["expected"]
    return {
        "trial": number, "delay": round(delay, 2), "after_confirmation": late, "ran": round(ran, 2),
        "killed": killed, "committed": committed, "held_after_kill": held_after_kill, "doctor_after_kill": kill_doctor,
        "not_ok_after_kill": kill_findings, "next_writer": writer, "writer_exit": done.returncode,
        "held_at_end": held_at_end, "not_ok_at_end": final_findings, "passed": ok,
    }  # fmt: skip


def forget_delay(rng: random.Random, number: int, timing: dict[str, Any]) -> float:
    """Odd trials anywhere in the run (from its start); even ones anywhere after the confirmation line (deletion,
    index rebuilds, file rewrite), counted from that line."""
    if number % 2:
        return rng.uniform(0.05, 1.02) * timing["seconds"]
    return rng.uniform(0.0, 1.05) * (timing["seconds"] - timing["planned"])


def forget_trials(setup: dict[str, Any], kills: int, seed: int, log=print) -> list[dict[str, Any]]:
    """Trials until `kills` forgets were really killed (runs that finished first are checked too)."""
    rng, results, killed = random.Random(seed), [], 0
    while killed < kills and len(results) < 3 * kills:
        number = len(results) + 1
        result = forget_trial(number, setup, forget_delay(rng, number, setup))
        results.append(result)
        log(_forget_line(result))
        killed += result["killed"]
    return results


def forget_summary(results: list[dict[str, Any]], setup: dict[str, Any]) -> dict[str, Any]:
    """The tally: how many stores still hold forgotten text (must be 0), and how the kills landed."""
    killed = [r for r in results if r["killed"]]
    return {
        "kills": len(killed),
        "finished_before_kill": len(results) - len(killed),
        "stores_holding_forgotten_text": sum(bool(r["held_at_end"]) for r in results),
        "stores": len(results),
        "killed_after_commit": sum(r["committed"] for r in killed),
        "held_text_after_kill": sum(bool(r["held_after_kill"]) and r["committed"] for r in killed),
        "doctor_flagged_after_kill": sum(r["doctor_after_kill"] == 1 for r in killed),
        "all_checks_passed": all(r["passed"] for r in results),
        "baseline_seconds": round(setup["seconds"], 2),
        "confirmation_at": round(setup["planned"], 2),
        "words": setup["words"],
        "expected": setup["expected"],
    }


def run_forget_mode(args: argparse.Namespace) -> int:
    """Build the two-conversation store, time an uninterrupted forget, then the kill trials."""
    with tempfile.TemporaryDirectory(prefix="ripple-crash-forget-") as folder:
        home = Path(folder)
        base, kept, forgotten = build_two_conversation_store(args, home)
        setup = {"home": home, "base": base, "conversation": args.conversation, "chat": kept,
                 "words": words_only_in(forgotten, kept)}  # fmt: skip
        if not files_holding(base, setup["words"]):
            raise SystemExit(f"none of {setup['words']} is in the base store's files: the grep would prove nothing")
        setup.update(forget_baseline(base, home, args.conversation))
        print(f"uninterrupted forget: {setup['seconds']:.2f} s (confirmation at {setup['planned']:.2f} s); "
              f"grepping for {setup['words']}", file=sys.stderr)  # fmt: skip
        results = forget_trials(setup, args.kills, args.seed, log=lambda line: print(line, file=sys.stderr))
        summary = forget_summary(results, setup)
    if args.json:
        print(json.dumps({**summary, "trials": results}, indent=2))
    print(
        f"{summary['stores_holding_forgotten_text']} of {summary['stores']} stores hold forgotten text "
        f"({summary['kills']} kills, {summary['killed_after_commit']} after the deletion committed, "
        f"{summary['held_text_after_kill']} of those holding it until the next writer, doctor flagged "
        f"{summary['doctor_flagged_after_kill']})",
        file=sys.stderr,
    )
    return 0 if summary["all_checks_passed"] and summary["kills"] == args.kills else 1


def _forget_line(result: dict[str, Any]) -> str:
    """One forget trial, human readable."""
    verdict = "ok  " if result["passed"] else "FAIL"
    aim = f"{result['delay']:.2f} s after the confirmation" if result["after_confirmation"] else "from start"
    kill = f"killed at {result['ran']:5.2f} s ({aim})" if result["killed"] else f"finished first ({aim})"
    state = "deleted" if result["committed"] else "not yet deleted"
    held = f"text in {', '.join(result['held_after_kill'])}" if result["held_after_kill"] else "no text left"
    end = f"; still held in {result['held_at_end']}" if result["held_at_end"] else ""
    return (
        f"{verdict} #{result['trial']:02d} {kill}; {state}; {held}; doctor exit {result['doctor_after_kill']}; "
        f"then {result['next_writer']} (exit {result['writer_exit']}){end}"
    )


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
