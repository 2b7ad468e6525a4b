"""The local model's answer on a fixed LoCoMo dev sample: token F1 per category, latency, first words, tokens.

Each question is recalled once (mode `ripple`, K = 30); every answer variant then answers from the same
evidence, so variants differ only in how the answer is made:

    typed          the rules' typed answer (no model)
    plain:350      the streamed plain answer from a 350-token evidence block
    json:350       the grammar-constrained JSON answer from the same block

    flock /tmp/llm.lock nice -n 5 .venv/bin/python bench/answer_llm.py --model M.gguf \\
        --variants typed,plain:350,json:350 --per-category 25 --out /tmp/answer-bench

The sample is the one `ripple eval locomo --questions N` takes (seeded per category), restricted to categories
1-4: with N = 25, 100 questions over the five dev conversations. Results are appended to
`OUT/<model>-<variant>.jsonl` as they finish (a re-run resumes) and summarised per variant, with the load
average at the start and end (latency is only comparable on a quiet machine; the token counts are not).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import time
from pathlib import Path
from typing import Any

from ripplecli.answer import typed_answer
from ripplecli.answer.llm import llm_answer, llm_answer_json
from ripplecli.answer.typed import question_type
from ripplecli.api import Memory
from ripplecli.eval.locomo import ASKED_CATEGORIES, Question, Sample, load_samples
from ripplecli.eval.metrics import bleu1, percentile, token_f1
from ripplecli.eval.runner import sample_questions, store_dir
from ripplecli.runtime.llm import CallLog, LlamaCppLLM, ModelOptions
from ripplecli.trace import Evidence

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DATA = REPO.parent / "shared" / "data" / "locomo-dev.json"
TUNE = ("conv-26", "conv-30", "conv-41")  # prompts and budget were chosen on these; the others are held out
K = 30


def chosen_questions(samples: list[Sample], per_category: int) -> dict[str, list[Question]]:
    """The eval's seeded sample, categories 1-4 only, per conversation in file order."""
    chosen = sample_questions(samples, per_category) or set()
    return {
        s.sample_id: [
            q for q in s.questions if q.category in ASKED_CATEGORIES and (q.conversation_id, q.index) in chosen
        ]
        for s in samples
    }


def recall_all(samples: list[Sample], picked: dict[str, list[Question]], out: Path) -> list[tuple[Question, list]]:
    """Each picked question's evidence at K (the eval's stores under `out` are made or reused)."""
    asked = []
    for sample in samples:
        if not picked[sample.sample_id]:
            continue
        with Memory(store_dir(out, sample)) as memory:
            memory.ingest_conversations([sample.conversation], label=sample.sample_id, content_hash=sample.content_hash)
            for q in picked[sample.sample_id]:
                result = memory.recall(q.text, k=K, mode="ripple", as_of=sample.as_of, answer="none")
                asked.append((q, result.evidence))
    random.Random(14).shuffle(asked)  # a run cut short (a loaded machine) has still answered a fair subset
    return asked


CAP = 300.0  # seconds: far above the product's cap, so a loaded machine slows the answers down but never cuts them


def answer(variant: str, llm: Any, question: str, evidence: list[Evidence]) -> tuple[Any, CallLog]:
    """One variant's answer and its model calls."""
    kind, _, budget = variant.partition(":")
    log = CallLog()
    if kind == "typed":
        return typed_answer(question, evidence), log
    if kind == "plain":
        return llm_answer(llm, question, evidence, log, cap_seconds=CAP, budget=int(budget)), log
    if kind == "json":
        return llm_answer_json(llm, question, evidence, log, budget=int(budget)), log
    raise SystemExit(f"unknown variant {variant}")


def record(variant: str, q: Question, llm: Any, evidence: list[Evidence]) -> dict[str, Any]:
    """One answer, scored, with its time, first-token time and tokens (llama.cpp's counts when it has them)."""
    started = time.perf_counter()
    result, log = answer(variant, llm, q.text, evidence)
    seconds = time.perf_counter() - started
    call = log.calls[-1] if log.calls else None
    timing = getattr(llm, "last_timing", {}) if call else {}
    return {
        "conversation": q.conversation_id,
        "index": q.index,
        "category": q.category,
        "type": question_type(q.text),
        "question": q.text,
        "gold": q.answer,
        "answer": result.scored,
        "method": result.method,
        "fallback": result.fallback,
        "note": result.note,
        "f1": token_f1(result.scored, q.answer),
        "bleu1": bleu1(result.scored, q.answer),
        "seconds": round(seconds, 3),
        "first_token": call.first_token if call else None,
        "prompt_tokens": call.tokens_in if call else 0,
        "generated_tokens": call.tokens_out if call else 0,
        "prompt_evaluated": timing.get("prompt_tokens"),  # fewer than prompt_tokens: a cached prefix was reused
    }


