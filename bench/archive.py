"""A heavy user's ChatGPT archive for timing a streamed ingest (issue 28 point 4): N messages, LongMemEval lengths.

    .venv/bin/python bench/archive.py --messages 10000 --out /tmp/archive-10k.json --ingest /tmp/archive-store
    .venv/bin/python bench/archive.py --messages 200000 --out /tmp/archive-200k.json --parse-only
    .venv/bin/python bench/archive.py --messages 200000 --out /tmp/archive-200k.zip --zip --parse-only
    .venv/bin/python bench/archive.py --messages 1500 --out /tmp/a.zip --zip --stream-bytes 0 --ingest /tmp/s \
        --kill-after 60   # then the same with --resume: stored and distinct turns match the messages

`conversations.json` as ChatGPT's export writes it: a list of conversations, each a `mapping` of message nodes
under a hidden root and system message, ~10 messages a conversation (6 to 14), the user's ~42 words a turn and
the assistant's ~274 (LongMemEval's averages, drawn around them), sentences from a fixed seed so runs compare. The
file is written one conversation at a time (the generator's memory stays flat too).

`--ingest STORE` runs `python -m ripplecli.cli ingest FILE --store STORE` (a new store unless `--resume`), samples
it every `--every` seconds (memories the saved vector index holds, resident memory, CPU seconds, the ETA from the
messages done so far), then prints wall and CPU time, words/s and the peak RSS. `--kill-after S` kills it with
SIGKILL after S seconds, to time a resume (run again with `--resume`). `--parse-only` instead reads the file
through the streamed reader in a child process (no encoder, no store) and prints that process's peak RSS (with
`--whole`, read whole instead, as `read_chat` does). `--zip` writes the export as downloaded: conversations.json
inside OUT, a zip, streamed from the member. `--stream-bytes N` sets the size above which a file is streamed
(ripplecli.formats.stream.STREAM_BYTES) in the child, so a small export takes the streamed path too. After an
ingest the store's turns are counted, stored and distinct, so a kill -9 and resume shows nothing lost or doubled.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import resource
import shutil
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

from bigfile import sample  # bench/: run as a script, its folder first on sys.path

USER_WORDS, ASSISTANT_WORDS, TURNS = 42, 274, 10  # LongMemEval's averages (issue 28)
START = 1_700_000_000  # 2023-11-14: the first conversation's time
TOPICS = (
    "sourdough starter", "marathon training", "a trip to Lisbon", "the garden beds", "a job interview", "tax forms",
    "a birthday party for Maya", "learning Spanish", "the new apartment", "a pottery class", "budget spreadsheets",
    "Python decorators", "a vegetarian menu", "the book club", "moving to Denver", "a used car", "sleep habits",
)
SUBJECTS = ("I", "My sister", "Sam", "The landlord", "My manager", "We", "The coach", "Alex", "My doctor", "You")
VERBS = ("want to plan", "keep forgetting", "asked about", "started", "finished", "worried about", "recommended",
         "compared", "booked", "tried", "changed", "wrote down")
OBJECTS = ("a schedule for the week", "three options", "the cheapest flight", "a list of questions", "the recipe",
           "a warm-up routine", "the deadline on Friday", "a gift under fifty dollars", "the second draft",
           "a quieter neighbourhood", "the morning routine", "an appointment in May")
TAILS = ("", "", " because it matters to me", " before the end of the month", " with a friend from work",
         " in the evening", " if the weather holds", " after the holidays")


def sentence(rng: random.Random, topic: str) -> str:
    """One plausible sentence about a topic."""
    text = f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(OBJECTS)}{rng.choice(TAILS)}"
    if rng.random() < 0.3:
        text += f", mostly about {topic}"
    return text + "."


def paragraph(rng: random.Random, topic: str, words: int) -> str:
    """Sentences until about `words` words, in paragraphs of four sentences."""
    sentences, count = [], 0
    while count < words:
        said = sentence(rng, topic)
        sentences.append(said)
        count += len(said.split())
    chunks = [" ".join(sentences[at : at + 4]) for at in range(0, len(sentences), 4)]
    return "\n\n".join(chunks)


def length(rng: random.Random, mean: int) -> int:
    """A turn's length in words around `mean` (half to twice it, LongMemEval-like spread)."""
    return max(5, int(rng.lognormvariate(0, 0.45) * mean * 0.9))


def node(node_id: str, parent: str | None, message: dict | None) -> dict:
    """One entry of a conversation's mapping (children filled in by the caller)."""
    return {"id": node_id, "message": message, "parent": parent, "children": []}


