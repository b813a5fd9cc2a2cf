"""Kernels of the many-cores tests (a module of its own: cluster workers load it)."""

import ptoc
import ptoc.lang as pt


@ptoc.kernel(grid=4)
def double4(x: ptoc.Tensor[ptoc.fp32, 8, 64], out: ptoc.Tensor[ptoc.fp32, 8, 64]):
    pt.store(out, pt.load(x) * 2.0)  # every core stores the same rows: a race


@ptoc.kernel
def double(x: ptoc.Tensor[ptoc.fp32, 8, 64], out: ptoc.Tensor[ptoc.fp32, 8, 64]):
    pt.store(out, pt.load(x) * 2.0)


def twice(x):
    """Off by one wherever the first input element is above 1.5: a deliberate mismatch
    that only some seeds hit."""
    return {"out": x * 2 + (1.0 if x[0, 0] > 1.5 else 0.0)}


def first_failing_seed(runs: int) -> int | None:
    """The seed a serial campaign of ``double`` against ``twice`` stops at."""
    for s in range(runs):
        if double.random_inputs(s)["x"][0, 0] > 1.5:
            return s
    return None


@ptoc.kernel(grid=6)
def beyond(
    x: ptoc.Tensor[ptoc.fp32, 32, 32],
    y: ptoc.Tensor[ptoc.fp32, 8, 32],
    out: ptoc.Tensor[ptoc.fp32, 48, 32],
    out2: ptoc.Tensor[ptoc.fp32, 48, 32],
):
    """Core c stores y + 1 to rows 8c.. of out, then copies rows 8c.. of x, which cores
    4 and 5 do not have: core 4 faults after its first store."""
    rows = pt.block_idx() * 8
    pt.store(out, pt.load(y) + 1.0, rows=(rows, 8))
    pt.store(out2, pt.load(x, rows=(rows, 8)), rows=(rows, 8))
