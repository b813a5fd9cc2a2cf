"""Matrix products on the CUBE engine: an FP16 GEMM with FP32 accumulation over a K loop,
and an int8 GEMM with S32 accumulation.

``C = A @ B``: the compiler splits M into blocks of at most 32 rows, N into blocks that
fit one CUBE destination and K into chunks; the first chunk of each block is a TMATMUL,
every further chunk a TMATMUL_ACC that accumulates into the previous chunk's result. By
DECISIONS D11 (one FP32 rounding per K step, in increasing K order) the chain gives the
same bits as one fold over all of K, and ``ptoc verify`` checks exactly that:

    ptoc verify examples/gemm.py::gemm_fp16
    ptoc verify examples/gemm.py::gemm_int8

``gemm_fp16_loop`` is the same product as loops of the program (``pt.range``): over
32 x 64 blocks of C, and in each block over K in chunks of 64 -- the first chunk a
TMATMUL, the rest TMATMUL_ACC into the carried accumulator. Each body is compiled once,
so the program's size does not depend on M, N or K; the chain, and so the bits, are the
ones ``gemm_fp16`` computes:

    ptoc verify examples/gemm.py::gemm_fp16_loop
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


#: the block of C one iteration of the run-time block loops computes, and the depth of
#: one chunk of the run-time K loop
BM, BN, KC = 32, 64, 64


def make_gemm_fp16_loop(m_dim: int = M, n_dim: int = N, k_dim: int = K) -> ptoc.Kernel:
    """The loop GEMM for (m_dim, k_dim) x (k_dim, n_dim) FP16 matrices (multiples of BM,
    BN and KC)."""

    @ptoc.kernel
    def gemm_fp16_loop(
        a: ptoc.Tensor[ptoc.fp16, m_dim, k_dim],
        b: ptoc.Tensor[ptoc.fp16, k_dim, n_dim],
        c: ptoc.Tensor[ptoc.fp32, m_dim, n_dim],
    ):
        for m in pt.range(0, m_dim, BM):
            for n in pt.range(0, n_dim, BN):
                a_0 = pt.load(a, rows=(m, BM), cols=(0, KC))
                acc = a_0 @ pt.load(b, rows=(0, KC), cols=(n, BN))  # first chunk: TMATMUL
                for k in pt.range(KC, k_dim, KC):  # acc is carried from chunk to chunk
                    a_k = pt.load(a, rows=(m, BM), cols=(k, KC))
                    acc = pt.matmul(a_k, pt.load(b, rows=(k, KC), cols=(n, BN)), acc=acc)
                pt.store(c, acc, rows=(m, BM), cols=(n, BN))

    return gemm_fp16_loop


gemm_fp16_loop = make_gemm_fp16_loop()


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
