"""bench/crash.py's --disk-full and --corrupt modes (issue 31): a full disk and damaged files, every case checked.

Run through bench/crash.py (its docstring says what each mode checks); the helpers for stores, counts and doctor
are crash.py's.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from crash_parts import RIPPLE, counts, files_holding, ingest_whole, words_only_in, write_conversation

DISK_FULL = re.compile(r"^ripple: error: disk full while ([^;]+); nothing was lost; free space and run the same "
                       r"command again$")  # fmt: skip
ONE_LINE_ERROR = re.compile(r"^ripple: error: .+$")
FORGET_PROBLEMS = {"unfinished forget"}  # what doctor rightly flags after a forget stopped by a full disk


def ripple(*args: str) -> subprocess.CompletedProcess:
    """One ripple command, its output captured."""
    return subprocess.run([*RIPPLE, *args], capture_output=True, text=True)


def doctor(store: Path) -> tuple[int, list[str]]:
    """`ripple doctor --json`: its exit code (99 for a traceback) and the checks that are not ok."""
    done = ripple("doctor", "--json", "--store", str(store))
    if "Traceback" in done.stderr:
        return 99, [last_line(done.stderr)]
    try:
        report = json.loads(done.stdout)
    except ValueError:
        return done.returncode or 98, [last_line(done.stderr)]
    return done.returncode, [f"{c['check']}: {c['status']}" for c in report["checks"] if c["status"] != "ok"]


def last_line(text: str) -> str:
    """The last non-empty line of a command's stderr."""
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""


# --- --disk-full ------------------------------------------------------------------------------------------------
class Tmpfs:
    """A tmpfs mounted on a temp folder (root only), unmounted on exit."""

    def __init__(self, folder: Path, megabytes: int) -> None:
        self.folder, self.megabytes = folder, megabytes

    def __enter__(self) -> Path:
        self.folder.mkdir(parents=True, exist_ok=True)
        done = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={self.megabytes}m", "tmpfs", str(self.folder)],
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            raise PermissionError(done.stderr.strip() or f"mount exited {done.returncode}")
        return self.folder

    def __exit__(self, *exc: object) -> None:
        subprocess.run(["umount", "-l", str(self.folder)], capture_output=True)


def fill(disk: Path, leave: int) -> Path:
    """A file taking all but `leave` bytes of the disk."""
    filler = disk / "filler"
    with filler.open("wb") as out:
        left = shutil.disk_usage(disk).free - leave
        while left > 0:
            try:
                left -= out.write(b"\0" * min(left, 1 << 20))
            except OSError:
                break
    return filler


def folder_bytes(folder: Path) -> int:
    """Bytes of every file under a folder."""
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def free_points(rng: random.Random, points: int, most: int) -> list[int]:
    """Free-space amounts from none to `most`: 0, then spread evenly on a log scale from 4 KiB, each jittered."""
    low, high, spread = 4096, max(most, 8192), max(points - 2, 1)
    return [0] + [int(low * (high / low) ** (i / spread) * rng.uniform(0.8, 1.25)) for i in range(points - 1)]


def disk_full_setup(args, home: Path) -> dict[str, Any]:
    """The chats, the starting stores and each command's uninterrupted result, on an ordinary disk."""
    kept = write_conversation(args.data, args.keep, args.sessions, home)
    added = write_conversation(args.data, args.conversation, args.sessions, home)
    ingest_whole(kept, home / "one", "building the base store")
    shutil.copytree(home / "one", home / "two")
    ingest_whole(added, home / "two", "building the two-conversation store")
    commands = {
        "ingest": (home / "one", ["ingest", str(added)]),
        "forget": (home / "two", ["forget", "--conversation", args.conversation, "--yes"]),
        "doctor --repair": (home / "two", ["doctor", "--repair"]),
    }
    expected = {}
    for name, (start, command) in commands.items():
        reference = home / f"reference-{name.replace(' ', '')}"
        shutil.copytree(start, reference)
        done = ripple(*command, "--store", str(reference))
        if done.returncode != 0:
            raise SystemExit(f"the uninterrupted {name} failed: {done.stderr}")
        expected[name] = counts(reference)
    words = words_only_in(added, kept)
    return {"commands": commands, "expected": expected, "words": words, "largest": folder_bytes(home / "two")}


