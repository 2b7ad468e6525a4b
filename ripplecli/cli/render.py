"""Rich rendering of a recall trace: the trajectory as a tree (the data itself lives in ripplecli.trace)."""

from __future__ import annotations

from typing import Any

from rich.tree import Tree

from ripplecli.api import counted
from ripplecli.cli.common import clip, escaped
from ripplecli.trace import (
    Answer,
    ChannelHit,
    Cues,
    Evidence,
    RecallResult,
    Round,
    Seed,
    SessionRank,
    Support,
    SupportByChannel,
    ViewHit,
)


def _cues(tree: Tree, cues: Cues) -> None:
    """Query cues section."""
    node = tree.add("[bold]query cues[/]")
    for key, values in (
        ("keywords", cues.keywords),
        ("persons", cues.persons),
        ("locations", cues.locations),
        ("concepts", cues.concepts),
    ):
        node.add(f"{key}: {escaped(', '.join(values)) if values else '[dim]none[/]'}")
    if cues.many:
        kind = f" of {escaped(cues.kind)}" if cues.kind else ""
        node.add(f"wants: a list{kind} (several items of one kind, from several sessions)")
    if cues.owner:
        node.add(f"you: I/me/my are {escaped(cues.owner)}, the store's owner")
    time_range = cues.time_range
    node.add(f"time: {' … '.join(t[:10] for t in time_range) if time_range else '[dim]none[/]'}")
    if cues.said_on:
        node.add(f"said on: {_days(cues.said_on)}")
    if cues.failure:
        node.add(f"[yellow]model fallback:[/] {escaped(cues.failure)}")


def _seeds(tree: Tree, seeds: dict[str, list[Seed]]) -> None:
    """First-hop seeds per view."""
    node = tree.add("[bold]seeds[/] (first hop)")
    for view, rows in seeds.items():
        branch = node.add(f"{view} ({len(rows)})")
        for row in rows:
            branch.add(f"m{row.id}  {row.score:.3f}  {clip(row.text)}")


def _sessions(tree: Tree, sessions: list[SessionRank]) -> None:
    """The session view: sessions ranked as units, each by its first memory and size."""
    node = tree.add(f"[bold]sessions[/] (ranked as units, {len(sessions)})")
    for row in sessions:
        first, last = row.members[0], row.members[-1]
        node.add(f"session of m{first}…m{last} ({counted(len(row.members), 'memory')})  {row.score:.3f}")


def _support_line(s: Support) -> str:
    """anchor → hop → memory with edge weights or the cues that carried activation."""
    path = " → ".join(f"m{m}" for m in s.path)
    how = ""
    weights = [round(w, 3) for w in s.weights]
    if weights:
        how = escaped(f" [{s.channel} {', '.join(f'{w:.2f}' for w in weights)}]")
    if s.via_cues:
        how += f" via cues: {escaped(', '.join(s.via_cues[:4]))}"
    if s.query:
        how += f" query: “{escaped(s.query)}”"
    return f"{path}{how}  score {round(float(s.score), 5):.4g}  {clip(s.text, 70)}"


def _support(node: Tree, grouped: SupportByChannel, label: str) -> None:
    """Support per channel, one line each."""
    for channel, found in grouped.items():
        branch = node.add(f"{label} · {channel} ({len(found)})")
        for s in found:
            branch.add(_support_line(s))


def _rounds(tree: Tree, rounds: list[Round]) -> None:
    """Planner decision and support found, per round."""
    for record in rounds:
        plan = record.planner
        node = tree.add(f"[bold]round {record.round}[/] · planner: {plan.decision}")
        if plan.failure:
            node.add(f"[yellow]model fallback:[/] {escaped(plan.failure)}")
        anchors = node.add(f"anchors ({len(plan.anchors)})")
        for anchor in plan.anchors:
            anchors.add(f"m{anchor.id}  {clip(anchor.text)}")
        target = plan.target
        if target:
            cue_text = ", ".join([*target.persons, *target.locations, *target.concepts])
            wants = f"  wants: a {target.wants}" if target.wants else ""
            wants += "  list: more from other sessions" if target.many else ""
            node.add(f"missing-support target: “{escaped(target.restatement)}”  cues: {escaped(cue_text)}{wants}")
        if plan.missing:
            node.add(f"not yet covered: {escaped(', '.join(plan.missing))}")
        if record.stopped:
            node.add(f"stop: {escaped(record.stopped)}")
        _support(node, record.support or {}, "support")


def _tags(e: Evidence) -> str:
    """Provenance tags: which views (rank) and channels found the memory."""
    tags = [f"{p.view}#{p.rank}" for p in e.provenance if isinstance(p, ViewHit) and p.seed]
    tags += [p.channel for p in e.provenance if isinstance(p, ChannelHit)]
    return ", ".join(dict.fromkeys(tags)) or "fused"


def is_weak(e: Evidence) -> bool:
    """Found by no view's first hop and no graph channel: only there to fill the list to K."""
    return not any(isinstance(p, ChannelHit) or p.seed for p in e.provenance)


