"""Rich rendering of a recall trace: the trajectory as a tree (the data itself lives in ripplecli.trace)."""

from __future__ import annotations

from typing import Any

from rich.tree import Tree

from ripplecli.answer.base import Answer
from ripplecli.cli.common import inert
from ripplecli.trace import Evidence, RecallResult

TEXT_WIDTH = 90


def clip(text: str, width: int = TEXT_WIDTH) -> str:
    """One line, cut to width, markup-safe."""
    line = " ".join(text.split())
    return inert(line if len(line) <= width else line[: width - 1] + "…")


def _cues(tree: Tree, cues: dict[str, Any]) -> None:
    """Query cues section."""
    node = tree.add("[bold]query cues[/]")
    for key in ("keywords", "persons", "locations", "concepts"):
        values = cues.get(key) or []
        node.add(f"{key}: {inert(', '.join(values)) if values else '[dim]none[/]'}")
    time_range = cues.get("time_range")
    node.add(f"time: {' … '.join(t[:10] for t in time_range) if time_range else '[dim]none[/]'}")
    if cues.get("failure"):
        node.add(f"[yellow]model fallback:[/] {inert(cues['failure'])}")


def _seeds(tree: Tree, seeds: dict[str, list[dict[str, Any]]]) -> None:
    """First-hop seeds per view."""
    node = tree.add("[bold]seeds[/] (first hop)")
    for view, rows in seeds.items():
        branch = node.add(f"{view} ({len(rows)})")
        for row in rows:
            branch.add(f"m{row['id']}  {row['score']:.3f}  {clip(row['text'])}")


def _support_line(row: dict[str, Any]) -> str:
    """anchor → hop → memory with edge weights or the cues that carried activation."""
    path = " → ".join(f"m{m}" for m in row["path"])
    how = ""
    if row.get("weights"):
        how = inert(f" [{row['channel']} {', '.join(f'{w:.2f}' for w in row['weights'])}]")
    if row.get("via_cues"):
        how += f" via cues: {inert(', '.join(row['via_cues'][:4]))}"
    if row.get("query"):
        how += f" query: “{inert(row['query'])}”"
    return f"{path}{how}  score {row['score']:.4g}  {clip(row.get('text', ''), 70)}"


def _rounds(tree: Tree, rounds: list[dict[str, Any]]) -> None:
    """Planner decision and support found, per round."""
    for record in rounds:
        plan = record["planner"]
        node = tree.add(f"[bold]round {record['round']}[/] · planner: {plan['decision']}")
        if plan.get("failure"):
            node.add(f"[yellow]model fallback:[/] {inert(plan['failure'])}")
        anchors = node.add(f"anchors ({len(plan['anchors'])})")
        for anchor in plan["anchors"]:
            anchors.add(f"m{anchor['id']}  {clip(anchor['text'])}")
        target = plan.get("target")
        if target:
            cue_text = ", ".join([*target["persons"], *target["locations"], *target["concepts"]])
            wants = f"  wants: a {target['wants']}" if target.get("wants") else ""
            node.add(f"missing-support target: “{inert(target['restatement'])}”  cues: {inert(cue_text)}{wants}")
        if plan.get("missing"):
            node.add(f"not yet covered: {inert(', '.join(plan['missing']))}")
        if record.get("stopped"):
            node.add(f"stop: {inert(record['stopped'])}")
        for channel, rows in (record.get("support") or {}).items():
            branch = node.add(f"support · {channel} ({len(rows)})")
            for row in rows:
                branch.add(_support_line(row))


def _tags(e: Evidence) -> str:
    """Provenance tags: which views (rank) and channels found the memory."""
    tags = [f"{p['view']}#{p['rank']}" for p in e.provenance if "view" in p and p.get("seed")]
    tags += [p["channel"] for p in e.provenance if "channel" in p]
    return ", ".join(dict.fromkeys(tags)) or "fused"


def is_weak(e: Evidence) -> bool:
    """Found by no view's first hop and no graph channel: only there to fill the list to K."""
    return not any(p.get("seed") or "channel" in p for p in e.provenance)


def _evidence(tree: Tree, evidence: list[Evidence]) -> None:
    """The final ranked evidence with source turns and dates; padding far below the best is marked weak."""
    weak = sum(is_weak(e) for e in evidence)
    node = tree.add(f"[bold]evidence[/] ({len(evidence)}{f', {weak} weak' if weak else ''})")
    if not evidence:
        node.add("[dim]no memory matches this question[/]")
    for e in evidence:
        turns = ", ".join(f"{s.turn_id}{' ' + s.timestamp[:10] if s.timestamp else ''}" for s in e.sources)
        mark = " [yellow]weak[/]" if is_weak(e) else ""
        how = f"[dim]{inert(_tags(e))} · {inert(turns)}[/]"
        line = node.add(f"{e.rank:>2}. m{e.memory_id}{mark}  {how}  {clip(e.restatement, 80)}")
        if e.context is not None:
            line.add(f"[dim]replying to {inert(e.context.speaker)}:[/] {clip(e.context.text, 80)}")


def evidence_line(e: Evidence) -> str:
    """One evidence line for `--no-trace`: rank, id, first turn and date, the restatement on one line."""
    first = e.sources[0] if e.sources else None
    where = f"{first.turn_id} {first.timestamp[:10] if first.timestamp else ''}".strip() if first else ""
    reply = f" [dim](to {inert(e.context.speaker)}: {clip(e.context.text, 40)})[/]" if e.context else ""
    mark = " [yellow]weak[/]" if is_weak(e) else ""
    return f"{e.rank:>2}. m{e.memory_id}{mark} [dim]{inert(where)}[/]  {clip(e.restatement, 80)}{reply}"


def trace_tree(result: RecallResult) -> Tree:
    """The whole recall trajectory as one tree."""
    trace = result.trace
    tree = Tree(
        f"[bold]ask[/] “{inert(result.question)}”  [dim]mode {result.mode} · k {result.k} · "
        f"{result.seconds * 1000:.0f} ms[/]"
    )
    if result.answer is not None:
        tree.add(answer_text(result.answer))
    _cues(tree, trace.get("query_cues", {}))
    if trace.get("note"):
        tree.add(f"[yellow]{inert(trace['note'])}[/]")
    _seeds(tree, trace.get("seeds", {}))
    _rounds(tree, trace.get("rounds", []))
    if trace.get("focus"):
        focus = trace["focus"]
        demoted = f"{focus['others_demoted']:g}"
        tree.add(f"[bold]focus[/] · {inert(focus['speaker'])}: what others said ranks {demoted}× further down")
    for channel, rows in (trace.get("support") or {}).items():
        branch = tree.add(f"[bold]support[/] · {channel} ({len(rows)})")
        for row in rows:
            branch.add(_support_line(row))
    _evidence(tree, result.evidence)
    _llm_calls(tree, trace.get("llm_calls") or [])
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
            line += f"  [dim]{inert(call['note'])}[/]"
        node.add(line)


def answer_text(answer: Answer) -> str:
    """The answer line with its method and type."""
    kind = f"{answer.method}, {answer.type}" if answer.type else answer.method
    text = inert(answer.text) if answer.text else f"[dim]{inert(answer.note or 'no answer')}[/]"
    style = "bold" if answer.found else "bold yellow"
    line = f"[{style}]answer[/] ({kind}): {text}"
    if answer.fallback:
        line += f"  [yellow]model fallback: {inert(answer.fallback)}[/]"
    return line
