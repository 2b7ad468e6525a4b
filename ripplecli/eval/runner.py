"""Runs an evaluation (LoCoMo: one store per conversation; LongMemEval: one per question): one recall per question
per mode, resumable."""

from __future__ import annotations

import hashlib
import json
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ripplecli.errors import InputError
from ripplecli.eval.locomo import Question, Sample, load_samples
from ripplecli.eval.metrics import bleu1, covered_turns, token_f1
from ripplecli.protocols import Encoder
from ripplecli.registry import EVAL_ANSWERS
from ripplecli.trace import Answer

if TYPE_CHECKING:
    import numpy as np

K_MAX = 50  # one recall at the largest K; every smaller K and the budget are prefixes of it
REPORT_KS = (10, 30)
ANSWERS = EVAL_ANSWERS
SAMPLE_SEED = 14  # --questions N: the same questions every run, so runs of different answerers compare
PACKAGE = Path(__file__).resolve().parent.parent

Progress = Callable[[str, int, int], None]  # (stage, done, total)


@dataclass
class EvalConfig:
    """What `ripple eval locomo` or `ripple eval longmemeval` was asked to do."""

    file: Path
    out: Path = Path("eval-out")
    conversations: list[str] | None = None
    k: int = 30
    modes: list[str] | None = None
    answer: str = "none"
    budget_tokens: int = 1500
    questions: int | None = None  # per category, a fixed seeded sample; None: every question
    model: str | None = None  # the GGUF file for --answer llm|auto (None: $RIPPLE_MODEL or the config file)
    benchmark: str = "locomo"  # or "longmemeval"
    ids: list[str] | None = None  # LongMemEval: question ids to run
    types: list[str] | None = None  # LongMemEval: question types to run

    @property
    def ks(self) -> list[int]:
        """The K values every report shows: 10, 30 and the requested one."""
        return sorted({*REPORT_KS, self.k})


@dataclass
class EvalPlan:
    """A checked configuration: the samples to run and the resolved mode list."""

    config: EvalConfig
    samples: list[Sample]
    modes: list[str]
    fingerprint: str
    timing: dict[str, float] = field(default_factory=dict)
    chosen: set[tuple[str, int]] | None = None  # (conversation, qa index) of the --questions sample
    ingest_by_sample: dict[str, float] = field(default_factory=dict)  # per store, as its ingest runs recorded

    @property
    def unit(self) -> str:
        """What one store holds, for the progress bar: a conversation (LoCoMo) or a question (LongMemEval)."""
        return "questions" if self.config.benchmark == "longmemeval" else "conversations"


def prepare(config: EvalConfig) -> EvalPlan:
    """Check every argument and the file; raises InputError before any work starts."""
    from ripplecli.recall.modes import MODES

    if not 1 <= config.k <= K_MAX:
        raise InputError(f"--k must be between 1 and {K_MAX}, not {config.k}")
    if config.budget_tokens <= 0:
        raise InputError(f"--budget-tokens must be positive, not {config.budget_tokens}")
    if config.answer not in ANSWERS:
        raise InputError(f"unknown --answer '{config.answer}' (choose from: {', '.join(ANSWERS)})")
    modes = list(dict.fromkeys(config.modes)) if config.modes else list(MODES)
    unknown = [m for m in modes if m not in MODES]
    if unknown:
        raise InputError(f"unknown mode {', '.join(unknown)} (choose from: {', '.join(MODES)})")
    if config.questions is not None and config.questions < 1:
        raise InputError(f"--questions must be at least 1, not {config.questions}")
    samples = load(config)
    _check_writable(config.out)
    fingerprint = code_fingerprint(f"{config.answer}|{config.model or ''}")
    plan = EvalPlan(config, samples, modes, fingerprint, chosen=sample_questions(samples, config.questions))
    plan.samples = [s for s in samples if asked(plan, s)]  # a store is built only to be asked something
    if not plan.samples:
        raise InputError(f"{config.file.name}: no question to ask (unanswerable ones are asked only with --answer)")
    return plan


