"""From per-question results to per-mode, per-category metrics, written as report.json and report.md."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from ripplecli.eval.locomo import ASKED_CATEGORIES, CATEGORIES
from ripplecli.eval.metrics import (
    budget_cut,
    contains_answer,
    evidence_recall,
    full_evidence,
    is_abstention,
    mean,
    percentile,
)

CURVE_KS = tuple(range(5, 51, 5))
GROUPS = ("overall", *(CATEGORIES[c] for c in ASKED_CATEGORIES))
CURVE_LABEL = "evidence recall@K (categories 1-4)"

Record = dict[str, Any]


def group_metrics(records: list[Record], ks: Iterable[int], budget: int) -> dict[str, Any]:
    """Evidence metrics of a group of questions, and the scores of their answers."""
    return {**evidence_metrics(records, ks, budget), **answer_metrics([r for r in records if "f1" in r])}


def evidence_metrics(records: list[Record], ks: Iterable[int], budget: int) -> dict[str, Any]:
    """Means over questions of evidence recall / full-evidence / tokens at each K and at the token budget."""
    scored = [r for r in records if r["gold"]]
    metrics: dict[str, Any] = {"questions": len(scored), "asked": len(records)}
    for k in ks:
        metrics[f"recall@{k}"] = mean([evidence_recall(r["gold"], r["source_turns"], k) for r in scored])
        metrics[f"full@{k}"] = mean([full_evidence(r["gold"], r["source_turns"], k) for r in scored])
        metrics[f"tokens@{k}"] = mean([sum(r["tokens"][:k]) for r in scored])
    cuts = [budget_cut(r["tokens"], budget) for r in scored]
    metrics["recall@budget"] = mean(
        [evidence_recall(r["gold"], r["source_turns"], c) for r, c in zip(scored, cuts, strict=True)]
    )
    metrics["full@budget"] = mean(
        [full_evidence(r["gold"], r["source_turns"], c) for r, c in zip(scored, cuts, strict=True)]
    )
    metrics["memories@budget"] = mean(cuts)
    latencies = [r["seconds"] * 1000 for r in records]
    metrics["latency_p50_ms"] = percentile(latencies, 0.5)
    metrics["latency_p95_ms"] = percentile(latencies, 0.95)
    return metrics


def answer_metrics(answered: list[Record]) -> dict[str, Any]:
    """Token F1, BLEU-1 and containment of the answers' spans, the answerer's latency and its model tokens."""
    if not answered:
        return {}
    return {"answered": len(answered), **answer_scores(answered), **answer_costs(answered)}


def answer_scores(answered: list[Record]) -> dict[str, float]:
    """Means of token F1, BLEU-1 and containment accuracy (answer holds gold or gold holds answer) of the spans."""
    return {
        "f1": mean([r["f1"] for r in answered]),
        "bleu1": mean([r["bleu1"] for r in answered]),
        "contains": mean([contains_answer(r["answer"], r["gold_answer"]) for r in answered]),
    }


def answer_costs(answered: list[Record]) -> dict[str, Any]:
    """The answerer's p50/p95 seconds (as ms), its time to first words and its model tokens."""
    seconds = [r.get("answer_seconds", 0.0) * 1000 for r in answered]
    firsts = [r["first_token_seconds"] * 1000 for r in answered if r.get("first_token_seconds") is not None]
    return {
        "answer_p50_ms": percentile(seconds, 0.5),
        "answer_p95_ms": percentile(seconds, 0.95),
        "first_words_p50_ms": percentile(firsts, 0.5) if firsts else None,
        "prompt_tokens": mean([r.get("prompt_tokens", 0) for r in answered]),
        "generated_tokens": mean([r.get("generated_tokens", 0) for r in answered]),
    }


def mode_metrics(records: list[Record], ks: Iterable[int], budget: int) -> dict[str, dict[str, Any]]:
    """Metrics of one mode overall and per category (1-4)."""
    ks = list(ks)
    scored = asked(records)
    groups = {"overall": group_metrics(scored, ks, budget)}
    for category in ASKED_CATEGORIES:
        groups[CATEGORIES[category]] = group_metrics([r for r in scored if r["category"] == category], ks, budget)
    return groups


def recall_curve(records: list[Record]) -> dict[str, float]:
    """Overall evidence recall at K = 5, 10, ..., 50 of the questions with gold turns, for the plot."""
    scored = [r for r in records if r["gold"]]
    return {str(k): mean([evidence_recall(r["gold"], r["source_turns"], k) for r in scored]) for k in CURVE_KS}


def asked(records: list[Record]) -> list[Record]:
    """The results of categories 1-4 (category 5 has no evidence to find)."""
    return [r for r in records if r["category"] in ASKED_CATEGORIES]


