"""A large store in seconds: the dev store's rows copied under new ids until it holds N memories (issue 16).

    .venv/bin/python bench/bigstore.py --memories 100000 [--from DEV_STORE] [--to NEW_STORE]

`bench/ask.py --synthetic N` ingests the dev conversations again and again (hours at 100K on a busy 2-core
machine); this copies the stored rows instead: each copy's conversations get a `#rN` suffix, its memory and
source ids an offset, and its edges stay inside the copy. The vector and BM25 indexes are rebuilt from the
copied rows by the first ask, which this script runs. It is a store for timing reads (cold asks), not for
measuring recall quality: the copies are exact duplicates.
"""

from __future__ import annotations

import argparse
import shutil
import time
from pathlib import Path

from ripplecli.api import Memory

BENCH_HOME = Path("/tmp/ripple-bench")
MEMORY_TABLES = ("vectors", "memory_persons", "memory_locations", "memory_cues")


def copy_rows(con, copy: int, stride: int, source_stride: int) -> None:
    """One more copy of the first copy's rows (ids below `stride`) under shifted ids."""
    memory_offset, source_offset = stride * (copy - 1), source_stride * (copy - 1)
    tag = f"'#r{copy}'"
    first = "conversation_id NOT LIKE '%#r%'"
    con.execute(
        f"INSERT INTO conversations SELECT * REPLACE (conversation_id || {tag} AS conversation_id) "
        f"FROM conversations WHERE {first}"
    )
    con.execute(
        f"INSERT INTO sources SELECT * REPLACE (source_id + {source_offset} AS source_id, "
        f"conversation_id || {tag} AS conversation_id, content_hash || {tag} AS content_hash) "
        f"FROM sources WHERE {first}"
    )
    con.execute(
        f"INSERT INTO memories SELECT * REPLACE (memory_id + {memory_offset} AS memory_id, "
        f"conversation_id || {tag} AS conversation_id) FROM memories WHERE {first}"
    )
    con.execute(
        f"INSERT INTO provenance SELECT memory_id + {memory_offset}, source_id + {source_offset} "
        f"FROM provenance WHERE memory_id < {stride}"
    )
    for table in MEMORY_TABLES:
        con.execute(
            f"INSERT INTO {table} SELECT * REPLACE (memory_id + {memory_offset} AS memory_id) "
            f"FROM {table} WHERE memory_id < {stride}"
        )
    con.execute(
        f"INSERT INTO edges SELECT * REPLACE (src + {memory_offset} AS src, dst + {memory_offset} AS dst) "
        f"FROM edges WHERE src < {stride} AND dst < {stride}"
    )


def build(source: Path, target: Path, memories: int) -> None:
    """Copy `source` to `target` and add copies of its rows until the store holds at least `memories`."""
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    shutil.copy2(source / "ripple.duckdb", target / "ripple.duckdb")
    with Memory(target) as memory:
        store, con = memory.store, memory.store.con
        base = store.count("memories")
        memory_offset = int(con.execute("SELECT max(memory_id) FROM memories").fetchone()[0]) + 1
        source_offset = int(con.execute("SELECT max(source_id) FROM sources").fetchone()[0]) + 1
        copies = -(-memories // base)
        started = time.perf_counter()
        with store.transaction():
            for copy in range(2, copies + 1):
                copy_rows(con, copy, memory_offset, source_offset)
            for table in ("memories", "sources"):
                store.set_meta(
                    f"{table}_high_water", memory_offset * copies if table == "memories" else source_offset * copies
                )
            store.bump("memories")
            store.bump("vectors")
        print(f"{target}: {store.count('memories')} memories in {time.perf_counter() - started:.1f} s", flush=True)
        started = time.perf_counter()
        memory.recall("warm up the derived indexes", k=1, mode="seeds")
        print(f"vector and BM25 indexes rebuilt in {time.perf_counter() - started:.1f} s", flush=True)


def main() -> None:
    """Command line."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--memories", type=int, default=100_000, help="at least this many memories")
    parser.add_argument("--from", dest="source", type=Path, default=BENCH_HOME / "dev", help="a built store")
    parser.add_argument("--to", dest="target", type=Path, help="where (default: BENCH_HOME/big-N)")
    args = parser.parse_args()
    build(args.source, args.target or BENCH_HOME / f"big-{args.memories}", args.memories)


if __name__ == "__main__":
    main()
