"""The recall trajectory as plain data for the trace: cues, seeds, planner decisions and support found."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from ripplecli.recall.diffusion import Support
from ripplecli.recall.index import RecallIndex
from ripplecli.recall.planner import Plan
from ripplecli.recall.query import QueryCues
from ripplecli.recall.views import Ranked


def cues_dict(cues: QueryCues) -> dict[str, Any]:
    """Query cues for the trace."""
    data = asdict(cues)
    data["time_range"] = [t.isoformat() for t in cues.time_range] if cues.time_range else None
    return data


def seed_rows(index: RecallIndex, ranked: Ranked) -> list[dict[str, Any]]:
    """Seed rows for the trace: id, score, restatement."""
    texts = index.texts
    return [{"id": m, "score": round(float(s), 4), "text": texts.get(m, "")} for m, s in ranked]


def plan_dict(plan: Plan, index: RecallIndex) -> dict[str, Any]:
    """The planner's decision for the trace."""
    target = None
    if plan.target:
        target = asdict(plan.target)
        target["time_range"] = [t.isoformat() for t in plan.target.time_range] if plan.target.time_range else None
    texts = index.texts
    return {
        "decision": "continue" if plan.proceed else "stop",
        "stop_reason": plan.stop_reason,
        "anchors": [{"id": a, "text": texts.get(a, "")} for a in plan.anchors],
        "target": target,
        "covered": plan.covered,
        "missing": plan.missing,
        "failure": plan.failure,
    }


def support_dict(s: Support, text: str = "") -> dict[str, Any]:
    """One support hit for the trace."""
    data = {
        "id": s.memory_id,
        "channel": s.channel,
        "score": round(float(s.score), 5),
        "path": s.path,
        "weights": [round(w, 3) for w in s.weights],
        "text": text,
    }
    if s.via_cues:
        data["via_cues"] = s.via_cues
    if s.query:
        data["query"] = s.query
    return data


def group_support(found: list[Support], index: RecallIndex) -> dict[str, list[dict[str, Any]]]:
    """Support per channel for the trace."""
    texts = index.texts
    grouped: dict[str, list[dict[str, Any]]] = {}
    for s in found:
        grouped.setdefault(s.channel, []).append(support_dict(s, texts.get(s.memory_id, "")))
    return grouped
