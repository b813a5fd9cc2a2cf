"""Embedding lookup: gather one table row per token id.

``pt.gather(table, ids)`` with a (N, 1) column of row ids is TGATHER with the ids
broadcast across the columns: ``out[i, c] = table[ids[i], c]``.

    ptoc verify examples/embedding.py::embedding --runs 5
"""

import numpy as np

import ptoc
import ptoc.lang as pt

VOCAB, DIM, TOKENS = 64, 32, 16


@ptoc.kernel
def embedding(
    table: ptoc.Tensor[ptoc.fp32, VOCAB, DIM],
    ids: ptoc.Tensor[ptoc.s32, TOKENS, 1],
    out: ptoc.Tensor[ptoc.fp32, TOKENS, DIM],
):
    pt.store(out, pt.gather(pt.load(table), pt.load(ids)))


@embedding.inputs
def _inputs(rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Token ids must name rows of the table."""
    return {
        "table": rng.standard_normal((VOCAB, DIM)).astype(np.float32),
        "ids": rng.integers(0, VOCAB, (TOKENS, 1), dtype=np.int32),
    }
