"""Differential tests: every executable operation and every legal DataType against an
independent oracle (``_progs``: Fraction arithmetic with a from-scratch rounding routine,
Python integers with explicit wrap, ``sorted`` with explicit keys, numpy FP64 for the
FP64-then-round transcendental profile of D5).

Each example drives the executor with an assembly program: operands are placed in GM
per PE and loaded with TLOAD, the operation runs, and the destination's raw bits, its
descriptor and the per-PE numeric status are compared with the oracle. Legal DataTypes
always come from the catalog (``ptoc.backend.isa.op(m).dtypes``), never from a list
spelled here.

Reduced oracles (documented): HiF8 and HiF4X2 conversions (TCVT) are checked against the
executor's own decoded value table (anchors, round trip, nearest candidate), because no
independent description of those layouts is available to the tests.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from ptoc.backend.isa import OPS, DataType, info, op
from ptoc.runtime import BundleControlFault, TileLegalityFault

from . import _progs as P
from ._progs import (
    FMTS,
    NV,
    NX,
    OF,
    REDUCED,
    RNE,
    RTZ,
    D,
    Rig,
    array_strategy,
    bits_strategy,
    block,
    dim_lines,
    iot,
    is_float,
    p2,
    rows_for,
    same,
    size_code,
    smallest_size,
    tile_bytes,
    types,
)

#: examples per (operation, DataType) case: a tenth of the profile's budget, at least 3
EX = settings(max_examples=max(3, settings.default.max_examples // 12))
EX_FEW = settings(max_examples=max(2, settings.default.max_examples // 20))

SHAPES = st.tuples(st.integers(1, 2), st.integers(1, 6))
PES = 4


def geom(dts: list[DataType], r: int, c: int) -> tuple[int, int]:
    """(Col, physical Rows) shared by every operand and the destination."""
    col = p2(c)
    return col, rows_for(dts, col, r)


def dsize(dt: DataType, rows: int, col: int) -> int:
    return size_code(tile_bytes(dt, rows, col))


def std_dims(r: int, c: int, col: int) -> str:
    return dim_lines(c, r, col if col != c else None)


def check_tile(rig: Rig, name: str, dt: DataType | None, vr: int, vc: int) -> None:
    v = rig.m.tile(name)
    assert v.dtype == dt and (v.valid_rows, v.valid_cols) == (vr, vc)
    assert v.defined.all()


# =========================================================================== oracle checks


def test_oracle_matches_numpy_and_ml_dtypes() -> None:
    """The oracle itself: decode/encode against numpy (FP32/FP16 casts from FP64) and
    ml_dtypes (BF16/FP8/FP6/FP4 from FP32), plus FP32 arithmetic against numpy."""
    import ml_dtypes

    rng = np.random.default_rng(7)
    xs = rng.standard_normal(400) * 10.0 ** rng.integers(-40, 40, 400)
    for dt, npdt in ((D.FP32, np.float32), (D.FP16, np.float16), (D.FP64, np.float64)):
        with np.errstate(all="ignore"):
            want = P.raw(xs.astype(npdt))
        got = [P.encode(dt, bool(x < 0), abs(Fraction(float(x))))[0] for x in xs]
        assert got == [int(w) for w in want]
    f32 = (rng.standard_normal(300) * 2.0 ** rng.integers(-10, 10, 300)).astype(np.float32)
    for dt, npdt in (
        (D.BF16, ml_dtypes.bfloat16),
        (D.E5M2, ml_dtypes.float8_e5m2),
        (D.E4M3, ml_dtypes.float8_e4m3fn),
        (D.E3M2, ml_dtypes.float6_e3m2fn),
        (D.E2M3, ml_dtypes.float6_e2m3fn),
    ):
        for x in f32:
            b, fl = P.encode(dt, bool(x < 0), abs(Fraction(float(x))))
            if not fl & OF:
                assert b == int(P.raw(np.array([x]).astype(npdt))[0]), (dt, x)
    a32 = P.raw(f32[:150])
    b32 = P.raw(f32[150:])
    for op_, fn in (
        ("add", np.add),
        ("sub", np.subtract),
        ("mul", np.multiply),
        ("div", np.divide),
    ):
        with np.errstate(all="ignore"):
            want = P.raw(fn(f32[:150], f32[150:]))
        got = [P.binary(D.FP32, int(x), int(y), op_)[0] for x, y in zip(a32, b32, strict=True)]
        assert got == [int(w) for w in want], op_
    # sqrt against numpy for FP32 and FP16
    for dt, npdt in ((D.FP32, np.float32), (D.FP16, np.float16)):
        v = np.abs(rng.standard_normal(200) * 2.0 ** rng.integers(-10, 10, 200)).astype(npdt)
        got = [P.f_unary(dt, int(x), "sqrt")[0] for x in P.raw(v)]
        assert got == [int(w) for w in P.raw(np.sqrt(v))]


# =========================================================================== elementwise

BINARY = {
    "TADD": "add",
    "TSUB": "sub",
    "TMUL": "mul",
    "TDIV": "div",
    "TREM": "rem",
    "TAND": "and",
    "TOR": "or",
    "TXOR": "xor",
    "TSHL": "shl",
    "TSHR": "shr",
    "TMAX": "max",
    "TMIN": "min",
}
UNARY = {
    "TABS": "abs",
    "TNOT": "not",
    "TNEG": "neg",
    "TEXP": "exp",
    "TLOG": "log",
    "TRECIP": "recip",
    "TSQRT": "sqrt",
    "TRSQRT": "rsqrt",
    "TRELU": "relu",
}


def _div_zero(op_: str, dt: DataType, b: np.ndarray) -> bool:
    return op_ in ("div", "rem") and not is_float(dt) and bool(np.any(b == 0))


@pytest.mark.parametrize("mn, dt", [(m, d) for m in BINARY for d in types(m)])
@EX
@given(data=st.data())
def test_binary_elementwise(mn: str, dt: DataType, data: st.DataObject) -> None:
    r, c = data.draw(SHAPES)
    a = data.draw(array_strategy(dt, (PES, r, c)))
    b = data.draw(P.partner_strategy(dt, a))
    op_ = BINARY[mn]
    if op_ in ("div", "rem") and not is_float(dt) and data.draw(st.integers(0, 3)):
        b = np.where(b == 0, 1, b).astype(np.uint64)
    _run_binary(mn, dt, a, b)


def _run_binary(mn: str, dt: DataType, a: np.ndarray, b: np.ndarray) -> None:
    _, r, c = a.shape
    op_ = BINARY[mn]
    rig = Rig()
    col, rows = geom([dt], r, c)
    rig.run(rig.load(a, dt, col=col, rows=rows) + rig.load(b, dt, col=col, rows=rows))
    text = block(
        mn, dt, std_dims(r, c, col), iot("T#2", "T#1", dst="U", size=dsize(dt, rows, col))
    )
    if _div_zero(op_, dt, b):
        f = rig.fault(text, TileLegalityFault)
        assert "zero divisor" in f.rule
        return
    rig.run(text)
    want, st_ = P.elementwise(lambda x, y: P.binary(dt, x, y, op_), a, b)
    same(rig.bits(), want, f"{mn} {dt.name}")
    assert rig.status() == st_
    check_tile(rig, "U#1", dt, r, c)
    assert rig.m.tile("U#1").rows == rows


@pytest.mark.parametrize("mn, dt", [(m, d) for m in BINARY for d in types(m)])
def test_binary_special_pairs(mn: str, dt: DataType) -> None:
    """Every ordered pair of special encodings (zeros, extremes, subnormals, NaNs,
    infinities, wrap-around integers), one run per oracle status class so that a single
    element's spurious or missing flag shows; integer zero divisors become one."""
    sp = P.special_bits(dt)
    op_ = BINARY[mn]
    pairs = [(x, y) for x in sp for y in sp]
    if op_ in ("div", "rem") and not is_float(dt):
        pairs = [(x, y or 1) for x, y in pairs]
    for group in P.by_flags(pairs, lambda x, y: P.binary(dt, x, y, op_)).values():
        a, b = P.pack(group)
        _run_binary(mn, dt, a, b)


@pytest.mark.parametrize("mn, dt", [(m, d) for m in UNARY for d in types(m)])
@EX
@given(data=st.data())
def test_unary_elementwise(mn: str, dt: DataType, data: st.DataObject) -> None:
    r, c = data.draw(SHAPES)
    a = data.draw(array_strategy(dt, (PES, r, c)))
    _run_unary(mn, dt, a)