def run_variant(
    variant: str, llm: Any, asked: list[tuple[Question, list]], path: Path, until: float
) -> list[dict[str, Any]]:
    """Answer every question (skipping those already in `path`) until the `until` clock; return all records."""
    done = [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
    seen = {(r["conversation"], r["index"]) for r in done}
    with path.open("a", encoding="utf-8") as handle:
        for q, evidence in asked:
            if (q.conversation_id, q.index) in seen:
                continue
            if time.monotonic() > until:  # a model run stays short: the next run resumes here
                break
            row = record(variant, q, llm, evidence)
            handle.write(json.dumps(row) + "\n")
            handle.flush()
            done.append(row)
    return done


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """F1 per category and split, latency and token medians, fallbacks."""

    def f1(keep) -> float:
        chosen = [r["f1"] for r in rows if keep(r)]
        return round(sum(chosen) / len(chosen), 3) if chosen else 0.0

    firsts = [r["first_token"] for r in rows if r["first_token"] is not None]
    evaluated = [r["prompt_evaluated"] for r in rows if r["prompt_evaluated"] is not None]
    return {
        "n": len(rows),
        "f1": f1(lambda r: True),
        **{f"f1_c{c}": f1(lambda r, c=c: r["category"] == c) for c in ASKED_CATEGORIES},
        "f1_tune": f1(lambda r: r["conversation"] in TUNE),
        "f1_held": f1(lambda r: r["conversation"] not in TUNE),
        "bleu1": round(sum(r["bleu1"] for r in rows) / max(len(rows), 1), 3),
        "p50_s": round(percentile([r["seconds"] for r in rows], 0.5), 2),
        "p95_s": round(percentile([r["seconds"] for r in rows], 0.95), 2),
        "first_token_p50_s": round(percentile(firsts, 0.5), 2) if firsts else None,
        "prompt_tokens_p50": percentile([r["prompt_tokens"] for r in rows], 0.5),
        "prompt_evaluated_p50": percentile(evaluated, 0.5) if evaluated else None,
        "generated_tokens_p50": percentile([r["generated_tokens"] for r in rows], 0.5),
        "fallbacks": sum(1 for r in rows if r["fallback"]),
    }


def main() -> None:
    """Parse arguments, recall once, answer with every variant, print one summary line per variant."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--model", type=Path, help="GGUF instruction model (needed by plain:/json: variants)")
    parser.add_argument("--variants", default="typed,plain:350")
    parser.add_argument("--per-category", type=int, default=25)
    parser.add_argument("--conversations", nargs="*", help="only these conversations (default: all)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--minutes", type=float, default=25.0, help="stop starting answers after this long")
    parser.add_argument("--out", type=Path, default=Path("/tmp/answer-bench"))
    parser.add_argument("--stores", type=Path, help="where the stores are made or reused (default: OUT)")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    samples = load_samples(args.data, args.conversations)
    asked = recall_all(samples, chosen_questions(samples, args.per_category), args.stores or args.out)
    variants = args.variants.split(",")
    needs_model = any(v != "typed" for v in variants)
    llm = LlamaCppLLM(args.model, ModelOptions(n_threads=args.threads)) if needs_model else None
    tag = llm.name if llm else "rules"
    results: dict[str, list[dict[str, Any]]] = {}
    until = time.monotonic() + args.minutes * 60
    for variant in variants:
        load_before = os.getloadavg()[0]
        path = args.out / f"{tag if variant != 'typed' else 'rules'}-{variant}.jsonl"
        rows = run_variant(variant, llm, asked, path, until)
        line = {"model": tag if variant != "typed" else "-", "variant": variant, **summary(rows)}
        line["load"] = f"{load_before:.2f}->{os.getloadavg()[0]:.2f}"
        print(json.dumps(line), flush=True)
        results[variant] = rows
    for variant in [v for v in variants if v != "typed" and "typed" in results]:
        mixed = by_type(results["typed"], results[variant])
        print(json.dumps({"model": tag, "variant": f"when:typed+{variant}", **summary(mixed)}), flush=True)


def by_type(typed: list[dict[str, Any]], model: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What `--answer auto` choosing per question type would score: the rules for when-questions, else the model."""
    rules = {(r["conversation"], r["index"]): r for r in typed}
    return [rules[(r["conversation"], r["index"])] if question_type(r["question"]) == "when" else r for r in model]


if __name__ == "__main__":
    main()
