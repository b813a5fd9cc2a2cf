"""Example kernels written with the tile builder, with input generators.

Each ``KERNELS`` entry builds a module and random inputs; the end-to-end tests compile
it for several machines and compare the executor with the tile reference bit for bit.
"""

from __future__ import annotations

from collections.abc import Callable

import ml_dtypes
import numpy as np
from xdsl.dialects.builtin import ModuleOp

from ptoc.dialects.modes import CMode, RMode
from ptoc.testing import KernelBuilder

Inputs = dict[str, np.ndarray]


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def elementwise_chain(dtype: str) -> Callable[[int], tuple[ModuleOp, Inputs]]:
    """``((a + b) * a - b)`` then max/min with scalars, in ``dtype``."""

    def build(seed: int) -> tuple[ModuleOp, Inputs]:
        kb = KernelBuilder(f"chain_{dtype.lower()}", pes=2)
        a_t = kb.tensor("a", dtype, (16, 64))
        b_t = kb.tensor("b", dtype, (16, 64))
        out = kb.tensor("out", dtype, (16, 64))
        a = kb.load(a_t, (8, 64), pe=(8, 0))
        b = kb.load(b_t, (8, 64), pe=(8, 0))
        s = kb.add(a, b)
        p = kb.mul(s, a) if dtype not in ("S8", "U8") else kb.add(s, a)
        d = kb.sub(p, b)
        d = kb.maxs(d, 3 if dtype[0] in "SU" else 0.5)
        d = kb.mins(d, 100 if dtype[0] in "SU" else 7.25)
        d = kb.max(d, a)
        kb.store(out, d, pe=(8, 0))
        return kb.finish(), {
            "a": _values(dtype, (16, 64), seed),
            "b": _values(dtype, (16, 64), seed + 1),
        }

    return build


def _values(dtype: str, shape: tuple[int, int], seed: int) -> np.ndarray:
    rng = _rng(seed)
    if dtype in ("FP32", "FP16", "BF16"):
        c = {"FP32": np.float32, "FP16": np.float16, "BF16": ml_dtypes.bfloat16}[dtype]
        return (rng.standard_normal(shape) * 3).astype(c)
    c = np.dtype(dtype.replace("S", "int").replace("U", "uint"))
    ii = np.iinfo(c)
    return rng.integers(ii.min, ii.max, size=shape, endpoint=True, dtype=c)


def softmax(seed: int) -> tuple[ModuleOp, Inputs]:
    """Row softmax on 4 PEs: TROWMAX, TROWEXPANDSUB, TEXP, TROWSUM, TROWEXPANDDIV."""
    kb = KernelBuilder("softmax", pes=4)
    x = kb.tensor("x", "FP32", (32, 64))
    out = kb.tensor("out", "FP32", (32, 64))
    t = kb.load(x, (8, 64), pe=(8, 0))
    t = kb.rowexpandsub(t, kb.rowmax(t))
    e = kb.exp(t)
    kb.store(out, kb.rowexpanddiv(e, kb.rowsum(e)), pe=(8, 0))
    return kb.finish(), {"x": _values("FP32", (32, 64), seed)}


def layernorm(seed: int) -> tuple[ModuleOp, Inputs]:
    """``(x - mean) / sqrt(var + eps) * gamma + beta`` per row, gamma/beta per column."""
    kb = KernelBuilder("layernorm", pes=1)
    x_t = kb.tensor("x", "FP32", (16, 128))
    g_t = kb.tensor("gamma", "FP32", (1, 128))
    b_t = kb.tensor("beta", "FP32", (1, 128))
    out = kb.tensor("out", "FP32", (16, 128))
    x = kb.load(x_t, (16, 128))
    mean = kb.muls(kb.rowsum(x), 1.0 / 128)
    xc = kb.rowexpandsub(x, mean)
    var = kb.muls(kb.rowsum(kb.mul(xc, xc)), 1.0 / 128)
    rstd = kb.rsqrt(kb.adds(var, 1e-5))
    y = kb.rowexpandmul(xc, rstd)
    y = kb.colexpandmul(y, kb.load(g_t, (1, 128)))
    y = kb.colexpandadd(y, kb.load(b_t, (1, 128)))
    kb.store(out, y)
    return kb.finish(), {
        "x": _values("FP32", (16, 128), seed),
        "gamma": _values("FP32", (1, 128), seed + 1),
        "beta": _values("FP32", (1, 128), seed + 2),
    }


