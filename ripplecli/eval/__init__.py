"""Measuring recall quality offline (docs/evaluation.md): LoCoMo evidence recall per mode, reports, comparisons."""

from __future__ import annotations

from ripplecli.eval.compare import compare_reports, load_report
from ripplecli.eval.report import build_report, write_report
from ripplecli.eval.runner import EvalConfig, EvalPlan, prepare, run

__all__ = ["EvalConfig", "EvalPlan", "build_report", "compare_reports", "load_report", "prepare", "run", "write_report"]
