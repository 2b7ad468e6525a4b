"""Each local-model component against the rules, with a real GGUF model (issue 18): query analysis, the planners,
extraction and CABLE's model querier/verifier. Per component: evidence recall@10/@30 against the rules on the same
questions (mean and per-question gains/losses), model calls, tokens in/out, seconds, failures, fallbacks and gate
drops; for the analyzer also the cues it returned that the question does not contain (the target is 0).

    flock /tmp/llm.lock nice -n 5 /work/main/.venv/bin/python bench/llm_components.py --model PATH \
        [--questions 30] [--held-out 15] [--turns 150] [--cable-turns 60] [--components analyzer,planner,...]

Questions: a seeded draw of categories 1-4 from conv-26/30/41 (used to tune the prompts) and a held-out draw from
conv-42/43, reported apart, each asked of a rules-built store of its conversation (built once into --stores).
Extraction: the first --turns turns of --conversation ingested by the model and by the rules, recall over the
questions whose gold turns all lie in the slice. CABLE: the same on --cable-turns turns, links by the rules and by
the model, asked in ripple+cable mode. The analyzer is called once per question; its text modes reuse that reply.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import statistics
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ripplecli.api import Memory
from ripplecli.cues import content_tokens
from ripplecli.eval.locomo import ASKED_CATEGORIES, Question, Sample, load_samples
from ripplecli.eval.metrics import evidence_recall
from ripplecli.model import Conversation, Session
from ripplecli.recall.llm_query import TEXT_MODES, LLMQueryAnalyzer
from ripplecli.runtime.llm import LlamaCppLLM, LLMOutputError, ModelOptions
from ripplecli.timewords import names, states_time

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DATA = REPO.parent / "shared" / "data" / "locomo-dev.json"
TUNING = ("conv-26", "conv-30", "conv-41")
HELD_OUT = ("conv-42", "conv-43")
KS = (10, 30)
COMPONENTS = ("analyzer", "planner", "planner-free", "extract", "cable")
STAGE_COMPONENTS = {"questions": {"analyzer", "planner", "planner-free"}, "extract": {"extract"}, "cable": {"cable"}}


class CachedLLM:
    """The model behind a reply cache: a second recall that sends the same prompt (another text mode) costs nothing.
    With a `replies` file the cache is kept on disk, so a rerun after a change to the gates (not to the prompts)
    replays the model's replies instead of calling it again; a replayed call keeps the tokens and seconds the model
    took when it made the reply, and is counted apart."""

    def __init__(self, llm: LlamaCppLLM, replies: Path | None = None):
        self.llm = llm
        self.replies = replies
        self.cache: dict[str, dict[str, Any]] = {}
        self.last_usage: tuple[int, int] | None = None
        self.raw: list[dict] = []  # every reply, for the cue audit
        self.made: list[dict[str, Any]] = []  # tokens and seconds of every reply asked for, for the extraction costs
        self.replayed = 0
        if replies and replies.exists():
            for line in replies.read_text(encoding="utf-8").splitlines():
                entry = json.loads(line)
                self.cache[entry["key"]] = entry
        self.stored = set(self.cache)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.llm, name)

    def generate_json(self, messages, schema):
        """The model's reply, from the cache when this exact request was made before."""
        key = hashlib.sha256(json.dumps([self.llm.path.name, messages, schema], sort_keys=True).encode()).hexdigest()
        if key not in self.cache:
            self._ask(key, messages, schema)
        elif key in self.stored:
            self.replayed += 1
        entry = self.cache[key]
        self.last_usage = tuple(entry["usage"]) if entry["usage"] else None
        tokens_in, tokens_out = entry["usage"] or (0, 0)
        self.made.append({"tokens_in": tokens_in, "tokens_out": tokens_out, "seconds": entry["seconds"]})
        if "error" in entry:  # the model answered, but not with JSON of the schema: replayed as the same error
            raise LLMOutputError(entry["error"], entry["raw"])
        self.raw.append(entry["reply"])
        return entry["reply"]

    def _ask(self, key: str, messages, schema) -> None:
        """Call the model and keep its reply, or its output error, in the cache (and the replies file)."""
        started = time.perf_counter()
        try:
            entry: dict[str, Any] = {"reply": self.llm.generate_json(messages, schema)}
        except LLMOutputError as exc:
            entry = {"error": str(exc), "raw": exc.raw}
        seconds = round(time.perf_counter() - started, 3)
        self.cache[key] = {"key": key, **entry, "usage": self.llm.last_usage, "seconds": seconds}
        if self.replies:
            with self.replies.open("a", encoding="utf-8") as out:
                out.write(json.dumps(self.cache[key]) + "\n")

    def generate_text(self, messages):
        return self.llm.generate_text(messages)


