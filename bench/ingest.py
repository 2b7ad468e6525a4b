"""Ingest benchmark (issue 2): each LoCoMo dev conversation into a fresh store, in process and as a CLI command.

.venv/bin/python bench/ingest.py [--data PATH] [--repeat 3] [--conversations conv-26,conv-30] [--cli]
.venv/bin/python bench/ingest.py --conversations conv-30 --repeat 1 --whatsapp 10000   # an export, same turns/s?
.venv/bin/python bench/ingest.py --conversations conv-41 --sequential   # without encoding ahead on a second thread
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

import ripplecli.ingest
from ripplecli.api import Memory
from ripplecli.formats import read_conversations
from ripplecli.ingest import IngestReport
from ripplecli.model import Conversation
from ripplecli.runtime.base import Encoder

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DATA = REPO.parent / "shared" / "data" / "locomo-dev.json"


def peak_rss_mb() -> float:
    """Peak resident set size of this process so far (ru_maxrss is KiB on Linux, bytes on macOS)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


def parse_seconds(data: Path, repeat: int) -> float:
    """Median time to read and validate the whole chat file (the reader, before any write)."""
    times = []
    for _ in range(max(repeat, 1)):
        started = time.perf_counter()
        read_conversations(data)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def warm_up(conversation: Conversation) -> float:
    """Load the encoder, spaCy and dateparser once, so the timed runs measure ingest and not model loading."""
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as folder, Memory(Path(folder) / "store") as memory:
        memory.ingest_conversations([Conversation(conversation.conversation_id, conversation.sessions[:1])])
    return time.perf_counter() - started


def ingest_once(conversation: Conversation, links: str | None) -> tuple[float, float, IngestReport, list[str], Encoder]:
    """Seconds (wall, CPU) to ingest one conversation into a fresh store, its report, the restatements it wrote."""
    with tempfile.TemporaryDirectory() as folder, Memory(Path(folder) / "store") as memory:
        started, cpu = time.perf_counter(), time.process_time()
        report = memory.ingest_conversations([conversation], label=conversation.conversation_id, links=links)
        seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
        rows = memory.store.con.execute("SELECT restatement FROM memories ORDER BY memory_id").fetchall()
        encoder = memory.encoder
    return seconds, cpu, report, [r[0] for r in rows], encoder


def encode_seconds(encoder: Encoder, texts: list[str], repeat: int) -> tuple[float, float]:
    """Median time (wall, CPU) to only encode the same restatements with the same encoder."""
    times, cpus = [], []
    for _ in range(repeat):
        started, cpu = time.perf_counter(), time.process_time()
        encoder.encode(texts)
        times.append(time.perf_counter() - started)
        cpus.append(time.process_time() - cpu)
    return statistics.median(times), statistics.median(cpus)


def bench_conversation(conversation: Conversation, repeat: int, links: str | None = None) -> dict:
    """One row of the table: counts, median seconds, turns/s, pure-encoding time, peak RSS."""
    runs = [ingest_once(conversation, links) for _ in range(repeat)]
    seconds = statistics.median(r[0] for r in runs)
    _, _, report, texts, encoder = runs[-1]
    encoding, encoding_cpu = encode_seconds(encoder, texts, repeat)
    return {
        "conversation": conversation.conversation_id,
        "turns": conversation.turn_count,
        "memories": report.memories,
        "edges": dict(sorted(report.edges.items())),
        "seconds": round(seconds, 3),
        "turns_per_s": round(conversation.turn_count / seconds, 1),
        "encode_seconds": round(encoding, 3),
        "ingest_over_encode": round(seconds / encoding, 2) if encoding else None,
        "cpu_seconds": round(statistics.median(r[1] for r in runs), 3),
        "encode_cpu_seconds": round(encoding_cpu, 3),
        "peak_rss_mb": round(peak_rss_mb(), 1),
    }


def cli_seconds(data: Path, conversation_id: str, repeat: int) -> dict:
    """Wall and CPU time of `ripple ingest` (start-up included) for one conversation written to its own LoCoMo file
    (`python -m ripplecli.cli`, so the code on PYTHONPATH is what runs)."""
    sample = next(s for s in json.loads(data.read_text(encoding="utf-8")) if s["sample_id"] == conversation_id)
    times, cpus = [], []
    with tempfile.TemporaryDirectory() as folder:
        chat = Path(folder) / f"{conversation_id}.json"
        chat.write_text(json.dumps([sample]), encoding="utf-8")
        for run in range(repeat):
            store = Path(folder) / f"store-{run}"
            started, before = time.perf_counter(), children_cpu()
            command = [sys.executable, "-m", "ripplecli.cli", "ingest", str(chat), "--store", str(store)]
            subprocess.run(command, check=True, capture_output=True)
            times.append(time.perf_counter() - started)
            cpus.append(children_cpu() - before)
    return {
        "conversation": conversation_id,
        "cli_seconds": round(statistics.median(times), 3),
        "cli_cpu_seconds": round(statistics.median(cpus), 3),
        "runs": len(times),
    }


