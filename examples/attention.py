"""A flash-attention forward block: ``O = softmax(Q K^T / sqrt(d)) V`` for one query
block, with the online softmax over key/value chunks (FlashAttention-2's recurrence).

Per chunk j of ``BLOCK`` keys: ``S = (Q K_j^T) * scale`` on the CUBE engine (K_j is
transposed with TTRANS first: the CUBE's TransB applies only to Shared operands), then
on the vector engine the running row maximum ``m``, ``P = exp(S - m_new)``, the running
row sum ``l = l * exp(m - m_new) + rowsum(P)``, and the output accumulator is rescaled
and given to the CUBE as the accumulator of ``P V_j`` (TMATMUL_ACC from it). At the end
``O = acc / l``. Q, K, V are FP16; scores, P's sums and O accumulate in FP32; P is
rounded to FP16 for the PV product.

    ptoc verify examples/attention.py::attention_d64
    ptoc verify examples/attention.py::attention_d128

``attention_loop_d64`` and ``attention_loop_d128`` run the same recurrence as a loop of
the program over a run-time number of keys (``keys``, a multiple of ``BLOCK`` up to
``MAX_KEYS``): the first chunk initialises ``m``, ``l`` and the accumulator, and one
compiled body updates them for every further chunk, so the program's size does not depend
on the sequence length:

    ptoc verify examples/attention.py::attention_loop_d64 --runs 4
"""

import math

import numpy as np

import ptoc
import ptoc.lang as pt

QUERIES, KEYS, BLOCK = 32, 128, 32


def _first(qt, kj, vj, scale: float):  # type: ignore[no-untyped-def]
    """The first chunk: the row maximum, row sum and accumulator of its scores."""
    s = pt.matmul(qt, kj, transpose_b=True) * scale  # (QUERIES, BLOCK) FP32
    m = pt.row_max(s)
    p = pt.exp(s - m)
    return m, pt.row_sum(p), pt.matmul(pt.cast(p, ptoc.fp16), vj)


def _next(qt, kj, vj, scale: float, m, row_sum, acc):  # type: ignore[no-untyped-def]
    """A further chunk: the online-softmax update of ``m``, ``row_sum`` and ``acc``."""
    s = pt.matmul(qt, kj, transpose_b=True) * scale
    m_new = pt.maximum(m, pt.row_max(s))
    p = pt.exp(s - m_new)
    alpha = pt.exp(m - m_new)
    row_sum = row_sum * alpha + pt.row_sum(p)
    return m_new, row_sum, pt.matmul(pt.cast(p, ptoc.fp16), vj, acc=acc * alpha)


def _attention(q, k, v, o, dim: int) -> None:  # type: ignore[no-untyped-def]
    scale = 1.0 / math.sqrt(dim)
    qt = pt.load(q)
    m, row_sum, acc = _first(
        qt, pt.load(k, rows=(0, BLOCK)), pt.load(v, rows=(0, BLOCK)), scale
    )
    for j in range(BLOCK, KEYS, BLOCK):  # unrolled while tracing
        kj, vj = pt.load(k, rows=(j, BLOCK)), pt.load(v, rows=(j, BLOCK))
        m, row_sum, acc = _next(qt, kj, vj, scale, m, row_sum, acc)
    pt.store(o, acc / row_sum)


@ptoc.kernel
def attention_d64(
    q: ptoc.Tensor[ptoc.fp16, QUERIES, 64],
    k: ptoc.Tensor[ptoc.fp16, KEYS, 64],
    v: ptoc.Tensor[ptoc.fp16, KEYS, 64],
    o: ptoc.Tensor[ptoc.fp32, QUERIES, 64],
):
    _attention(q, k, v, o, 64)


@ptoc.kernel
def attention_d128(
    q: ptoc.Tensor[ptoc.fp16, QUERIES, 128],
    k: ptoc.Tensor[ptoc.fp16, KEYS, 128],
    v: ptoc.Tensor[ptoc.fp16, KEYS, 128],
    o: ptoc.Tensor[ptoc.fp32, QUERIES, 128],
):
    _attention(q, k, v, o, 128)


#: the longest key sequence the loop kernels take (the tensors' height)
MAX_KEYS = 512


def _attention_loop(q, k, v, o, keys, dim: int) -> None:  # type: ignore[no-untyped-def]
    scale = 1.0 / math.sqrt(dim)
    qt = pt.load(q)
    m, row_sum, acc = _first(
        qt, pt.load(k, rows=(0, BLOCK)), pt.load(v, rows=(0, BLOCK)), scale
    )
    for j in pt.range(BLOCK, keys, BLOCK):  # a loop of the program: m, row_sum, acc carried
        kj, vj = pt.load(k, rows=(j, BLOCK)), pt.load(v, rows=(j, BLOCK))
        m, row_sum, acc = _next(qt, kj, vj, scale, m, row_sum, acc)
    pt.store(o, acc / row_sum)


@ptoc.kernel
def attention_loop_d64(
    q: ptoc.Tensor[ptoc.fp16, QUERIES, 64],
    k: ptoc.Tensor[ptoc.fp16, MAX_KEYS, 64],
    v: ptoc.Tensor[ptoc.fp16, MAX_KEYS, 64],
    o: ptoc.Tensor[ptoc.fp32, QUERIES, 64],
    keys: ptoc.Scalar[ptoc.s32],
):
    _attention_loop(q, k, v, o, keys, 64)


@ptoc.kernel
def attention_loop_d128(
    q: ptoc.Tensor[ptoc.fp16, QUERIES, 128],
    k: ptoc.Tensor[ptoc.fp16, MAX_KEYS, 128],
    v: ptoc.Tensor[ptoc.fp16, MAX_KEYS, 128],
    o: ptoc.Tensor[ptoc.fp32, QUERIES, 128],
    keys: ptoc.Scalar[ptoc.s32],
):
    _attention_loop(q, k, v, o, keys, 128)


def _loop_inputs(dim: int):  # type: ignore[no-untyped-def]
    def inputs(rng: np.random.Generator) -> dict:
        return {
            "q": rng.standard_normal((QUERIES, dim)).astype(np.float16),
            "k": rng.standard_normal((MAX_KEYS, dim)).astype(np.float16),
            "v": rng.standard_normal((MAX_KEYS, dim)).astype(np.float16),
            "keys": int(rng.integers(1, MAX_KEYS // BLOCK + 1)) * BLOCK,
        }

    return inputs


attention_loop_d64.inputs(_loop_inputs(64))
attention_loop_d128.inputs(_loop_inputs(128))


if __name__ == "__main__":
    for kern in (attention_d64, attention_d128, attention_loop_d64, attention_loop_d128):
        print(ptoc.compile(kern).stats().text())
        ptoc.verify(kern)
        print(kern.name, "bit-exact")
