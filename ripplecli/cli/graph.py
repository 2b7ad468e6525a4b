"""`ripple graph stats`: the memory graph in figures."""

from __future__ import annotations

import typer
from rich.table import Table

from ripplecli.cli.common import (
    JsonOption,
    StoreOption,
    console,
    escaped,
    facts_table,
    open_memory,
    print_json,
    user_errors,
)

graph_app = typer.Typer(help="Inspect the memory graph.", no_args_is_help=True)


def _human_bytes(size: int) -> str:
    """1536 -> '1.5 KiB'."""
    value = float(size)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:.1f} {unit}" if unit != "B" else f"{int(value)} B"
        value /= 1024
    return f"{size} B"


def _overview(stats: dict) -> Table:
    """Store-level counts."""
    rows = [
        ("memories", stats["memories"]),
        ("sources (turns)", stats["sources"]),
        ("conversations / sessions", f"{stats['conversations']} / {stats['sessions']}"),
        ("isolated memories", stats["isolated"]),
        ("components (largest)", f"{stats['components']} ({stats['largest_component']})"),
        ("persons / locations / concepts", "{persons} / {locations} / {concepts}".format(**stats["cues"])),
        ("time span", " … ".join(t[:10] if t else "-" for t in stats["time_span"])),
        ("on disk", _human_bytes(stats["bytes_on_disk"])),
        ("encoder", f"{stats['encoder']['name']} ({stats['encoder']['dim']}-d)"),
    ]
    return facts_table(f"store {stats['store']}", rows)


def _channels(stats: dict) -> Table:
    """Per-channel degree and 2-hop neighbourhood: the figure that says whether the graph discriminates."""
    table = Table(title="edges per channel")
    for column in ("channel", "edges", "mean degree", "max degree", "mean 2-hop neighbourhood"):
        table.add_column(column, justify="left" if column == "channel" else "right")
    for name, row in [*stats["channels"].items(), ("all", stats["all"])]:
        table.add_row(
            escaped(name),
            str(row["edges"]),
            f"{row['mean_degree']:.2f}",
            str(row["max_degree"]),
            f"{row['mean_two_hop']:.1f}",
        )
    return table


def _histogram(stats: dict) -> Table:
    """Degree histogram over all channels."""
    table = Table(title="degree histogram (all channels)")
    table.add_column("degree")
    table.add_column("memories", justify="right")
    for label, count in stats["degree_histogram"].items():
        table.add_row(escaped(label), str(count))
    return table


def _antecedent(channel: str, row: dict) -> Table:
    """CABLE links: how many, how spread, and whether they reach beyond direct similarity."""
    rows = [
        ("edges (older → newer)", row["edges"]),
        (
            "memories with ≥ 1 antecedent / used as one",
            f"{row['memories_with_antecedent']} / {row['memories_as_antecedent']}",
        ),
        (
            "in-degree mean / max (cap)",
            f"{row['mean_in_degree']:.2f} / {row['max_in_degree']} ({row['in_degree_cap']})",
        ),
        ("out-degree mean / max", f"{row['mean_out_degree']:.2f} / {row['max_out_degree']}"),
        ("source not in target's top-15 older", f"{row['share_outside_dst_top']:.1%}"),
        ("neither in the other's top-15", f"{row['share_outside_both_tops']:.1%}"),
    ]
    return facts_table(f"{channel} links (CABLE)", rows)


@graph_app.command("stats")
@user_errors
def stats(store: StoreOption = None, as_json: JsonOption = False) -> None:
    """Memories, edges per channel, degrees, components, cues, size on disk, encoder and thresholds."""
    with open_memory(store, read_only=True, create=False) as memory:
        figures = memory.stats()
    if as_json:
        print_json(figures)
        return
    console.print(_overview(figures))
    console.print(_channels(figures))
    console.print(_histogram(figures))
    for channel, row in (figures.get("antecedent") or {}).items():
        console.print(_antecedent(channel, row))
    graph = figures["settings"].get("graph", {})
    if graph:
        console.print(
            "thresholds: semantic ≥ {semantic_threshold} (cap {semantic_cap}), structural ≥ "
            "{structural_threshold} (cap {structural_cap}, {structural_scoring} scoring)".format(**graph)
        )
