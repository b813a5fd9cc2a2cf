"""Run-time loops against the same work unrolled at trace time (printed by
benchmarks/run_all.py, never asserted).

The kernel is a row softmax over ``rows`` rows in 16-row blocks, once with ``pt.range``
(one loop body, ``rows`` a run-time argument) and once with Python's ``range`` (one copy
of the body per block). Rows:

* ``loop compile``: compiling the loop kernel against the unrolled one (goal: far below
  1x -- the loop's program does not grow with the rows);
* ``loop program size``: the loop's bundle count against the unrolled one's (reported as
  a ratio of counts in the time columns' place: the note gives both counts);
* ``loop run, per bundle``: the executor's time per executed bundle in the loop against
  the unrolled program running the same bundles (goal: the loop is not slower per bundle:
  its bundles are validated once per shape, not once per iteration).
"""

import time
from typing import Any

import numpy as np

import ptoc
import ptoc.lang as pt

from .common import Row, best_of

BLOCK, COLS = 16, 64


def kernels(rows: int) -> tuple[Any, Any]:
    """The loop kernel and the unrolled kernel over ``rows`` rows."""

    @ptoc.kernel
    def softmax_loop(
        x: ptoc.Tensor[ptoc.fp32, rows, COLS],
        out: ptoc.Tensor[ptoc.fp32, rows, COLS],
        n: ptoc.Scalar[ptoc.s32],
    ) -> None:
        for r in pt.range(0, n, BLOCK):
            t = pt.load(x, rows=(r, BLOCK))
            e = pt.exp(t - pt.row_max(t))
            pt.store(out, e / pt.row_sum(e), rows=(r, BLOCK))

    @ptoc.kernel
    def softmax_unrolled(
        x: ptoc.Tensor[ptoc.fp32, rows, COLS], out: ptoc.Tensor[ptoc.fp32, rows, COLS]
    ) -> None:
        for r in range(0, rows, BLOCK):
            t = pt.load(x, rows=(r, BLOCK))
            e = pt.exp(t - pt.row_max(t))
            pt.store(out, e / pt.row_sum(e), rows=(r, BLOCK))

    return softmax_loop, softmax_unrolled


def _compile_time(k: Any) -> tuple[float, Any]:
    t0 = time.perf_counter()
    prog = ptoc.compile(k)
    return time.perf_counter() - t0, prog


def rows(rows: int = 4096) -> list[Row]:
    for k in kernels(BLOCK):  # warm: the first compile of a process imports and caches
        ptoc.compile(k)
    loop, unrolled = kernels(rows)  # fresh kernels: each compile traces once
    t_loop, p_loop = _compile_time(loop)
    t_unrolled, p_unrolled = _compile_time(unrolled)
    n_loop, n_unrolled = p_loop.program.bundle_count(), p_unrolled.program.bundle_count()
    x = np.random.default_rng(0).standard_normal((rows, COLS)).astype(np.float32)
    executed: dict[str, int] = {}

    def run_loop() -> None:
        executed["loop"] = ptoc.run(p_loop, x=x, n=rows).bundles

    def run_unrolled() -> None:
        executed["unrolled"] = ptoc.run(p_unrolled, x=x).bundles

    run_loop(), run_unrolled()  # first runs build the plans of both
    r_loop = best_of(run_loop, 3, time.process_time)
    r_unrolled = best_of(run_unrolled, 3, time.process_time)
    per_loop = r_loop / executed["loop"]
    per_unrolled = r_unrolled / executed["unrolled"]
    return [
        Row(
            f"softmax {rows} rows: loop compile",
            t_loop,
            t_unrolled,
            "unrolled compile",
            note=f"{n_loop} vs {n_unrolled} bundles",
        ),
        Row(
            f"softmax {rows} rows: loop program size",
            n_loop * 1e-3,
            n_unrolled * 1e-3,
            "unrolled (bundles, x1000 as ms)",
        ),
        Row(
            f"softmax {rows} rows: loop run, per bundle",
            per_loop,
            per_unrolled,
            "unrolled, per bundle",
            goal=1.2,
            note=f"{executed['loop']} vs {executed['unrolled']} executed bundles",
        ),
    ]