def _run_unary(mn: str, dt: DataType, a: np.ndarray) -> None:
    _, r, c = a.shape
    rig = Rig()
    col, rows = geom([dt], r, c)
    rig.run(rig.load(a, dt, col=col, rows=rows))
    rig.run(block(mn, dt, std_dims(r, c, col), iot("T#1", dst="U", size=dsize(dt, rows, col))))
    want, st_ = P.elementwise(lambda x: P.unary(dt, x, UNARY[mn]), a)
    same(rig.bits(), want, f"{mn} {dt.name}")
    assert rig.status() == st_
    check_tile(rig, "U#1", dt, r, c)


@pytest.mark.parametrize("mn, dt", [(m, d) for m in UNARY for d in types(m)])
def test_unary_special_values(mn: str, dt: DataType) -> None:
    """Every special encoding (one PE each, so each PE's status is checked separately)."""
    groups = P.by_flags([(x,) for x in P.special_bits(dt)], lambda x: P.unary(dt, x, UNARY[mn]))
    for group in groups.values():
        (a,) = P.pack(group, c=4)
        _run_unary(mn, dt, a)


CMODES = ["EQ", "NE", "LT", "GT", "LE", "GE"]


@pytest.mark.parametrize("dt", types("TCMP"))
@EX
@given(data=st.data(), cmode=st.integers(0, 5))
def test_tcmp(dt: DataType, data: st.DataObject, cmode: int) -> None:
    r, c = data.draw(SHAPES)
    a = data.draw(array_strategy(dt, (PES, r, c)))
    b = data.draw(array_strategy(dt, (PES, r, c)))
    rig = Rig()
    col, rows = geom([dt], r, c)
    rig.run(rig.load(a, dt, col=col, rows=rows) + rig.load(b, dt, col=col, rows=rows))
    datr = f"B.DATR {{NORM, FP64, Null, {CMODES[cmode]}, Default, 0, 0}}"
    size = smallest_size(None, rows, col)
    rig.run(block("TCMP", dt, datr, std_dims(r, c, col), iot("T#2", "T#1", dst="M", size=size)))
    want, st_ = P.elementwise(lambda x, y: P.compare(dt, x, y, cmode), a, b, out=np.dtype(bool))
    same(rig.bits("M#1"), want, f"TCMP {dt.name} {CMODES[cmode]}")
    assert rig.status() == st_
    v = rig.m.tile("M#1")
    assert v.predicate and (v.rows, v.cols, v.valid_rows, v.valid_cols) == (rows, col, r, c)


@pytest.mark.parametrize("dt", types("TCMP"))
def test_tcmp_special_pairs(dt: DataType) -> None:
    a, b = P.cross(dt)
    _, r, c = a.shape
    col, rows = geom([dt], r, c)
    for cmode in range(6):
        rig = Rig()
        rig.run(rig.load(a, dt, col=col, rows=rows) + rig.load(b, dt, col=col, rows=rows))
        datr = f"B.DATR {{NORM, FP64, Null, {CMODES[cmode]}, Default, 0, 0}}"
        size = smallest_size(None, rows, col)
        rig.run(
            block("TCMP", dt, datr, std_dims(r, c, col), iot("T#2", "T#1", dst="M", size=size))
        )
        want, st_ = P.elementwise(
            lambda x, y, cm=cmode: P.compare(dt, x, y, cm), a, b, out=np.dtype(bool)
        )
        same(rig.bits("M#1"), want, f"TCMP {dt.name} {CMODES[cmode]}")
        assert rig.status() == st_


@pytest.mark.parametrize("dt", types("TCMPS"))
@EX
@given(data=st.data(), cmode=st.integers(0, 5))
def test_tcmps(dt: DataType, data: st.DataObject, cmode: int) -> None:
    r, c = data.draw(SHAPES)
    a = data.draw(array_strategy(dt, (PES, r, c)))
    s = data.draw(st.lists(bits_strategy(dt), min_size=PES, max_size=PES))
    rig = Rig()
    col, rows = geom([dt], r, c)
    rig.run(rig.load(a, dt, col=col, rows=rows))
    for pe, v in enumerate(s):
        rig.m.set_gpr("a4", v, pe=pe)
    datr = f"B.DATR {{NORM, FP64, Null, {CMODES[cmode]}, Default, 0, 0}}"
    size = smallest_size(None, rows, col)
    rig.run(
        block(
            "TCMPS", dt, datr, std_dims(r, c, col), iot("T#1", dst="M", size=size), "B.IOR a4"
        )
    )
    bb = np.array(s, np.uint64).reshape(PES, 1, 1) * np.ones((1, r, c), np.uint64)
    want, st_ = P.elementwise(
        lambda x, y: P.compare(dt, x, y, cmode), a, bb, out=np.dtype(bool)
    )
    same(rig.bits("M#1"), want)
    assert rig.status() == st_


def _predicate(rig: Rig, pred: np.ndarray, col: int, rows: int, r: int, c: int) -> str:
    """Text that leaves ``pred`` (P, R, C bool) as M#1 (TCMPS NE 0 of a U32 N#1 tile)."""
    text = rig.load(pred.astype(np.uint64), D.U32, col=col, rows=rows, hand="N")
    datr = "B.DATR {NORM, FP64, Null, NE, Default, 0, 0}"
    size = smallest_size(None, rows, col)
    return text + block(
        "TCMPS", D.U32, datr, std_dims(r, c, col), iot("N#1", dst="M", size=size)
    )


@pytest.mark.parametrize("dt", types("TSEL"))
@EX_FEW
@given(data=st.data())
def test_tsel(dt: DataType, data: st.DataObject) -> None:
    r, c = data.draw(SHAPES)
    t = data.draw(array_strategy(dt, (PES, r, c)))
    f = data.draw(array_strategy(dt, (PES, r, c)))
    pred = data.draw(array_strategy(D.U8, (PES, r, c))) % 2 == 1
    rig = Rig()
    col, rows = geom([dt, D.U32], r, c)
    text = rig.load(t, dt, col=col, rows=rows) + rig.load(f, dt, col=col, rows=rows)
    text += _predicate(rig, pred, col, rows, r, c)
    text += block(
        "TSEL",
        dt,
        std_dims(r, c, col),
        iot("M#1", "T#2", last=False),
        iot("T#1", dst="U", size=dsize(dt, rows, col)),
    )
    rig.run(text)
    same(rig.bits(), np.where(pred, t, f))
    assert rig.status() == [0] * PES


@pytest.mark.parametrize("dt", types("TSELS"))
@EX_FEW
@given(data=st.data())
def test_tsels(dt: DataType, data: st.DataObject) -> None:
    r, c = data.draw(SHAPES)
    t = data.draw(array_strategy(dt, (PES, r, c)))
    s = data.draw(st.lists(bits_strategy(dt), min_size=PES, max_size=PES))
    pred = data.draw(array_strategy(D.U8, (PES, r, c))) % 2 == 1
    rig = Rig()
    col, rows = geom([dt, D.U32], r, c)
    text = rig.load(t, dt, col=col, rows=rows) + _predicate(rig, pred, col, rows, r, c)
    for pe, v in enumerate(s):
        rig.m.set_gpr("a4", v, pe=pe)
    text += block(
        "TSELS",
        dt,
        std_dims(r, c, col),
        iot("M#1", "T#1", dst="U", size=dsize(dt, rows, col)),
        "B.IOR a4",
    )
    rig.run(text)
    sv = np.array(s, np.uint64).reshape(PES, 1, 1)
    same(rig.bits(), np.where(pred, t, sv))


@pytest.mark.parametrize("dt", types("TFMA"))
@EX
@given(data=st.data())
def test_tfma(dt: DataType, data: st.DataObject) -> None:
    r, c = data.draw(SHAPES)
    a, b, cc = (data.draw(array_strategy(dt, (PES, r, c))) for _ in range(3))
    rig = Rig()
    col, rows = geom([dt], r, c)
    rig.run("".join(rig.load(x, dt, col=col, rows=rows) for x in (a, b, cc)))
    rig.run(
        block(
            "TFMA",
            dt,
            std_dims(r, c, col),
            iot("T#3", "T#2", last=False),
            iot("T#1", dst="U", size=dsize(dt, rows, col)),
        )
    )
    want, st_ = P.elementwise(lambda x, y, z: P.fma(dt, x, y, z), a, b, cc)
    same(rig.bits(), want, f"TFMA {dt.name}")
    assert rig.status() == st_


