"""Garbage-collector work during bench (a)'s all-due tick, per backend.

Run: ``.venv/bin/python bench/tick_gc.py [--backend sqlite|postgresql|both] [--tables N]``.
Builds (a)'s store (``--tables`` tables x 5 interval triggers, all due; default 10,000), then ticks
until nothing is left while ``gc.callbacks`` (of this benchmark process only; tocsin itself never
touches the collector) count the collections per generation and time them. Full (generation 2)
passes walk every tracked object of the process: they are what objects living for a whole batch
cost. Prints collections and milliseconds per generation, wall time and client CPU time.
"""

from __future__ import annotations

import argparse
import collections
import gc
import time
from typing import Any

from tick_bench import bench_all_due, clone_tables, pg_schema, sqlite_file
from tocsin import Tocsin
from tocsin.settings import Settings


def measure(name: str, url: str, n_tables: int) -> None:
    t = Tocsin.open(url, settings=Settings(database_url=url))
    try:
        clone_tables(t, n_tables)
        spent: collections.Counter[int] = collections.Counter()
        counts: collections.Counter[int] = collections.Counter()
        started = [0.0]

        def observe(phase: str, info: dict[str, Any]) -> None:
            if phase == "start":
                started[0] = time.perf_counter()
            else:
                spent[info["generation"]] += time.perf_counter() - started[0]
                counts[info["generation"]] += 1

        gc.callbacks.append(observe)
        cpu = time.process_time()
        created, secs, _ = bench_all_due(t, n_tables)
        cpu = time.process_time() - cpu
        gc.callbacks.remove(observe)
        per_gen = ", ".join(
            f"gen{g}: {counts[g]} ({spent[g] * 1000:.0f} ms)" for g in sorted(counts)
        )
        print(
            f"[{name}] {created:,} runs in {secs:.2f}s ({created / secs:,.0f} runs/s), client "
            f"CPU {cpu:.2f}s | collections {per_gen}",
            flush=True,
        )
    finally:
        t.store.dispose()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", default="both", choices=["sqlite", "postgresql", "both"])
    ap.add_argument("--tables", type=int, default=10_000)
    ap.add_argument("--pg-url", default="postgresql://postgres@127.0.0.1:5432/test")
    args = ap.parse_args()
    if args.backend in ("sqlite", "both"):
        with sqlite_file() as url:
            measure("sqlite", url, args.tables)
    if args.backend in ("postgresql", "both"):
        with pg_schema(args.pg_url) as url:
            measure("postgresql", url, args.tables)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
