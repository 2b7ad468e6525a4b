"""A large native chat file for timing ingest of big inputs (issue 16): N short turns, one conversation.

    .venv/bin/python bench/bigfile.py --turns 20000 --out /tmp/big-20000.json
    /usr/bin/time -v .venv/bin/ripple ingest /tmp/big-20000.json --store /tmp/big-ingest   # turns/s, peak RSS

Sessions of 200 turns, one a day, two speakers; each turn a sentence drawn from a fixed seed, so runs compare.
"""

from __future__ import annotations

import argparse
import json
import random
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


def main() -> None:
    """Command line."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--turns", type=int, default=20_000)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    args.out.write_text(json.dumps(build(args.turns)), encoding="utf-8")
    print(f"{args.out}: {args.turns} turns")


if __name__ == "__main__":
    main()
