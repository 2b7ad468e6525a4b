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
import contextlib
import hashlib
import json
import os
import pickle
import random
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import ripplecli.answer as answer_package
from ripplecli.answer import RULES_TYPES, VERDICT_TYPES, ModelProvider, reading, rules_kept, typed_answer
from ripplecli.answer import llm as answer_llm
from ripplecli.answer.llm import BLOCKS, block_prompt, llm_answer, llm_answer_json
from ripplecli.answer.typed import question_type
from ripplecli.api import Memory
from ripplecli.eval.locomo import ASKED_CATEGORIES, Question, Sample, load_samples
from ripplecli.eval.metrics import answer_words, bleu1, contains_answer, percentile, token_f1
from ripplecli.eval.runner import sample_questions, store_dir
from ripplecli.model_catalog import rules_when_sure
from ripplecli.runtime.llm import CallLog, LlamaCppLLM, ModelOptions, prompt_tokens
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


Asked = tuple[Question, list[Evidence], datetime | None]  # a question, its evidence, the day it is asked


def recall_cache(out: Path, questions: list[Question]) -> Path:
    """Where the evidence of these very questions is kept: named by their ids, so another sample recalls anew."""
    wanted = sorted((q.conversation_id, q.index) for q in questions)
    return out / f"recalled-{hashlib.sha256(json.dumps(wanted).encode()).hexdigest()[:12]}.pkl"


def recall_all(samples: list[Sample], picked: dict[str, list[Question]], out: Path) -> list[Asked]:
    """Each picked question's evidence at K (the eval's stores under `out` are made or reused), kept in
    `out/recalled-*.pkl` so that a later run answers from the very same evidence without recalling again."""
    kept = recall_cache(out, [q for questions in picked.values() for q in questions])
    if kept.exists():
        return pickle.loads(kept.read_bytes())
    asked = []
    for sample in samples:
        if not picked[sample.sample_id]:
            continue
        with Memory(store_dir(out, sample)) as memory:
            memory.ingest_conversations([sample.conversation], label=sample.sample_id, content_hash=sample.content_hash)
            for q in picked[sample.sample_id]:
                result = memory.recall(q.text, k=K, mode="ripple", as_of=sample.as_of, answer="none")
                asked.append((q, result.evidence, sample.as_of))
    random.Random(14).shuffle(asked)  # a run cut short (a loaded machine) has still answered a fair subset
    kept.write_bytes(pickle.dumps(asked))
    return asked


CAP = 300.0  # seconds: far above the product's cap, so a loaded machine slows the answers down but never cuts them


def answer(
    variant: str, llm: Any, question: str, evidence: list[Evidence], today: datetime | None = None
) -> tuple[Any, CallLog]:
    """One variant's answer and its model calls; `shaped:600@CHAIN=0@LONG_WORDS=50` sets reading.py's constants
    for this variant only (a choice measured on the same evidence)."""
    variant, *overrides = variant.split("@")
    with constants(overrides):
        return _answer(variant, llm, question, evidence, today)


@contextlib.contextmanager
def constants(overrides: list[str]) -> Iterator[None]:
    """reading.py's, llm.py's or ripplecli.answer's constants (`@UNNAMED=0`, `@WORKED_OUT=0`) set to `NAME=value`
    for the duration."""
    saved = []
    for override in overrides:
        name, _, value = override.partition("=")
        module = next((m for m in (reading, answer_llm, answer_package) if hasattr(m, name)), answer_llm)
        old = getattr(module, name)
        saved.append((module, name, old))
        setattr(module, name, type(old)(value) if not isinstance(old, str) else value)
    try:
        yield
    finally:
        for module, name, old in reversed(saved):
            setattr(module, name, old)


def _answer(
    variant: str, llm: Any, question: str, evidence: list[Evidence], today: datetime | None
) -> tuple[Any, CallLog]:
    """One variant's answer, its constants set."""
    auto, plus, variant = variant.rpartition("+")  # auto+shaped:600: what --answer auto answers
    if auto not in ("", "auto"):
        raise SystemExit(f"unknown variant {auto}{plus}{variant} (auto+shaped:600 is --answer auto)")
    kind, _, budget = variant.partition(":")
    log = CallLog()
    if auto == "auto" and plus:
        provider = ModelProvider(True, lambda: llm, rules_when_sure(llm.path))
        kept = rules_kept(question, evidence, provider, today)
        if kept is not None:
            return kept, log
    if kind == "typed":
        return typed_answer(question, evidence, today), log
    if kind in BLOCKS:
        made = llm_answer(llm, question, evidence, log, cap_seconds=CAP, budget=int(budget), block=kind, today=today)
        return made, log
    if kind == "json":
        return llm_answer_json(llm, question, evidence, log, budget=int(budget)), log
    raise SystemExit(f"unknown variant {variant}")


