"""A cold `ripple ask --answer llm` as a person runs it (issue 14): from process start to the status line, to the first
streamed answer piece, and to exit.

    flock /tmp/llm.lock .venv/bin/python bench/first_words.py --store DEV --model M.gguf [--runs 3] [QUESTION ...]

The answer streams on stderr under the status line `answering with MODEL · N prompt tokens`; the first piece after
that line is the first words a person reads. One untimed warm-up ask first saves the model's prefix state (as any
earlier ask would have), then each question runs `--runs` times; medians are printed with the load average.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

RIPPLE = Path(sys.executable).with_name("ripple")
STATUS = b"answering with"
QUESTIONS = [
    "What did Caroline research after the support group?",
    "Where did Melanie go camping?",
    "What is Jon's dance studio called?",
]


def first_words(stderr: bytes) -> bool:
    """Whether anything but blanks follows the status line yet."""
    after = stderr.split(STATUS, 1)[1] if STATUS in stderr else b""
    return b"\n" in after and bool(after.split(b"\n", 1)[1].strip())


def timed_ask(question: str, store: Path, model: Path) -> tuple[float | None, float | None, float]:
    """Seconds to the status line, to the first answer piece (None if never seen) and to exit."""
    started = time.perf_counter()
    command = [str(RIPPLE), "ask", question, "--store", str(store), "--answer", "llm", "--model", str(model)]
    child = subprocess.Popen([*command, "--no-trace"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert child.stderr is not None
    status = first = None
    seen = b""
    while chunk := os.read(child.stderr.fileno(), 4096):
        seen += chunk
        now = time.perf_counter() - started
        if status is None and STATUS in seen:
            status = now
        if status is not None and first is None and first_words(seen):
            first = now
    child.wait()
    if child.returncode != 0:
        raise SystemExit(f"ripple ask failed ({child.returncode}): {seen.decode(errors='replace')[-400:]}")
    return status, first, time.perf_counter() - started


def main() -> None:
    """Warm up once, time every question, print each run and the medians."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("questions", nargs="*", default=QUESTIONS)
    parser.add_argument("--store", type=Path, required=True)
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    timed_ask(args.questions[0], args.store, args.model)  # saves the prefix state, fills the page cache
    runs = []
    for question in args.questions:
        for _ in range(args.runs):
            runs.append(timed_ask(question, args.store, args.model))
            status, first, total = runs[-1]
            print(f"{question[:50]!r}: status {status} s, first words {first} s, exit {total:.2f} s", flush=True)
    firsts = [first for _, first, _ in runs if first is not None]
    print(
        f"medians of {len(runs)}: status line {statistics.median(s for s, _, _ in runs if s is not None):.2f} s, "
        f"first words {statistics.median(firsts):.2f} s ({len(runs) - len(firsts)} without), "
        f"exit {statistics.median(t for _, _, t in runs):.2f} s; load {os.getloadavg()[0]:.2f}, {os.cpu_count()} cores"
    )


if __name__ == "__main__":
    main()