def disk_full_trial(name: str, setup: dict[str, Any], disk: Path, leave: int) -> dict[str, Any]:
    """Copy the command's starting store onto the disk, leave `leave` bytes free, run it; then free the space and
    run it again."""
    start, command = setup["commands"][name]
    store = disk / "store"
    shutil.rmtree(store, ignore_errors=True)
    (disk / "filler").unlink(missing_ok=True)
    shutil.copytree(start, store)
    filler = fill(disk, leave)
    first = ripple(*command, "--store", str(store))
    said = DISK_FULL.match(last_line(first.stderr))
    doctor_exit, flagged = doctor(store)
    problems = {f.split(":")[0] for f in flagged if f.endswith(": problem")}
    filler.unlink()
    again = ripple(*command, "--store", str(store))
    final_doctor, final_findings = doctor(store)
    final = counts(store)
    held = files_holding(store, setup["words"]) if name == "forget" else []
    outcome = "finished" if first.returncode == 0 else ("one line" if first.returncode == 1 and said else "other")
    damaged = bool(problems - (FORGET_PROBLEMS if name == "forget" else set()))
    return {
        "command": name, "free": leave, "outcome": outcome, "step": said.group(1) if said else None,
        "traceback": "Traceback" in first.stderr or "Traceback" in again.stderr,
        "error": "" if outcome != "other" else first.stderr.strip()[-400:],
        "doctor_after": doctor_exit, "not_ok_after": flagged, "damaged_after": damaged,
        "rerun_exit": again.returncode, "final_exact": final == setup["expected"][name],
        "final_doctor_ok": final_doctor == 0 and not final_findings, "holds_forgotten_text": held,
    }  # fmt: skip


def disk_full_summary(results: list[dict[str, Any]]) -> dict[str, Any]:
    """The tally: every trial must finish or say one line, leave nothing damaged, and finish exactly when re-run."""
    failed = [r for r in results if r["outcome"] != "finished"]
    return {
        "trials": len(results),
        "stopped_by_the_full_disk": len(failed),
        "one_line": sum(r["outcome"] == "one line" for r in results),
        "other_errors": sum(r["outcome"] == "other" for r in results),
        "tracebacks": sum(r["traceback"] for r in results),
        "damaged_after": sum(r["damaged_after"] for r in results),
        "doctor_flagged_unfinished_forget": sum(bool(r["not_ok_after"]) and r["command"] == "forget" for r in failed),
        "rerun_finished": sum(r["rerun_exit"] == 0 for r in results),
        "final_exact": sum(r["final_exact"] for r in results),
        "final_doctor_ok": sum(r["final_doctor_ok"] for r in results),
        "holding_forgotten_text": sum(bool(r["holds_forgotten_text"]) for r in results),
        "steps": sorted({r["step"] for r in results if r["step"]}),
    }


def disk_full_passed(summary: dict[str, Any]) -> bool:
    """Every check of the mode held."""
    everyone = summary["trials"]
    return (
        summary["other_errors"] == 0
        and summary["tracebacks"] == 0
        and summary["damaged_after"] == 0
        and summary["rerun_finished"] == summary["final_exact"] == summary["final_doctor_ok"] == everyone
        and summary["holding_forgotten_text"] == 0
    )


def run_disk_full_mode(args) -> int:
    """Build the stores, mount the tmpfs, sweep free space for each command, print the tally."""
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory(prefix="ripple-crash-disk-") as folder:
        home = Path(folder)
        setup = disk_full_setup(args, home)
        megabytes = 2 * setup["largest"] // 2**20 + 64
        try:
            with Tmpfs(home / "disk", megabytes) as disk:
                results = []
                for name in setup["commands"]:
                    for leave in free_points(rng, args.points, setup["largest"]):
                        result = disk_full_trial(name, setup, disk, leave)
                        results.append(result)
                        print(_disk_line(result), file=sys.stderr)
        except PermissionError as exc:
            print(f"--disk-full skipped: cannot mount a tmpfs here ({exc}); run it as root", file=sys.stderr)
            if args.json:
                print(json.dumps({"skipped": str(exc)}))
            return 0
    summary = disk_full_summary(results)
    if args.json:
        print(json.dumps({**summary, "results": results}, indent=2))
    print(
        f"{summary['trials']} trials, {summary['stopped_by_the_full_disk']} stopped by the full disk "
        f"({summary['one_line']} in one line, {summary['other_errors']} otherwise, {summary['tracebacks']} "
        f"tracebacks; steps: {', '.join(summary['steps'])}); {summary['damaged_after']} left a damaged file; "
        f"re-run: {summary['rerun_finished']} finished, {summary['final_exact']} exact, "
        f"{summary['final_doctor_ok']} doctor ok",
        file=sys.stderr,
    )
    return 0 if disk_full_passed(summary) else 1


