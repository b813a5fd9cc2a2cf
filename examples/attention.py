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
"""

import math

import ptoc
import ptoc.lang as pt

QUERIES, KEYS, BLOCK = 32, 128, 32


def _attention(q, k, v, o, dim: int) -> None:  # type: ignore[no-untyped-def]
    scale = 1.0 / math.sqrt(dim)
    qt = pt.load(q)
    m = row_sum = acc = None
    for j in range(0, KEYS, BLOCK):
        kj = pt.load(k, rows=(j, BLOCK))
        vj = pt.load(v, rows=(j, BLOCK))
        s = pt.matmul(qt, kj, transpose_b=True) * scale  # (QUERIES, BLOCK) FP32
        m_new = pt.row_max(s) if m is None else pt.maximum(m, pt.row_max(s))
        p = pt.exp(s - m_new)
        if m is None:
            row_sum = pt.row_sum(p)
            acc = pt.matmul(pt.cast(p, ptoc.fp16), vj)
        else:
            alpha = pt.exp(m - m_new)
            row_sum = row_sum * alpha + pt.row_sum(p)
            acc = pt.matmul(pt.cast(p, ptoc.fp16), vj, acc=acc * alpha)
        m = m_new
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


if __name__ == "__main__":
    for kern in (attention_d64, attention_d128):
        print(ptoc.compile(kern).stats().text())
        ptoc.verify(kern)
        print(kern.name, "bit-exact")
