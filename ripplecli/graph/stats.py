"""`ripple graph stats`: the figures that say whether the graph can discriminate (no torch, no encoder)."""

from __future__ import annotations

import random
from collections import defaultdict
from pathlib import Path
from typing import Any

from ripplecli.store import queries
from ripplecli.store.db import Store

HISTOGRAM_BINS = (0, 1, 2, 3, 5, 10, 20, 50)
SAMPLE_NODES = 500


def adjacency(edges: list[tuple[int, int]]) -> dict[int, set[int]]:
    """Undirected neighbour sets (every channel is traversable both ways)."""
    neighbours: dict[int, set[int]] = defaultdict(set)
    for src, dst in edges:
        neighbours[src].add(dst)
        neighbours[dst].add(src)
    return neighbours


def two_hop_sizes(neighbours: dict[int, set[int]], nodes: list[int]) -> list[int]:
    """Size of each node's ≤2-hop neighbourhood, itself excluded."""
    sizes = []
    for node in nodes:
        reach = set(neighbours.get(node, ()))
        for hop in list(reach):
            reach |= neighbours.get(hop, set())
        reach.discard(node)
        sizes.append(len(reach))
    return sizes


def components(nodes: list[int], neighbours: dict[int, set[int]]) -> list[int]:
    """Sizes of connected components, largest first."""
    seen: set[int] = set()
    sizes = []
    for start in nodes:
        if start in seen:
            continue
        stack, size = [start], 0
        seen.add(start)
        while stack:
            node = stack.pop()
            size += 1
            for other in neighbours.get(node, ()):
                if other not in seen:
                    seen.add(other)
                    stack.append(other)
        sizes.append(size)
    return sorted(sizes, reverse=True)


def histogram(degrees: list[int]) -> dict[str, int]:
    """Degree counts in coarse bins ("0", "1", "2", "3-4", ..., "50+")."""
    labels = []
    for low, high in zip(HISTOGRAM_BINS, (*HISTOGRAM_BINS[1:], None), strict=True):
        labels.append((low, high, str(low) if high == low + 1 else f"{low}-{high - 1}" if high else f"{low}+"))
    counts = dict.fromkeys((label for *_, label in labels), 0)
    for degree in degrees:
        for low, high, label in labels:
            if degree >= low and (high is None or degree < high):
                counts[label] += 1
                break
    return counts


def channel_stats(
    nodes: list[int], edges: list[tuple[int, int]], sample: list[int], neighbours: dict[int, set[int]] | None = None
) -> dict[str, Any]:
    """Degree figures and the mean 2-hop neighbourhood for one channel (or all together)."""
    neighbours = adjacency(edges) if neighbours is None else neighbours
    degrees = [len(neighbours.get(n, ())) for n in nodes]
    sizes = two_hop_sizes(neighbours, sample)
    return {
        "edges": len(edges),
        "mean_degree": round(sum(degrees) / len(nodes), 3) if nodes else 0.0,
        "max_degree": max(degrees, default=0),
        "mean_two_hop": round(sum(sizes) / len(sizes), 2) if sizes else 0.0,
    }


def folder_size(path: Path) -> int:
    """Bytes on disk of every file in the store folder."""
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def graph_stats(store: Store) -> dict[str, Any]:
    """Everything `ripple graph stats` reports, as plain data."""
    nodes = queries.memory_ids(store)
    by_channel: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for src, dst, channel in queries.all_edges(store):
        by_channel[channel].append((src, dst))
    every = [pair for pairs in by_channel.values() for pair in pairs]
    sample = random.Random(0).sample(nodes, min(SAMPLE_NODES, len(nodes)))
    neighbours = adjacency(every)
    degrees = [len(neighbours.get(n, ())) for n in nodes]
    comps = components(nodes, neighbours)
    first, last = queries.time_span(store)
    cue_rows = queries.distinct_cue_counts(store)
    return {
        "store": str(store.path),
        "memories": len(nodes),
        "sources": store.count("sources"),
        "conversations": store.count("conversations"),
        "sessions": queries.session_count(store),
        "channels": {name: channel_stats(nodes, pairs, sample) for name, pairs in sorted(by_channel.items())},
        "all": channel_stats(nodes, every, sample, neighbours),
        "degree_histogram": histogram(degrees),
        "isolated": sum(1 for d in degrees if d == 0),
        "components": len(comps),
        "largest_component": comps[0] if comps else 0,
        "cues": {"persons": cue_rows[0], "locations": cue_rows[1], "concepts": cue_rows[2]},
        "time_span": [first.isoformat() if first else None, last.isoformat() if last else None],
        "bytes_on_disk": folder_size(store.path),
        "encoder": {"name": store.get_meta("encoder_name"), "dim": store.get_meta("encoder_dim")},
        "settings": store.get_meta("settings", {}),
        "two_hop_sample": len(sample),
        "antecedent": _antecedent(store, set(by_channel)),
    }


def _antecedent(store: Store, channels: set[str]) -> dict[str, Any]:
    """CABLE figures per antecedent channel present (ripplecli.graph.cable, imported only when links exist)."""
    if not any(name.startswith("antecedent") for name in channels):
        return {}
    from ripplecli.graph.cable import CHANNELS, antecedent_stats

    return {name: antecedent_stats(store, name) for name in CHANNELS.values() if name in channels}