def _disk_line(result: dict[str, Any]) -> str:
    """One disk-full trial, human readable."""
    ok = (
        result["outcome"] != "other"
        and not result["traceback"]
        and not result["damaged_after"]
        and result["rerun_exit"] == 0
        and result["final_exact"]
        and result["final_doctor_ok"]
    )
    step = f" while {result['step']}" if result["step"] else ""
    flagged = ", ".join(result["not_ok_after"]) or "all ok"
    return (
        f"{'ok  ' if ok else 'FAIL'} {result['command']:<16} {result['free']:>10,} B free: {result['outcome']}{step};"
        f" doctor: {flagged}; again: exit {result['rerun_exit']}" + (f"; {result['error']}" if result["error"] else "")
    )


# --- --corrupt -------------------------------------------------------------------------------------------------
def damage(path: Path, how: str, at: int = 0) -> None:
    """Flip 4 bytes at `at`, cut the file in half or empty it, keeping its modification time."""
    info = path.stat()
    if how == "flip":
        with path.open("r+b") as handle:
            handle.seek(at)
            data = handle.read(4)
            handle.seek(at)
            handle.write(bytes(b ^ 0xA5 for b in data))
    else:
        os.truncate(path, info.st_size // 2 if how == "half" else 0)
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))


def restamp(store: Path) -> None:
    """Open a copied store for writing and close it: its snapshot names the database file by inode, so a copy's
    asks would open the database instead, and the snapshot's own reads would go untested."""
    code = "import sys; from ripplecli.store.db import Store; Store.open(sys.argv[1], create=False).close()"
    subprocess.run([sys.executable, "-c", code, str(store)], check=True, capture_output=True)


def reads(store: Path, questions: list[str], search: str) -> dict[str, Any]:
    """What the read commands give: per question the evidence of a cold ask, and `memories search`'s hits (or
    the one-line error, or the traceback)."""
    found: dict[str, Any] = {}
    for number, question in enumerate(questions):
        done = ripple("ask", question, "--no-answer", "--no-trace", "--json", "--store", str(store))
        found[f"ask {number}"] = _read(done, lambda doc: [(e["memory_id"], e["restatement"]) for e in doc["evidence"]])
    done = ripple("memories", "search", search, "--json", "--store", str(store))
    found["search"] = _read(done, lambda doc: [(m["memory_id"], m["restatement"]) for m in doc])
    return found


def _read(done: subprocess.CompletedProcess, pick) -> dict[str, Any]:
    """One read command's result: what it gave, whether it said something on stderr, or how it failed."""
    if "Traceback" in done.stderr:
        return {"traceback": done.stderr.strip()[-300:]}
    if done.returncode != 0:
        line = last_line(done.stderr)
        return {"error": line, "one_line": bool(ONE_LINE_ERROR.match(line)) and len(done.stderr.splitlines()) == 1}
    return {"gave": pick(json.loads(done.stdout)), "said": "damaged" in done.stderr}


def export_lines(store: Path) -> list[str] | None:
    """The store's export, sorted (None when it cannot be written)."""
    done = ripple("export", "--with-vectors", "--store", str(store))
    return sorted(done.stdout.splitlines()[1:]) if done.returncode == 0 else None


def judge_reads(found: dict[str, Any], references: list[dict[str, Any]]) -> dict[str, int]:
    """How each read went against the sound store's (a rebuilt vector index may order near-ties otherwise, so the
    sound store after a repair is a reference too)."""
    tally = {"same": 0, "one_line_error": 0, "silently_wrong": 0, "wrong_but_said": 0, "traceback": 0, "other": 0}
    for key, result in found.items():
        if "traceback" in result:
            tally["traceback"] += 1
        elif "error" in result:
            tally["one_line_error" if result["one_line"] else "other"] += 1
        elif any(result["gave"] == reference[key].get("gave") for reference in references):
            tally["same"] += 1
        else:
            tally["wrong_but_said" if result["said"] else "silently_wrong"] += 1
    return tally