def quant_rows(seed: int) -> tuple[ModuleOp, Inputs]:
    """Per-row TQUANT: each row its own multiplier and zero point, then dequantized."""
    kb = KernelBuilder("quant_rows", pes=1)
    x_t = kb.tensor("x", "FP32", (8, 64))
    q_t = kb.tensor("q", "S8", (8, 64))
    d_t = kb.tensor("deq", "FP32", (8, 64))
    for r in range(8):
        row = kb.load(x_t, (1, 64), (r, 0))
        mult, zp = 10.0 + 7.5 * r, r - 4
        q = kb.quant(row, "S8", mult, zp, RMode.RNE if r % 2 else None, sat=r != 3)
        kb.store(q_t, q, (r, 0))
        kb.store(d_t, kb.dequant(q, 1.0 / mult, zp), (r, 0))
    return kb.finish(), {"x": _values("FP32", (8, 64), seed)}


def sort_merge(seed: int) -> tuple[ModuleOp, Inputs]:
    """TSORT two rows (with indices), then TMRGSORT them into one sorted row."""
    kb = KernelBuilder("sort_merge", pes=1)
    x_t = kb.tensor("x", "FP32", (2, 32))
    v_t = kb.tensor("values", "FP32", (2, 32))
    i_t = kb.tensor("indices", "U32", (2, 32))
    m_t = kb.tensor("merged", "FP32", (1, 64))
    x = kb.load(x_t, (2, 32))
    vals, idx = kb.sort(x, width=32, descending=True)
    kb.store(v_t, vals)
    kb.store(i_t, idx)
    a = kb.load(v_t, (1, 32), (0, 0))
    b = kb.load(v_t, (1, 32), (1, 0))
    kb.store(m_t, kb.mrgsort(a, b, descending=True))
    return kb.finish(), {"x": _values("FP32", (2, 32), seed)}


def gather_scatter(seed: int) -> tuple[ModuleOp, Inputs]:
    """TGATHER rows by an index tile, then TSCATTER them back under a permutation."""
    kb = KernelBuilder("gather_scatter", pes=1)
    v_t = kb.tensor("values", "FP32", (16, 32))
    i_t = kb.tensor("index", "S32", (8, 32))
    p_t = kb.tensor("perm", "S32", (8, 32))
    g_t = kb.tensor("gathered", "FP32", (8, 32))
    s_t = kb.tensor("scattered", "FP32", (12, 32))
    v = kb.load(v_t, (16, 32))
    g = kb.gather(v, kb.load(i_t, (8, 32)))
    kb.store(g_t, g)
    kb.store(s_t, kb.scatter(g, kb.load(p_t, (8, 32)), 12))
    rng = _rng(seed)
    perm = np.stack([rng.permutation(12)[:8] for _ in range(32)], axis=1).astype(np.int32)
    return kb.finish(), {
        "values": _values("FP32", (16, 32), seed),
        "index": rng.integers(0, 16, size=(8, 32), dtype=np.int32),
        "perm": perm,
    }


def transpose(seed: int) -> tuple[ModuleOp, Inputs]:
    """TTRANS of a 16x32 FP16 tile (and back, added to the original)."""
    kb = KernelBuilder("transpose", pes=1)
    x_t = kb.tensor("x", "FP16", (16, 32))
    t_t = kb.tensor("xt", "FP16", (32, 16))
    r_t = kb.tensor("roundtrip", "FP16", (16, 32))
    x = kb.load(x_t, (16, 32))
    xt = kb.trans(x)
    kb.store(t_t, xt)
    kb.store(r_t, kb.add(kb.trans(xt), x))
    return kb.finish(), {"x": _values("FP16", (16, 32), seed)}


def partials(seed: int) -> tuple[ModuleOp, Inputs]:
    """TPARTADD/MUL/MAX/MIN of a full 8x32 tile and a 5x20 corner."""
    kb = KernelBuilder("partials", pes=1)
    a_t = kb.tensor("a", "FP32", (8, 32))
    b_t = kb.tensor("b", "FP32", (8, 32))
    outs = [kb.tensor(f"out_{k}", "FP32", (8, 32)) for k in ("add", "mul", "max", "min")]
    a = kb.load(a_t, (8, 32))
    b = kb.load(b_t, (5, 20))
    for out, kind in zip(outs, ("add", "mul", "max", "min"), strict=True):
        kb.store(out, kb.part(kind, b, a) if kind == "mul" else kb.part(kind, a, b))
    return kb.finish(), {
        "a": _values("FP32", (8, 32), seed),
        "b": _values("FP32", (8, 32), seed + 1),
    }


def strided(seed: int) -> tuple[ModuleOp, Inputs]:
    """Loads and stores with offsets, row steps and a padded tensor stride."""
    kb = KernelBuilder("strided", pes=1)
    x_t = kb.tensor("x", "S16", (32, 48), stride=64)
    out = kb.tensor("out", "S16", (20, 40), stride=40)
    even = kb.load(x_t, (8, 16), (0, 4), step=2)
    odd = kb.load(x_t, (8, 16), (1, 20), step=2)
    kb.store(out, kb.xor(even, odd), (2, 3), step=2)
    kb.store(out, kb.adds(odd, -7), (3, 21))
    return kb.finish(), {"x": _values("S16", (32, 48), seed)}


