"""The read phase's objects as trace types: query cues (times as ISO strings) and seeds with memory texts."""

from __future__ import annotations

from ripplecli import trace
from ripplecli.recall.index import RecallIndex
from ripplecli.recall.query import QueryCues
from ripplecli.recall.views import Ranked
from ripplecli.trace import iso_times


def cues_of(cues: QueryCues, failure: str | None = None) -> trace.Cues:
    """Query cues for the trace."""
    return trace.Cues(
        text=cues.text,
        keywords=list(cues.keywords),
        persons=list(cues.persons),
        locations=list(cues.locations),
        concepts=list(cues.concepts),
        time_range=iso_times(cues.time_range),
        wants=cues.wants,
        failure=failure,
        owner=cues.owner,
        focus=cues.focus,
        many=cues.many,
        said_on=iso_times(cues.said_on),
    )


def seeds_of(index: RecallIndex, ranked: Ranked) -> list[trace.Seed]:
    """Seed rows for the trace: id, score, restatement."""
    texts = index.texts
    return [trace.Seed(id=m, score=round(float(s), 4), text=texts.get(m, "")) for m, s in ranked]


def by_channel(found: list[trace.Support]) -> trace.SupportByChannel:
    """Support grouped per channel, in the order found."""
    grouped: trace.SupportByChannel = {}
    for s in found:
        grouped.setdefault(s.channel, []).append(s)
    return grouped
