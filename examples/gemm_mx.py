"""An MXFP8 GEMM: activations quantized on the fly, weights stored as MXFP8.

``x`` (FP32) is quantized to MXFP8 along its rows (``pt.quantize_mx``: every 32
consecutive values share one E8M0 exponent, elements are E4M3), the weights are E4M3
with one E8M0 scale per 32 rows of each column, and ``pt.matmul_mx`` multiplies them on
the CUBE engine (TMATMUL_MX, then TMATMUL_MX_ACC per further K chunk): every product is
scaled by the exact powers of two of its two blocks before it enters the FP32 fold
(DECISIONS D11).

    ptoc verify examples/gemm_mx.py::gemm_mxfp8
"""

import ptoc
import ptoc.lang as pt

M, N, K = 32, 64, 256
BLOCKS = K // 32


@ptoc.kernel
def gemm_mxfp8(
    x: ptoc.Tensor[ptoc.fp32, M, K],
    w: ptoc.Tensor[ptoc.e4m3, K, N],
    w_scales: ptoc.Tensor[ptoc.e8m0, BLOCKS, N],
    out: ptoc.Tensor[ptoc.fp32, M, N],
):
    q = pt.quantize_mx(pt.load(x))  # elements (M, K) e4m3, scales (M, K / 32) e8m0
    pt.store(out, pt.matmul_mx(q.elements, q.scales, pt.load(w), pt.load(w_scales)))


def inputs(seed: int = 0) -> dict:
    """Moderate inputs: normal activations, E4M3 weights near 1 with scales 2**-2..2**2."""
    import ml_dtypes
    import numpy as np

    rng = np.random.default_rng(seed)
    return {
        "x": rng.standard_normal((M, K)).astype(np.float32),
        "w": rng.standard_normal((K, N)).astype(ml_dtypes.float8_e4m3fn),
        "w_scales": (2.0 ** rng.integers(-2, 3, (BLOCKS, N))).astype(ml_dtypes.float8_e8m0fnu),
    }


if __name__ == "__main__":
    print(ptoc.compile(gemm_mxfp8).stats().text())
    ptoc.verify(gemm_mxfp8, **inputs())
    print("bit-exact")
