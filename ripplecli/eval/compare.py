"""Two evaluation reports side by side: metric deltas per mode and category, and the questions that flipped."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ripplecli.errors import InputError
from ripplecli.eval.metrics import full_evidence
from ripplecli.eval.report import GROUPS

COMPARED = (  # a metric the two reports do not both have is left out (LongMemEval's are in its reports only)
    "recall@10",
    "full@10",
    "recall@30",
    "full@30",
    "full@budget",
    "session_any@5",
    "session_all@5",
    "turn_any@5",
    "f1",
    "bleu1",
    "contains",
    "accuracy",
)
FLIP_K = 30
ANSWER_RIGHT = 0.5  # an answer whose token F1 reaches this counts as right when listing flipped answers


def load_report(path: Path) -> dict[str, Any]:
    """A report.json written by `ripple eval locomo` or `ripple eval longmemeval`, or one clear InputError."""
    try:
        report = json.loads(path.read_text(encoding="utf-8"))
    except OSError as err:
        raise InputError(f"{path}: cannot read: {err.strerror or err}") from None
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise InputError(f"{path}: not JSON; expected a report.json of `ripple eval`") from None
    if not isinstance(report, dict) or not isinstance(report.get("metrics"), dict):
        raise InputError(f"{path}: has no 'metrics'; expected a report.json of `ripple eval`")
    return report


def compare_reports(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """Deltas (after - before) for the modes present in both, and full-evidence@30 flips per question."""
    modes = [m for m in before["metrics"] if m in after["metrics"]]
    if not modes:
        raise InputError("the two reports share no mode")
    if before.get("benchmark", "locomo") != after.get("benchmark", "locomo"):
        raise InputError("the two reports are of different benchmarks (LoCoMo and LongMemEval)")
    groups = before.get("groups") or GROUPS
    return {
        "modes": modes,
        "deltas": {mode: _mode_deltas(before["metrics"][mode], after["metrics"][mode], groups) for mode in modes},
        "flips": {mode: _flips(before.get("results", []), after.get("results", []), mode) for mode in modes},
        "answer_flips": {
            mode: _answer_flips(before.get("results", []), after.get("results", []), mode) for mode in modes
        },
    }


def _mode_deltas(
    before: dict[str, Any], after: dict[str, Any], groups: Sequence[str]
) -> dict[str, dict[str, dict[str, float]]]:
    """Per category (question type): before, after and delta of each compared metric."""
    deltas = {}
    for group in groups:
        if group not in before or group not in after:
            continue
        deltas[group] = {
            metric: {
                "before": before[group][metric],
                "after": after[group][metric],
                "delta": after[group][metric] - before[group][metric],
            }
            for metric in COMPARED
            if metric in before[group] and metric in after[group]
        }
    return deltas


def _flips(before: list[dict[str, Any]], after: list[dict[str, Any]], mode: str) -> dict[str, list[dict[str, Any]]]:
    """Questions asked in both runs whose full evidence at K = 30 was gained or lost."""
    earlier = {_key(r): r for r in before if r["mode"] == mode and r["gold"]}
    flips: dict[str, list[dict[str, Any]]] = {"gained": [], "lost": []}
    for record in after:
        previous = earlier.get(_key(record)) if record["mode"] == mode and record["gold"] else None
        if previous is None:
            continue
        was = full_evidence(previous["gold"], previous["source_turns"], FLIP_K)
        now = full_evidence(record["gold"], record["source_turns"], FLIP_K)
        if was != now:
            entry = {k: record[k] for k in ("conversation", "index", "category", "question", "gold")}
            flips["gained" if now > was else "lost"].append(entry)
    return flips


def _answer_flips(
    before: list[dict[str, Any]], after: list[dict[str, Any]], mode: str
) -> dict[str, list[dict[str, Any]]]:
    """Questions answered in both runs whose answer became right or stopped being right (`right`)."""
    earlier = {_key(r): r for r in before if r["mode"] == mode and "f1" in r}
    flips: dict[str, list[dict[str, Any]]] = {"gained": [], "lost": []}
    for record in after:
        previous = earlier.get(_key(record)) if record["mode"] == mode and "f1" in record else None
        if previous is None:
            continue
        was, now = right(previous), right(record)
        if was != now:
            entry = {k: record[k] for k in ("conversation", "index", "category", "question", "gold_answer")}
            entry.update(before=previous["answer"], after=record["answer"])
            flips["gained" if now else "lost"].append(entry)
    return flips


def right(record: dict[str, Any]) -> bool:
    """Whether an answer counts as right: as judged by its report (LongMemEval), else by F1 >= ANSWER_RIGHT."""
    return bool(record["correct"]) if "correct" in record else record["f1"] >= ANSWER_RIGHT


def _key(record: dict[str, Any]) -> tuple:
    """A question's identity across runs."""
    return (record["conversation"], record["index"], record["question"])
