"""A feed-forward block: ``y = silu(x @ w1) @ w2`` with ``silu(h) = h / (1 + exp(-h))``.

The two matrix products run on the CUBE engine (FP16 inputs, FP32 accumulation); the
SiLU gate runs on the vector engine in FP32 between them, and its result is rounded to
FP16 for the second product. The hidden activation leaves the CUBE through GM (TSTORE
M322ND, then an ordinary TLOAD) and returns through the ND2M32 load conversion, because
no TMOV converts into or out of a CUBE layout.

    ptoc verify examples/ffn.py::ffn
"""

import ptoc
import ptoc.lang as pt

TOKENS, MODEL, HIDDEN = 32, 64, 128


@ptoc.kernel
def ffn(
    x: ptoc.Tensor[ptoc.fp16, TOKENS, MODEL],
    w1: ptoc.Tensor[ptoc.fp16, MODEL, HIDDEN],
    w2: ptoc.Tensor[ptoc.fp16, HIDDEN, MODEL],
    y: ptoc.Tensor[ptoc.fp32, TOKENS, MODEL],
):
    h = pt.load(x) @ pt.load(w1)  # (32, 128) FP32
    gate = h / (pt.exp(-h) + 1.0)  # SiLU on the vector engine
    pt.store(y, pt.cast(gate, ptoc.fp16) @ pt.load(w2))


if __name__ == "__main__":
    print(ptoc.compile(ffn).stats().text())
    ptoc.verify(ffn)
    print("bit-exact")