@pytest.mark.parametrize("dt", types("TFMA"))
def test_tfma_special_triples(dt: DataType) -> None:
    """Every triple of special encodings, one run per oracle status class."""
    sp = P.special_bits(dt)
    triples = [(x, y, z) for x in sp for y in sp for z in sp]
    for group in P.by_flags(triples, lambda x, y, z: P.fma(dt, x, y, z)).values():
        a, b, cc = P.pack(group)
        _, r, c = a.shape
        rig = Rig()
        col, rows = geom([dt], r, c)
        rig.run("".join(rig.load(x, dt, col=col, rows=rows) for x in (a, b, cc)))
        rig.run(
            block(
                "TFMA",
                dt,
                std_dims(r, c, col),
                iot("T#3", "T#2", last=False),
                iot("T#1", dst="U", size=dsize(dt, rows, col)),
            )
        )
        want, st_ = P.elementwise(lambda x, y, z: P.fma(dt, x, y, z), a, b, cc)
        same(rig.bits(), want, f"TFMA {dt.name}")
        assert rig.status() == st_, f"TFMA {dt.name} status class {st_}"


@pytest.mark.parametrize("dt", [d for d in types("TFMA") if is_float(d) and P.FMTS[d].inf])
def test_tfma_infinite_product_with_a_quiet_nan_factor_follows_the_asl(dt: DataType) -> None:
    """TileFixedFusedMultiplyAddValue counts a product as infinite when either factor is
    infinite, even if the other is a quiet NaN, with the sign XOR of the factors: so
    Inf * qNaN + (-Inf) is invalid (NV), while matching signs give a plain
    quiet-NaN result. The ASL is the authority here (DECISIONS precedence); IEEE 754 would
    call all three quiet propagations."""
    f = FMTS[dt]
    inf, ninf, qnan = f.inf_bits(False), f.inf_bits(True), f.qnan
    cases = [
        ((inf, qnan, ninf), NV),  # +Inf * +qNaN = "+Inf" meets -Inf
        ((qnan, ninf, inf), NV),  # +qNaN * -Inf = "-Inf" meets +Inf
        ((ninf, qnan | (1 << f.sign_bit), inf), 0),  # -Inf * -qNaN = "+Inf" meets +Inf
    ]
    for triple, want in cases:
        a, b, cc = P.pack([triple])
        rig = Rig()
        rig.run("".join(rig.load(x, dt) for x in (a, b, cc)))
        rows = rig.m.tile("T#1").rows
        rig.run(
            block(
                "TFMA",
                dt,
                dim_lines(8, a.shape[1]),
                iot("T#3", "T#2", last=False),
                iot("T#1", dst="U", size=dsize(dt, rows, 8)),
            )
        )
        assert (rig.bits() == P.canonical_nan(dt)).all()
        assert rig.status() == [want] * PES, triple


# =========================================================================== tile-scalar

SCALAR = {m + "S": v for m, v in BINARY.items()}


@pytest.mark.parametrize("mn, dt", [(m, d) for m in SCALAR for d in types(m)])
@EX
@given(data=st.data())
def test_tile_scalar(mn: str, dt: DataType, data: st.DataObject) -> None:
    r, c = data.draw(SHAPES)
    a = data.draw(array_strategy(dt, (PES, r, c)))
    s = data.draw(st.lists(bits_strategy(dt), min_size=PES, max_size=PES))
    op_ = SCALAR[mn]
    if op_ in ("div", "rem") and not is_float(dt) and data.draw(st.integers(0, 3)):
        s = [v or 1 for v in s]
    high = data.draw(st.integers(0, 2**16 - 1))
    _run_scalar(mn, dt, a, s, high)


def _run_scalar(mn: str, dt: DataType, a: np.ndarray, s: list[int], high: int = 0) -> None:
    _, r, c = a.shape
    op_ = SCALAR[mn]
    rig = Rig()
    col, rows = geom([dt], r, c)
    rig.run(rig.load(a, dt, col=col, rows=rows))
    w = P.bits_of(dt)
    for pe, v in enumerate(s):  # bits above the element width never participate
        rig.m.set_gpr("a4", v | ((high << w) if w < 64 else 0), pe=pe)
    text = block(
        mn, dt, std_dims(r, c, col), iot("T#1", dst="U", size=dsize(dt, rows, col)), "B.IOR a4"
    )
    bb = np.array(s, np.uint64).reshape(PES, 1, 1) * np.ones((1, r, c), np.uint64)
    if _div_zero(op_, dt, bb):
        rig.fault(text, BundleControlFault if mn == "TDIVS" else TileLegalityFault)
        return
    rig.run(text)
    want, st_ = P.elementwise(lambda x, y: P.binary(dt, x, y, op_), a, bb)
    same(rig.bits(), want, f"{mn} {dt.name}")
    assert rig.status() == st_


@pytest.mark.parametrize("mn, dt", [(m, d) for m in SCALAR for d in types(m)])
def test_tile_scalar_special_pairs(mn: str, dt: DataType) -> None:
    """Every special tile element against every special scalar (four scalars per run,
    one per PE); an integer zero divisor scalar is checked to fault separately."""
    sp = P.special_bits(dt)
    a = np.array(sp + sp[: (-len(sp)) % 8], np.uint64).reshape(1, -1, 8)
    a = np.broadcast_to(a, (PES, *a.shape[1:])).copy()
    scalars = list(sp)
    if SCALAR[mn] in ("div", "rem") and not is_float(dt):
        scalars = [v for v in scalars if v] or [1]
    scalars += scalars[: (-len(scalars)) % PES]
    for k in range(0, len(scalars), PES):
        _run_scalar(mn, dt, a, scalars[k : k + PES], high=0xA5A5)


@pytest.mark.parametrize("dt", types("TEXPANDS"))
@EX_FEW
@given(data=st.data())
def test_texpands(dt: DataType, data: st.DataObject) -> None:
    r, c = data.draw(SHAPES)
    s = data.draw(st.lists(bits_strategy(dt), min_size=PES, max_size=PES))
    rig = Rig()
    col, rows = geom([dt], r, c)
    for pe, v in enumerate(s):
        rig.m.set_gpr("a4", v, pe=pe)
    rig.run(
        block(
            "TEXPANDS",
            dt,
            std_dims(r, c, col),
            iot(dst="U", size=dsize(dt, rows, col)),
            "B.IOR a4",
        )
    )
    same(rig.bits(), np.array(s, np.uint64).reshape(PES, 1, 1) * np.ones((1, r, c), np.uint64))


# =========================================================================== reductions

REDUCE = {
    f"T{ax}{o}": (ax, o.lower())
    for ax in ("ROW", "COL")
    for o in ("SUM", "MAX", "MIN", "PROD", "ARGMAX", "ARGMIN")
}


def _one(dt: DataType) -> int:
    return P.encode(dt, False, Fraction(1))[0] if is_float(dt) else 1


def fold(dt: DataType, xs: list[int], o: str) -> tuple[int, int]:
    """D5: left folds at the element type; SUM from +0, PROD from one, MAX/MIN from the
    first element; ARG keeps the lowest index, moving only when the typed step result
    equals the new element's encoding and differs from the accumulator's."""
    flags = 0
    if o in ("sum", "prod"):
        acc = 0 if o == "sum" else _one(dt)
        for x in xs:
            acc, fl = P.binary(dt, acc, x, "add" if o == "sum" else "mul")
            flags |= fl
        return acc, flags
    step = o[3:] if o.startswith("arg") else o
    acc, idx = xs[0], 0
    for k, x in enumerate(xs[1:], 1):
        res, fl = P.binary(dt, acc, x, step)
        flags |= fl
        if res == x and res != acc:
            idx = k
        acc = res
    return (idx if o.startswith("arg") else acc), flags


@pytest.mark.parametrize("mn, dt", [(m, d) for m in REDUCE for d in types(m)])
@EX
@given(data=st.data())
def test_reductions(mn: str, dt: DataType, data: st.DataObject) -> None:
    r, c = data.draw(st.tuples(st.integers(1, 3), st.integers(1, 5)))
    a = data.draw(array_strategy(dt, (PES, r, c)))
    _run_reduction(mn, dt, a)


@pytest.mark.parametrize("mn, dt", [(m, d) for m in REDUCE for d in types(m)])
def test_reduction_special_values(mn: str, dt: DataType) -> None:
    """Rows and columns made of special encodings (NaN/zero/extreme orderings)."""
    a, b = P.cross(dt)
    _run_reduction(mn, dt, a[:, :6, :] if a.shape[1] > 6 else a)
    _run_reduction(mn, dt, b[:, :6, :] if b.shape[1] > 6 else b)