def corrupt_setup(args, home: Path) -> dict[str, Any]:
    """The sound store, its reads and export, and its reads after a repair."""
    chat = write_conversation(args.data, args.conversation, args.sessions, home)
    ingest_whole(chat, home / "sound", "building the store")
    sample = json.loads(chat.read_text(encoding="utf-8"))[0]
    questions = [qa["question"] for qa in sample["qa"][:2]]
    search = " ".join(questions[0].split()[:4])
    repaired = home / "sound-repaired"
    shutil.copytree(home / "sound", repaired)
    ripple("doctor", "--repair", "--store", str(repaired))
    return {
        "sound": home / "sound", "questions": questions, "search": search, "export": export_lines(home / "sound"),
        "references": [reads(home / "sound", questions, search), reads(repaired, questions, search)],
    }  # fmt: skip


def corrupt_cases(sound: Path, flips: int, rng: random.Random, only: str | None) -> list[tuple[str, str, int]]:
    """(file, damage, offset) for every file of the store (or those named): flips at seeded offsets, then a cut
    and an emptying."""
    cases = []
    for path in sorted(p for p in sound.rglob("*") if p.is_file()):
        name, size = str(path.relative_to(sound)), path.stat().st_size
        if only and name not in only.split(","):
            continue
        cases += [(name, "flip", rng.randrange(size)) for _ in range(flips if size else 0)]
        cases += [(name, "half", 0), (name, "empty", 0)]
    return cases


def corrupt_trial(case: tuple[str, str, int], setup: dict[str, Any], home: Path) -> dict[str, Any]:
    """Damage one file of a copy of the sound store; read, doctor, repair (or salvage the database), read again."""
    name, how, at = case
    store = home / "trial"
    shutil.rmtree(store, ignore_errors=True)
    shutil.copytree(setup["sound"], store)
    restamp(store)
    damage(store / name, how, at)
    found = reads(store, setup["questions"], setup["search"])
    tally = judge_reads(found, setup["references"])
    doctor_exit, flagged = doctor(store)
    unchanged = tally["same"] == len(found) and export_lines(store) == setup["export"]
    result = {"file": name, "damage": how, "at": at, "reads": tally, "doctor_exit": doctor_exit, "flagged": flagged,
              "no_effect": unchanged and doctor_exit == 0 and not flagged}  # fmt: skip
    repair = ripple("doctor", "--repair", "--store", str(store))
    result["repair_exit"], result["repair_traceback"] = repair.returncode, "Traceback" in repair.stderr
    after_exit, after_flagged = doctor(store)
    after = judge_reads(reads(store, setup["questions"], setup["search"]), setup["references"])
    result["restored"] = after_exit == 0 and not after_flagged and after["same"] == len(found)
    if not result["restored"] and name == "ripple.duckdb":
        result["salvage"] = salvage(store, home)
    return result


def salvage(store: Path, home: Path) -> dict[str, Any]:
    """export --salvage, then import into a new store: the records kept and whether the new store is sound."""
    out, new = home / "salvage.jsonl", home / "salvaged"
    out.unlink(missing_ok=True)
    shutil.rmtree(new, ignore_errors=True)
    done = ripple("export", "--salvage", "--with-vectors", "--out", str(out), "--store", str(store))
    if done.returncode != 0:
        return {"exit": done.returncode, "line": last_line(done.stderr), "traceback": "Traceback" in done.stderr}
    header = json.loads(out.read_text(encoding="utf-8").splitlines()[0])
    imported = ripple("import", str(out), "--store", str(new))
    new_doctor, new_findings = doctor(new) if imported.returncode == 0 else (None, [])
    return {
        "exit": 0, "traceback": "Traceback" in done.stderr, "records": header["counts"],
        "lost": header.get("salvage", {}).get("lost", {}), "import_exit": imported.returncode,
        "imported_doctor": new_doctor, "imported_findings": new_findings,
    }  # fmt: skip


