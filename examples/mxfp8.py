"""MXFP8 quantization (OCP microscaling): every 32 consecutive values of a row share
one power-of-two scale (an e8m0 exponent) and are stored as e4m3 elements.

``pt.quantize_mx`` is a compound interface (pto-isa A5 TQUANT MXFP8); its results are
the elements, the shared exponents, and the per-group amax and scaling factors.

    ptoc verify examples/mxfp8.py::mxfp8
"""

import ptoc
import ptoc.lang as pt

ROWS, COLS = 8, 64
GROUPS = COLS // 32


@ptoc.kernel
def mxfp8(
    x: ptoc.Tensor[ptoc.fp32, ROWS, COLS],
    elements: ptoc.Tensor[ptoc.e4m3, ROWS, COLS],
    scales: ptoc.Tensor[ptoc.e8m0, ROWS, GROUPS],
):
    mx = pt.quantize_mx(pt.load(x))
    pt.store(elements, mx.elements)
    pt.store(scales, mx.scales)