def _run_reduction(mn: str, dt: DataType, a: np.ndarray) -> None:
    _, r, c = a.shape
    axis, o = REDUCE[mn]
    out_dt = D.U32 if o.startswith("arg") else dt
    rig = Rig()
    col, rows = geom([dt], r, c)
    rig.run(rig.load(a, dt, col=col, rows=rows))
    if axis == "ROW":
        size, shape = smallest_size(out_dt, r, 1), (r, 1)
    else:
        size, shape = smallest_size(out_dt, 1, col), (1, c)
    rig.run(block(mn, dt, std_dims(r, c, col), iot("T#1", dst="U", size=size)))
    want = np.zeros((PES, *shape), np.uint64)
    status = [0] * PES
    for pe in range(PES):
        lines = a[pe] if axis == "ROW" else a[pe].T
        for i, line in enumerate(lines):
            v, fl = fold(dt, [int(x) for x in line], o)
            want[(pe, i, 0) if axis == "ROW" else (pe, 0, i)] = v
            status[pe] |= fl
    same(rig.bits(), want, f"{mn} {dt.name}")
    assert rig.status() == status
    check_tile(rig, "U#1", out_dt, *shape)


# =========================================================================== expansions

EXPAND = {
    f"T{ax}EXPAND{o}": (ax, o.lower() or None)
    for ax in ("ROW", "COL")
    for o in ("", "ADD", "SUB", "MUL", "DIV", "MAX", "MIN")
}


@pytest.mark.parametrize("mn, dt", [(m, d) for m in EXPAND for d in types(m)])
@EX_FEW
@given(data=st.data())
def test_expansions(mn: str, dt: DataType, data: st.DataObject) -> None:
    r, c = data.draw(SHAPES)
    axis, o = EXPAND[mn]
    src = data.draw(array_strategy(dt, (PES, r, c)))
    bshape = (PES, r, 1) if axis == "ROW" else (PES, 1, c)
    bc = data.draw(array_strategy(dt, bshape))
    if o == "div" and not is_float(dt) and data.draw(st.integers(0, 3)):
        bc = np.where(bc == 0, 1, bc).astype(np.uint64)
    _run_expansion(mn, dt, src, bc)


@pytest.mark.parametrize("mn, dt", [(m, d) for m in EXPAND for d in types(m)])
def test_expansion_special_values(mn: str, dt: DataType) -> None:
    a, b = P.cross(dt)
    axis, o = EXPAND[mn]
    bc = b[:, :, :1] if axis == "ROW" else b[:, :1, :]
    if o == "div" and not is_float(dt):
        bc = np.where(bc == 0, 1, bc).astype(np.uint64)
    _run_expansion(mn, dt, a, bc)


def _run_expansion(mn: str, dt: DataType, src: np.ndarray, bc: np.ndarray) -> None:
    _, r, c = src.shape
    axis, o = EXPAND[mn]
    rig = Rig()
    col, rows = geom([dt], r, c)
    text = "" if o is None else rig.load(src, dt, col=col, rows=rows)
    if axis == "ROW":
        text += rig.load(bc, dt, col=1)
    else:
        text += rig.load(bc, dt, col=col)
    rig.run(text)
    srcs = ("T#1",) if o is None else ("T#2", "T#1")
    body = block(mn, dt, std_dims(r, c, col), iot(*srcs, dst="U", size=dsize(dt, rows, col)))
    full = np.broadcast_to(bc, (PES, r, c))
    if o is None:
        rig.run(body)
        same(rig.bits(), full)
        return
    if o == "div" and not is_float(dt) and np.any(full == 0):
        rig.fault(body, TileLegalityFault)
        return
    rig.run(body)
    want, st_ = P.elementwise(lambda x, y: P.binary(dt, x, y, o), src, full)
    same(rig.bits(), want, f"{mn} {dt.name}")
    assert rig.status() == st_


def _widen(src: DataType, b: int) -> int:
    """EXPDIF exact widening to FP32 (FP16 NaNs become the canonical FP32 NaN, BF16 is a
    16-bit shift) -- ASL ExactWidenFP16ToFP32 / ExactWidenBF16ToFP32."""
    if src == D.BF16:
        return b << 16
    v = P.decode(D.FP16, b)
    if v.nan:
        return 0x7FC00000
    if v.kind == "i":
        return FMTS[D.FP32].inf_bits(v.neg)
    return P.encode(D.FP32, v.neg, v.mag)[0]


@pytest.mark.parametrize("axis", ["ROW", "COL"])
@pytest.mark.parametrize("pair", sorted(op("TROWEXPANDEXPDIF").type_pairs))
@EX_FEW
@given(data=st.data())
def test_expdif(axis: str, pair: tuple[DataType, DataType], data: st.DataObject) -> None:
    src_dt, dst_dt = pair
    r, c = data.draw(SHAPES)
    src = data.draw(array_strategy(src_dt, (PES, r, c)))
    bshape = (PES, r, 1) if axis == "ROW" else (PES, 1, c)
    bc = data.draw(array_strategy(src_dt, bshape))
    rig = Rig()
    col, rows = geom([src_dt, dst_dt], r, c)
    text = rig.load(src, src_dt, col=col, rows=rows)
    text += rig.load(bc, src_dt, col=1 if axis == "ROW" else col)
    rig.run(text)
    datr = (
        "" if src_dt == dst_dt else f"B.DATR {{NORM, {dst_dt.name}, Null, EQ, Default, 0, 0}}"
    )
    rig.run(
        block(
            f"T{axis}EXPANDEXPDIF",
            src_dt,
            datr,
            std_dims(r, c, col),
            iot("T#2", "T#1", dst="U", size=dsize(dst_dt, rows, col)),
        )
    )
    full = np.broadcast_to(bc, (PES, r, c))

    def one(x: int, y: int) -> tuple[int, int]:
        if src_dt != dst_dt:
            x, y = _widen(src_dt, x), _widen(src_dt, y)
        d, f1 = P.binary(dst_dt, x, y, "sub")
        e, f2 = P.unary(dst_dt, d, "exp")
        return e, f1 | f2

    want, st_ = P.elementwise(one, src, full)
    same(rig.bits(), want, f"EXPDIF {src_dt.name}->{dst_dt.name}")
    assert rig.status() == st_


# =========================================================================== TCVT


def cvt(src: DataType, dst: DataType, b: int, rmode: int, sat: bool) -> tuple[int, int]:
    """TCVT reference profile (independent): RMode 0 = RTZ float->int, RNE otherwise;
    NaN -> canonical NaN (NV if signalling), or +0 with NV where the destination has no
    NaN, or 0 with NV for integers; Inf clamps into integers with NV; out-of-range integers
    set NV and saturate (Sat=1) or wrap; same type is a bit copy."""
    if src == dst:
        return b, 0
    if not is_float(src):
        x = P.to_int(src, b)
        if not is_float(dst):
            lo, hi = P.int_range(dst)
            return P.wrap(dst, min(max(x, lo), hi) if sat else x), 0
        return P.encode(dst, x < 0, Fraction(abs(x)), rmode or RNE, sat)
    v = P.decode(src, b)
    if not is_float(dst):
        lo, hi = P.int_range(dst)
        if v.nan:
            return 0, NV
        if v.kind == "i":
            return P.wrap(dst, lo if v.neg else hi), NV
        n, inexact = round_signed(v.value, rmode or RTZ)
        flags = NX if inexact else 0
        if not lo <= n <= hi:
            return P.wrap(dst, min(max(n, lo), hi) if sat else n), flags | NV
        return P.wrap(dst, n), flags
    if dst == D.E8M0:
        if v.nan:
            return 0xFF, NV
        if v.kind == "i":
            return (0xFF, NV) if v.neg else ((0xFE if sat else 0xFF), OF | NX)
        return P.encode(dst, v.neg, v.mag, rmode or RNE, sat)
    if v.nan:
        if P.has_nan(dst):
            return P.canonical_nan(dst), NV if v.kind == "s" else 0
        return 0, NV
    if v.kind == "i":
        f = FMTS[dst]
        if f.inf:
            return f.inf_bits(v.neg), 0
        if sat:
            return f.max_bits(v.neg), OF | NX
        return (f.qnan if f.nan == "allones" else f.max_bits(v.neg)), OF | NX
    return P.encode(dst, v.neg, v.mag, rmode or RNE, sat)


def round_signed(x: Fraction, rmode: int) -> tuple[int, bool]:
    """Round a rational to an integer by B.DATR RMode (1 RNE .. 7 RHB)."""
    n = math.floor(x)
    fr = x - n
    if fr == 0:
        return n, False
    half = Fraction(1, 2)
    if rmode == RNE:
        up = fr > half or (fr == half and n % 2 == 1)
    elif rmode == RTZ:
        up = n < 0
    elif rmode == 3:  # RTM
        up = False
    elif rmode == 4:  # RTP
        up = True
    elif rmode == 5:  # RNA: ties away from zero
        up = fr > half or (fr == half and n >= 0)
    elif rmode == 6:  # RTO: the odd neighbour
        up = n % 2 == 0
    else:  # RHB: ties toward +inf
        up = fr >= half
    return n + int(up), True


CVT_TYPES = types("TCVT")
_E8M0_SOURCES = {D.FP16, D.BF16, D.FP32}


