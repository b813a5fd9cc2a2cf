"""Row softmax over a run-time number of rows: one run-time loop over 16-row blocks.

``rows`` is a kernel argument (``ptoc.Scalar[ptoc.s32]``): the program loops over
``rows // 16`` blocks at run time, so its size does not depend on the tensor's height --
the 64-row and the 4096-row kernels compile to the same bundles.

    ptoc verify examples/softmax_rows.py::softmax_rows --runs 5
"""

import numpy as np

import ptoc
import ptoc.lang as pt

BLOCK, COLS, MAX_ROWS = 16, 64, 4096


def make_softmax_rows(max_rows: int = MAX_ROWS) -> ptoc.Kernel:
    """The kernel for tensors of ``max_rows`` rows (any multiple of 16 up to it runs)."""

    @ptoc.kernel
    def softmax_rows(
        x: ptoc.Tensor[ptoc.fp32, max_rows, COLS],
        out: ptoc.Tensor[ptoc.fp32, max_rows, COLS],
        rows: ptoc.Scalar[ptoc.s32],
    ):
        for r in pt.range(0, rows, BLOCK):  # a loop of the program, not of the trace
            t = pt.load(x, rows=(r, BLOCK))
            e = pt.exp(t - pt.row_max(t))
            pt.store(out, e / pt.row_sum(e), rows=(r, BLOCK))

    @softmax_rows.inputs
    def _inputs(rng: np.random.Generator) -> dict:
        """A random height (a multiple of the block) and its rows."""
        rows = int(rng.integers(1, max_rows // BLOCK + 1)) * BLOCK
        return {"x": rng.standard_normal((max_rows, COLS)).astype(np.float32), "rows": rows}

    return softmax_rows


softmax_rows = make_softmax_rows()


if __name__ == "__main__":
    prog = ptoc.compile(softmax_rows)
    print(prog.stats().text())
    x = np.random.default_rng(0).standard_normal((MAX_ROWS, COLS)).astype(np.float32)
    got = ptoc.verify(softmax_rows, x=x, rows=1024)
    print(f"bit-exact over 1024 rows in {got.bundles} executed bundles")