def load(config: EvalConfig) -> list[Sample]:
    """The samples of the benchmark's file, checked; every problem is an InputError."""
    if config.benchmark == "longmemeval":
        from ripplecli.eval.longmemeval import load_questions

        return load_questions(config.file, config.ids, config.types)
    return load_samples(config.file, config.conversations)


def sample_questions(samples: list[Sample], per_category: int | None) -> set[tuple[str, int]] | None:
    """A fixed, seeded sample of `per_category` questions of each category (the unanswerable ones of a category
    apart) over the chosen samples."""
    if per_category is None:
        return None
    strata: dict[tuple[int | str, bool], list[tuple[str, int]]] = {}
    for question in (q for s in samples for q in s.questions):
        stratum = (question.category, question.answer_only)
        strata.setdefault(stratum, []).append((question.conversation_id, question.index))
    chosen: set[tuple[str, int]] = set()
    for (category, answer_only), pool in strata.items():
        chosen |= set(random.Random(_seed(category, answer_only)).sample(pool, min(per_category, len(pool))))
    return chosen


def _seed(category: int | str, answer_only: bool) -> int | str:
    """The sampling seed of one stratum (LoCoMo's numbered categories keep the seeds their earlier runs used)."""
    return SAMPLE_SEED + category if isinstance(category, int) else f"{SAMPLE_SEED}:{category}:{answer_only}"


def _check_writable(out: Path) -> None:
    """The output folder exists (or can be made) and accepts files."""
    probe = out / ".ripple-write-test"
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe.write_text("ok", encoding="utf-8")
        probe.unlink()
    except OSError as err:
        raise InputError(f"--out {out}: not a writable folder ({err.strerror or err})") from None


def code_fingerprint(answer: str) -> str:
    """Identity of what produced a result: the answer setting and ripple's own code, so stale results are redone."""
    digest = hashlib.sha256(f"{answer}|{K_MAX}".encode())
    for source in sorted(PACKAGE.rglob("*.py")):
        if source.parent.name not in ("eval", "cli"):
            digest.update(source.read_bytes())
    return digest.hexdigest()[:16]


def store_dir(out: Path, sample: Sample) -> Path:
    """Where a conversation's store lives: named by its id and content, so a re-run reuses it."""
    return out / "stores" / f"{sample.sample_id}-{sample.content_hash[:12]}"


def asked(plan: EvalPlan, sample: Sample) -> list[Question]:
    """Questions to ask: the answerable ones, plus the unanswerable ones when answers are scored."""
    answering, chosen = plan.config.answer != "none", plan.chosen
    return [
        q
        for q in sample.questions
        if (answering or not q.answer_only) and (chosen is None or (q.conversation_id, q.index) in chosen)
    ]


def run(plan: EvalPlan, progress: Progress | None = None, settings: Any = None) -> list[dict[str, Any]]:
    """Ingest every conversation and ask every question in every mode; returns per-question results."""
    from ripplecli.api import Memory
    from ripplecli.store.queries import ingest_seconds

    report = progress or (lambda stage, done, total: None)
    journal = Journal(plan)
    total = len(plan.modes) * sum(len(asked(plan, s)) for s in plan.samples)
    done = sum(journal.count(s, asked(plan, s)) for s in plan.samples)
    plan.timing = {"ingest_seconds": 0.0, "ask_seconds": 0.0}
    report(plan.unit, 0, len(plan.samples))
    try:
        for number, sample in enumerate(plan.samples, start=1):
            with Memory(store_dir(plan.config.out, sample), model=plan.config.model) as memory:
                _ingest(plan, sample, memory, settings, report)
                _link(plan, sample, memory, report)
                plan.ingest_by_sample[sample.sample_id] = ingest_seconds(memory.store)
                memory.encoder = QueryVectors(memory.encoder)  # same vectors, encoded once for all modes
                started = time.perf_counter()
                done = _ask_all(plan, sample, memory, journal, report, (done, total))
                plan.timing["ask_seconds"] += time.perf_counter() - started
            report(plan.unit, number, len(plan.samples))
    finally:
        journal.close()
    return journal.results(plan)