def corrupt_summary(results: list[dict[str, Any]]) -> dict[str, Any]:
    """The tally of reads, doctor's flags and repairs over every case."""
    reads_total: dict[str, int] = {}
    for result in results:
        for key, value in result["reads"].items():
            reads_total[key] = reads_total.get(key, 0) + value
    derived = [r for r in results if r["file"] != "ripple.duckdb"]
    database = [r for r in results if r["file"] == "ripple.duckdb"]
    salvaged = [r["salvage"] for r in database if "salvage" in r]
    return {
        "cases": len(results),
        "reads": reads_total,
        "flagged_by_doctor": sum(r["doctor_exit"] != 0 or bool(r["flagged"]) for r in results),
        "no_effect": sum(r["no_effect"] for r in results),
        "neither": sum(not (r["doctor_exit"] or r["flagged"] or r["no_effect"]) for r in results),
        "doctor_tracebacks": sum(r["doctor_exit"] == 99 for r in results),
        "repair_tracebacks": sum(r["repair_traceback"] for r in results),
        "derived_cases": len(derived),
        "derived_restored": sum(r["restored"] for r in derived),
        "database_cases": len(database),
        "database_restored_by_repair": sum(r["restored"] for r in database),
        "database_salvaged": len(salvaged),
        "salvage_imported": sum(s.get("import_exit") == 0 for s in salvaged),
        "salvage_doctor_ok": sum(s.get("import_exit") == 0 and s.get("imported_doctor") == 0 for s in salvaged),
        "salvage_unopenable": sum(s["exit"] != 0 for s in salvaged),
        "salvage_tracebacks": sum(s["traceback"] for s in salvaged),
    }


def run_corrupt_mode(args) -> int:
    """Build the store, damage each file in turn, print one line per case and the tally."""
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory(prefix="ripple-crash-corrupt-") as folder:
        home = Path(folder)
        setup = corrupt_setup(args, home)
        results = []
        for case in corrupt_cases(setup["sound"], args.flips, rng, args.only):
            result = corrupt_trial(case, setup, home)
            results.append(result)
            print(_corrupt_line(result), file=sys.stderr)
    summary = corrupt_summary(results)
    if args.json:
        print(json.dumps({**summary, "results": results}, indent=2))
    reads_total = summary["reads"]
    print(
        f"{summary['cases']} cases; reads: {reads_total['same']} same, {reads_total['one_line_error']} one-line "
        f"errors, {reads_total['silently_wrong']} silently wrong, {reads_total['traceback']} tracebacks; doctor "
        f"flagged {summary['flagged_by_doctor']}, {summary['no_effect']} had no effect, {summary['neither']} neither; "
        f"repair restored {summary['derived_restored']}/{summary['derived_cases']} derived-file cases and "
        f"{summary['database_restored_by_repair']}/{summary['database_cases']} database cases; of the "
        f"{summary['database_salvaged']} others, {summary['salvage_imported']} salvaged into a new store "
        f"(doctor all ok on {summary['salvage_doctor_ok']}), {summary['salvage_unopenable']} not openable at all",
        file=sys.stderr,
    )
    return 0 if corrupt_passed(summary) else 1


def corrupt_passed(summary: dict[str, Any]) -> bool:
    """No wrong or unexplained read, no traceback, every case flagged or without effect, every derived file
    restored, every database the repair could not restore salvaged into a store `ripple import` accepts (or not
    openable at all, said in one line)."""
    reads_total = summary["reads"]
    salvaged_or_said = summary["salvage_imported"] + summary["salvage_unopenable"] == summary["database_salvaged"]
    return (
        reads_total["silently_wrong"] == reads_total["traceback"] == reads_total["other"] == 0
        and summary["neither"] == 0
        and summary["doctor_tracebacks"] == summary["repair_tracebacks"] == summary["salvage_tracebacks"] == 0
        and summary["derived_restored"] == summary["derived_cases"]
        and salvaged_or_said
    )


def _corrupt_line(result: dict[str, Any]) -> str:
    """One damaged-file case, human readable."""
    tally = ", ".join(f"{n} {k.replace('_', ' ')}" for k, n in result["reads"].items() if n)
    where = f" at {result['at']:,}" if result["damage"] == "flip" else ""
    seen = "no effect" if result["no_effect"] else f"doctor exit {result['doctor_exit']}"
    fixed = "restored" if result["restored"] else f"repair exit {result['repair_exit']}"
    salvaged = result.get("salvage")
    if salvaged:
        fixed += f"; salvage: exit {salvaged['exit']}" + (
            f", lost {salvaged['lost']}, import exit {salvaged['import_exit']}" if salvaged["exit"] == 0 else ""
        )
    bad = result["reads"]["silently_wrong"] or result["reads"]["traceback"] or result["reads"]["other"]
    bad = bad or not (result["no_effect"] or result["doctor_exit"] or result["flagged"])
    return f"{'FAIL' if bad else 'ok  '} {result['file']} {result['damage']}{where}: reads {tally}; {seen}; {fixed}"
