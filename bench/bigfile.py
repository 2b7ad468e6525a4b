"""A large native chat file for timing ingest of big inputs (issue 16): N short turns, one conversation.

    .venv/bin/python bench/bigfile.py --turns 20000 --out /tmp/big-20000.json
    .venv/bin/python bench/bigfile.py --turns 100000 --out /tmp/big-100000.json --ingest /tmp/big-store

Sessions of 200 turns, one a day, two speakers; each turn a sentence drawn from a fixed seed, so runs compare.
`--ingest STORE` then runs `python -m ripplecli.cli ingest FILE --store STORE` (a new store) and samples the
process every `--every` seconds: memories written (the vector index's sidecar), resident memory, CPU seconds.
It prints the samples, then wall and CPU time, turns/s, turns per CPU-second and the peak RSS.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import time
from datetime import datetime, timedelta
from pathlib import Path

SPEAKERS = ("Alex", "Sam")
PLACES = ("Lisbon", "the harbor", "Denver", "the office", "Kyoto", "the park", "Harbor Grill", "the library")
THINGS = ("a new bike", "the garden", "a pottery class", "the marathon", "a job offer", "the apartment", "a puppy")
VERBS = ("talked about", "visited", "planned", "finished", "started", "asked about", "worried about", "loved")
WHEN = ("yesterday", "last week", "this morning", "in May", "on Friday", "", "", "")


def turn_text(rng: random.Random) -> str:
    """One plausible chat line naming a thing, sometimes a place and a time."""
    text = f"I {rng.choice(VERBS)} {rng.choice(THINGS)}"
    if rng.random() < 0.4:
        text += f" in {rng.choice(PLACES)}"
    when = rng.choice(WHEN)
    return f"{text} {when}.".replace(" .", ".")


def build(turns: int, seed: int = 7) -> dict:
    """The native JSON of one conversation with `turns` turns."""
    rng = random.Random(seed)
    start = datetime(2024, 1, 1, 9, 0)
    sessions = []
    for number, first in enumerate(range(0, turns, 200), start=1):
        count = min(200, turns - first)
        stamp = start + timedelta(days=number)
        rows = [{"speaker": SPEAKERS[i % 2], "text": turn_text(rng)} for i in range(count)]
        sessions.append({"id": f"s{number}", "timestamp": stamp.isoformat(), "turns": rows})
    return {"conversation_id": f"big-{turns}", "title": f"{turns} generated turns", "sessions": sessions}


def sample(pid: int, store: Path) -> tuple[int, float, float]:
    """Memories written so far, resident MB and CPU seconds (user + system) of a running process."""
    meta = store / "vectors.hnsw.meta.json"
    try:
        count = int(json.loads(meta.read_text()).get("count", 0))
    except (OSError, ValueError):
        count = 0
    status = Path(f"/proc/{pid}/status").read_text()
    rss_kb = next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS:"))
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    cpu = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return count, rss_kb / 1024, cpu


def ingest(path: Path, store: Path, turns: int, every: float) -> None:
    """Run the CLI ingest of `path` into a new `store`, printing samples and the totals."""
    shutil.rmtree(store, ignore_errors=True)
    command = [sys.executable, "-m", "ripplecli.cli", "ingest", str(path), "--store", str(store)]
    started, load = time.perf_counter(), os.getloadavg()[0]
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL)
    while child.poll() is None:
        time.sleep(every)
        try:
            count, rss, cpu = sample(child.pid, store)
        except (OSError, StopIteration):
            break
        print(
            f"{time.perf_counter() - started:8.0f} s  {count:>7} memories  RSS {rss:6.0f} MB  CPU {cpu:7.1f} s",
            flush=True,
        )
    if child.wait():
        raise SystemExit(f"ingest failed with exit code {child.returncode}")
    wall = time.perf_counter() - started
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = usage.ru_utime + usage.ru_stime
    print(
        f"{turns:,} turns in {wall:.0f} s wall ({turns / wall:.1f} turns/s), {cpu:.0f} s CPU "
        f"({turns / cpu:.0f} turns per CPU-second), peak RSS {usage.ru_maxrss / 1024:.0f} MB, "
        f"load {load:.1f} -> {os.getloadavg()[0]:.1f}"
    )


def main() -> None:
    """Command line."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--turns", type=int, default=20_000)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--ingest", type=Path, default=None, metavar="STORE", help="then ingest it into a new STORE")
    parser.add_argument("--every", type=float, default=30.0, help="seconds between samples while ingesting")
    args = parser.parse_args()
    args.out.write_text(json.dumps(build(args.turns)), encoding="utf-8")
    print(f"{args.out}: {args.turns} turns")
    if args.ingest:
        ingest(args.out, args.ingest, args.turns, args.every)


if __name__ == "__main__":
    main()
