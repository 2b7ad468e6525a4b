"""`ripple eval locomo` / `ripple eval longmemeval` / `ripple eval compare`: measure evidence recall and answers
offline, and compare two runs."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from ripplecli.cli.choices import choice
from ripplecli.cli.common import JsonOption, console, escaped, print_json, printable, progress_bar, user_errors
from ripplecli.cli.models import ModelOption

eval_app = typer.Typer(
    help="Measure recall quality on LoCoMo and LongMemEval, offline (docs/evaluation.md).", no_args_is_help=True
)


# The options both benchmarks take (their choice lists are the same: `eval locomo`'s).
KOption = Annotated[int, typer.Option("--k", help="K reported beside 10 and 30 (1-50).")]
ModesOption = Annotated[
    str | None, choice("eval locomo", "--modes", "Recall modes, comma-separated (default: all).")
]
AnswerOption = Annotated[
    str, choice("eval locomo", "--answer", "Also score answers (F1, BLEU-1, containment; see docs/evaluation.md).")
]
QuestionsOption = Annotated[
    int | None, typer.Option("--questions", help="A fixed, seeded sample of N questions per category (type).")
]
BudgetOption = Annotated[int, typer.Option("--budget-tokens", help="Evidence-token budget.")]
OutOption = Annotated[Path, typer.Option("--out", help="Output folder (stores, partial results, reports).")]


def _split(value: str | None) -> list[str] | None:
    """A comma-separated option as a list (None when not given)."""
    return [part.strip() for part in value.split(",") if part.strip()] if value else None


@eval_app.command("locomo")
@user_errors
def locomo(
    file: Annotated[Path, typer.Argument(help="A LoCoMo file (samples with `conversation` and `qa`).")],
    conversations: Annotated[str | None, typer.Option(help="Sample ids to run, e.g. conv-26,conv-30.")] = None,
    k: KOption = 30,
    modes: ModesOption = None,
    answer: AnswerOption = "none",
    questions: QuestionsOption = None,
    model: ModelOption = None,
    budget_tokens: BudgetOption = 1500,
    out: OutOption = Path("eval-out"),
) -> None:
    """Ingest each conversation, ask its questions in every mode, and report evidence recall."""
    from ripplecli.eval import build_report

    shared = {"k": k, "answer": answer, "budget_tokens": budget_tokens, "questions": questions}
    config = _config(file, out, modes, model, **shared, conversations=_split(conversations))
    report, paths = _evaluate(config, build_report)
    for k_shown in config.ks:
        console.print(_summary_table(report, k_shown))
    if config.answer != "none":
        console.print(_answer_table(report))
    _print_paths(paths)


def _config(file: Path, out: Path, modes: str | None, model: Any, **options: Any) -> Any:
    """The EvalConfig of a command's options (the comma-separated modes as a list, the model as a path's text)."""
    from ripplecli.eval import EvalConfig

    return EvalConfig(file, out, modes=_split(modes), model=str(model) if model else None, **options)


def _evaluate(
    config: Any, build: Callable, render: Callable | None = None, label: str | None = None, shared_bars: bool = False
) -> tuple[dict[str, Any], dict[str, Path | None]]:
    """Check everything, run with progress bars, build the report and write it; `shared_bars`: the stores' ingest
    (and link) stages share one bar each (160 LongMemEval stores would stack 160 bars)."""
    from rich.progress import TimeElapsedColumn

    from ripplecli.eval import prepare, run, write_report

    plan = prepare(config)  # every argument checked before any work
    with progress_bar(TimeElapsedColumn()) as bar:
        records = run(plan, _advance(bar, shared_bars))
    report = build(plan, records)
    return report, write_report(report, config.out, render, label)


def _advance(bar: Any, shared: bool) -> Callable[[str, int, int], None]:
    """The runner's progress callback: one bar per stage (`ingest conv-26`), or per kind of stage when `shared`."""
    tasks: dict[str, Any] = {}

    def advance(stage: str, done: int, total: int) -> None:
        key = stage.split(" ", 1)[0] if shared else stage
        if key not in tasks:
            tasks[key] = bar.add_task(escaped(stage), total=total or None)
        bar.update(tasks[key], description=escaped(stage), completed=done, total=total or None)

    return advance