def _evidence(tree: Tree, evidence: list[Evidence]) -> None:
    """The final ranked evidence with source turns and dates; padding far below the best is marked weak."""
    weak = sum(is_weak(e) for e in evidence)
    node = tree.add(f"[bold]evidence[/] ({len(evidence)}{f', {weak} weak' if weak else ''})")
    if not evidence:
        node.add("[dim]no memory matches this question[/]")
    for e in evidence:
        title = f"{clip(e.title, 40)} · " if e.title else ""
        mark = " [yellow]weak[/]" if is_weak(e) else ""
        turns = title + escaped(", ".join(e.source_turns))
        when = escaped(when_text(said_of(e), e.refers_to))
        details = " · ".join(part for part in (escaped(_tags(e)), turns, passage_of(e), when) if part)
        line = node.add(f"{e.rank:>2}. m{e.memory_id}{mark}  [dim]{details}[/]  {clip(shown_text(e), 80)}")
        if e.context is not None:
            line.add(f"[dim]replying to {escaped(e.context.speaker)}:[/] {clip(e.context.text, 80)}")


def passage_of(e: Evidence) -> str:
    """ "¶2 of 5": which word window of a long memory the question matched (store/passages.py); "" for others."""
    return f"¶{e.passage} of {e.passages}" if e.passage is not None else ""


def shown_text(e: Evidence) -> str:
    """The matched passage of a long memory, else its whole text."""
    return e.passage_text or e.restatement


def said_of(e: Evidence) -> str | None:
    """When the memory was said: its own time, else its first source's message or session time."""
    return e.said_at or next((s.said_at or s.timestamp for s in e.sources if s.said_at or s.timestamp), None)


def when_text(said_at: str | None, refers_to: dict[str, str] | None) -> str:
    """ "said 2023-05-08 13:56", then "about 2023-05-07" only when the text itself names a time."""
    parts = [f"said {said_at[:16].replace('T', ' ')}"] if said_at else []
    if refers_to:
        start, end = refers_to["start"][:10], refers_to["end"][:10]
        parts.append(f"about {start if start == end else f'{start} … {end}'}")
    return ", ".join(parts)


def evidence_line(e: Evidence) -> str:
    """One evidence line for `--no-trace`: rank, id, first turn and when it was said, the restatement on one line."""
    first = e.sources[0] if e.sources else None
    parts = (first.turn_id if first else "", passage_of(e), when_text(said_of(e), e.refers_to))
    where = " · ".join(part for part in parts if part)
    reply = f" [dim](to {escaped(e.context.speaker)}: {clip(e.context.text, 40)})[/]" if e.context else ""
    mark = " [yellow]weak[/]" if is_weak(e) else ""
    return f"{e.rank:>2}. m{e.memory_id}{mark} [dim]{escaped(where)}[/]  {clip(shown_text(e), 80)}{reply}"


def _days(times: list[str]) -> str:
    """The days of an ISO time span, once each: "2023-07-07", or "2023-07-07 … 2023-07-09"."""
    return " … ".join(dict.fromkeys(t[:10] for t in times))


def trace_tree(result: RecallResult) -> Tree:
    """The whole recall trajectory as one tree."""
    trace = result.trace
    tree = Tree(
        f"[bold]ask[/] “{escaped(result.question)}”  [dim]mode {result.mode} · k {result.k} · "
        f"{result.seconds * 1000:.0f} ms[/]"
    )
    if result.answer is not None:
        tree.add(answer_text(result.answer))
    _cues(tree, trace.query_cues)
    if trace.note:
        tree.add(f"[yellow]{escaped(trace.note)}[/]")
    _seeds(tree, trace.seeds or {})
    if trace.sessions:
        _sessions(tree, trace.sessions)
    _rounds(tree, trace.rounds or [])
    if trace.day:
        day = _days(trace.day.said_on)
        told = "" if trace.query_cues.said_on else " or telling of then"  # "yesterday": a time, not a named day
        tree.add(
            f"[bold]day[/] · {day}: {trace.day.memories} memories said then{told}; "
            f"what was said on other days ranks {trace.day.others_demoted:g}× further down"
        )
    if trace.focus:
        focus = trace.focus
        demoted = f"{focus.others_demoted:g}"
        node = tree.add(f"[bold]focus[/] · {escaped(focus.speaker)}: what others said ranks {demoted}× further down")
        if focus.shared:
            ids = ", ".join(f"m{m}" for m in focus.shared)
            node.add(f"[dim]{escaped(focus.speaker)}'s own memories nearest the question, moved up:[/] {ids}")
    _support(tree, trace.support or {}, "[bold]support[/]")
    _evidence(tree, result.evidence)
    _llm_calls(tree, trace.llm_calls or [])
    return tree


def _llm_calls(tree: Tree, calls: list[dict[str, Any]]) -> None:
    """Which component used the local model: tokens in/out, seconds, and failures that fell back."""
    if not calls:
        return
    node = tree.add(f"[bold]model calls[/] ({len(calls)})")
    for call in calls:
        line = f"{call['component']}: {call['tokens_in']} → {call['tokens_out']} tokens, {call['seconds']:.2f} s"
        if call.get("error"):
            line += f"  [yellow]{clip(call['error'], 80)}[/]"
        if call.get("note"):
            line += f"  [dim]{escaped(call['note'])}[/]"
        node.add(line)


def answer_text(answer: Answer) -> str:
    """The answer line with its method and type."""
    kind = f"{answer.method}, {answer.type}" if answer.type else answer.method
    text = escaped(answer.text) if answer.text else f"[dim]{escaped(answer.note or 'no answer')}[/]"
    style = "bold" if answer.found and answer.sure else "bold yellow"  # "not found" and "not sure" stand out
    line = f"[{style}]answer[/] ({kind}): {text}"
    if answer.method == "llm" and not answer.found and answer.note:  # why: the model said so, or a name is missing
        line += f"  [dim]({escaped(answer.note)})[/]"
    if answer.fallback:
        line += f"  [yellow]model fallback: {escaped(answer.fallback)}[/]"
    return line
