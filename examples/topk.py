"""Top-k of each row, with the column index of every value, via sort and merge.

``pt.sort32`` sorts each 32-column group descending and carries the column index as a
u32 payload; ``pt.merge_sorted`` merges the four sorted groups of a row and keeps the
first K records. The Python loop over rows unrolls while tracing.

    ptoc verify examples/topk.py::topk --runs 5
"""

import ptoc
import ptoc.lang as pt

ROWS, COLS, K = 4, 128, 16
GROUP = 32


@ptoc.kernel
def topk(
    x: ptoc.Tensor[ptoc.fp32, ROWS, COLS],
    values: ptoc.Tensor[ptoc.fp32, ROWS, K],
    indices: ptoc.Tensor[ptoc.u32, ROWS, K],
):
    groups = pt.sort32(pt.load(x))  # Records(values, payload), sorted per 32 columns
    for r in range(ROWS):  # unrolled at trace time
        lists = [
            pt.Records(groups.values[r, g : g + GROUP], groups.payload[r, g : g + GROUP])
            for g in range(0, COLS, GROUP)
        ]
        best, _counts = pt.merge_sorted(*lists, top_k=K)
        pt.store(values, best.values, rows=r)
        pt.store(indices, best.payload, rows=r)
