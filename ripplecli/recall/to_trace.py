"""The read phase's objects as trace types: query cues, seeds and the planner's decision with memory texts."""

from __future__ import annotations

from datetime import datetime

from ripplecli import trace
from ripplecli.recall.index import RecallIndex
from ripplecli.recall.planner import Plan
from ripplecli.recall.query import QueryCues
from ripplecli.recall.views import Ranked


def _times(time_range: tuple[datetime, datetime] | None) -> list[str] | None:
    """A time range as ISO strings."""
    return [t.isoformat() for t in time_range] if time_range else None


def cues_of(cues: QueryCues, failure: str | None = None) -> trace.Cues:
    """Query cues for the trace."""
    return trace.Cues(
        text=cues.text,
        keywords=list(cues.keywords),
        persons=list(cues.persons),
        locations=list(cues.locations),
        concepts=list(cues.concepts),
        time_range=_times(cues.time_range),
        wants=cues.wants,
        failure=failure,
        owner=cues.owner,
        focus=cues.focus,
        many=cues.many,
        said_on=_times(cues.said_on),
    )


def seeds_of(index: RecallIndex, ranked: Ranked) -> list[trace.Seed]:
    """Seed rows for the trace: id, score, restatement."""
    texts = index.texts
    return [trace.Seed(id=m, score=round(float(s), 4), text=texts.get(m, "")) for m, s in ranked]


def plan_of(plan: Plan, index: RecallIndex) -> trace.Plan:
    """The planner's decision for the trace."""
    target = None
    if plan.target:
        t = plan.target
        target = trace.Target(
            restatement=t.restatement,
            persons=list(t.persons),
            locations=list(t.locations),
            concepts=list(t.concepts),
            time_range=_times(t.time_range),
            wants=t.wants,
            many=t.many,
        )
    texts = index.texts
    return trace.Plan(
        decision="continue" if plan.proceed else "stop",
        stop_reason=plan.stop_reason,
        anchors=[trace.Anchor(id=a, text=texts.get(a, "")) for a in plan.anchors],
        target=target,
        covered=plan.covered,
        missing=plan.missing,
        failure=plan.failure,
    )


def by_channel(found: list[trace.Support]) -> trace.SupportByChannel:
    """Support grouped per channel, in the order found."""
    grouped: trace.SupportByChannel = {}
    for s in found:
        grouped.setdefault(s.channel, []).append(s)
    return grouped
