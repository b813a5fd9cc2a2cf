"""RMSNorm over a run-time number of rows, with a learned scale:

    y = x / sqrt(mean(x * x) + eps) * gamma

``rows`` is a kernel argument, any count up to ``MAX_ROWS``; the kernel loops over 8-row
blocks at run time, and the last block is a ragged tail when ``rows`` is not a multiple of
8: ``valid_rows=rows - r`` loads only the rows that exist, every bundle computing on them
runs over that many rows (``B.DIM`` from a register), and the store writes them. ``gamma``
is loaded once, before the loop, and every iteration reads it where it stays (a tile live
across the loop keeps its queue entry from iteration to iteration).

    ptoc verify examples/rmsnorm_rows.py::rmsnorm_rows --runs 5
"""

import numpy as np

import ptoc
import ptoc.lang as pt

BLOCK, COLS, MAX_ROWS = 8, 128, 1024
EPS = 1e-6


@ptoc.kernel
def rmsnorm_rows(
    x: ptoc.Tensor[ptoc.fp32, MAX_ROWS, COLS],
    gamma: ptoc.Tensor[ptoc.fp32, 1, COLS],
    out: ptoc.Tensor[ptoc.fp32, MAX_ROWS, COLS],
    rows: ptoc.Scalar[ptoc.s32],
):
    g = pt.load(gamma)  # loop-invariant: loaded once
    for r in pt.range(0, rows, BLOCK):
        t = pt.load(x, rows=(r, BLOCK), valid_rows=rows - r)  # the tail may be short
        ms = pt.row_sum(t * t) * (1.0 / COLS)  # 1/128 is exact
        y = t * pt.rsqrt(ms + EPS)  # TROWEXPANDMUL
        pt.store(out, y * g, rows=(r, BLOCK))  # TCOLEXPANDMUL


@rmsnorm_rows.inputs
def _inputs(rng: np.random.Generator) -> dict:
    rows = int(rng.integers(0, MAX_ROWS + 1))
    return {
        "x": rng.standard_normal((MAX_ROWS, COLS)).astype(np.float32),
        "gamma": rng.standard_normal((1, COLS)).astype(np.float32),
        "rows": rows,
    }
