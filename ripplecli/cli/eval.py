"""`ripple eval locomo` / `ripple eval compare`: measure evidence recall offline and compare two runs."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from ripplecli.cli.choices import choice
from ripplecli.cli.common import JsonOption, console, escaped, print_json, printable, progress_bar, user_errors
from ripplecli.cli.models import ModelOption

eval_app = typer.Typer(help="Measure recall quality on LoCoMo, offline (docs/evaluation.md).", no_args_is_help=True)


def _split(value: str | None) -> list[str] | None:
    """A comma-separated option as a list (None when not given)."""
    return [part.strip() for part in value.split(",") if part.strip()] if value else None


@eval_app.command("locomo")
@user_errors
def locomo(
    file: Annotated[Path, typer.Argument(help="A LoCoMo file (samples with `conversation` and `qa`).")],
    conversations: Annotated[str | None, typer.Option(help="Sample ids to run, e.g. conv-26,conv-30.")] = None,
    k: Annotated[int, typer.Option("--k", help="K reported beside 10 and 30 (1-50).")] = 30,
    modes: Annotated[
        str | None, choice("eval locomo", "--modes", "Recall modes, comma-separated (default: all).")
    ] = None,
    answer: Annotated[str, choice("eval locomo", "--answer", "Also score answers (F1, BLEU-1).")] = "none",
    questions: Annotated[
        int | None, typer.Option("--questions", help="A fixed, seeded sample of N questions per category.")
    ] = None,
    model: ModelOption = None,
    budget_tokens: Annotated[int, typer.Option("--budget-tokens", help="Evidence-token budget.")] = 1500,
    out: Annotated[Path, typer.Option("--out", help="Output folder (stores, partial results, reports).")] = Path(
        "eval-out"
    ),
) -> None:
    """Ingest each conversation, ask its questions in every mode, and report evidence recall."""
    from ripplecli.eval import EvalConfig, build_report, prepare, run, write_report

    config = EvalConfig(
        file,
        out,
        _split(conversations),
        k,
        _split(modes),
        answer,
        budget_tokens,
        questions,
        str(model) if model else None,
    )
    plan = prepare(config)  # every argument checked before any work
    from rich.progress import TimeElapsedColumn

    with progress_bar(TimeElapsedColumn()) as bar:
        tasks: dict[str, Any] = {}

        def advance(stage: str, done: int, total: int) -> None:
            if stage not in tasks:
                tasks[stage] = bar.add_task(escaped(stage), total=total or None)
            bar.update(tasks[stage], completed=done, total=total or None)

        records = run(plan, advance)
    report = build_report(plan, records)
    paths = write_report(report, out)
    for k_shown in config.ks:
        console.print(_summary_table(report, k_shown))
    if config.answer != "none":
        console.print(_answer_table(report))
    console.print(printable(f"reports: {paths['json']}, {paths['markdown']}, {paths['plot']}"), markup=False)


SHORT_GROUPS = {
    "overall": "all",
    "multi-hop": "multi",
    "temporal": "temp",
    "open-domain": "open",
    "single-hop": "single",
}


def _pair(recall: float, full: float) -> str:
    """`.853/.800`: recall and full-evidence in one narrow cell."""
    return f"{recall:.3f}/{full:.3f}".replace("0.", ".")


def _summary_table(report: dict[str, Any], k: int) -> Table:
    """Modes x categories at one K (recall/full-evidence), plus the budget and latency columns."""
    budget = report["config"]["budget_tokens"]
    table = Table(title=f"evidence recall/full-evidence @ K={k}")
    table.add_column("mode", no_wrap=True)
    for column in (*SHORT_GROUPS.values(), f"@{budget}tok", "p50/p95 ms"):
        table.add_column(column, justify="right", overflow="fold")
    for mode, groups in report["metrics"].items():
        overall = groups["overall"]
        cells = [_pair(groups[g][f"recall@{k}"], groups[g][f"full@{k}"]) for g in SHORT_GROUPS]
        cells.append(_pair(overall["recall@budget"], overall["full@budget"]))
        cells.append(f"{overall['latency_p50_ms']:.0f}/{overall['latency_p95_ms']:.0f}")
        table.add_row(escaped(mode), *cells)
    return table


def _answer_table(report: dict[str, Any]) -> Table:
    """Modes x categories: answer token F1/BLEU-1, abstention on category 5, answer latency and model tokens."""
    table = Table(title="answers: token F1/BLEU-1 of the answer span")
    table.add_column("mode", no_wrap=True)
    for column in (*SHORT_GROUPS.values(), "abstain", "p50/p95 ms", "tok in/out"):
        table.add_column(column, justify="right", overflow="fold")
    for mode, groups in report["metrics"].items():
        overall, abstention = groups["overall"], groups.get("abstention")
        if "f1" not in overall:
            continue
        cells = [_pair(groups[g]["f1"], groups[g]["bleu1"]) if "f1" in groups[g] else "-" for g in SHORT_GROUPS]
        cells.append(f"{abstention['rate']:.3f}".replace("0.", ".") if abstention else "-")
        cells.append(f"{overall['answer_p50_ms']:.0f}/{overall['answer_p95_ms']:.0f}")
        cells.append(f"{overall['prompt_tokens']:.0f}/{overall['generated_tokens']:.0f}")
        table.add_row(escaped(mode), *cells)
    return table


@eval_app.command("compare")
@user_errors
def compare(
    before: Annotated[Path, typer.Argument(help="The earlier report.json.")],
    after: Annotated[Path, typer.Argument(help="The later report.json.")],
    as_json: JsonOption = False,
) -> None:
    """Per-mode, per-category deltas (after - before) and the questions whose full evidence @30 flipped."""
    from ripplecli.eval.compare import compare_reports, load_report

    comparison = compare_reports(load_report(before), load_report(after))
    if as_json:
        print_json(comparison)
        return
    console.print(_delta_table(comparison))
    for mode in comparison["modes"]:
        flips = comparison["flips"][mode]
        for direction in ("gained", "lost"):
            for q in flips[direction]:
                line = f"{mode}: {direction} {q['conversation']}#{q['index']} ({q['category']}) {q['question']}"
                console.print(printable(line), markup=False)
        answers = comparison["answer_flips"][mode]
        for direction in ("gained", "lost"):
            for q in answers[direction]:
                line = (
                    f"{mode}: answer {direction} {q['conversation']}#{q['index']} ({q['category']}) {q['question']} "
                    f"gold “{q['gold_answer']}”: “{q['before']}” → “{q['after']}”"
                )
                console.print(printable(line), markup=False)


def _delta_table(comparison: dict[str, Any]) -> Table:
    """One row per mode and category: each compared metric as `after (delta)`."""
    from ripplecli.eval.compare import COMPARED

    shown = [m for m in COMPARED if any(m in g for d in comparison["deltas"].values() for g in d.values())]
    table = Table(title="after vs before")
    for column in ("mode", "category", *shown, "flips @30"):
        table.add_column(column, justify="left" if column in ("mode", "category") else "right")
    for mode in comparison["modes"]:
        flips = comparison["flips"][mode]
        for group, metrics in comparison["deltas"][mode].items():
            cells = [_delta_cell(metrics[m]) if m in metrics else "-" for m in shown]
            flip_cell = f"+{len(flips['gained'])} / -{len(flips['lost'])}" if group == "overall" else ""
            table.add_row(escaped(mode), escaped(group), *cells, flip_cell)
    return table


def _delta_cell(metric: dict[str, float]) -> str:
    """`0.812 (+0.034)`, coloured by direction."""
    delta = metric["delta"]
    colour = "green" if delta > 0.0005 else "red" if delta < -0.0005 else "dim"
    return f"{metric['after']:.3f} [{colour}]({delta:+.3f})[/{colour}]"