def _print_paths(paths: dict[str, Path | None]) -> None:
    """Where the reports went, in one line; without matplotlib the plot is skipped and the line says so."""
    written = ", ".join(str(path) for path in paths.values() if path is not None)
    skipped = "" if paths.get("plot") else " (plot skipped: matplotlib is not installed; `pip install matplotlib`)"
    console.print(printable(f"reports: {written}{skipped}"), markup=False)


@eval_app.command("longmemeval")
@user_errors
def longmemeval(
    file: Annotated[Path, typer.Argument(help="A LongMemEval file (.json or .json.gz), in the benchmark's layout.")],
    ids: Annotated[str | None, typer.Option("--ids", help="Question ids to run, comma-separated.")] = None,
    types: Annotated[
        str | None, choice("eval longmemeval", "--types", "Question types to run, comma-separated (default: all).")
    ] = None,
    k: KOption = 30,
    modes: ModesOption = None,
    answer: AnswerOption = "none",
    questions: QuestionsOption = None,
    model: ModelOption = None,
    budget_tokens: BudgetOption = 1500,
    out: OutOption = Path("eval-longmemeval"),
) -> None:
    """Ingest each question's haystack into its own store, ask it in every mode, and report recall per type."""
    from ripplecli.eval.lme_report import CURVE_LABEL, build_report, markdown

    shared = {"k": k, "answer": answer, "budget_tokens": budget_tokens, "questions": questions}
    config = _config(file, out, modes, model, **shared, benchmark="longmemeval", ids=_split(ids), types=_split(types))
    report, paths = _evaluate(config, build_report, markdown, CURVE_LABEL, shared_bars=True)
    console.print(_retrieval_table(report))
    console.print(_kind_table(report))
    if config.answer != "none":
        console.print(_kind_answer_table(report))
    _print_paths(paths)


ANSWER_COSTS = ("p50/p95 ms", "tok in/out")
SHORT_KINDS = {
    "overall": "all",
    "single-session-user": "ss-user",
    "single-session-assistant": "ss-asst",
    "single-session-preference": "ss-pref",
    "multi-session": "multi",
    "temporal-reasoning": "temporal",
    "knowledge-update": "update",
}


def _cell(metrics: dict[str, Any], *keys: str, digits: int = 3) -> str:
    """`.853/.800`: several figures of one group in a narrow cell ("-" for one it lacks)."""
    return "/".join("-" if metrics.get(key) is None else _short(metrics[key], digits) for key in keys)


def _short(value: float, digits: int) -> str:
    """`.85` for 0.853 at two digits, `1` for 1.0, `0` for 0.0: a figure in few columns."""
    shown = f"{value:.{digits}f}"
    return {f"{1:.{digits}f}": "1", f"{0:.{digits}f}": "0"}.get(shown, shown.removeprefix("0"))


def _retrieval_table(report: dict[str, Any]) -> Table:
    """Modes x LongMemEval's retrieval metrics at 5 and ripple's full evidence, over the answerable questions."""
    budget = report["config"]["budget_tokens"]
    columns = {
        "sess any/all@5": ("session_any@5", "session_all@5"),
        "sess NDCG@10": ("session_ndcg@10",),
        "turn any/all@5": ("turn_any@5", "turn_all@5"),
        f"full @10/@30/@{budget}tok": ("full@10", "full@30", "full@budget"),
    }
    table = _table("retrieval (answerable questions)", [*columns, "p50/p95 ms"])
    for mode, groups in report["metrics"].items():
        overall = groups["overall"]
        cells = [_cell(overall, *keys) for keys in columns.values()]
        cells.append(f"{overall['latency_p50_ms']:.0f}/{overall['latency_p95_ms']:.0f}")
        table.add_row(escaped(mode), *cells)
    return table


