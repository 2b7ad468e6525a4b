"""Recall benchmark (issue 3): warm in-process recall latency, cold `ripple ask` and `ripple --help` wall time.

    .venv/bin/python bench/ask.py [--repeat 50] [--mode ripple] [--synthetic 100000]

The store is built once under /tmp/ripple-bench and reused by later runs (the synthetic build resumes too).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from ripplecli.api import Memory
from ripplecli.formats import read_conversations
from ripplecli.model import Conversation

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DATA = REPO.parent / "shared" / "data" / "locomo-dev.json"
BENCH_HOME = Path("/tmp/ripple-bench")
RIPPLE = Path(sys.executable).with_name("ripple")
FIRST_TURNS = 3000


def synthetic_plan(conversations: list[Conversation], size: int) -> list[Conversation]:
    """The dev conversations repeated under new ids (conv-26#r2, ...) until they hold `size` turns."""
    plan: list[Conversation] = []
    total, copy = 0, 0
    while total < size:
        copy += 1
        for conversation in conversations:
            if total >= size:
                break
            name = conversation.conversation_id if copy == 1 else f"{conversation.conversation_id}#r{copy}"
            plan.append(Conversation(name, conversation.sessions))
            total += conversation.turn_count
    return plan


def build(path: Path, plan: list[Conversation]) -> None:
    """Ingest every planned conversation not in the store yet, printing progress (resumable)."""
    with Memory(path) as memory:
        stored = {r[0] for r in memory.store.con.execute("SELECT conversation_id FROM conversations").fetchall()}
        todo = [c for c in plan if c.conversation_id not in stored]
        total = sum(c.turn_count for c in plan)
        done = total - sum(c.turn_count for c in todo)
        if todo:
            print(f"building {path}: {len(todo)} of {len(plan)} conversations to ingest", flush=True)
        started = time.perf_counter()
        for conversation in todo:
            report = memory.ingest_conversations([conversation], label=conversation.conversation_id)
            done += report.new_sources
            elapsed = time.perf_counter() - started
            print(
                f"  {conversation.conversation_id}: {report.new_sources} turns in {report.seconds:.1f} s "
                f"({report.new_sources / max(report.seconds, 1e-9):.0f} turns/s) · {done}/{total} · {elapsed:.0f} s",
                flush=True,
            )


def throughput(path: Path) -> dict[str, float]:
    """Ingest turns/s over the first 3K turns and in the last batch, from the store's ingest_runs."""
    with Memory(path, read_only=True) as memory:
        runs = memory.store.con.execute(
            "SELECT new_sources, seconds FROM ingest_runs WHERE new_sources > 0 ORDER BY run_id"
        ).fetchall()
        memories = memory.store.count("memories")
    turns, seconds = 0, 0.0
    for new, spent in runs:
        if turns >= FIRST_TURNS:
            break
        turns, seconds = turns + new, seconds + spent
    last_new, last_seconds = runs[-1]
    return {
        "memories": memories,
        "first_3k_turns_per_s": round(turns / seconds, 1),
        "last_batch_turns_per_s": round(last_new / last_seconds, 1),
    }


def questions(data: Path, count: int) -> list[str]:
    """`count` dev questions spread evenly over all conversations (0: all of them)."""
    every = [qa["question"] for sample in json.loads(data.read_text(encoding="utf-8")) for qa in sample["qa"]]
    if count <= 0 or count >= len(every):
        return every
    step = len(every) / count
    return [every[int(i * step)] for i in range(count)]


def percentile(values: list[float], share: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(share * len(ordered)) - 1))]


def warm_recall(path: Path, asked: list[str], mode: str) -> dict[str, float]:
    """p50/p95 ms of in-process recall after a warm-up (encoder, indexes and caches loaded), and of the typed
    answer (rules, no model) over each recall's evidence, timed apart from the recall."""
    from ripplecli.answer import typed_answer

    with Memory(path, read_only=True) as memory:
        for question in asked[:5]:
            typed_answer(question, memory.recall(question, k=30, mode=mode, answer="none").evidence)
        times, answering = [], []
        for question in asked:
            started = time.perf_counter()
            evidence = memory.recall(question, k=30, mode=mode, answer="none").evidence
            times.append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            typed_answer(question, evidence)
            answering.append((time.perf_counter() - started) * 1000)
    return {
        "questions": len(times),
        "p50_ms": round(percentile(times, 0.5), 1),
        "p95_ms": round(percentile(times, 0.95), 1),
        "typed_answer_p50_ms": round(percentile(answering, 0.5), 2),
        "typed_answer_p95_ms": round(percentile(answering, 0.95), 2),
    }


def wall_seconds(command: list[str], runs: int = 5) -> float:
    """Median wall time of a fresh process running `command`."""
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True)
        times.append(time.perf_counter() - started)
    return round(statistics.median(times), 3)


def report(label: str, path: Path, asked: list[str], mode: str, cold: bool) -> dict:
    """Measure one store and print its figures."""
    figures: dict = {"store": str(path), **throughput(path), **warm_recall(path, asked, mode)}
    print(
        f"{label}: {figures['memories']} memories · warm recall ({mode}, k=30) over {figures['questions']} "
        f"questions: p50 {figures['p50_ms']} ms, p95 {figures['p95_ms']} ms · ingest {figures['first_3k_turns_per_s']}"
        f" turns/s (first 3K), {figures['last_batch_turns_per_s']} turns/s (last batch) · typed answer p50"
        f" {figures['typed_answer_p50_ms']} ms, p95 {figures['typed_answer_p95_ms']} ms",
        flush=True,
    )
    if cold:
        ask = [str(RIPPLE), "ask", asked[0], "--no-answer", "--no-trace", "--mode", mode, "--store", str(path)]
        figures["cold_ask_s"] = wall_seconds(ask)
        figures["help_s"] = wall_seconds([str(RIPPLE), "--help"])
        print(f"cold `ripple ask --no-answer --no-trace`: {figures['cold_ask_s']} s", end=" · ")
        print(f"`ripple --help`: {figures['help_s']} s")
    return figures


def parse_args() -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="LoCoMo JSON (default: ../shared/data)")
    parser.add_argument("--repeat", type=int, default=50, help="dev questions timed (0: all)")
    parser.add_argument("--mode", default="ripple", help="recall mode")
    parser.add_argument("--synthetic", type=int, default=0, help="also build and time a store of this many turns")
    parser.add_argument("--home", type=Path, default=BENCH_HOME, help="where benchmark stores are kept")
    parser.add_argument("--json", action="store_true", help="print the results as JSON too")
    return parser.parse_args()


def main() -> None:
    """Build or reuse the stores, then time recall, a cold ask and --help."""
    args = parse_args()
    dev = read_conversations(args.data)
    asked = questions(args.data, args.repeat)
    print(f"cores {os.cpu_count()} · load {os.getloadavg()[0]:.2f} · {len(asked)} questions · mode {args.mode}")
    results = {}
    dev_store = args.home / "dev"
    build(dev_store, dev)
    results["dev"] = report("dev", dev_store, asked, args.mode, cold=True)
    if args.synthetic:
        synthetic_store = args.home / f"synthetic-{args.synthetic}"
        build(synthetic_store, synthetic_plan(dev, args.synthetic))
        results["synthetic"] = report(f"synthetic {args.synthetic}", synthetic_store, asked, args.mode, cold=True)
    print(f"load now {os.getloadavg()[0]:.2f}")
    if args.json:
        print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
