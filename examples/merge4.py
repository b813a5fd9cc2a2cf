"""Four-way merge of sorted lists, with how many records each list contributed.

``pt.merge_sorted`` is pto-isa's multi-list TMRGSORT: a stable merge (ties go to the
lower list, NaNs last) of 2-4 sorted single-row lists.

    ptoc verify examples/merge4.py::merge4 --runs 5
"""

import numpy as np

import ptoc
import ptoc.lang as pt

N = 32  # records per list

List = ptoc.Tensor[ptoc.fp32, 1, N]


@ptoc.kernel
def merge4(
    a: List,
    b: List,
    c: List,
    d: List,
    merged: ptoc.Tensor[ptoc.fp32, 1, 4 * N],
    counts: ptoc.Tensor[ptoc.u32, 1, 4],
):
    out, n = pt.merge_sorted(pt.load(a), pt.load(b), pt.load(c), pt.load(d))
    pt.store(merged, out)
    pt.store(counts, n)


@merge4.inputs
def _inputs(rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Each list sorted descending, with some values shared across lists (ties)."""
    pool = rng.standard_normal(48).astype(np.float32)
    return {
        name: -np.sort(-rng.choice(pool, (1, N)), axis=1).astype(np.float32) for name in "abcd"
    }