def _kind_table(report: dict[str, Any]) -> Table:
    """Modes x question types: session recall_any/all@5 and turn full evidence at the budget."""
    groups = report["groups"]
    table = _table("per type: session any@5/all@5, turn full evidence @budget", [SHORT_KINDS.get(g, g) for g in groups])
    for mode, by_group in report["metrics"].items():
        cells = [_cell(by_group[g], "session_any@5", "session_all@5", "full@budget", digits=2) for g in groups]
        table.add_row(escaped(mode), *cells)
    return table


def _kind_answer_table(report: dict[str, Any]) -> Table:
    """Modes x question types: accuracy overall, F1/containment per type (the rubric share and right for
    preferences), abstention on `_abs`, answer latency and model tokens."""
    groups = report["groups"]
    columns = [*(SHORT_KINDS.get(g, g) for g in groups), "abstain", *ANSWER_COSTS]
    table = _table("answers: accuracy, F1/contains (ss-pref: rubric share/right)", columns)
    for mode, by_group in report["metrics"].items():
        overall = by_group["overall"]
        if "accuracy" not in overall:
            continue
        cells = [_cell(overall, "accuracy")]
        cells += [_cell(by_group[g], *_answer_keys(g), digits=2) for g in groups[1:]]
        table.add_row(escaped(mode), *cells, _cell(overall, "abstention"), *_answer_costs(overall))
    return table


def _answer_costs(overall: dict[str, Any]) -> list[str]:
    """The answerer's p50/p95 milliseconds and its model tokens in and out."""
    return [
        f"{overall['answer_p50_ms']:.0f}/{overall['answer_p95_ms']:.0f}",
        f"{overall['prompt_tokens']:.0f}/{overall['generated_tokens']:.0f}",
    ]


def _table(title: str, columns: list[str]) -> Table:
    """Modes x figures: the mode, then right-aligned columns that fold when narrow."""
    table = Table(title=title)
    table.add_column("mode", no_wrap=True)
    for column in columns:
        table.add_column(column, justify="right", overflow="fold")
    return table


def _answer_keys(group: str) -> tuple[str, ...]:
    """What an answer cell shows for one question type."""
    from ripplecli.eval.longmemeval import PREFERENCE

    return ("rubric", "rubric_right") if group == PREFERENCE else ("f1", "contains")


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
    table = _table(f"evidence recall/full-evidence @ K={k}", [*SHORT_GROUPS.values(), f"@{budget}tok", "p50/p95 ms"])
    for mode, groups in report["metrics"].items():
        overall = groups["overall"]
        cells = [_pair(groups[g][f"recall@{k}"], groups[g][f"full@{k}"]) for g in SHORT_GROUPS]
        cells.append(_pair(overall["recall@budget"], overall["full@budget"]))
        cells.append(f"{overall['latency_p50_ms']:.0f}/{overall['latency_p95_ms']:.0f}")
        table.add_row(escaped(mode), *cells)
    return table


def _answer_table(report: dict[str, Any]) -> Table:
    """Modes x categories: answer token F1/BLEU-1, containment overall, abstention on category 5, answer latency
    and model tokens."""
    columns = [*SHORT_GROUPS.values(), "contains", "abstain", *ANSWER_COSTS]
    table = _table("answers: token F1/BLEU-1 of the answer span", columns)
    for mode, groups in report["metrics"].items():
        overall, abstention = groups["overall"], groups.get("abstention")
        if "f1" not in overall:
            continue
        cells = [_pair(groups[g]["f1"], groups[g]["bleu1"]) if "f1" in groups[g] else "-" for g in SHORT_GROUPS]
        cells.append(_cell(overall, "contains"))
        cells.append(f"{abstention['rate']:.3f}".replace("0.", ".") if abstention else "-")
        cells += _answer_costs(overall)
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