def abstention_rate(records: list[Record]) -> dict[str, Any] | None:
    """Share of adversarial (category 5) questions answered with nothing or "not mentioned"."""
    adversarial = [r for r in records if r["category"] == 5 and "answer" in r]
    if not adversarial:
        return None
    return {
        "questions": len(adversarial),
        "rate": mean([float(is_abstention(r["answer"])) for r in adversarial]),
        **answer_metrics(adversarial),
    }


def build_report(plan: Any, records: list[Record]) -> dict[str, Any]:
    """The whole evaluation as one JSON document: config, counts, metrics, and every per-question result."""
    config = plan.config
    by_mode = {mode: [r for r in records if r["mode"] == mode] for mode in plan.modes}
    metrics: dict[str, dict[str, dict[str, Any] | None]] = {}  # mode -> its groups' metrics and its abstention
    for mode, rs in by_mode.items():
        metrics[mode] = {**mode_metrics(rs, config.ks, config.budget_tokens), "abstention": abstention_rate(rs)}
    return {
        "benchmark": "locomo",
        "config": {
            "file": str(config.file),
            "conversations": [s.sample_id for s in plan.samples],
            "modes": plan.modes,
            "ks": config.ks,
            "k": config.k,
            "budget_tokens": config.budget_tokens,
            "answer": config.answer,
            "questions_per_category": config.questions,
            "fingerprint": plan.fingerprint,
        },
        "timing": plan.timing,
        "counts": counts(plan),
        "metrics": metrics,
        "curve": {mode: recall_curve(asked(rs)) for mode, rs in by_mode.items()},
        "results": records,
    }


def counts(plan: Any) -> dict[str, Any]:
    """How many questions there were, which were skipped and which evidence ids did not resolve."""
    questions = [q for s in plan.samples for q in s.questions]
    return {
        "questions": len(questions),
        "by_category": {CATEGORIES[c]: sum(q.category == c for q in questions) for c in CATEGORIES},
        "no_resolvable_evidence": [
            {"conversation": q.conversation_id, "index": q.index}
            for q in questions
            if q.category in ASKED_CATEGORIES and not q.gold
        ],
        "unresolved_evidence_ids": [
            {"conversation": q.conversation_id, "index": q.index, "id": raw} for q in questions for raw in q.unresolved
        ],
    }


def write_report(
    report: dict[str, Any], out: Path, render: Callable[[dict[str, Any]], str] | None = None, label: str | None = None
) -> dict[str, Path | None]:
    """report.json, report.md (by `render`, LoCoMo's tables by default) and recall_at_k.png under `out`; the plot is
    None when matplotlib is not installed (the demo install), the reports are written all the same."""
    paths: dict[str, Path | None] = {"json": out / "report.json", "markdown": out / "report.md"}
    (out / "report.json").write_text(json.dumps(report, indent=1, ensure_ascii=False, default=str), encoding="utf-8")
    (out / "report.md").write_text((render or markdown)(report), encoding="utf-8")
    paths["plot"] = _plot(report["curve"], out / "recall_at_k.png", label or CURVE_LABEL)
    return paths


def _plot(curves: dict[str, dict[str, float]], path: Path, label: str) -> Path | None:
    """The recall@K chart, or None without matplotlib."""
    from ripplecli.eval.plot import plot_recall_curve

    try:
        return plot_recall_curve(curves, path, label)
    except ModuleNotFoundError as err:
        if (err.name or "").partition(".")[0] != "matplotlib":
            raise
        return None


def markdown(report: dict[str, Any]) -> str:
    """Tables of the report for reading in a browser or a pull request."""
    config, metrics = report["config"], report["metrics"]
    lines = [
        "# LoCoMo evidence recall",
        "",
        f"File `{config['file']}`; conversations {', '.join(config['conversations'])}; "
        f"budget {config['budget_tokens']} tokens; answers: {config['answer']}.",
        "",
        _timing_line(report),
        "",
    ]
    for k in config["ks"]:
        lines += kind_table(metrics, GROUPS, f"Recall / full-evidence @ K = {k}", (f"recall@{k}", f"full@{k}"))
    budget = f"Recall / full-evidence @ {config['budget_tokens']} tokens"
    lines += kind_table(metrics, GROUPS, budget, ("recall@budget", "full@budget"))
    lines += _cost_table(metrics, config["ks"])
    lines += _answer_table(metrics)
    lines += _counts_lines(report["counts"])
    return "\n".join(lines) + "\n"


def _timing_line(report: dict[str, Any]) -> str:
    """Wall time of this run's ingest and asking (resumed work is not counted twice)."""
    timing = report.get("timing") or {}
    return f"Ingest {timing.get('ingest_seconds', 0):.1f} s, asking {timing.get('ask_seconds', 0):.1f} s."


