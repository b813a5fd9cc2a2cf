"""Per-token (per-row) symmetric int8 quantization.

Each row gets its own scale so that its largest magnitude maps to 127:

    q[r, :]     = sat(rne(x[r, :] * (127 / max|x[r, :]|)))      int8
    scale[r, 0] = max|x[r, :]| / 127                            fp32, to dequantize

``quant_int8`` writes it with direct operations (a row-broadcast multiply, then
TQUANT); ``quant_int8_rows`` calls the compound ``pt.quantize_rows``, which computes
the same bits in one interface (pto-isa TQUANT INT8_SYM with per-row parameters).

    ptoc verify examples/quant_int8.py::quant_int8 --runs 5
"""

import ptoc
import ptoc.lang as pt

TOKENS, HIDDEN = 16, 64

X = ptoc.Tensor[ptoc.fp32, TOKENS, HIDDEN]
Q = ptoc.Tensor[ptoc.s8, TOKENS, HIDDEN]
Scale = ptoc.Tensor[ptoc.fp32, TOKENS, 1]


@ptoc.kernel
def quant_int8(x: X, q: Q, scale: Scale):
    t = pt.load(x)
    amax = pt.row_max(pt.abs(t))  # (16, 1)
    mult = 127.0 / amax  # TEXPANDS 127, then TDIV
    pt.store(q, pt.quantize(t * mult, ptoc.s8))  # TROWEXPANDMUL, TQUANT (rne, saturating)
    pt.store(scale, amax / 127.0)  # TDIVS


@ptoc.kernel
def quant_int8_rows(x: X, q: Q, scale: Scale):
    t = pt.load(x)
    amax = pt.row_max(pt.abs(t))
    pt.store(q, pt.quantize_rows(t, 127.0 / amax, dtype=ptoc.s8))  # compound
    pt.store(scale, amax / 127.0)