def record(variant: str, q: Question, llm: Any, evidence: list[Evidence], today: datetime | None) -> dict[str, Any]:
    """One answer, scored, with its time, first-token time and tokens (llama.cpp's counts when it has them)."""
    started = time.perf_counter()
    result, log = answer(variant, llm, q.text, evidence, today)
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
        "contains": contains_answer(result.scored, q.answer),
        "abstained": not result.found,
        "sure": result.sure,
        "block": log.calls[-1].note if log.calls else None,
        "bleu1": bleu1(result.scored, q.answer),
        "seconds": round(seconds, 3),
        "first_token": call.first_token if call else None,
        "prompt_tokens": call.tokens_in if call else 0,
        "generated_tokens": call.tokens_out if call else 0,
        "prompt_evaluated": timing.get("prompt_tokens"),  # fewer than prompt_tokens: a cached prefix was reused
    }


def run_variant(variant: str, llm: Any, asked: list[Asked], path: Path, until: float) -> list[dict[str, Any]]:
    """Answer every question (skipping those already in `path`) until the `until` clock; return all records."""
    done = [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
    seen = {(r["conversation"], r["index"]) for r in done}
    with path.open("a", encoding="utf-8") as handle:
        for q, evidence, today in asked:
            if (q.conversation_id, q.index) in seen:
                continue
            if time.monotonic() > until:  # a model run stays short: the next run resumes here
                break
            row = record(variant, q, llm, evidence, today)
            handle.write(json.dumps(row) + "\n")
            handle.flush()
            done.append(row)
    return done


def summary(rows: list[dict[str, Any]], categories: tuple[Any, ...] = ASKED_CATEGORIES) -> dict[str, Any]:
    """F1 per category and per half (tuning / held out, and each half per category), containment, abstention,
    latency and token medians, fallbacks."""

    def mean(key: str, keep=lambda r: True) -> float:
        chosen = [float(r[key]) for r in rows if keep(r)]
        return round(sum(chosen) / len(chosen), 3) if chosen else 0.0

    firsts = [r["first_token"] for r in rows if r["first_token"] is not None]
    evaluated = [r["prompt_evaluated"] for r in rows if r["prompt_evaluated"] is not None]
    halves = {"tune": lambda r: r["conversation"] in TUNE, "held": lambda r: r["conversation"] not in TUNE}
    return {
        "n": len(rows),
        "f1": mean("f1"),
        **{f"f1_c{c}": mean("f1", lambda r, c=c: r["category"] == c) for c in categories},
        **{f"f1_{half}": mean("f1", keep) for half, keep in halves.items()},
        **{
            f"f1_{half}_c{c}": mean("f1", lambda r, c=c, keep=keep: keep(r) and r["category"] == c)
            for half, keep in halves.items()
            for c in categories
        },
        "contains": mean("contains"),
        **{f"contains_{half}": mean("contains", keep) for half, keep in halves.items()},
        "abstained": mean("abstained"),
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
    parser.add_argument("--conversations", nargs="*", help="only these conversations (another sample: see --half)")
    parser.add_argument("--half", choices=("tune", "held"), help="only the tuning or the held-out questions")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--minutes", type=float, default=25.0, help="stop starting answers after this long")
    parser.add_argument("--out", type=Path, default=Path("/tmp/answer-bench"))
    parser.add_argument("--stores", type=Path, help="where the stores are made or reused (default: OUT)")
    parser.add_argument("--dry", action="store_true", help="no answers: each block's size and the gold turns it holds")
    parser.add_argument("--show", type=int, default=0, help="with --dry: print the first N blocks")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    samples = load_samples(args.data, args.conversations)
    asked = recall_all(samples, chosen_questions(samples, args.per_category), args.stores or args.out)
    if args.half:  # the same sample, one half of it: the choices are made on "tune", reported on "held"
        asked = [a for a in asked if (a[0].conversation_id in TUNE) == (args.half == "tune")]
    variants = args.variants.split(",")
    needs_model = any(v != "typed" for v in variants)
    llm = LlamaCppLLM(args.model, ModelOptions(n_threads=args.threads)) if needs_model else None
    tag = llm.name if llm else "rules"
    if args.dry:
        for variant in (v for v in variants if v.partition(":")[0] in BLOCKS):  # overrides included
            print(json.dumps({"model": tag, "variant": variant, **block_stats(variant, llm, asked, args.show)}))
        return
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
        for kinds in (("when",), ("should",), ("when", "should")):
            mixed = by_type(results["typed"], results[variant], kinds)
            name = f"{'+'.join(kinds)}:typed+{variant}"
            print(json.dumps({"model": tag, "variant": name, **summary(mixed)}), flush=True)
        auto = as_auto(results["typed"], results[variant], rules_when_sure(args.model))
        print(json.dumps({"model": tag, "variant": f"auto:typed+{variant}", **summary(auto)}), flush=True)


def block_stats(variant: str, llm: Any, asked: list[Asked], show: int = 0) -> dict[str, Any]:
    """Without answering: the block's prompt tokens, the memories it shows, and the share of each question's gold
    turns it holds (evidence recall) and the questions whose every gold turn it holds (full evidence)."""
    variant, *overrides = variant.split("@")
    kind, _, budget = variant.partition(":")
    tokens, counts, recall, full, holds = [], [], [], [], []
    for n, (q, evidence, today) in enumerate(asked):
        with constants(overrides):
            prompt, shown, _ = block_prompt(llm, q.text, evidence, kind, int(budget), today)
        tokens.append(prompt_tokens(llm, prompt))
        counts.append(len(shown))
        turns = {t for e in shown for t in e.source_turns}
        said, gold = answer_words(prompt[-1]["content"]), answer_words(q.answer)
        holds.append(float(bool(gold) and any(said[i : i + len(gold)] == gold for i in range(len(said)))))
        held = [t in turns for t in q.gold]
        recall.append(sum(held) / len(held) if held else 0.0)
        full.append(float(bool(held) and all(held)))
        if n < show:
            print(f"--- {q.conversation_id} #{q.index} gold {q.gold} → {q.answer}\n{prompt[-1]['content']}\n")
    return {
        "prompt_tokens_p50": percentile(tokens, 0.5),
        "prompt_tokens_p95": percentile(tokens, 0.95),
        "memories": round(sum(counts) / len(counts), 1),
        "evidence_recall": round(sum(recall) / len(recall), 3),
        "full_evidence": round(sum(full) / len(full), 3),
        "answer_in_block": round(sum(holds) / len(holds), 3),  # the gold answer's words, in order, in the block
    }


def by_type(typed: list[dict[str, Any]], model: list[dict[str, Any]], kinds: tuple[str, ...]) -> list[dict[str, Any]]:
    """What `--answer auto` choosing per question type would score: the rules for `kinds`, else the model."""
    rules = {(r["conversation"], r["index"]): r for r in typed}
    return [rules[(r["conversation"], r["index"])] if question_type(r["question"]) in kinds else r for r in model]


def as_auto(typed: list[dict[str, Any]], model: list[dict[str, Any]], when_sure: bool = False) -> list[dict[str, Any]]:
    """What `--answer auto` scores: the rules for when-questions, for a verdict they weigh as no and (`when_sure`: a
    catalogue model measured weaker) for an answer of the asked kind; else the model."""
    rules = {(r["conversation"], r["index"]): r for r in typed}

    def kept(r: dict[str, Any]) -> bool:
        kind = question_type(r["question"])
        ruled = rules[(r["conversation"], r["index"])]
        said = ruled["answer"].strip().lower()
        sure = when_sure and not ruled["abstained"] and ruled.get("sure", not said.startswith("not sure"))
        return kind in RULES_TYPES or (kind in VERDICT_TYPES and said in ("no", "likely no")) or sure

    return [rules[(r["conversation"], r["index"])] if kept(r) else r for r in model]


if __name__ == "__main__":
    main()