# --- data ----------------------------------------------------------------------------------------------------
def draw(samples: list[Sample], ids: tuple[str, ...], count: int, seed: int) -> list[tuple[Sample, Question]]:
    """A seeded draw of asked questions (categories 1-4, with gold turns) from these conversations."""
    pool = [
        (s, q) for s in samples if s.sample_id in ids for q in s.questions if q.category in ASKED_CATEGORIES and q.gold
    ]
    return random.Random(seed).sample(pool, min(count, len(pool)))


def rules_store(stores: Path, sample: Sample) -> Memory:
    """The rules-built store of one conversation, built on first use and reused across runs."""
    memory = Memory(stores / sample.sample_id)
    if memory.store.count("memories") == 0:
        memory.ingest_conversations([sample.conversation], label=sample.sample_id, content_hash=sample.content_hash)
    return memory


def head(sample: Sample, turns: int) -> Conversation:
    """The conversation's first `turns` turns, sessions kept."""
    kept, sessions = 0, []
    for s in sample.conversation.sessions:
        chosen = s.turns[: max(turns - kept, 0)]
        kept += len(chosen)
        if chosen:
            sessions.append(Session(s.session_id, s.timestamp, chosen))
    return Conversation(sample.conversation.conversation_id, sessions)


# --- one recall ----------------------------------------------------------------------------------------------
def recall_at(memory: Memory, sample: Sample, question: Question, **options: Any) -> dict[str, Any]:
    """Recall@K of one question, the model calls it made and its trace's fallback notes."""
    result = memory.recall(question.text, k=max(KS), as_of=sample.as_of, answer="none", **options)
    turns = [e.source_turns for e in result.evidence]
    trace = result.trace
    notes = [trace.query_cues.failure] + [r.planner.failure for r in trace.rounds or []]
    return {
        **{f"r{k}": evidence_recall(question.gold, turns, k) for k in KS},
        "calls": trace.llm_calls or [],
        "notes": [n for n in notes if n],
        "cues": trace.query_cues,
        "question": question.text,
        "wants": [r.planner.target.wants for r in trace.rounds or [] if r.planner.target],
    }


def not_in_question(cues: Any, question: str, rules_concepts: set[str]) -> list[str]:
    """Cues of the analyzer's output that the question does not contain (names, concepts, keywords, a time)."""
    words = set(content_tokens(question))
    out = [f"person:{p}" for p in cues.persons if not names(question, p, [cues.owner])]
    out += [f"location:{x}" for x in cues.locations if not names(question, x)]
    out += [f"concept:{c}" for c in cues.concepts if c not in rules_concepts]
    out += [f"keyword:{k}" for k in cues.keywords if not set(content_tokens(k)) <= words]
    if cues.time_range and not states_time(question):
        out.append("time")
    return out


def raw_guesses(reply: dict, question: str) -> int:
    """Persons, places and a time the model's raw reply names that the question does not (before the gates)."""
    guessed = [p for p in reply.get("persons", []) + reply.get("locations", []) if not names(question, p)]
    return len(guessed) + int(bool(reply.get("time_range")) and not states_time(question))


# --- summaries -----------------------------------------------------------------------------------------------
def compare(base: list[dict], runs: list[dict]) -> dict[str, Any]:
    """Mean recall of both, per-question gains and losses at each K."""
    out: dict[str, Any] = {"questions": len(runs)}
    for k in KS:
        key = f"r{k}"
        out[f"rules@{k}"] = round(statistics.fmean(b[key] for b in base), 3) if base else None
        out[f"model@{k}"] = round(statistics.fmean(r[key] for r in runs), 3) if runs else None
        out[f"+/-@{k}"] = (
            sum(r[key] > b[key] + 1e-9 for b, r in zip(base, runs, strict=True)),
            sum(r[key] < b[key] - 1e-9 for b, r in zip(base, runs, strict=True)),
        )
        out[f"changed@{k}"] = [
            f"{r['question']} ({b[key]:.2f} -> {r[key]:.2f}, wants {r['wants']})"
            for b, r in zip(base, runs, strict=True)
            if abs(r[key] - b[key]) > 1e-9
        ]
    return out