@pytest.mark.parametrize("src", CVT_TYPES)
@EX
@given(data=st.data())
def test_tcvt(src: DataType, data: st.DataObject) -> None:
    dst = data.draw(st.sampled_from(CVT_TYPES))
    assume(not (dst == D.E8M0 and src not in _E8M0_SOURCES))
    rmode = data.draw(st.integers(0, 7))
    sat = data.draw(st.booleans())
    r, c = data.draw(SHAPES)
    a = data.draw(array_strategy(src, (PES, r, c)))
    rig = Rig()
    col, rows = geom([src, dst], r, c)
    rig.run(rig.load(a, src, col=col, rows=rows))
    rm = P.RMODE_NAMES.get(rmode, "Default")
    datr = f"B.DATR {{NORM, {dst.name}, Null, EQ, {rm}, {int(sat)}, 0}}"
    rig.run(
        block(
            "TCVT",
            src,
            datr,
            std_dims(r, c, col),
            iot("T#1", dst="U", size=dsize(dst, rows, col)),
        )
    )
    got = rig.bits()
    check_tile(rig, "U#1", dst, r, c)
    if src in REDUCED or dst in REDUCED:
        _reduced_cvt(src, dst, a, got, rmode, sat)
        return
    want, st_ = P.elementwise(lambda x: cvt(src, dst, x, rmode, sat), a)
    same(got, want, f"TCVT {src.name}->{dst.name} rmode={rmode} sat={sat}")
    assert rig.status() == st_


@pytest.mark.parametrize("src", CVT_TYPES)
def test_tcvt_special_values(src: DataType) -> None:
    """Every special source encoding into every destination type, default RMode and
    RNE/RTZ with and without saturation (reduced oracle for HiF8/HiF4X2)."""
    sp = [(x,) for x in P.special_bits(src)]
    for k, dst in enumerate(CVT_TYPES):
        if dst == D.E8M0 and src not in _E8M0_SOURCES:
            continue
        rmode, sat = [(0, False), (RNE, True), (RTZ, False), (0, True)][k % 4]
        if src in REDUCED or dst in REDUCED:
            groups = [sp]
        else:
            oracle = lambda x, d=dst, m=rmode, t=sat: cvt(src, d, x, m, t)  # noqa: E731
            groups = list(P.by_flags(sp, oracle).values())
        for group in groups:
            (a,) = P.pack(group, c=4)
            _cvt_run(src, dst, a, rmode, sat)


def _cvt_run(src: DataType, dst: DataType, a: np.ndarray, rmode: int, sat: bool) -> None:
    _, r, c = a.shape
    rig = Rig()
    col, rows = geom([src, dst], r, c)
    rig.run(rig.load(a, src, col=col, rows=rows))
    rm = P.RMODE_NAMES.get(rmode, "Default")
    datr = f"B.DATR {{NORM, {dst.name}, Null, EQ, {rm}, {int(sat)}, 0}}"
    rig.run(
        block(
            "TCVT",
            src,
            datr,
            std_dims(r, c, col),
            iot("T#1", dst="U", size=dsize(dst, rows, col)),
        )
    )
    got = rig.bits()
    if src in REDUCED or dst in REDUCED:
        _reduced_cvt(src, dst, a, got, rmode, sat)
        return
    want, st_ = P.elementwise(lambda x: cvt(src, dst, x, rmode, sat), a)
    same(got, want, f"TCVT {src.name}->{dst.name} rmode={rmode} sat={sat}")
    assert rig.status() == st_, f"TCVT {src.name}->{dst.name}"


_TABLES: dict[DataType, dict[int, float]] = {}


def reduced_table(dt: DataType) -> dict[int, float]:
    """code -> value of HiF8/HiF4X2 as the executor decodes it (TCVT to FP64)."""
    if dt not in _TABLES:
        n = 1 << P.bits_of(dt)
        codes = np.arange(n, dtype=np.uint64).reshape(1, n)
        rig = Rig()
        rig.run(rig.load(codes, dt, col=n, rows=rows_for([dt, D.FP64], n)))
        rig.run(
            block(
                "TCVT",
                dt,
                "B.DATR {NORM, FP64, Null, EQ, Default, 0, 0}",
                dim_lines(n),
                iot("T#1", dst="U", size=dsize(D.FP64, rig.m.tile("T#1").rows, n)),
            )
        )
        vals = rig.bits()[0, 0].view(np.float64)
        _TABLES[dt] = {k: float(vals[k]) for k in range(n)}
    return _TABLES[dt]


def test_reduced_formats_anchor_points() -> None:
    """HiF8 anchors (REFERENCE 4.1 / HiFloat8): 0, 1.0, max 32768, min denormal 2**-22,
    +-Inf, one NaN, sign-symmetric; HiF4X2 decodes to 16 finite sign-symmetric values."""
    t = reduced_table(D.HiF8)
    assert t[0x00] == 0 and t[0x08] == 1.0 and t[0x88] == -1.0 and t[0x6E] == 32768.0
    assert t[0x01] == 2.0**-22 and t[0x6F] == math.inf and t[0xEF] == -math.inf
    assert math.isnan(t[0x80]) and sum(math.isnan(v) for v in t.values()) == 1
    finite = [v for v in t.values() if math.isfinite(v)]
    assert len(set(finite)) == len(finite) - 0 or len(set(finite)) == 254
    for k in range(1, 0x80):
        if math.isfinite(t[k]):
            assert t[k | 0x80] == -t[k]
    h = reduced_table(D.HiF4X2)
    assert all(math.isfinite(v) for v in h.values())
    assert all(h[k | 8] == -h[k] for k in range(1, 8))


def _reduced_cvt(
    src: DataType, dst: DataType, a: np.ndarray, got: np.ndarray, rmode: int, sat: bool
) -> None:
    """Reduced oracle: a HiF8/HiF4X2 source converts exactly like its table value; a
    HiF8/HiF4X2 destination holds a nearest table candidate (RNE and the default mode),
    a neighbour in the rounding direction otherwise, and exact values round-trip."""
    for idx in np.ndindex(*a.shape):
        b, g = int(a[idx]), int(got[idx])
        if src in REDUCED:
            xf = reduced_table(src)[b]
            if not math.isfinite(xf):
                continue
            if dst not in REDUCED:
                # the table value is exact in FP64: convert it with the independent oracle
                fb = int(np.array([xf]).view(np.uint64)[0])
                want, _ = cvt(D.FP64, dst, fb, rmode, sat)
                assert g == want, (src.name, dst.name, hex(b), xf)
                continue
            x = Fraction(xf)
        elif is_float(src):
            v = P.decode(src, b)
            if v.nan or v.kind == "i":
                continue
            x = v.value
        else:
            x = Fraction(P.to_int(src, b))
        t = reduced_table(dst)
        finite = {k: Fraction(val) for k, val in t.items() if math.isfinite(val)}
        top = max(finite.values())
        if abs(x) > top:
            continue  # overflow rules of the reduced formats are not pinned here
        exact = [k for k, val in finite.items() if val == x]
        if exact:
            assert g in exact or (x == 0 and finite.get(g) == 0), (dst.name, float(x), g)
            continue
        lower = max((val for val in finite.values() if val < x), default=None)
        upper = min((val for val in finite.values() if val > x), default=None)
        assert finite.get(g) in (lower, upper), (src.name, dst.name, float(x), g)
        tie = lower is None or upper is None or x - lower == upper - x
        if rmode in (0, RNE, 5) and not tie:
            near = lower if x - lower < upper - x else upper
            assert finite[g] == near, (dst.name, float(x), g)


# =========================================================================== Mode 3


@EX
@given(data=st.data())
def test_tquant(data: st.DataObject) -> None:
    dst = data.draw(st.sampled_from(sorted(op("TQUANT").type_rules["dst"])))
    r, c = data.draw(SHAPES)
    x = data.draw(array_strategy(D.FP32, (PES, r, c)))
    lo, hi = P.int_range(dst)
    mults = data.draw(
        st.lists(
            st.sampled_from(
                [
                    0x3F800000,
                    0x40000000,
                    0x3E800000,
                    0x7F7FFFFF,
                    0x00000001,
                    0x42C80000,
                    0x3F7FFFFF,
                ]
            ),
            min_size=PES,
            max_size=PES,
        )
    )
    zps = data.draw(st.lists(st.integers(lo, hi), min_size=PES, max_size=PES))
    rmode = data.draw(st.integers(0, 7))
    sat = data.draw(st.booleans())
    rig = Rig()
    col, rows = geom([D.FP32, dst], r, c)
    rig.run(rig.load(x, D.FP32, col=col, rows=rows))
    for pe in range(PES):
        rig.m.set_gpr("a4", mults[pe], pe=pe)
        rig.m.set_gpr("a5", zps[pe], pe=pe)
    rm = P.RMODE_NAMES.get(rmode, "Default")
    datr = f"B.DATR {{NORM, {dst.name}, Zero, EQ, {rm}, {int(sat)}, 0}}"
    rig.run(
        block(
            "TQUANT",
            D.FP32,
            datr,
            std_dims(r, c, col),
            "B.IOR a4, a5",
            iot("T#1", dst="U", size=dsize(dst, rows, col)),
        )
    )
    want = np.zeros((PES, r, c), np.uint64)
    status = [0] * PES
    for (pe, i, j), b in np.ndenumerate(x):
        q, fl = quant(int(b), mults[pe], zps[pe], dst, rmode, sat)
        want[pe, i, j] = q
        status[pe] |= fl
    same(rig.bits(), want, "TQUANT")
    assert rig.status() == status


