"""The local model's answer on LongMemEval dev questions: containment accuracy per question type (issue 27).

The sample `ripple eval longmemeval --questions N` takes of the oracle dev file (each question with only its
evidence sessions; long assistant turns: where clipping a turn to its matching passages matters), read by the
eval's own loader, every question its own store, recalled once (mode `ripple`, K = 30, asked on the question's
date), then answered by each variant from the same evidence, as bench/answer_llm.py does:

    flock /tmp/llm.lock nice -n 5 .venv/bin/python bench/answer_lme.py --model M.gguf \\
        --variants typed,plain:350,shaped:600 --per-type 6 --out /tmp/lme-answer

Preference questions are left out (their gold is a rubric, not an answer). Abstention questions (`_abs`) count
as right when the answer abstains; each summary also counts the abstentions (`abs_right`: of the `_abs`
questions; `abs_wrong`: of the answerable ones) and gives containment on each half of eval/longmemeval-split.json
(`--half tuning` answers only the half constants are chosen on; `--most N` the first N questions; `--types` only
those question types). A variant
`auto+shaped:600` answers as `--answer auto` does (the rules where auto keeps them), and `@NAME=value` sets one of
reading.py's, llm.py's or ripplecli.answer's constants for that variant (`auto+shaped:600@UNNAMED=0`: the name check
off; `@WORKED_OUT=0`: the model asked for the durations the rules work out).
Rows go to `OUT/<model>-<variant>.jsonl` (a re-run resumes).
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import time
from pathlib import Path
from typing import Any

from answer_llm import Asked, recall_cache, run_variant, summary  # bench/: run as a script

from ripplecli.api import Memory
from ripplecli.eval.longmemeval import ABSTENTION_SUFFIX, PREFERENCE, QUESTION_TYPES, load_questions
from ripplecli.eval.runner import sample_questions, store_dir
from ripplecli.runtime.llm import LlamaCppLLM, ModelOptions

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DATA = REPO.parent / "shared" / "data" / "longmemeval-oracle-dev.json.gz"
TYPES = tuple(t for t in QUESTION_TYPES if t != PREFERENCE)
K = 30
SPLIT = REPO / "eval" / "longmemeval-split.json"  # the tuning and report halves of the dev ids


def halves() -> dict[str, frozenset[str]]:
    """Each half's question ids."""
    split = json.loads(SPLIT.read_text(encoding="utf-8"))
    return {half: frozenset(split[half]) for half in ("tuning", "report")}


def recall_all(path: Path, per_type: int, out: Path) -> list[Asked]:
    """The eval's seeded sample (`per_type` of each type, the unanswerable ones apart), each question recalled from
    its own store (made or reused under `out/stores`) on its date, kept in a pickle."""
    samples = load_questions(path, types=list(TYPES))
    chosen = sample_questions(samples, per_type) or set()
    picked = [s for s in samples if (s.questions[0].conversation_id, 0) in chosen]
    kept = recall_cache(out, [s.questions[0] for s in picked])
    if kept.exists():
        return pickle.loads(kept.read_bytes())
    asked = []
    for sample in picked:
        question = sample.questions[0]
        with Memory(store_dir(out, sample)) as memory:
            memory.ingest_conversations([sample.conversation], label=sample.sample_id, content_hash=sample.content_hash)
            result = memory.recall(question.text, k=K, mode="ripple", as_of=sample.as_of, answer="none")
        asked.append((question, result.evidence, sample.as_of))
    kept.write_bytes(pickle.dumps(asked))
    return asked


def scored(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows with containment counting an abstention right on an `_abs` question (and only there)."""
    for row in rows:
        if row["conversation"].endswith(ABSTENTION_SUFFIX):
            row["contains"] = float(row["abstained"])
    return rows


def abstentions(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Abstentions counted where right (`_abs` questions) and where wrong (answerable ones), and the sizes."""
    unanswerable = [r for r in rows if r["conversation"].endswith(ABSTENTION_SUFFIX)]
    answerable = [r for r in rows if not r["conversation"].endswith(ABSTENTION_SUFFIX)]
    return {
        "abs_right": f"{sum(r['abstained'] for r in unanswerable)}/{len(unanswerable)}",
        "abs_wrong": f"{sum(r['abstained'] for r in answerable)}/{len(answerable)}",
    }


def by_half(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Containment on each half of the split (and how many of its questions were answered)."""
    out: dict[str, Any] = {}
    for half, ids in halves().items():
        kept = [r["contains"] for r in rows if r["conversation"] in ids]
        out[f"contains_{half}"] = _mean(kept)
        out[f"n_{half}"] = len(kept)
    return out


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
    parser.add_argument("--half", choices=("tuning", "report"), help="only this half of eval/longmemeval-split.json")
    parser.add_argument("--most", type=int, help="only the first N questions (of the half)")
    parser.add_argument("--types", help="only these question types, comma-separated (e.g. temporal-reasoning)")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    asked = recall_all(args.data, args.per_type, args.out)
    if args.half:  # the same recalled evidence, one half of it: constants are chosen on tuning, shown on report
        asked = [a for a in asked if a[0].conversation_id in halves()[args.half]]
    if args.types:
        asked = [a for a in asked if a[0].category in args.types.split(",")]
    asked = asked[: args.most]
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
        shown |= by_type | by_half(rows) | abstentions(rows) | {"load": f"{load_before:.2f}->{os.getloadavg()[0]:.2f}"}
        print(json.dumps(shown), flush=True)


def _mean(values: list[float]) -> float:
    """The mean, 0 for none."""
    return round(sum(values) / len(values), 3) if values else 0.0


if __name__ == "__main__":
    main()
