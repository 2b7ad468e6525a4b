"""The recall@K curve per mode as a PNG; matplotlib is imported only here, with the headless Agg backend."""

from __future__ import annotations

from pathlib import Path


def plot_recall_curve(curves: dict[str, dict[str, float]], path: Path, label: str) -> Path:
    """One line per mode: overall evidence recall at K = 5..50 (`label` says of which questions)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(7, 4.5))
    for mode, curve in curves.items():
        ks = sorted(curve, key=int)
        axes.plot([int(k) for k in ks], [curve[k] for k in ks], marker="o", markersize=3, label=mode)
    axes.set_xlabel("K (memories)")
    axes.set_ylabel(label)
    axes.set_ylim(0, 1)
    axes.grid(alpha=0.3)
    axes.legend(fontsize=8, loc="lower right")
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)
    return path
