"""Cold processes (issue 16): `ripple --help` and `ripple ask` as a person runs them, beside their floors.

    .venv/bin/python bench/cold.py --store S [--store S2 …] [--code before=DIR] [--runs 7]

Each command is a fresh process. The commands take turns (one run of each, then the next round), so a change in
the machine's load falls on all of them alike; the script prints, per command, the median wall time and the
median CPU time (user + system of the child), and the load average before and after. `--code NAME=DIR` also
runs the ripple commands with another checkout's code (say, main's) on PYTHONPATH; the default is this one.
The children run without PYTHONDONTWRITEBYTECODE, so the warm-up round writes each checkout's bytecode and the timed
rounds read it, as an installed ripple does (compiling ripple's modules on every run cost a cold ask ~20% more).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from importlib.util import find_spec
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
QUESTION = "What did Caroline research after the support group?"
HNSW = "hnswlib" if find_spec("hnswlib") else "hnswlib_noderag"  # the fork a fresh install gets on Python < 3.12
FLOOR = f"import duckdb, onnxruntime, tokenizers, {HNSW}, numpy"


def run_once(command: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU seconds (user + system) of one fresh process, run in its code's folder (`-m` puts the working
    directory first on sys.path)."""
    started = time.perf_counter()
    folder = env.get("PYTHONPATH", str(REPO))
    child = subprocess.Popen(command, env=env, cwd=folder, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - started
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({child.returncode}): {child.stderr.read().decode()[-400:]}")
    child.stderr.close()
    return wall, usage.ru_utime + usage.ru_stime


def commands(args: argparse.Namespace) -> dict[str, tuple[list[str], dict[str, str]]]:
    """Label -> (command, environment) for the floors and every code's help and asks."""
    python, env = sys.executable, dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed ripple runs from bytecode: the warm-up round writes it
    found: dict[str, tuple[list[str], dict[str, str]]] = {
        "import floor": ([python, "-c", FLOOR], env),
        "import typer": ([python, "-c", "import typer"], env),
    }
    codes = dict(code.split("=", 1) for code in args.code) or {"now": str(REPO)}
    for name, folder in codes.items():
        code_env = {**env, "PYTHONPATH": folder}
        ripple = [python, "-m", "ripplecli.cli"]
        found[f"{name}: --help"] = ([*ripple, "--help"], code_env)
        for store in args.store:
            ask = [*ripple, "ask", args.question, "--no-answer", "--no-trace", "--store", store]
            found[f"{name}: ask {Path(store).name}"] = (ask, code_env)
    return found


def main() -> None:
    """Command line."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--store", action="append", default=[], help="a built store to ask (repeat for several)")
    parser.add_argument("--question", default=QUESTION)
    parser.add_argument("--code", action="append", default=[], help="NAME=DIR: a checkout to run (repeatable)")
    parser.add_argument("--runs", type=int, default=7, help="timed rounds (after one warm-up round)")
    args = parser.parse_args()
    todo = commands(args)
    load_before = os.getloadavg()[0]
    times: dict[str, list[tuple[float, float]]] = {label: [] for label in todo}
    for round_ in range(args.runs + 1):
        for label, (command, env) in todo.items():
            measured = run_once(command, env)
            if round_:  # round 0 warms the page cache
                times[label].append(measured)
    load_after = os.getloadavg()[0]
    print(f"{args.runs} rounds, load {load_before:.2f} -> {load_after:.2f}, {os.cpu_count()} cores")
    print(f"{'command':<40} {'wall median':>12} {'CPU median':>11}")
    for label, runs in times.items():
        wall = statistics.median(w for w, _ in runs)
        cpu = statistics.median(c for _, c in runs)
        print(f"{label:<40} {wall:>11.3f}s {cpu:>10.3f}s")


if __name__ == "__main__":
    main()
