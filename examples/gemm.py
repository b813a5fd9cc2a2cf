"""Matrix products on the CUBE engine: an FP16 GEMM with FP32 accumulation over a K loop,
and an int8 GEMM with S32 accumulation.

``C = A @ B``: the compiler splits M into blocks of at most 32 rows, N into blocks that
fit one CUBE destination and K into chunks; the first chunk of each block is a TMATMUL,
every further chunk a TMATMUL_ACC that accumulates into the previous chunk's result. By
DECISIONS D11 (one FP32 rounding per K step, in increasing K order) the chain gives the
same bits as one fold over all of K, and ``ptoc verify`` checks exactly that:

    ptoc verify examples/gemm.py::gemm_fp16
    ptoc verify examples/gemm.py::gemm_int8
"""

import ptoc
import ptoc.lang as pt

M, N, K = 128, 128, 512


@ptoc.kernel
def gemm_fp16(
    a: ptoc.Tensor[ptoc.fp16, M, K],
    b: ptoc.Tensor[ptoc.fp16, K, N],
    c: ptoc.Tensor[ptoc.fp32, M, N],
):
    pt.store(c, pt.load(a) @ pt.load(b))  # FP16 x FP16 -> FP32 (TMATMUL, TMATMUL_ACC)


MI, NI, KI = 64, 64, 256


@ptoc.kernel
def gemm_int8(
    a: ptoc.Tensor[ptoc.s8, MI, KI],
    b: ptoc.Tensor[ptoc.s8, KI, NI],
    c: ptoc.Tensor[ptoc.s32, MI, NI],
):
    pt.store(c, pt.matmul(pt.load(a), pt.load(b)))  # exact, wrapping modulo 2**32


if __name__ == "__main__":
    prog = ptoc.compile(gemm_fp16)
    print(prog.stats().text())
    got = ptoc.verify(gemm_fp16)
    print("gemm_fp16 bit-exact;", ptoc.verify(gemm_int8) and "gemm_int8 bit-exact")