def message(node_id: str, role: str, text: str, stamp: float, hidden: bool = False) -> dict:
    """A ChatGPT message as the export writes it."""
    metadata = {"is_visually_hidden_from_conversation": True} if hidden else {}
    return {
        "id": node_id,
        "author": {"role": role, "name": None, "metadata": {}},
        "create_time": stamp,
        "update_time": None,
        "content": {"content_type": "text", "parts": [text]},
        "status": "finished_successfully",
        "end_turn": role == "assistant" or None,
        "weight": 1.0,
        "metadata": metadata,
        "recipient": "all",
    }


def conversation(rng: random.Random, number: int, turns: int, stamp: float) -> tuple[dict, int, int]:
    """One conversation of `turns` messages, user first; with the words in it."""
    topic = rng.choice(TOPICS)
    ids = [f"c{number}-root", f"c{number}-sys"] + [f"c{number}-m{i}" for i in range(turns)]
    mapping = {ids[0]: node(ids[0], None, None)}
    mapping[ids[1]] = node(ids[1], ids[0], message(ids[1], "system", "", stamp, hidden=True))
    words = 0
    for i in range(turns):
        role = "user" if i % 2 == 0 else "assistant"
        text = paragraph(rng, topic, length(rng, USER_WORDS if role == "user" else ASSISTANT_WORDS))
        words += len(text.split())
        mapping[ids[i + 2]] = node(ids[i + 2], ids[i + 1], message(ids[i + 2], role, text, stamp + 30 * i))
    for parent, child in itertools.pairwise(ids):
        mapping[parent]["children"].append(child)
    export = {
        "title": f"{topic.capitalize()} ({number})",
        "create_time": stamp,
        "update_time": stamp + 30 * turns,
        "mapping": mapping,
        "current_node": ids[-1],
        "conversation_id": f"00000000-0000-4000-8000-{number:012d}",
        "id": f"00000000-0000-4000-8000-{number:012d}",
        "is_archived": False,
    }
    return export, turns, words


def write(path: Path, messages: int, seed: int = 28) -> tuple[int, int, int]:
    """Write the export, a conversation at a time; (conversations, messages, words) written."""
    rng = random.Random(seed)
    written = words = number = 0
    with path.open("w", encoding="utf-8") as out:
        out.write("[")
        while written < messages:
            turns = min(rng.randint(TURNS - 4, TURNS + 4), messages - written)
            export, count, said = conversation(rng, number, turns, START + 86_400 * number / 7)
            out.write(("," if number else "") + json.dumps(export, ensure_ascii=False))
            written, words, number = written + count, words + said, number + 1
        out.write("]")
    return number, written, words


def write_zip(path: Path, messages: int) -> tuple[int, int, int]:
    """The export as downloaded: conversations.json written beside, then deflated into the zip at `path`."""
    plain = path.with_name(path.name + ".conversations.json")
    counted = write(plain, messages)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.write(plain, "conversations.json")
        archive.writestr("chat.html", "<html></html>")
    plain.unlink()
    return counted


CHILD = """
import sys
import ripplecli.formats.load as load, ripplecli.formats.stream as stream
if sys.argv[1] != "-":
    stream.STREAM_BYTES = load.STREAM_BYTES = int(sys.argv[1])
from ripplecli.cli import main
sys.argv = ["ripple", *sys.argv[2:]]
main()
"""


def ingest(
    path: Path, store: Path, messages: int, words: int, every: float, kill_after: float | None, stream_bytes: str
) -> None:
    """Run the CLI ingest of `path` into `store`, print a sample line (with the ETA) every `every` s, then totals."""
    command = [sys.executable, "-c", CHILD, stream_bytes, "ingest", str(path), "--store", str(store), "--me", "Robin"]
    started, load = time.perf_counter(), os.getloadavg()
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL)
    peak = 0.0
    while child.poll() is None:
        time.sleep(every)
        try:
            count, rss, cpu = sample(child.pid, store)
        except (OSError, StopIteration):
            break
        peak, elapsed = max(peak, rss), time.perf_counter() - started
        eta = f"{elapsed * (messages - count) / count:7.0f} s" if count else "      ?"
        shown = f"{count:>7,} of ~{messages:,} memories  ETA {eta}  RSS {rss:5.0f} MB  CPU {cpu:6.0f} s"
        print(f"{elapsed:7.0f} s  {shown}", flush=True)
        if kill_after is not None and elapsed >= kill_after:
            os.kill(child.pid, signal.SIGKILL)
            child.wait()
            print(f"killed (SIGKILL) after {elapsed:.0f} s with {count:,} memories in the saved index")
            print_turns(store, messages)
            return
    if child.wait():
        raise SystemExit(f"ingest failed with exit code {child.returncode}")
    wall = time.perf_counter() - started
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = usage.ru_utime + usage.ru_stime
    print(
        f"{messages:,} messages, {words:,} words in {wall:.0f} s wall: {words / wall:,.0f} words/s "
        f"({messages / wall:.1f} messages/s), {cpu:.0f} s CPU, peak RSS {usage.ru_maxrss / 1024:.0f} MB "
        f"(sampled {peak:.0f}), load {load[0]:.1f}/{load[1]:.1f} -> {os.getloadavg()[0]:.1f}"
    )
    print_turns(store, messages)


