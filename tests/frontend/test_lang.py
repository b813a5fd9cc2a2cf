"""``ptoc.lang``: how Python expressions map onto tile ops, and that the mapping keeps
numpy's meaning (checked against numpy float32 arithmetic, which is IEEE RNE)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import ptoc

from .helpers import op_names, write_kernels

KERNEL = """\
A = ptoc.Tensor[ptoc.fp32, 8, 64]

@ptoc.kernel
def k(a: A, col: ptoc.Tensor[ptoc.fp32, 8, 1], row: ptoc.Tensor[ptoc.fp32, 1, 64], out: A):
    a, col, row = pt.load(a), pt.load(col), pt.load(row)
    pt.store(out, {expr})
"""

CASES = [
    # expression, the ops it becomes (after the three loads, before the store), numpy
    ("a + a", ["tile.add"], lambda a, c, r: a + a),
    ("a - col", ["tile.rowexpandsub"], lambda a, c, r: a - c),
    ("a / row", ["tile.colexpanddiv"], lambda a, c, r: a / r),
    ("col * a", ["tile.rowexpandmul"], lambda a, c, r: c * a),
    ("col - a", ["tile.rowexpand", "tile.sub"], lambda a, c, r: c - a),
    ("row / a", ["tile.colexpand", "tile.div"], lambda a, c, r: r / a),
    ("col + row", ["tile.rowexpand", "tile.colexpand", "tile.add"], lambda a, c, r: c + r),
    ("a * 0.5", ["tile.muls"], lambda a, c, r: a * np.float32(0.5)),
    ("3.0 * a", ["tile.muls"], lambda a, c, r: np.float32(3.0) * a),
    ("1.0 - a", ["tile.full", "tile.sub"], lambda a, c, r: np.float32(1.0) - a),
    ("2.0 / a", ["tile.full", "tile.div"], lambda a, c, r: np.float32(2.0) / a),
    ("-a", ["tile.neg"], lambda a, c, r: -a),
    ("abs(a)", ["tile.abs"], lambda a, c, r: np.abs(a)),
    ("pt.maximum(a, col)", ["tile.rowexpandmax"], lambda a, c, r: np.maximum(a, c)),
    ("pt.minimum(0.0, a)", ["tile.mins"], lambda a, c, r: np.minimum(a, np.float32(0))),
    ("pt.where(a > col, a, 0.0)", ["tile.rowexpand", "tile.cmp", "tile.sels"],
     lambda a, c, r: np.where(a > c, a, np.float32(0))),
    ("pt.where(a < 0.0, -a, a)", ["tile.cmps", "tile.neg", "tile.sel"],
     lambda a, c, r: np.where(a < 0, -a, a)),
    ("pt.fma(a, col, row)", ["tile.rowexpand", "tile.colexpand", "tile.fma"], None),
    ("a[2:6, 8:24].T.T", ["tile.extract", "tile.trans", "tile.trans"], None),
]  # fmt: skip


@pytest.mark.parametrize(("expr", "ops", "oracle"), CASES, ids=[c[0] for c in CASES])
def test_expression_mapping_and_meaning(
    tmp_path: Path, expr: str, ops: list[str], oracle
) -> None:
    body = KERNEL.format(expr=expr)
    if "a[2:6" in expr:  # the sub-tile is stored into a matching tensor
        body = body.replace("out: A", "out: ptoc.Tensor[ptoc.fp32, 4, 16]")
    _, kernels = write_kernels(tmp_path, body)
    k = kernels["k"]
    names = op_names(k)
    assert names[:3] == ["tile.load"] * 3 and names[-1] == "tile.store"
    assert names[3:-1] == ops
    if oracle is None:
        return
    rng = np.random.default_rng(1)
    a = rng.standard_normal((8, 64)).astype(np.float32)
    c = rng.standard_normal((8, 1)).astype(np.float32)
    r = rng.standard_normal((1, 64)).astype(np.float32)
    got = ptoc.reference(k, a=a, col=c, row=r)["out"]
    want = np.broadcast_to(oracle(a, c, r), (8, 64)).astype(np.float32)
    assert got.tobytes() == np.ascontiguousarray(want).tobytes()


def test_trace_time_loops_and_conditions_unroll(tmp_path: Path) -> None:
    _, kernels = write_kernels(
        tmp_path,
        """\
        BLOCK, SCALE = 4, True
        T = ptoc.Tensor[ptoc.fp32, 16, 32]

        @ptoc.kernel
        def k(x: T, out: T):
            for r in range(0, 16, BLOCK):
                t = pt.load(x, rows=(r, BLOCK))
                if SCALE:
                    t = t * 2.0
                pt.store(out, t, row=r)
        """,
    )
    k = kernels["k"]
    assert op_names(k) == ["tile.load", "tile.muls", "tile.store"] * 4
    x = np.random.default_rng(2).standard_normal((16, 32)).astype(np.float32)
    assert np.array_equal(ptoc.reference(k, x=x)["out"], x * np.float32(2))
    ptoc.verify(k, x=x)


def test_pe_index_becomes_per_pe_base_addresses(tmp_path: Path) -> None:
    _, kernels = write_kernels(
        tmp_path,
        """\
        T = ptoc.Tensor[ptoc.fp32, 32, 64]

        @ptoc.kernel(pes=4)
        def k(x: T, out: T):
            pt.store(out, pt.exp(pt.load(x, rows=(pt.pe() * 8, 8))), row=32 - 8 - pt.pe() * 8)
        """,
    )
    k = kernels["k"]
    # a negative PE scale is refused; the reversed layout needs an explicit pe expression
    with pytest.raises(ptoc.KernelError, match="grow with the PE index"):
        k.trace()
    _, kernels = write_kernels(
        tmp_path,
        """\
        T = ptoc.Tensor[ptoc.fp32, 32, 64]

        @ptoc.kernel(pes=4)
        def k(x: T, out: T):
            pt.store(out, pt.exp(pt.load(x, rows=(pt.pe() * 8, 8))), row=pt.pe() * 8)
        """,
        name="k2.py",
    )
    k = kernels["k"]
    prog = ptoc.compile(k)
    steps = {b.tensor: b.pe_step for b in prog.abi.bindings if b.tensor}
    assert steps == {"x": 8 * 64 * 4, "out": 8 * 64 * 4}
    x = np.random.default_rng(3).standard_normal((32, 64)).astype(np.float32)
    got = ptoc.verify(prog, x=x)["out"]
    want = ptoc.reference(k, x=x)["out"]
    assert got.tobytes() == want.tobytes()
    assert np.allclose(got, np.exp(x.astype(np.float64)), rtol=1e-6)


def test_cast_quantize_and_integer_ops_verify(tmp_path: Path) -> None:
    _, kernels = write_kernels(
        tmp_path,
        """\
        @ptoc.kernel
        def k(x: ptoc.Tensor[ptoc.fp32, 8, 64], h: ptoc.Tensor[ptoc.fp16, 8, 64],
              q: ptoc.Tensor[ptoc.s8, 8, 64], i: ptoc.Tensor[ptoc.s32, 8, 64]):
            t = pt.load(x)
            pt.store(h, pt.cast(t, ptoc.fp16))
            pt.store(q, pt.quantize(t, ptoc.s8, multiplier=16.0))
            n = pt.cast(t * 100.0, ptoc.s32, rounding="rtz")
            pt.store(i, ((n & 0xFF) << 2) ^ (n >> 3))
        """,
    )
    x = (np.random.default_rng(4).standard_normal((8, 64)) * 4).astype(np.float32)
    got = ptoc.verify(kernels["k"], x=x)
    assert np.array_equal(got["h"], x.astype(np.float16))
    n = np.trunc(x * np.float32(100)).astype(np.int32)
    assert np.array_equal(got["i"], ((n & 0xFF) << 2) ^ (n >> 3))
    assert np.array_equal(
        got["q"], np.clip(np.rint(x * np.float32(16)), -128, 127).astype(np.int8)
    )