def quant(b: int, mult: int, zp: int, dst: DataType, rmode: int, sat: bool) -> tuple[int, int]:
    """D10: q = round_RMode(x * multiplier + zp), the affine value exact and rounded once;
    NaN -> 0 with NV, an infinite x saturates either way with NV, out of range -> NV,
    Sat=1 clamps, Sat=0 keeps the low 8 bits; inexact -> NX."""
    lo, hi = P.int_range(dst)
    v = P.decode(D.FP32, b)
    if v.nan:
        return 0, NV
    if v.kind == "i":
        return P.wrap(dst, lo if v.neg else hi), NV
    n, inexact = round_signed(v.value * P.decode(D.FP32, mult).value + zp, rmode or RNE)
    flags = NX if inexact else 0
    if not lo <= n <= hi:
        flags |= NV
        n = min(max(n, lo), hi) if sat else n
    return n & 0xFF, flags


@EX
@given(data=st.data())
def test_tdequant(data: st.DataObject) -> None:
    src = data.draw(st.sampled_from(types("TDEQUANT")))
    r, c = data.draw(SHAPES)
    q = data.draw(array_strategy(src, (PES, r, c)))
    lo, hi = P.int_range(src)
    mults = data.draw(
        st.lists(
            st.sampled_from(
                [0x3F800000, 0x3DCCCCCD, 0x7F7FFFFF, 0x00000001, 0x3F7FFFFF, 0x00800000]
            ),
            min_size=PES,
            max_size=PES,
        )
    )
    zps = data.draw(st.lists(st.integers(lo, hi), min_size=PES, max_size=PES))
    rmode = data.draw(st.integers(0, 7))
    rig = Rig()
    col, rows = geom([D.FP32, src], r, c)
    rig.run(rig.load(q, src, col=col, rows=rows))
    for pe in range(PES):
        rig.m.set_gpr("a4", mults[pe], pe=pe)
        rig.m.set_gpr("a5", zps[pe], pe=pe)
    rm = P.RMODE_NAMES.get(rmode, "Default")
    datr = f"B.DATR {{NORM, FP32, Zero, EQ, {rm}, 0, 0}}"
    rig.run(
        block(
            "TDEQUANT",
            src,
            datr,
            std_dims(r, c, col),
            "B.IOR a4, a5",
            iot("T#1", dst="U", size=dsize(D.FP32, rows, col)),
        )
    )
    want = np.zeros((PES, r, c), np.uint64)
    status = [0] * PES
    for (pe, i, j), b in np.ndenumerate(q):
        exact = (P.to_int(src, int(b)) - zps[pe]) * P.decode(D.FP32, mults[pe]).value
        v, fl = P.fnum(D.FP32, exact, rmode=rmode or RNE)
        want[pe, i, j] = v
        status[pe] |= fl
    same(rig.bits(), want, "TDEQUANT")
    assert rig.status() == status


def sort_key(dt: DataType, b: int, descending: bool) -> tuple[int, float]:
    """Seed decision 135/136 order: numbers before NaNs in both directions, +-0 equal."""
    v = P.decode(dt, b)
    if v.nan:
        return (1, 0.0)
    k = v.key()
    return (0, -k if descending else k)


@pytest.mark.parametrize("dt", types("TSORT"))
@EX
@given(
    data=st.data(),
    width=st.one_of(st.integers(1, 8), st.just(0), st.integers(9, 64)),
    desc=st.booleans(),
)
def test_tsort(dt: DataType, data: st.DataObject, width: int, desc: bool) -> None:
    r, c = data.draw(st.tuples(st.integers(1, 2), st.integers(1, 12)))
    a = data.draw(array_strategy(dt, (PES, r, c)))
    rig = Rig()
    col, rows = geom([dt, D.U32], r, c)
    rig.run(rig.load(a, dt, col=col, rows=rows))
    if desc:
        rig.m.set_gpr("a4", 1)
    sz_v, sz_i = dsize(dt, rows, col), dsize(D.U32, rows, col)
    rig.run(
        block(
            "TSORT",
            dt,
            f"B.DIM zero, {width}, ->LB0",
            "B.IOR a4" if desc else "",
            iot("T#1", dst="U", size=sz_v, last=False),
            iot(dst="M", size=sz_i),
        )
    )
    w = width or 32
    want_v = np.zeros_like(a)
    want_i = np.zeros_like(a)
    status = [0] * PES
    for pe in range(PES):
        for i in range(r):
            row = [int(x) for x in a[pe, i]]
            for g0 in range(0, c, w):
                grp = row[g0 : g0 + w]
                order = sorted(range(len(grp)), key=lambda k: sort_key(dt, grp[k], desc))
                want_v[pe, i, g0 : g0 + len(grp)] = [grp[k] for k in order]
                want_i[pe, i, g0 : g0 + len(grp)] = order
                if len(grp) > 1 and any(P.decode(dt, x).kind == "s" for x in grp):
                    status[pe] = NV
    same(rig.bits("U#1"), want_v, "TSORT values")
    same(rig.bits("M#1"), want_i, "TSORT indices")
    got = rig.status()
    for pe in range(PES):  # an sNaN alone in a one-element group may or may not count
        lone = any(P.decode(dt, int(x)).kind == "s" for x in a[pe].reshape(-1))
        assert got[pe] == status[pe] or (lone and got[pe] == NV and status[pe] == 0)


@pytest.mark.parametrize("dt", types("TMRGSORT"))
@EX
@given(data=st.data(), desc=st.booleans(), disorder=st.integers(0, 4))
def test_tmrgsort(dt: DataType, data: st.DataObject, desc: bool, disorder: int) -> None:
    n0, n1 = data.draw(st.integers(1, 7)), data.draw(st.integers(1, 7))
    key = lambda b: sort_key(dt, int(b), desc)  # noqa: E731
    streams = []
    for n in (n0, n1):
        s = data.draw(array_strategy(dt, (PES, 1, n)))
        s = np.array([[sorted(s[pe, 0], key=key)] for pe in range(PES)], np.uint64)
        streams.append(s)
    if disorder == 0:  # reverse one PE's left stream: unsorted unless all keys tie
        streams[0][1, 0] = streams[0][1, 0][::-1].copy()
    rig = Rig()
    rig.run(rig.load(streams[0], dt) + rig.load(streams[1], dt))
    if desc:
        rig.m.set_gpr("a4", 1)
    n = n0 + n1
    text = block(
        "TMRGSORT",
        dt,
        "B.IOR a4" if desc else "",
        iot("T#2", "T#1", dst="U", size=smallest_size(dt, 1, p2(n))),
    )
    unsorted = any(
        any(key(s[pe, 0, k]) > key(s[pe, 0, k + 1]) for k in range(s.shape[2] - 1))
        for s in streams
        for pe in range(PES)
    )
    if unsorted:
        rig.fault(text, TileLegalityFault)
        return
    rig.run(text)
    want = np.zeros((PES, 1, n), np.uint64)
    status = [0] * PES
    for pe in range(PES):
        both = [int(x) for x in streams[0][pe, 0]] + [int(x) for x in streams[1][pe, 0]]
        want[pe, 0] = sorted(both, key=lambda b: sort_key(dt, b, desc))
        if any(P.decode(dt, b).kind == "s" for b in both):
            status[pe] = NV
    same(rig.bits(), want, "TMRGSORT")
    assert rig.status() == status
    v = rig.m.tile("U#1")
    assert (v.valid_rows, v.valid_cols, v.cols) == (1, n, p2(n))