def children_cpu() -> float:
    """User + system CPU seconds of the finished child processes so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def write_whatsapp(conversations: list[Conversation], count: int, path: Path) -> None:
    """A WhatsApp export (Android form) of `count` messages: LoCoMo's turns in order, over and over, a few minutes
    apart and a new day every 40 messages, so its text is as rich as the conversations it is compared with."""
    turns = [turn for c in conversations for s in c.sessions for turn in s.turns]
    when = datetime(2021, 3, 1, 9, 0)
    lines = []
    for index in range(count):
        turn = turns[index % len(turns)]
        when += timedelta(days=1, hours=-when.hour + 9) if index and index % 40 == 0 else timedelta(minutes=3)
        text = turn.text.replace("\n", " ")
        lines.append(f"{when:%d/%m/%Y, %H:%M} - {turn.speaker}: {text}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def bench_whatsapp(conversations: list[Conversation], count: int, repeat: int) -> dict:
    """Parse and ingest a generated WhatsApp export of `count` messages into a fresh store; median seconds."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "WhatsApp Chat with LoCoMo.txt"
        write_whatsapp(conversations, count, path)
        parse = parse_seconds(path, repeat)
        (chat,) = read_conversations(path)
    row = bench_conversation(chat, repeat)
    return {**row, "conversation": "whatsapp", "parse_seconds": round(parse, 3), "sessions": len(chat.sessions)}


def print_table(rows: list[dict]) -> None:
    """A plain fixed-width table."""
    header = f"{'conversation':<13}{'turns':>6}{'mem':>6}  {'edges (contiguity/semantic/structural)':<40}"
    header += f"{'median s':>9}{'turns/s':>9}{'encode s':>9}{'ingest/enc':>11}"
    header += f"{'CPU s':>7}{'enc CPU':>8}{'peak RSS MB':>12}"
    print(header)
    for r in rows:
        edges = "/".join(str(r["edges"].get(c, 0)) for c in ("contiguity", "semantic", "structural"))
        print(
            f"{r['conversation']:<13}{r['turns']:>6}{r['memories']:>6}  {edges:<40}{r['seconds']:>9.2f}"
            f"{r['turns_per_s']:>9.0f}{r['encode_seconds']:>9.2f}{r['ingest_over_encode']:>11.2f}"
            f"{r['cpu_seconds']:>7.1f}{r['encode_cpu_seconds']:>8.1f}{r['peak_rss_mb']:>12.0f}"
        )


def parse_args() -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="LoCoMo JSON (default: ../shared/data)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per conversation (median reported)")
    parser.add_argument("--conversations", default="", help="comma-separated sample ids (default: all)")
    parser.add_argument("--cli", action="store_true", help="also time `ripple ingest` as a subprocess")
    parser.add_argument("--cli-conversation", default="conv-41", help="the conversation timed with --cli")
    parser.add_argument("--json", action="store_true", help="print the results as JSON too")
    parser.add_argument("--links", default=None, help="also build links while ingesting, e.g. cable (CABLE cost)")
    parser.add_argument("--whatsapp", type=int, default=0, help="also ingest a WhatsApp export of N messages")
    parser.add_argument("--sequential", action="store_true", help="in process: encode after extracting, not ahead")
    return parser.parse_args()


def main() -> None:
    """Run the benchmark and print per-conversation figures and a one-line summary."""
    args = parse_args()
    if args.sequential:
        ripplecli.ingest.ENCODE_AHEAD = False
    conversations = read_conversations(args.data)
    wanted = [c for c in args.conversations.split(",") if c]
    if wanted:
        conversations = [c for c in conversations if c.conversation_id in wanted]
    load = os.getloadavg()
    print(f"data {args.data} · {len(conversations)} conversations · repeat {args.repeat} · load {load[0]:.2f}")
    parsed = parse_seconds(args.data, args.repeat)
    print(f"parse {args.data.name} (read + validate, median of {args.repeat}): {parsed:.3f} s")
    print(f"warm-up (encoder, spaCy, dateparser load + one session): {warm_up(conversations[0]):.2f} s")
    rows = []
    for conversation in conversations:
        rows.append(bench_conversation(conversation, args.repeat, args.links))
        print(f"  {conversation.conversation_id}: {rows[-1]['seconds']:.2f} s", flush=True)
    if args.whatsapp:
        chat = bench_whatsapp(read_conversations(args.data), args.whatsapp, args.repeat)
        print(
            f"  whatsapp export of {args.whatsapp:,} messages: parse {chat['parse_seconds']:.2f} s, "
            f"ingest {chat['seconds']:.2f} s ({chat['sessions']} day sessions)",
            flush=True,
        )
        rows.append(chat)
    print_table(rows)
    cli = cli_seconds(args.data, args.cli_conversation, args.repeat) if args.cli else None
    if cli:
        print(
            f"CLI `ripple ingest` {cli['conversation']}: median {cli['cli_seconds']:.2f} s "
            f"({cli['cli_cpu_seconds']:.1f} s CPU) over {cli['runs']} runs"
        )
    locomo = [r for r in rows if r["conversation"] != "whatsapp"]
    seconds = statistics.median(r["seconds"] for r in locomo)
    rate = statistics.median(r["turns_per_s"] for r in locomo)
    ratio = statistics.median(r["ingest_over_encode"] for r in locomo)
    print(
        f"summary: cores {os.cpu_count()} · median {seconds:.2f} s/conversation · {rate:.0f} turns/s · "
        f"ingest/encode {ratio:.2f}x · peak RSS {peak_rss_mb():.0f} MB · load now {os.getloadavg()[0]:.2f}"
    )
    if args.json:
        print(json.dumps({"rows": rows, "cli": cli, "cores": os.cpu_count()}, indent=2))


if __name__ == "__main__":
    main()