def _ingest(plan: EvalPlan, sample: Sample, memory: Any, settings: Any, report: Progress) -> None:
    """Ingest one conversation into its own store; stored turns are skipped, so this resumes."""
    started = time.perf_counter()
    if settings is not None and memory.store.count("memories") == 0:
        memory.configure(settings)
    stage = f"ingest {sample.sample_id}"
    memory.ingest_conversations(
        [sample.conversation],
        label=f"{plan.config.file.name}#{sample.sample_id}",
        content_hash=sample.content_hash,
        progress=lambda done, total: report(stage, done, total),
    )
    plan.timing["ingest_seconds"] += time.perf_counter() - started


def _link(plan: EvalPlan, sample: Sample, memory: Any, report: Progress) -> None:
    """CABLE links for the +cable modes (each variant once per store; resumes like the ingest)."""
    from ripplecli.recall.cable import LINKED_MODES

    started = time.perf_counter()
    stage = f"link {sample.sample_id}"
    for channel in sorted({LINKED_MODES[m] for m in plan.modes if m in LINKED_MODES}):
        memory.link("cable", subtract=channel == "antecedent", progress=lambda d, t: report(stage, d, t))
    plan.timing["ingest_seconds"] += time.perf_counter() - started


def _ask_all(plan: EvalPlan, sample: Sample, memory: Any, journal: Journal, report: Progress, count: tuple) -> int:
    """Ask the sample's questions in every mode, skipping results already in the journal."""
    done, total = count
    for question in asked(plan, sample):
        for mode in plan.modes:
            if journal.has(mode, sample, question):
                continue
            journal.add(mode, ask(plan, sample, memory, question, mode))
            done += 1
            report("ask", done, total)
    return done


def ask(plan: EvalPlan, sample: Sample, memory: Any, question: Question, mode: str) -> dict[str, Any]:
    """One recall at K_MAX and everything needed to trace its numbers back."""
    result = memory.recall(question.text, k=K_MAX, mode=mode, as_of=sample.as_of, answer=plan.config.answer)
    source_turns = [list(e.source_turns) for e in result.evidence]
    record: dict[str, Any] = {
        "conversation": sample.sample_id,
        "store": sample.content_hash[:12],
        "index": question.index,
        "question": question.text,
        "category": question.category,
        "gold_answer": question.answer,
        "gold": question.gold,
        "unresolved": question.unresolved,
        "mode": mode,
        "memory_ids": [e.memory_id for e in result.evidence],
        "source_turns": source_turns,
        "tokens": [e.tokens for e in result.evidence],
        "seconds": result.seconds,
        "hits": {str(k): len(set(question.gold) & covered_turns(source_turns, k)) for k in REPORT_KS},
        "answer_only": question.answer_only,
    }
    if question.gold_sessions:
        record["gold_sessions"] = question.gold_sessions
        record["source_sessions"] = [list(dict.fromkeys(sample.session_of[t] for t in turns)) for turns in source_turns]
    if result.answer is not None:
        record.update(answer_record(result.answer, result.trace.llm_calls, question.answer))
    return record


def answer_record(answer: Answer, llm_calls: list[dict[str, Any]] | None, gold: str) -> dict[str, Any]:
    """An answer's scores against the gold answer (on its span), its type, time and model tokens."""
    span = answer.scored
    calls = [c for c in llm_calls or [] if c.get("component") == "answer"]
    return {
        "answer": span,
        "answer_text": answer.text,
        "answer_type": answer.type,
        "answer_method": answer.method,
        "answer_found": answer.found,
        "answer_sure": answer.sure,
        "answer_seconds": answer.seconds,
        "prompt_tokens": sum(c.get("tokens_in", 0) for c in calls),
        "generated_tokens": sum(c.get("tokens_out", 0) for c in calls),
        "first_token_seconds": calls[-1].get("first_token") if calls else None,
        "f1": token_f1(span, gold),
        "bleu1": bleu1(span, gold),
    }