COUNT_TURNS = """
import sys
from ripplecli.api import Memory
with Memory(sys.argv[1], read_only=True) as memory:
    sql = "SELECT count(*), count(DISTINCT (conversation_id, turn_id)) FROM sources"
    stored, distinct = memory.store.con.execute(sql).fetchone()
print(f"turns: {stored:,} stored, {distinct:,} distinct, of {int(sys.argv[2]):,} messages written")
"""


def print_turns(store: Path, messages: int) -> None:
    """The store's turns, stored and distinct (conversation, turn id), against the messages written; in a child
    run from the working directory, so the checkout's ripple reads the store (not an installed one)."""
    subprocess.run([sys.executable, "-c", COUNT_TURNS, str(store), str(messages)], check=True)


PARSE_ONLY = """
import resource, sys, time
from pathlib import Path
import ripplecli.formats.load as load, ripplecli.formats.stream as streaming
from ripplecli.api import read_chat, read_export
if sys.argv[2] != "-":
    streaming.STREAM_BYTES = load.STREAM_BYTES = int(sys.argv[2])
started = time.perf_counter()
if sys.argv[3] == "whole":
    found = read_chat(Path(sys.argv[1]))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{len(found):,} conversations, {sum(c.turn_count for c in found):,} turns read whole in "
          f"{time.perf_counter() - started:.0f} s, peak RSS {peak:.0f} MB")
    sys.exit()
stream = read_export(Path(sys.argv[1])).stream
if stream is None:
    sys.exit("not streamed: the file is under STREAM_BYTES (see --stream-bytes) or its format does not stream")
checked = time.perf_counter() - started
chats = turns = 0
for chunk in stream.chunks():
    chats += len(chunk)
    turns += sum(c.turn_count for c in chunk)
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(f"{chats:,} conversations, {turns:,} turns (checked: {stream.turns:,}): checked in {checked:.0f} s, "
      f"streamed in {time.perf_counter() - started - checked:.0f} s, peak RSS {peak:.0f} MB")
"""


def parse_only(path: Path, stream_bytes: str, whole: bool) -> None:
    """Read the file as ingest does (checked whole, then streamed in chunks) without encoding; its peak RSS."""
    subprocess.run([sys.executable, "-c", PARSE_ONLY, str(path), stream_bytes, "whole" if whole else "stream"],
                   check=True)


def main() -> None:
    """Command line."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--messages", type=int, default=10_000)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--ingest", type=Path, default=None, metavar="STORE", help="then ingest it into STORE")
    parser.add_argument("--resume", action="store_true", help="ingest into STORE as it is (after a kill)")
    parser.add_argument("--kill-after", type=float, default=None, metavar="S", help="SIGKILL the ingest after S s")
    parser.add_argument("--parse-only", action="store_true", help="only read the file as ingest does; its peak RSS")
    parser.add_argument("--whole", action="store_true", help="with --parse-only: read it whole (read_chat)")
    parser.add_argument("--zip", action="store_true", help="write OUT as a zip holding conversations.json")
    parser.add_argument("--stream-bytes", default="-", metavar="N", help="stream files above N bytes (default 8 MB)")
    parser.add_argument("--every", type=float, default=30.0, help="seconds between samples while ingesting")
    args = parser.parse_args()
    started = time.perf_counter()
    if args.resume and args.out.exists():
        print(f"{args.out}: reused")
        chats, messages, words = _counted(args.out)
    else:
        chats, messages, words = (write_zip if args.zip else write)(args.out, args.messages)
        Path(f"{args.out}.counts").write_text(json.dumps([chats, messages, words]))
    size = args.out.stat().st_size
    print(f"{args.out}: {chats:,} conversations, {messages:,} messages, {words:,} words, {size / 1e6:,.0f} MB "
          f"({time.perf_counter() - started:.0f} s)")
    if args.parse_only:
        parse_only(args.out, args.stream_bytes, args.whole)
    if args.ingest:
        if not args.resume:
            shutil.rmtree(args.ingest, ignore_errors=True)
        ingest(args.out, args.ingest, messages, words, args.every, args.kill_after, args.stream_bytes)


def _counted(path: Path) -> tuple[int, int, int]:
    """(conversations, messages, words) of an export this script wrote, from the counts it wrote beside it."""
    counts = Path(f"{path}.counts")
    if not counts.exists():
        raise SystemExit(f"{path}: no counts beside it; generate it again without --resume")
    chats, messages, words = json.loads(counts.read_text())
    return chats, messages, words


if __name__ == "__main__":
    main()
