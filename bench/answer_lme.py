"""The local model's answer on LongMemEval dev questions: containment accuracy per question type (issue 27).

A quick check until `ripple eval longmemeval` lands: a seeded sample of the oracle dev file (each question with
only its evidence sessions, long assistant turns: where clipping a turn to its matching passages matters), every
question its own store, recalled once (mode `ripple`, K = 30, asked on the question's date), then answered by each
variant from the same evidence, as bench/answer_llm.py does:

    flock /tmp/llm.lock nice -n 5 .venv/bin/python bench/answer_lme.py --model M.gguf \\
        --variants typed,plain:350,shaped:1000 --per-type 6 --out /tmp/lme-answer

Preference questions are left out (their gold is a rubric, not an answer). Abstention questions (`_abs`) count
as right when the answer abstains. Rows go to `OUT/<model>-<variant>.jsonl` (a re-run resumes).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import pickle
import random
import re
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from answer_llm import Asked, run_variant, summary  # bench/: run as a script

from ripplecli.api import Memory
from ripplecli.eval.locomo import Question
from ripplecli.formats.longmemeval import parse_longmemeval
from ripplecli.runtime.llm import LlamaCppLLM, ModelOptions

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DATA = REPO.parent / "shared" / "data" / "longmemeval-oracle-dev.json.gz"
TYPES = ("single-session-user", "single-session-assistant", "multi-session", "knowledge-update", "temporal-reasoning")
K = 30
SEED = 27


def asked_on(raw: str) -> datetime:
    """LongMemEval's "2023/05/20 (Sat) 02:21"."""
    return datetime.strptime(re.sub(r"\s*\([A-Za-z]+\)\s*", " ", raw), "%Y/%m/%d %H:%M")


def chosen(entries: list[dict[str, Any]], per_type: int) -> list[dict[str, Any]]:
    """A seeded sample of `per_type` questions of each answerable type."""
    picked = []
    for kind in TYPES:
        pool = [e for e in entries if e["question_type"] == kind]
        picked += random.Random(f"{SEED}-{kind}").sample(pool, min(per_type, len(pool)))
    return picked


def recall_all(entries: list[dict[str, Any]], out: Path) -> list[Asked]:
    """Each question's evidence from its own store (made or reused under `out/stores`), kept in a pickle."""
    kept = out / f"recalled-{len(entries)}.pkl"
    if kept.exists():
        return pickle.loads(kept.read_bytes())
    asked = []
    for entry in entries:
        conversation = parse_longmemeval(entry, "longmemeval")[0]
        today = asked_on(entry["question_date"])
        gold = [
            f"D{n}:{p}"
            for n, session in enumerate(entry["haystack_sessions"], 1)
            for p, turn in enumerate(session, 1)
            if turn.get("has_answer")
        ]
        q = Question(entry["question_id"], 0, entry["question"], str(entry["answer"]), entry["question_type"], gold)
        with Memory(out / "stores" / entry["question_id"]) as memory:
            memory.ingest_conversations([conversation], label=entry["question_id"])
            result = memory.recall(q.text, k=K, mode="ripple", as_of=today, answer="none")
        asked.append((q, result.evidence, today))
    kept.write_bytes(pickle.dumps(asked))
    return asked


def scored(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows with containment counting an abstention right on an `_abs` question (and only there)."""
    for row in rows:
        if row["conversation"].endswith("_abs"):
            row["contains"] = float(row["abstained"])
    return rows


def main() -> None:
    """Parse arguments, recall once, answer with every variant, print a summary line per variant."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--model", type=Path)
    parser.add_argument("--variants", default="typed,plain:350")
    parser.add_argument("--per-type", type=int, default=6)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--minutes", type=float, default=25.0)
    parser.add_argument("--out", type=Path, default=Path("/tmp/lme-answer"))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with gzip.open(args.data, "rt", encoding="utf-8") as handle:
        entries = chosen(json.load(handle), args.per_type)
    asked = recall_all(entries, args.out)
    variants = args.variants.split(",")
    needs_model = any(v != "typed" for v in variants)
    llm = LlamaCppLLM(args.model, ModelOptions(n_threads=args.threads)) if needs_model else None
    tag = llm.name if llm else "rules"
    until = time.monotonic() + args.minutes * 60
    for variant in variants:
        load_before = os.getloadavg()[0]
        path = args.out / f"{tag if variant != 'typed' else 'rules'}-{variant}.jsonl"
        rows = scored(run_variant(variant, llm, asked, path, until))
        line = summary(rows, TYPES)
        keep = [k for k in line if not k.startswith(("f1_tune", "f1_held", "contains_"))]
        by_type = {f"contains_{t}": _mean([r["contains"] for r in rows if r["category"] == t]) for t in TYPES}
        shown = {"model": tag if variant != "typed" else "-", "variant": variant, **{k: line[k] for k in keep}}
        shown |= by_type | {"load": f"{load_before:.2f}->{os.getloadavg()[0]:.2f}"}
        print(json.dumps(shown), flush=True)


def _mean(values: list[float]) -> float:
    """The mean, 0 for none."""
    return round(sum(values) / len(values), 3) if values else 0.0


if __name__ == "__main__":
    main()