def costs(calls: list[dict], asks: int) -> dict[str, Any]:
    """Model calls per ask, tokens in/out per call, seconds per ask, failed calls."""
    if not calls:
        return {"calls": 0}
    return {
        "calls": len(calls),
        "failed_calls": sum(not c.get("ok", True) for c in calls),
        "tokens_in_per_call": round(statistics.fmean(c["tokens_in"] for c in calls)),
        "tokens_out_per_call": round(statistics.fmean(c["tokens_out"] for c in calls)),
        "seconds_per_ask": round(sum(c["seconds"] for c in calls) / max(asks, 1), 2),
        "seconds_p50_call": round(statistics.median(c["seconds"] for c in calls), 2),
    }


def notes_summary(runs: list[dict]) -> dict[str, int]:
    """How often the trace recorded a fallback, a gate drop or an overruled stop."""
    text = [n for r in runs for n in r["notes"]]
    return {
        "fallbacks": sum("failed" in n for n in text),
        "gate_drops": sum(n.count("dropped") for n in text),
        "stops_overruled": sum("overruled" in n for n in text),
        "asks_with_a_note": sum(bool(r["notes"]) for r in runs),
    }


# --- components ----------------------------------------------------------------------------------------------
def question_components(
    llm: CachedLLM,
    draws: dict[str, list],
    stores: Path,
    wanted: set[str],
    log: Callable[[str], None],
    keep: Callable[[dict[str, Any]], None],
) -> dict[str, Any]:
    """Analyzer (every text mode), hybrid and free planner on each question set. The sets' questions are taken in
    turn, in proportion, and `keep` gets the report after each question, so a run cut short is a fair part of
    both halves."""
    memories: dict[str, Memory] = {}
    sums = {
        split: {"base": [], "runs": {}, "audit": {"cues_not_in_question": 0, "examples": [], "raw_guesses": 0}}
        for split in draws
    }
    report: dict[str, Any] = {}
    order = sorted((i / len(pairs), split, i) for split, pairs in draws.items() for i in range(len(pairs)))
    for number, (_, split, i) in enumerate(order, 1):
        sample, q = draws[split][i]
        if sample.sample_id not in memories:
            memories[sample.sample_id] = rules_store(stores, sample)
        memory = memories[sample.sample_id]
        memory._llm = llm
        one_question(llm, memory, sample, q, wanted, sums[split])
        report[split] = summary(sums[split], wanted)
        log(f"{number}/{len(order)} ({split} {len(sums[split]['base'])}/{len(draws[split])})")
        keep(report)
    for memory in memories.values():
        memory.close()
    return report


def one_question(llm: CachedLLM, memory: Memory, sample: Sample, q: Question, wanted: set[str], acc: dict) -> None:
    """One question by the rules and by each wanted component, added to its set's runs and analyzer audit."""
    rules = recall_at(memory, sample, q)
    acc["base"].append(rules)
    runs, audit = acc["runs"], acc["audit"]
    if "analyzer" in wanted:
        for mode in TEXT_MODES:
            LLMQueryAnalyzer.text_mode = mode
            llm.raw.clear()
            run = recall_at(memory, sample, q, analyzer="llm")
            if mode != TEXT_MODES[0]:
                run["calls"] = []  # the reply came from the cache: its cost is the first mode's
            else:
                extra = not_in_question(run["cues"], q.text, set(rules["cues"].concepts))
                audit["cues_not_in_question"] += len(extra)
                audit["examples"] += [f"{q.text} -> {e}" for e in extra][:3]
                audit["raw_guesses"] += sum(raw_guesses(r, q.text) for r in llm.raw)
            runs.setdefault(f"analyzer:{mode}", []).append(run)
        LLMQueryAnalyzer.text_mode = TEXT_MODES[0]
    for planner in ("planner", "planner-free"):
        if planner in wanted:
            name = "llm" if planner == "planner" else "llm-free"
            runs.setdefault(planner, []).append(recall_at(memory, sample, q, planner=name))