@pytest.mark.parametrize("dt", types("TTRANS"))
@EX_FEW
@given(data=st.data())
def test_ttrans(dt: DataType, data: st.DataObject) -> None:
    r, c = data.draw(st.tuples(st.integers(1, 5), st.integers(1, 5)))
    a = data.draw(array_strategy(dt, (PES, r, c)))
    rig = Rig()
    rig.run(rig.load(a, dt))
    size = smallest_size(dt, c, p2(r))
    rig.run(
        block(
            "TTRANS",
            dt,
            dim_lines(r, c, p2(r) if p2(r) != r else None),
            iot("T#1", dst="U", size=size),
        )
    )
    same(rig.bits(), a.transpose(0, 2, 1), f"TTRANS {dt.name}")
    check_tile(rig, "U#1", dt, c, r)
    assert rig.status() == [0] * PES


@pytest.mark.parametrize("dt", types("TGATHER"))
@EX
@given(data=st.data(), idx_dt=st.sampled_from(sorted(op("TGATHER").type_rules["index"])))
def test_tgather(dt: DataType, idx_dt: DataType, data: st.DataObject) -> None:
    rv, cv = data.draw(st.integers(1, 4)), data.draw(st.integers(1, 6))
    r, c = data.draw(st.integers(1, 3)), data.draw(st.integers(1, cv))
    vals = data.draw(array_strategy(dt, (PES, rv, cv)))
    bad = data.draw(st.integers(0, 5)) == 0
    hi_idx = rv + 2 if bad else rv - 1
    idx = np.array(
        data.draw(st.lists(st.integers(0, hi_idx), min_size=PES * r * c, max_size=PES * r * c)),
        np.int64,
    ).reshape(PES, r, c)
    if bad and P.info(idx_dt).is_signed and data.draw(st.booleans()):
        idx[0, 0, 0] = -1
    rig = Rig()
    rig.run(rig.load(vals, dt) + rig.load(idx & P.width_mask(idx_dt), idx_dt))
    text = block(
        "TGATHER",
        dt,
        dim_lines(c, r, p2(c) if p2(c) != c else None),
        iot("T#2", "T#1", dst="U", size=smallest_size(dt, r, p2(c))),
    )
    if np.any(idx >= rv) or np.any(idx < 0):
        rig.fault(text, TileLegalityFault)
        return
    rig.run(text)
    want = np.take_along_axis(vals[:, :, :c], idx, axis=1)
    same(rig.bits(), want, "TGATHER")


@pytest.mark.parametrize("dt, idx_dt", sorted(op("TSCATTER").type_pairs))
@EX_FEW
@given(data=st.data())
def test_tscatter(dt: DataType, idx_dt: DataType, data: st.DataObject) -> None:
    r, c = data.draw(st.integers(1, 3)), data.draw(st.integers(1, 5))
    dr = data.draw(st.integers(r, 5))
    vals = data.draw(array_strategy(dt, (PES, r, c)))
    idx = np.zeros((PES, r, c), np.int64)
    for pe in range(PES):
        for j in range(c):
            idx[pe, :, j] = data.draw(st.permutations(range(dr)))[:r]
    dup = data.draw(st.integers(0, 5)) == 0 and r > 1
    if dup:
        idx[2, 1, 0] = idx[2, 0, 0]
    rig = Rig()
    col = p2(c)
    rows = rows_for([dt, idx_dt], col, max(r, dr))
    rig.run(rig.load(vals, dt, col=col, rows=rows) + rig.load(idx, idx_dt, col=col, rows=rows))
    size = smallest_size(dt, dr, col)
    text = block(
        "TSCATTER",
        dt,
        dim_lines(c, dr, col if col != c else None),
        iot("T#2", "T#1", dst="U", size=size),
    )
    if dup:
        rig.fault(text, TileLegalityFault)
        return
    rig.run(text)
    v = rig.m.tile("U#1")
    want = np.zeros((PES, v.rows, v.cols), np.uint64)  # zero-initialised, padding included
    for (pe, i, j), k in np.ndenumerate(idx):
        want[pe, k, j] = vals[pe, i, j]
    same(P.raw(v.payload).astype(np.uint64), want, "TSCATTER payload")
    assert m_defined_everywhere(rig, "U#1")


def m_defined_everywhere(rig: Rig, name: str) -> bool:
    from ptoc.backend.isa.fields import Hand
    from ptoc.backend.program import TileRef

    hand, k = name.split("#")
    t = rig.m.state.lookup(TileRef(Hand[hand], int(k)))
    return bool(t.definedness().all())


PART = {"TPARTADD": "add", "TPARTMUL": "mul", "TPARTMAX": "max", "TPARTMIN": "min"}


@pytest.mark.parametrize("mn, dt", [(m, d) for m in PART for d in types(m)])
@EX_FEW
@given(data=st.data(), left_full=st.booleans())
def test_tpart(mn: str, dt: DataType, data: st.DataObject, left_full: bool) -> None:
    r, c = data.draw(SHAPES)
    r2, c2 = data.draw(st.integers(1, r)), data.draw(st.integers(1, c))
    full = data.draw(array_strategy(dt, (PES, r, c)))
    part = data.draw(array_strategy(dt, (PES, r2, c2)))
    a, b = (full, part) if left_full else (part, full)
    rig = Rig()
    rig.run(rig.load(a, dt) + rig.load(b, dt))
    col = p2(c)
    rig.run(
        block(
            mn,
            dt,
            std_dims(r, c, col),
            iot("T#2", "T#1", dst="U", size=smallest_size(dt, r, col)),
        )
    )
    want = full.copy()
    status = [0] * PES
    for (pe, i, j), _ in np.ndenumerate(part):
        v, fl = P.binary(dt, int(a[pe, i, j]), int(b[pe, i, j]), PART[mn])
        want[pe, i, j] = v
        status[pe] |= fl
    same(rig.bits(), want, f"{mn} {dt.name}")
    assert rig.status() == status


@pytest.mark.parametrize("dt", types("TCONCAT"))
@EX_FEW
@given(data=st.data())
def test_tconcat(dt: DataType, data: st.DataObject) -> None:
    r, ca, cb = (
        data.draw(st.integers(1, 3)),
        data.draw(st.integers(1, 4)),
        data.draw(st.integers(1, 4)),
    )
    a = data.draw(array_strategy(dt, (PES, r, ca)))
    b = data.draw(array_strategy(dt, (PES, r, cb)))
    rig = Rig()
    rig.run(rig.load(a, dt) + rig.load(b, dt))
    n = ca + cb
    rig.run(
        block(
            "TCONCAT",
            dt,
            dim_lines(n, None, p2(n)),
            iot("T#2", "T#1", dst="U", size=smallest_size(dt, max(r, 16), p2(n))),
        )
    )
    same(rig.bits(), np.concatenate([a, b], axis=2), f"TCONCAT {dt.name}")


@pytest.mark.parametrize("dt", types("TEXTRACT"))
@EX_FEW
@given(data=st.data())
def test_textract_tinsert(dt: DataType, data: st.DataObject) -> None:
    r, c = data.draw(st.integers(1, 4)), data.draw(st.integers(1, 6))
    vr, vc = data.draw(st.integers(1, r)), data.draw(st.integers(1, c))
    ro, co = data.draw(st.integers(0, r - vr)), data.draw(st.integers(0, c - vc))
    a = data.draw(array_strategy(dt, (PES, r, c)))
    ins = data.draw(array_strategy(dt, (PES, vr, vc)))
    rig = Rig()
    rig.run(rig.load(a, dt) + rig.load(ins, dt))
    rig.m.set_gpr("a4", ro)
    rig.m.set_gpr("a5", co)
    rig.run(
        block(
            "TEXTRACT",
            dt,
            dim_lines(vc, vr, p2(vc)),
            "B.IOR a4, a5",
            iot("T#2", dst="U", size=smallest_size(dt, max(vr, 16), p2(vc))),
        )
    )
    same(rig.bits(), a[:, ro : ro + vr, co : co + vc], f"TEXTRACT {dt.name}")
    t2 = rig.m.tile("T#2")
    rig.run(
        block(
            "TINSERT",
            dt,
            "B.IOR a4, a5",
            iot("T#2", "T#1", dst="M", size=size_code(t2.capacity)),
        )
    )
    want = a.copy()
    want[:, ro : ro + vr, co : co + vc] = ins
    same(rig.bits("M#1"), want, f"TINSERT {dt.name}")


