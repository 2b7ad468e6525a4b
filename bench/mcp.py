"""MCP benchmark (issue 8): warm `recall` round trips through `ripple mcp` over stdio, as an assistant sees them.

    .venv/bin/python bench/mcp.py [--repeat 50] [--k 10] [--mode ripple] [--in-process]
    .venv/bin/python bench/mcp.py --first-remember 5 [--processes 3]   # a new server's first `remember`

Serves a copy of the dev store (/tmp/ripple-bench/dev, built by bench/ask.py when missing) so the server's write lock
and the `remember` calls never touch the shared benchmark store.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib.util
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
# This file is named mcp.py: its folder must not shadow the mcp SDK on the import path.
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != BENCH]


def _bench_ask() -> Any:
    """bench/ask.py as a module: its dev store, question sampling and percentile are shared."""
    spec = importlib.util.spec_from_file_location("bench_ask", BENCH / "ask.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


ask = _bench_ask()
WARM_UP = 5
REMEMBERED = [
    "I adopted a grey kitten called Pixel last weekend.",
    "My sister Ines moves to Lisbon in March.",
    "We booked the cabin at Lake Tahoe for the second week of August.",
]


async def timed_calls(session: Any, asked: list[str], k: int, mode: str) -> dict[str, Any]:
    """Warm-up calls, then one timed `recall` round trip per question and a few timed `remember` calls."""
    for question in asked[:WARM_UP]:
        await session.call_tool("recall", {"question": question, "k": k, "mode": mode})
    recall_ms = [await timed_call(session, "recall", {"question": q, "k": k, "mode": mode}) for q in asked]
    remember_ms = [await timed_call(session, "remember", remembered(text)) for text in REMEMBERED]
    return {
        "questions": len(recall_ms),
        "recall_p50_ms": round(ask.percentile(recall_ms, 0.5), 1),
        "recall_p95_ms": round(ask.percentile(recall_ms, 0.95), 1),
        "remember_ms": [round(ms, 1) for ms in remember_ms],
    }


async def timed_call(session: Any, tool: str, arguments: dict[str, Any]) -> float:
    """One tool call's round trip in milliseconds; a call that fails ends the benchmark with its error."""
    started = time.perf_counter()
    result = await session.call_tool(tool, arguments)
    elapsed = (time.perf_counter() - started) * 1000
    if getattr(result, "is_error", getattr(result, "isError", False)):
        raise SystemExit(f"{tool} failed: {result.content[0].text}")
    return elapsed


def remembered(text: str) -> dict[str, str]:
    """The arguments of a benchmark `remember` call."""
    return {"speaker": "Bench", "text": text, "conversation": "bench"}


@contextlib.asynccontextmanager
async def served(store: Path) -> AsyncIterator[Any]:
    """`ripple mcp --store STORE` as a subprocess, the way an assistant launches it, and its initialised session."""
    from mcp import ClientSession, StdioServerParameters, stdio_client

    params = StdioServerParameters(command=str(ask.RIPPLE), args=["mcp", "--store", str(store)], env=dict(os.environ))
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


async def over_stdio(store: Path, asked: list[str], k: int, mode: str) -> dict[str, Any]:
    """`ripple mcp --store COPY` over stdio: the first recall from launch, then the timed calls."""
    started = time.perf_counter()
    async with served(store) as session:
        await session.call_tool("recall", {"question": asked[0], "k": k, "mode": mode})
        first = time.perf_counter() - started
        figures = await timed_calls(session, asked, k, mode)
    return {"transport": "stdio", "start_to_first_recall_s": round(first, 2), **figures}


async def first_remember(store: Path, pause: float) -> dict[str, float]:
    """A new `ripple mcp` process: connect, stay idle `pause` seconds (a person typing), then time two `remember`s."""
    started = time.perf_counter()
    async with served(store) as session:
        await asyncio.sleep(pause)
        timed = [await timed_call(session, "remember", remembered(text)) for text in REMEMBERED[:2]]
        total = time.perf_counter() - started - pause
    return {"first_ms": round(timed[0], 1), "second_ms": round(timed[1], 1), "start_to_first_s": round(total, 2)}