def summary(acc: dict, wanted: set[str]) -> dict[str, Any]:
    """One set's figures so far: per component recall against the rules, costs and notes; the analyzer audit."""
    out: dict[str, Any] = {
        name: {**compare(acc["base"], rs), **costs([c for r in rs for c in r["calls"]], len(rs)), **notes_summary(rs)}
        for name, rs in acc["runs"].items()
    }
    if "analyzer" in wanted:
        out["analyzer_audit"] = {**acc["audit"], "examples": acc["audit"]["examples"][:8]}
    return out


def slice_questions(sample: Sample, conv: Conversation) -> list[Question]:
    """The asked questions whose gold turns all lie in the slice."""
    turns = {t.turn_id for s in conv.sessions for t in s.turns}
    return [q for q in sample.questions if q.category in ASKED_CATEGORIES and q.gold and set(q.gold) <= turns]


def ways_compared(
    llm: CachedLLM, sample: Sample, turns: int, tmp: Path, ways: tuple[str, ...], run: Callable[..., Any], prefix=""
) -> dict[str, Any]:
    """The slice in a fresh store per way (the rules' way first): `run` gives that way's figures and recall over
    the slice's questions; each later way's recall is compared with the first's."""
    conv = head(sample, turns)
    questions = slice_questions(sample, conv)
    out: dict[str, Any] = {"turns": sum(len(s.turns) for s in conv.sessions), "questions": len(questions)}
    results = {}
    for way in ways:
        memory = Memory(tmp / f"{prefix}{way}")
        memory._llm = llm
        out[way], results[way] = run(memory, conv, questions, way)
        memory.close()
    for way in ways[1:]:
        out[f"recall:{way}"] = compare(results[ways[0]], results[way])
    return out


def extraction(llm: CachedLLM, sample: Sample, turns: int, tmp: Path, ways: tuple[str, ...]) -> dict[str, Any]:
    """The slice ingested by the rules and by the model's ways: `llm` (the default: persons and places added to the
    rules' memories), `+concepts` (concepts too), `+memories` (and extra memories; `:N`, they must add N words);
    recall over the slice's questions against the rules'."""
    from ripplecli.extract.llm import LLMExtractor

    def run(memory: Memory, conv: Conversation, questions: list[Question], way: str) -> tuple[dict, list]:
        LLMExtractor.add_concepts = "+concepts" in way
        LLMExtractor.extra_memories = "+memories" in way
        LLMExtractor.min_new_words = int(way.partition(":")[2] or 1)
        started, asked = time.perf_counter(), len(llm.made)
        memory.ingest_conversations([conv], label="slice", extractor="rules" if way == "rules" else "llm")
        seconds = time.perf_counter() - started
        calls = costs(llm.made[asked:], 1) if way != "rules" else {}
        LLMExtractor.add_concepts, LLMExtractor.extra_memories, LLMExtractor.min_new_words = False, False, 1
        con = memory.store.con
        stages = dict(con.execute("SELECT stage, count(*) FROM failures GROUP BY stage").fetchall())
        gated = con.execute(
            "SELECT split_part(split_part(error, ' rejected', 1), ':', 1), count(*) FROM failures"
            " WHERE stage = 'extract:gate' GROUP BY 1"
        ).fetchall()
        made = dict(con.execute("SELECT extractor, count(*) FROM memories GROUP BY extractor").fetchall())
        cues = {t: memory.store.count(t) for t in ("memory_persons", "memory_locations", "memory_cues")}
        results = [recall_at(memory, sample, q) for q in questions]
        figures = {"memories": made, "cues": cues, "ingest_seconds": round(seconds, 1), **stages, **calls}
        kinds: Counter[str] = Counter()
        for head, count in gated:
            kinds[_gate_kind(head)] += count
        return {**figures, "gated": dict(kinds)}, results

    return ways_compared(llm, sample, turns, tmp, ("rules", *ways), run, prefix="extract-")


def _gate_kind(error_head: str) -> str:
    """'person', 'location', 'concept', 'time' or 'memory not kept' from a gate row's error."""
    return error_head.split(" ")[0] if not error_head.startswith("memory not kept") else "memory not kept"


