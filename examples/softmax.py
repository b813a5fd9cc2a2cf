"""Row softmax: ``out[r, :] = exp(x[r, :] - max(x[r, :])) / sum(exp(...))``.

Verify it end to end (compile, run on the machine model, compare with the reference
semantics bit for bit):

    ptoc verify examples/softmax.py::softmax --runs 10
"""

import ptoc
import ptoc.lang as pt

ROWS, COLS = 8, 64


@ptoc.kernel
def softmax(x: ptoc.Tensor[ptoc.fp32, ROWS, COLS], out: ptoc.Tensor[ptoc.fp32, ROWS, COLS]):
    t = pt.load(x)  # the whole tensor as one (8, 64) tile
    t = t - pt.row_max(t)  # (8, 64) - (8, 1): TROWEXPANDSUB
    e = pt.exp(t)
    pt.store(out, e / pt.row_sum(e))  # TROWEXPANDDIV, then TSTORE


if __name__ == "__main__":
    import numpy as np

    x = np.random.default_rng(0).standard_normal((ROWS, COLS), dtype=np.float32)
    prog = ptoc.compile(softmax)
    print(prog.asm(source=True))
    print(prog.stats().text())
    got = ptoc.verify(softmax, x=x)
    print("bit-exact; row sums:", got["out"].sum(axis=1))
