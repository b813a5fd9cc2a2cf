"""Paged KV-cache gather: a block table names, for each logical block of a sequence, the
physical page of the cache that holds it (paged attention's addressing).

``out[16 b + i, :] = cache[16 table[b] + i, :]`` for the first ``blocks`` logical blocks.
``pt.load_scalar`` reads the page number into a register; the load's window moves with
it at run time, behind a bounds check: a page number outside the cache stops the machine
with a fault that names the load.

    ptoc verify examples/paged_gather.py::paged_gather --runs 5
"""

import numpy as np

import ptoc
import ptoc.lang as pt

PAGE, DIM, PAGES, MAX_BLOCKS = 16, 64, 32, 8


@ptoc.kernel
def paged_gather(
    cache: ptoc.Tensor[ptoc.fp16, PAGES * PAGE, DIM],
    table: ptoc.Tensor[ptoc.s32, 1, MAX_BLOCKS],
    out: ptoc.Tensor[ptoc.fp16, MAX_BLOCKS * PAGE, DIM],
    blocks: ptoc.Scalar[ptoc.s32],
):
    for b in pt.range(0, blocks):
        page = pt.load_scalar(table, 0, b)  # data-dependent: the page of block b
        pt.store(out, pt.load(cache, rows=(page * PAGE, PAGE)), rows=(b * PAGE, PAGE))


@paged_gather.inputs
def _inputs(rng: np.random.Generator) -> dict:
    return {
        "cache": rng.standard_normal((PAGES * PAGE, DIM)).astype(np.float16),
        "table": rng.permutation(PAGES)[:MAX_BLOCKS].reshape(1, -1).astype(np.int32),
        "blocks": int(rng.integers(0, MAX_BLOCKS + 1)),
    }