def first_remembers(home: Path, data: Path, pause: float, processes: int) -> None:
    """Median first and second `remember` over fresh server processes, each on its own copy of the dev store."""
    import statistics

    runs = []
    for _ in range(processes):
        with tempfile.TemporaryDirectory(prefix="ripple-mcp-bench-") as scratch:
            runs.append(asyncio.run(first_remember(store_copy(home, data, Path(scratch)), pause)))
            print(runs[-1], flush=True)
    medians = {key: statistics.median(run[key] for run in runs) for key in runs[0]}
    print(
        f"first remember after {pause:g} s idle, median of {processes} processes: {medians['first_ms']} ms "
        f"(second {medians['second_ms']} ms; start to first remember, idle excluded, {medians['start_to_first_s']} s)"
    )


async def in_process(store: Path, asked: list[str], k: int, mode: str) -> dict[str, Any]:
    """The same calls through the SDK's in-memory transport: the server's own cost without pipes."""
    from mcp import Client

    from ripplecli.api import Memory
    from ripplecli.mcp_server import RippleTools, build_server

    with Memory(store) as memory:
        memory.warm()
        async with Client(build_server(RippleTools(memory))) as client:
            figures = await timed_calls(client, asked, k, mode)
    return {"transport": "in-process", **figures}


def store_copy(home: Path, data: Path, scratch: Path) -> Path:
    """A private copy of the dev store (built first when missing)."""
    dev = home / "dev"
    if not (dev / "ripple.duckdb").exists():
        ask.build(dev, ask.read_conversations(data))
    copy = scratch / "dev-copy"
    shutil.copytree(dev, copy)
    return copy


def parse_args() -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=ask.DEFAULT_DATA, help="LoCoMo JSON (default: ../shared/data)")
    parser.add_argument("--repeat", type=int, default=50, help="dev questions timed (0: all)")
    parser.add_argument("--k", type=int, default=10, help="evidence size (the recall tool's default)")
    parser.add_argument("--mode", default="ripple", help="recall mode")
    parser.add_argument("--home", type=Path, default=ask.BENCH_HOME, help="where benchmark stores are kept")
    parser.add_argument("--in-process", action="store_true", help="also time the in-memory transport")
    parser.add_argument("--json", action="store_true", help="print the results as JSON too")
    parser.add_argument("--first-remember", type=float, metavar="PAUSE", help="time new servers' first remember")
    parser.add_argument("--processes", type=int, default=3, help="server processes for --first-remember")
    return parser.parse_args()


def main() -> None:
    """Copy the dev store, serve it, time warm recall round trips."""
    args = parse_args()
    if args.first_remember is not None:
        print(f"cores {os.cpu_count()} · load {os.getloadavg()[0]:.2f}")
        first_remembers(args.home, args.data, args.first_remember, args.processes)
        print(f"load now {os.getloadavg()[0]:.2f}")
        return
    asked = ask.questions(args.data, args.repeat)
    print(f"cores {os.cpu_count()} · load {os.getloadavg()[0]:.2f} · {len(asked)} questions · k {args.k}")
    results = []
    with tempfile.TemporaryDirectory(prefix="ripple-mcp-bench-") as scratch:
        store = store_copy(args.home, args.data, Path(scratch))
        runs = [over_stdio] + ([in_process] if args.in_process else [])
        for run in runs:
            figures = asyncio.run(run(store, asked, args.k, args.mode))
            results.append(figures)
            print(
                f"{figures['transport']}: warm recall ({args.mode}, k={args.k}) over {figures['questions']} questions:"
                f" p50 {figures['recall_p50_ms']} ms, p95 {figures['recall_p95_ms']} ms · remember "
                f"{', '.join(map(str, figures['remember_ms']))} ms"
                + (
                    f" · start to first recall {figures['start_to_first_recall_s']} s"
                    if "start_to_first_recall_s" in figures
                    else ""
                ),
                flush=True,
            )
    print(f"load now {os.getloadavg()[0]:.2f}")
    if args.json:
        print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