class QueryVectors:
    """An encoder that remembers single-text encodings: every mode asks the same question, so encode it once."""

    def __init__(self, encoder: Encoder):
        self.encoder = encoder
        self.name, self.dim = encoder.name, encoder.dim
        self.vectors: dict[str, np.ndarray] = {}

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """The wrapped encoder's vectors; a one-text call is served from memory when seen before."""
        if len(texts) != 1:
            return self.encoder.encode(texts)
        if texts[0] not in self.vectors:
            self.vectors[texts[0]] = self.encoder.encode(texts)
        return self.vectors[texts[0]].copy()


class Journal:
    """Per-mode `partial-<mode>.jsonl` files: results are appended as they finish so a re-run resumes."""

    def __init__(self, plan: EvalPlan):
        self.plan = plan
        self.done: dict[str, dict[tuple, dict[str, Any]]] = {mode: self._load(mode) for mode in plan.modes}
        self.handles = {mode: self._open(mode) for mode in plan.modes}

    def path(self, mode: str) -> Path:
        """The journal file of one mode."""
        return self.plan.config.out / f"partial-{mode.replace('/', '_')}.jsonl"

    def _load(self, mode: str) -> dict[tuple, dict[str, Any]]:
        """Earlier results of this mode made with the same code and settings; anything else is ignored."""
        path = self.path(mode)
        if not path.exists():
            return {}
        lines = path.read_text(encoding="utf-8").splitlines()
        if not lines or _header(lines[0]) != self.plan.fingerprint:
            path.unlink()
            return {}
        records = _parse_lines(lines[1:])
        if len(records) < len(lines) - 1:  # a line cut off by an interruption: rewrite without it
            path.write_text("".join(f"{line}\n" for line in [lines[0], *map(json.dumps, records)]), encoding="utf-8")
        return {_key(r["conversation"], r["store"], r["index"], r["question"]): r for r in records}

    def _open(self, mode: str):
        """Append handle; a new file starts with the header that says which code and settings made it."""
        path = self.path(mode)
        fresh = not path.exists()
        handle = path.open("a", encoding="utf-8")
        if fresh:
            handle.write(json.dumps({"fingerprint": self.plan.fingerprint}) + "\n")
        return handle

    def key(self, sample: Sample, question: Question) -> tuple:
        """Identity of a question: conversation, its content, index and text."""
        return _key(sample.sample_id, sample.content_hash[:12], question.index, question.text)

    def has(self, mode: str, sample: Sample, question: Question) -> bool:
        """Whether this question was already answered in this mode."""
        return self.key(sample, question) in self.done[mode]

    def count(self, sample: Sample, questions: list[Question]) -> int:
        """Finished (question, mode) pairs of a sample, for the progress bar."""
        return sum(self.has(mode, sample, q) for mode in self.plan.modes for q in questions)

    def add(self, mode: str, record: dict[str, Any]) -> None:
        """Keep a finished result and append it to disk at once."""
        self.done[mode][_key(record["conversation"], record["store"], record["index"], record["question"])] = record
        self.handles[mode].write(json.dumps(record, ensure_ascii=False) + "\n")
        self.handles[mode].flush()

    def results(self, plan: EvalPlan) -> list[dict[str, Any]]:
        """Results of this run's questions in file order, mode by mode."""
        return [
            self.done[mode][self.key(s, q)]
            for mode in plan.modes
            for s in plan.samples
            for q in asked(plan, s)
            if self.has(mode, s, q)
        ]

    def close(self) -> None:
        """Close the journal files."""
        for handle in self.handles.values():
            handle.close()


def _header(line: str) -> str | None:
    """The fingerprint recorded on a journal's first line."""
    try:
        return json.loads(line).get("fingerprint")
    except (json.JSONDecodeError, AttributeError):
        return None


def _parse_lines(lines: list[str]) -> list[dict[str, Any]]:
    """The complete JSON records among journal lines."""
    records = []
    for line in lines:
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return records


def _key(conversation: str, store: str, index: int, question: str) -> tuple:
    """Journal key of one question."""
    return (conversation, store, index, question)