def split_pes(seed: int) -> tuple[ModuleOp, Inputs]:
    """A tensor split over 4 PEs by rows and columns; every PE adds its two blocks."""
    kb = KernelBuilder("split_pes", pes=4)
    x_t = kb.tensor("x", "BF16", (16, 128))
    out = kb.tensor("out", "BF16", (16, 64))
    lo = kb.load(x_t, (4, 64), (0, 0), pe=(4, 0))
    hi = kb.load(x_t, (4, 64), (0, 64), pe=(4, 0))
    kb.store(out, kb.add(lo, kb.muls(hi, 0.5)), pe=(4, 0))
    return kb.finish(), {"x": _values("BF16", (16, 128), seed)}


def compare_select(seed: int) -> tuple[ModuleOp, Inputs]:
    """TCMP / TCMPS predicates driving TSEL / TSELS (a ReLU-like clamp)."""
    kb = KernelBuilder("compare_select", pes=1)
    a_t = kb.tensor("a", "FP32", (8, 32))
    b_t = kb.tensor("b", "FP32", (8, 32))
    out = kb.tensor("out", "FP32", (8, 32))
    a, b = kb.load(a_t, (8, 32)), kb.load(b_t, (8, 32))
    bigger = kb.sel(kb.cmp(CMode.GT, a, b), a, b)
    kb.store(out, kb.sel(kb.cmp(CMode.LT, bigger, 0.0), bigger, 0.0))
    return kb.finish(), {
        "a": _values("FP32", (8, 32), seed),
        "b": _values("FP32", (8, 32), seed + 1),
    }


def big_tile(seed: int) -> tuple[ModuleOp, Inputs]:
    """A 512x64 FP32 tile (128 KiB per PE): legalize splits it into 64 KiB row pieces."""
    kb = KernelBuilder("big_tile", pes=1)
    x_t = kb.tensor("x", "FP32", (512, 64))
    out = kb.tensor("out", "FP32", (512, 64))
    cmax = kb.tensor("colmax", "FP32", (1, 64))
    x = kb.load(x_t, (512, 64))
    y = kb.rowexpandsub(x, kb.rowmax(x))
    kb.store(out, kb.exp(y))
    kb.store(cmax, kb.colmax(y))
    return kb.finish(), {"x": _values("FP32", (512, 64), seed)}


KERNELS: dict[str, Callable[[int], tuple[ModuleOp, Inputs]]] = {
    **{
        f"chain_{d.lower()}": elementwise_chain(d)
        for d in ("FP32", "FP16", "BF16", "S32", "S16", "U8")
    },
    "softmax": softmax,
    "layernorm": layernorm,
    "quant_rows": quant_rows,
    "sort_merge": sort_merge,
    "gather_scatter": gather_scatter,
    "transpose": transpose,
    "partials": partials,
    "strided": strided,
    "split_pes": split_pes,
    "compare_select": compare_select,
    "big_tile": big_tile,
}


def insert_fill_histogram(seed: int) -> tuple[ModuleOp, Inputs]:
    """TINSERT a block into a tile, TFILLPAD a narrow tile wider, THISTOGRAM of bytes."""
    kb = KernelBuilder("insert_fill_histogram", pes=1)
    a_t = kb.tensor("a", "FP16", (8, 32))
    b_t = kb.tensor("b", "FP16", (3, 5))
    ins_t = kb.tensor("inserted", "FP16", (8, 32))
    pad_t = kb.tensor("padded", "FP16", (8, 32))
    h_t = kb.tensor("h", "U16", (4, 64))
    f_t = kb.tensor("f", "U8", (4, 1))
    hist_t = kb.tensor("hist", "U32", (4, 256))
    a = kb.load(a_t, (8, 32))
    b = kb.load(b_t, (3, 5))
    kb.store(ins_t, kb.insert(a, b, (2, 7)))
    kb.store(pad_t, kb.fillpad(kb.load(a_t, (5, 20)), -1.5, (8, 32)))
    kb.store(hist_t, kb.histogram(kb.load(h_t, (4, 64)), kb.load(f_t, (4, 1)), 0))
    rng = _rng(seed)
    return kb.finish(), {
        "a": _values("FP16", (8, 32), seed),
        "b": _values("FP16", (3, 5), seed + 1),
        "h": rng.integers(0, 4 * 256, size=(4, 64), dtype=np.uint16),
        "f": rng.integers(0, 4, size=(4, 1), dtype=np.uint8),
    }


KERNELS["insert_fill_histogram"] = insert_fill_histogram