def kind_table(metrics: dict[str, Any], groups: Sequence[str], title: str, keys: Sequence[str]) -> list[str]:
    """Modes x question kinds, each cell the `keys` of that group joined by ` / ` ("-" where a key is absent)."""
    lines = [f"## {title}", "", *table_head(groups)]
    for mode, by_group in metrics.items():
        lines.append(table_row([mode, *(kind_cell(by_group[g], keys, " / ") for g in groups)]))
    return [*lines, ""]


def kind_cell(metrics: dict[str, Any], keys: Sequence[str], joint: str) -> str:
    """The values of `keys` in one cell; "-" for a value the group does not have."""
    return joint.join(f"{metrics[key]:.3f}" if metrics.get(key) is not None else "-" for key in keys)


def table_head(columns: Sequence[str]) -> list[str]:
    """A markdown table's header row (after the mode column) and its rule."""
    return [table_row(["mode", *columns]), "|---" * (len(columns) + 1) + "|"]


def table_row(cells: Sequence[str]) -> str:
    """One markdown table row."""
    return "| " + " | ".join(cells) + " |"


def _cost_table(metrics: dict[str, Any], ks: list[int]) -> list[str]:
    """Evidence tokens, latency and answer scores per mode."""
    header = [*(f"tokens@{k}" for k in ks), "memories@budget", "p50 ms", "p95 ms", "F1", "BLEU-1", "contains"]
    header.append("abstain (cat 5)")
    lines = ["## Cost and answers", "", *table_head(header)]
    for mode, groups in metrics.items():
        overall, abstention = groups["overall"], groups.get("abstention")
        cells = [f"{overall[f'tokens@{k}']:.0f}" for k in ks] + [
            f"{overall['memories@budget']:.1f}",
            f"{overall['latency_p50_ms']:.1f}",
            f"{overall['latency_p95_ms']:.1f}",
            f"{overall['f1']:.3f}" if "f1" in overall else "-",
            f"{overall['bleu1']:.3f}" if "bleu1" in overall else "-",
            f"{overall['contains']:.3f}" if "contains" in overall else "-",
            f"{abstention['rate']:.3f}" if abstention else "-",
        ]
        lines.append(f"| {mode} | " + " | ".join(cells) + " |")
    return [*lines, ""]


def _answer_table(metrics: dict[str, Any]) -> list[str]:
    """Answer token F1 / BLEU-1 / containment per mode and category, abstention on category 5, latency, tokens."""
    if not any("f1" in groups["overall"] for groups in metrics.values()):
        return []
    header = [*GROUPS, "abstain (cat 5)", "answer p50/p95 ms", "first words p50 ms", "tokens in/out"]
    lines = [
        "## Answers (token F1 / BLEU-1 / containment accuracy of the answer span)",
        "",
        *table_head(header),
    ]
    for mode, groups in metrics.items():
        overall, abstention = groups["overall"], groups.get("abstention")
        if "f1" not in overall:
            continue
        cells = [_answer_cell(groups[g]) for g in GROUPS]
        cells += [
            f"{abstention['rate']:.3f}" if abstention else "-",
            f"{overall['answer_p50_ms']:.1f} / {overall['answer_p95_ms']:.1f}",
            "-" if overall.get("first_words_p50_ms") is None else f"{overall['first_words_p50_ms']:.1f}",
            f"{overall['prompt_tokens']:.0f} / {overall['generated_tokens']:.0f}",
        ]
        lines.append(f"| {mode} | " + " | ".join(cells) + " |")
    return [*lines, ""]


def _answer_cell(metrics: dict[str, Any]) -> str:
    """`F1 / BLEU-1 / contains` of one group ("-" when nothing was answered; contains is absent from old reports)."""
    if "f1" not in metrics:
        return "-"
    contains = f" / {metrics['contains']:.3f}" if "contains" in metrics else ""
    return f"{metrics['f1']:.3f} / {metrics['bleu1']:.3f}{contains}"


def _counts_lines(counts: dict[str, Any]) -> list[str]:
    """Question counts and the evidence that could not be scored."""
    by_category = ", ".join(f"{name} {n}" for name, n in counts["by_category"].items())
    unresolved = [f"{u['conversation']}#{u['index']} `{u['id']}`" for u in counts["unresolved_evidence_ids"]]
    return [
        "## Questions",
        "",
        f"{counts['questions']} questions: {by_category}.",
        f"Skipped from recall metrics (no resolvable evidence): {len(counts['no_resolvable_evidence'])}.",
        unresolved_line(unresolved),
    ]


def unresolved_line(unresolved: list[str]) -> str:
    """How many evidence ids named nothing in their chat, and which."""
    return f"Unresolved evidence ids: {len(unresolved)}" + (f" ({', '.join(unresolved)})." if unresolved else ".")
