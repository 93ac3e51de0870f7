"""Benchmark template rendering over a wide row (target: time linear in the template).

Run: ``.venv/bin/python bench/template_bench.py`` (or ``make bench``). Options: ``--columns N``
(default 3000), ``--tokens N`` (default 200000), ``--repeat N`` (default 3).

Workload: a row of ``--columns`` columns ``c0 … c<N-1>`` and one template of ``--tokens`` bare
``$row.c<k>`` tokens (k spread over every column), rendered without a size cap; then the same
template at a quarter of the tokens; then each shape of :data:`SHAPES` (an unclosed ``${row.``, a
bare, a braced and an unknown token) 5,000 and 20,000 times. Timing = best of ``--repeat`` runs.
The renderer used to compare every column name at every token (3,000 columns x 200,000 tokens
took 88 s); it now looks names up in a prefix trie, so the time is linear in the template. The
script exits 1 when four times the tokens (or units) costs more than eight times the time
(linear: about 4).
"""

from __future__ import annotations

import argparse
import sys
import time

from tocsin.core.config.templates import TemplateContext, render


def best_of(repeat: int, template: str, ctx: TemplateContext) -> float:
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        render(template, ctx)
        best = min(best, time.perf_counter() - started)
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--columns", type=int, default=3000)
    parser.add_argument("--tokens", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    row = {f"c{i}": f"v{i}" for i in range(args.columns)}
    ctx = TemplateContext(row=row, record_id="rec", trigger_id="trg", run_id="run")
    step = max(1, args.columns // 997)  # spread tokens over the columns
    full = " ".join(f"$row.c{(i * step) % args.columns}" for i in range(args.tokens))
    quarter = " ".join(f"$row.c{(i * step) % args.columns}" for i in range(args.tokens // 4))
    large = best_of(args.repeat, full, ctx)
    small = best_of(args.repeat, quarter, ctx)
    ratio = large / small
    print(f"template bench: {args.columns} columns, template of {len(full):,} characters")
    print(f"  {args.tokens:>8,} tokens: {large:8.3f} s ({large / args.tokens * 1e6:.2f} µs/token)")
    print(f"  {args.tokens // 4:>8,} tokens: {small:8.3f} s")
    print(f"  4x tokens cost {ratio:.1f}x the time (linear: ~4x)")
    worst = ratio
    # the shapes a tenant's template can take: an unclosed ``${row.`` used to rescan the rest
    narrow = TemplateContext(
        row={f"c{i}": i for i in range(300)} | {"T": "t", "a": 1, "a-b": 2},
        record_id="rec",
        trigger_id="trg",
        run_id="run",
    )
    for name, unit in SHAPES.items():
        shape = best_of(args.repeat, unit * 20_000, narrow) / best_of(
            args.repeat, unit * 5_000, narrow
        )
        print(f"  {name:>14}: 4x the units cost {shape:.1f}x the time")
        worst = max(worst, shape)
    return 0 if worst <= 8 else 1


SHAPES = {
    "unclosed brace": "${row.",
    "bare": "$row.a-b-c ",
    "braced": "${row.T} ",
    "unknown": "$run.x ",
}


if __name__ == "__main__":
    sys.exit(main())
