"""Top-k of every row of a tall tensor: a run-time loop over the rows.

Each iteration sorts one row's 32-column groups (``pt.sort32``) and merges the four
sorted groups, keeping the first K records (``pt.merge_sorted``, a compound interface
lowered inside the loop body). ``rows`` is a kernel argument, so the program has one
copy of the body however many rows there are.

    ptoc verify examples/topk_rows.py::topk_rows --runs 3
"""

import numpy as np

import ptoc
import ptoc.lang as pt

MAX_ROWS, COLS, K, GROUP = 256, 128, 16, 32


@ptoc.kernel
def topk_rows(
    x: ptoc.Tensor[ptoc.fp32, MAX_ROWS, COLS],
    values: ptoc.Tensor[ptoc.fp32, MAX_ROWS, K],
    indices: ptoc.Tensor[ptoc.u32, MAX_ROWS, K],
    rows: ptoc.Scalar[ptoc.s32],
):
    for r in pt.range(0, rows):
        groups = pt.sort32(pt.load(x, rows=(r, 1)))  # sorted per 32 columns
        lists = [
            pt.Records(groups.values[:, g : g + GROUP], groups.payload[:, g : g + GROUP])
            for g in range(0, COLS, GROUP)
        ]
        best, _counts = pt.merge_sorted(*lists, top_k=K)
        pt.store(values, best.values, rows=(r, 1))
        pt.store(indices, best.payload, rows=(r, 1))


@topk_rows.inputs
def _inputs(rng: np.random.Generator) -> dict:
    return {
        "x": rng.standard_normal((MAX_ROWS, COLS)).astype(np.float32),
        "rows": int(rng.integers(0, MAX_ROWS + 1)),
    }