@pytest.mark.parametrize("dt", types("TFILLPAD"))
@EX_FEW
@given(data=st.data())
def test_tfillpad(dt: DataType, data: st.DataObject) -> None:
    r, c = data.draw(st.integers(1, 3)), data.draw(st.integers(1, 4))
    a = data.draw(array_strategy(dt, (PES, r, c)))
    s = data.draw(st.lists(bits_strategy(dt), min_size=PES, max_size=PES))
    rig = Rig()
    rig.run(rig.load(a, dt))
    src = rig.m.tile("T#1")
    for pe, v in enumerate(s):
        rig.m.set_gpr("a4", v, pe=pe)
    col = 2 * src.cols
    rig.run(
        block(
            "TFILLPAD",
            dt,
            f"B.DIM zero, {col}, ->LB2",
            "B.IOR a4",
            iot("T#1", dst="U", size=size_code(2 * src.capacity)),
        )
    )
    v = rig.m.tile("U#1")
    want = np.array(s, np.uint64).reshape(PES, 1, 1) * np.ones((1, v.rows, v.cols), np.uint64)
    want[:, :r, :c] = a
    got = P.raw(v.payload).astype(np.uint64)
    if P.bits_of(dt) == 4:
        got &= 0xF
    same(got, want, f"TFILLPAD {dt.name}")
    assert m_defined_everywhere(rig, "U#1")


@pytest.mark.parametrize("dt", types("TCI"))
@EX_FEW
@given(data=st.data(), start=st.integers(0, 2**64 - 1), desc=st.booleans())
def test_tci(dt: DataType, data: st.DataObject, start: int, desc: bool) -> None:
    c = data.draw(st.integers(1, 16))
    rig = Rig()
    rig.m.set_gpr("a4", start)
    rig.m.set_gpr("a5", int(desc))
    rig.run(
        block(
            "TCI",
            dt,
            dim_lines(c, None, p2(c) if p2(c) != c else None),
            "B.IOR a4, a5",
            iot(dst="U", size=smallest_size(dt, 1, p2(c))),
        )
    )
    want = [P.wrap(dt, start - k if desc else start + k) for k in range(c)]
    same(rig.bits(), np.array([[want]] * PES, np.uint64))


@pytest.mark.parametrize("dt", types("TTRI"))
@EX_FEW
@given(data=st.data(), diag=st.integers(-6, 6), upper=st.booleans())
def test_ttri(dt: DataType, data: st.DataObject, diag: int, upper: bool) -> None:
    r, c = data.draw(st.integers(1, 4)), data.draw(st.integers(1, 6))
    rig = Rig()
    rig.m.set_gpr("a4", diag)
    rig.m.set_gpr("a5", int(upper))
    rig.run(
        block(
            "TTRI",
            dt,
            std_dims(r, c, p2(c)),
            "B.IOR a4, a5",
            iot(dst="U", size=smallest_size(dt, r, p2(c))),
        )
    )
    one = _one(dt)
    want = np.array(
        [
            [
                [
                    one if ((j >= i + diag) if upper else (j <= i + diag)) else 0
                    for j in range(c)
                ]
                for i in range(r)
            ]
        ]
        * PES,
        np.uint64,
    )
    same(rig.bits(), want)


@pytest.mark.parametrize("dt", types("THISTOGRAM"))
@EX_FEW
@given(data=st.data())
def test_thistogram(dt: DataType, data: st.DataObject) -> None:
    byte_id = data.draw(st.integers(0, 1 if dt == D.U16 else 3))
    r, c = data.draw(st.integers(1, 2)), data.draw(st.integers(1, 6))
    w = P.bits_of(dt)
    near = st.sampled_from([0x00000000, 0x01020304, 0x0102FF05, 0xFFFFFFFF, 0x0001, 0x0100])
    a = np.array(
        data.draw(
            st.lists(
                st.one_of(near, st.integers(0, (1 << w) - 1)),
                min_size=PES * r * c,
                max_size=PES * r * c,
            )
        ),
        np.uint64,
    ).reshape(PES, r, c) & ((1 << w) - 1)
    frows = r if (dt == D.U16 and byte_id == 0) else (3 - byte_id if dt == D.U32 else 0)
    filt = np.array(
        data.draw(
            st.lists(
                st.sampled_from([0, 1, 2, 3, 0xFF]),
                min_size=PES * max(frows, 1),
                max_size=PES * max(frows, 1),
            )
        ),
        np.uint64,
    ).reshape(PES, max(frows, 1), 1)
    rig = Rig()
    rig.run(rig.load(a, dt) + rig.load(filt, D.U8))
    pad = ["Zero", "Max", "Min", "Null"][byte_id]
    rig.run(
        block(
            "THISTOGRAM",
            dt,
            f"B.DATR {{NORM, U32, {pad}, EQ, Default, 0, 0}}",
            iot("T#2", "T#1", dst="U", size=smallest_size(D.U32, r, 256)),
        )
    )
    want = np.zeros((PES, r, 256), np.uint64)
    for (pe, i, _), raw_v in np.ndenumerate(a):
        v = int(raw_v)

        def byte(k: int, v: int = v) -> int:
            return (v >> (8 * k)) & 0xFF

        if dt == D.U16:
            ok = byte_id == 1 or byte(1) == int(filt[pe, i, 0])
        else:
            ok = all(
                byte(k) == int(filt[pe, fr, 0]) for fr, k in enumerate(range(3, byte_id, -1))
            )
        if ok:
            want[pe, i, byte(byte_id) :] += 1
    same(rig.bits(), want, f"THISTOGRAM {dt.name} ByteId {byte_id}")


# =========================================================================== memory


@pytest.mark.parametrize("dt", types("TLOAD"))
@EX_FEW
@given(data=st.data())
def test_tload_tstore_tmov_roundtrip(dt: DataType, data: st.DataObject) -> None:
    """TLOAD strided rows, TMOV (renamed copy) and TSTORE with another stride put the
    same raw elements back into GM; bytes between rows are untouched."""
    r, c = data.draw(st.integers(1, 4)), data.draw(st.integers(1, 8))
    a = data.draw(array_strategy(dt, (PES, r, c)))
    rig = Rig()
    rig.run(rig.load(a, dt))
    rig.run(block("TMOV", dt, iot("T#1", dst="U", size=size_code(rig.m.tile("T#1").capacity))))
    eb = info(dt).carrier.itemsize if P.bits_of(dt) >= 8 else 1
    row_bytes = (c + 1) // 2 if P.bits_of(dt) == 4 else c * eb
    stride = row_bytes + data.draw(st.integers(0, 3)) * max(eb, 1)
    base = 0x20000
    fill = data.draw(st.integers(0, 255))
    for pe in range(PES):
        rig.m.load_gm(base + pe * P.PE_SPAN, bytes([fill]) * (stride * r + 8))
    text = P.std(*P.const_lines("a2", base), "add a2, s8, ->a2", *P.const_lines("a3", stride))
    rig.run(text + block("TSTORE", dt, "B.IOR a2, a3", iot("U#1")))
    for pe in range(PES):
        got = rig.m.read_gm(base + pe * P.PE_SPAN, np.uint8, stride * r + 8)
        want = np.full(stride * r + 8, fill, np.uint8)
        for i in range(r):
            row = np.frombuffer(Rig._bytes(a[pe, i : i + 1], dt), np.uint8)
            if P.bits_of(dt) == 4 and c % 2:  # the sibling nibble of the last byte stays
                row = row.copy()
                row[-1] = (row[-1] & 0x0F) | (fill & 0xF0)
            want[i * stride : i * stride + row_bytes] = row
        same(got, want, f"TSTORE {dt.name} PE{pe}")
    same(rig.bits("U#1"), a)


# =========================================================================== coverage


def test_every_executable_operation_has_a_differential_test() -> None:
    """Every TEPL/TLSU operation the executor models appears in one of the tables here
    (the indexed GM ops are rejected as unsupported before any effect; TIMG2COL is always
    illegal, see test_ops_irregular)."""
    covered = set(BINARY) | set(UNARY) | set(SCALAR) | set(REDUCE) | set(EXPAND) | set(PART)
    covered |= {
        "TCMP",
        "TCMPS",
        "TSEL",
        "TSELS",
        "TFMA",
        "TEXPANDS",
        "TCVT",
        "TROWEXPANDEXPDIF",
        "TCOLEXPANDEXPDIF",
        "TQUANT",
        "TDEQUANT",
        "TSORT",
        "TMRGSORT",
        "TTRANS",
        "TGATHER",
        "TSCATTER",
        "TCONCAT",
        "TEXTRACT",
        "TINSERT",
        "TFILLPAD",
        "TCI",
        "TTRI",
        "THISTOGRAM",
        "TLOAD",
        "TSTORE",
        "TMOV",
    }
    covered.add("TIMG2COL")  # test_timg2col_has_no_feature_map_descriptor_to_read
    covered.add("TPREFETCH")  # tests/runtime/test_tprefetch.py: it has no result to compare
    unsupported = {
        "MGATHER",
        "MSCATTER",
        "MGATHER_MASK",
        "MSCATTER_MASK",
        "MGATHER_CAS",
        "GMOV",
    }
    for m, o in OPS.items():
        if o.family.value == "CUBE":
            continue
        assert m in covered or m in unsupported, m
