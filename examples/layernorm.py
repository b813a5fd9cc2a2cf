"""Layer normalization over each row, with a learned scale and shift:

    y = (x - mean(x)) / sqrt(var(x) + eps) * gamma + beta

``mean`` and ``var`` are (R, 1) columns (row reductions), ``gamma`` and ``beta`` are
(1, C) rows; the operators broadcast them like numpy (TROWEXPAND* / TCOLEXPAND*).

    ptoc verify examples/layernorm.py::layernorm --runs 5
"""

import ptoc
import ptoc.lang as pt

ROWS, COLS = 8, 64
EPS = 1e-5


@ptoc.kernel
def layernorm(
    x: ptoc.Tensor[ptoc.fp32, ROWS, COLS],
    gamma: ptoc.Tensor[ptoc.fp32, 1, COLS],
    beta: ptoc.Tensor[ptoc.fp32, 1, COLS],
    out: ptoc.Tensor[ptoc.fp32, ROWS, COLS],
):
    t = pt.load(x)
    mean = pt.row_sum(t) * (1.0 / COLS)  # TROWSUM, TMULS (1/64 is exact)
    d = t - mean  # TROWEXPANDSUB
    var = pt.row_sum(d * d) * (1.0 / COLS)
    inv = pt.rsqrt(var + EPS)  # TADDS, TRSQRT
    y = d * inv  # TROWEXPANDMUL
    pt.store(out, y * pt.load(gamma) + pt.load(beta))  # TCOLEXPANDMUL, TCOLEXPANDADD