def cable(llm: CachedLLM, sample: Sample, turns: int, tmp: Path) -> dict[str, Any]:
    """CABLE links on the slice by the rules and by the model; recall in ripple+cable mode over its questions."""
    from ripplecli.graph.antecedents import LLMQuerier
    from ripplecli.graph.verifiers import LLMVerifier

    def run(memory: Memory, conv: Conversation, questions: list[Question], links: str) -> tuple[dict, list]:
        memory.ingest_conversations([conv], label="slice")
        linker = memory._linker(links)
        started = time.perf_counter()
        report = linker.backfill()
        seconds = time.perf_counter() - started
        calls = []
        for part in (linker.querier, linker.verifier):
            if isinstance(part, LLMQuerier | LLMVerifier):
                calls += part.log.to_list()
        results = [recall_at(memory, sample, q, mode="ripple+cable") for q in questions]
        edges = memory.store.con.execute("SELECT count(*) FROM edges WHERE channel = 'antecedent'").fetchone()[0]
        return {"links": edges, "seconds": round(seconds, 1), "memories": report.memories, **costs(calls, 1)}, results

    return ways_compared(llm, sample, turns, tmp, ("cable", "cable-llm"), run)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--questions", type=int, default=30, help="tuning questions (conv-26/30/41)")
    parser.add_argument("--held-out", type=int, default=15, help="held-out questions (conv-42/43)")
    parser.add_argument("--seed", type=int, default=18)
    parser.add_argument("--conversation", default="conv-30", help="extraction and CABLE slice")
    parser.add_argument("--turns", type=int, default=150, help="extraction slice")
    parser.add_argument("--cable-turns", type=int, default=60)
    parser.add_argument(
        "--extract-ways",
        default="llm,llm-cues",
        help="model ways: llm, llm:N (words), llm-cues, llm-names (no concepts)",
    )
    parser.add_argument("--components", default=",".join(COMPONENTS))
    parser.add_argument("--stores", type=Path, default=Path(tempfile.gettempdir()) / "ripple-bench-components")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--out", type=Path, default=None, help="also write the JSON report here")
    parser.add_argument("--replies", type=Path, default=None, help="keep the model's replies here and replay them")
    args = parser.parse_args()
    wanted = set(args.components.split(","))
    started = time.perf_counter()

    def log(line: str) -> None:
        print(f"[{time.perf_counter() - started:6.0f}s] {line}", flush=True)

    model = LlamaCppLLM(args.model, ModelOptions(n_ctx=4096, max_tokens=512, n_threads=args.threads))
    llm = CachedLLM(model, args.replies)
    samples = load_samples(args.data, [*TUNING, *HELD_OUT])
    report: dict[str, Any] = {
        "model": args.model.name,
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "load_at_start": round(os.getloadavg()[0], 1),
        "threads": args.threads,
    }
    args.stores.mkdir(parents=True, exist_ok=True)
    draws = {
        "tuning": draw(samples, TUNING, args.questions, args.seed),
        "held_out": draw(samples, HELD_OUT, args.held_out, args.seed),
    }
    (sample,) = [s for s in samples if s.sample_id == args.conversation]

    def keep_questions(part: dict[str, Any]) -> None:
        """The question stage so far, saved: a run stopped early keeps what it measured."""
        report["questions"] = part
        save(report, args.out, started)

    with tempfile.TemporaryDirectory(prefix="ripple-bench-components-") as tmp:
        stages: dict[str, Callable[[], dict[str, Any]]] = {
            "questions": lambda: question_components(llm, draws, args.stores, wanted, log, keep_questions),
            "extract": lambda: extraction(llm, sample, args.turns, Path(tmp), tuple(args.extract_ways.split(","))),
            "cable": lambda: cable(llm, sample, args.cable_turns, Path(tmp)),
        }
        for stage, run in stages.items():
            if not wanted & STAGE_COMPONENTS[stage]:
                continue
            try:
                report[stage] = run()
            except Exception as exc:  # a later stage's crash must not lose the earlier stages' figures
                report[stage] = {"error": f"{type(exc).__name__}: {exc}"}
            log(f"{stage} done")
            report["replayed_calls"] = llm.replayed
            save(report, args.out, started)
    print(json.dumps(report, indent=2, default=str))


def save(report: dict[str, Any], out: Path | None, started: float) -> None:
    """The report so far, with the load and wall time at this point."""
    report["load_now"] = round(os.getloadavg()[0], 1)
    report["wall_seconds"] = round(time.perf_counter() - started)
    if out:
        out.write_text(json.dumps(report, indent=2, default=str))


if __name__ == "__main__":
    main()
