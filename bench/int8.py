"""int8 encoder benchmark (issue 16): encoding speed of the fp32 and int8 ONNX encoders on LoCoMo restatements.

    .venv/bin/python bench/int8.py [--store DIR] [--data PATH] [--repeat 5]

Restatements come from a store (`--store`, e.g. one the dev evaluation wrote), else from the first dev conversation
as the rules extractor restates it (what its ingest writes, without parsing or storing it). Also reports how close
the int8 vectors stay to the fp32 ones (cosine).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

import numpy as np

from ripplecli.api import Memory
from ripplecli.extract.rules import RulesExtractor
from ripplecli.extract.windows import make_windows
from ripplecli.formats import read_conversations
from ripplecli.runtime.base import Encoder
from ripplecli.runtime.encoders import load_encoder

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo-dev.json"


def restatements(store: Path | None, data: Path) -> list[str]:
    """Every memory's restatement in a store, or those the rules extractor writes for the first dev conversation."""
    if store is not None:
        with Memory(store, read_only=True) as memory:
            return [row[0] for row in memory.store.con.execute("SELECT restatement FROM memories").fetchall()]
    return RulesExtractor().restatements(list(make_windows(read_conversations(data)[0])))


def sentences_per_second(encoder: Encoder, texts: list[str], repeat: int) -> float:
    """Median encoding rate over `repeat` whole passes (one warm-up pass first)."""
    encoder.encode(texts[:64])
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        encoder.encode(texts)
        times.append(time.perf_counter() - started)
    return len(texts) / statistics.median(times)


def main() -> None:
    """Time both encoders on the same texts, then compare their vectors."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--store", type=Path, help="read restatements from this store")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="LoCoMo JSON (default: ../shared/data)")
    parser.add_argument("--repeat", type=int, default=5, help="timed passes per encoder")
    args = parser.parse_args()
    texts = restatements(args.store, args.data)
    print(f"cores {os.cpu_count()} · load {os.getloadavg()[0]:.2f} · {len(texts)} restatements")
    vectors = {}
    for backend in ("onnx", "onnx-int8"):
        encoder = load_encoder(backend)
        rate = sentences_per_second(encoder, texts, args.repeat)
        vectors[backend] = encoder.encode(texts)
        print(f"{encoder.name}: {rate:.0f} sentences/s (median of {args.repeat})", flush=True)
    cosines = np.sum(vectors["onnx"] * vectors["onnx-int8"], axis=1)
    print(f"cosine fp32 vs int8: mean {cosines.mean():.4f}, min {cosines.min():.4f}")
    print(f"load now {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
