"""Floating unary ops, comparisons, TFMA and TSEL against independent oracles."""

from __future__ import annotations

import decimal
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ptoc.backend.isa import TABLE, row
from ptoc.backend.isa.datatypes import DataType as D
from ptoc.backend.isa.datatypes import info
from ptoc.backend.isa.semantics import core

try:
    from .test_semantics_elementwise import (
        CANON,
        FLOATS,
        LAYOUT,
        SHAPE,
        bits_strategy,
        carrier,
        check_float,
        expect_round,
        is_nan,
        is_snan,
        neg_bit,
        raw,
        value,
    )
    from .test_semantics_oracle import FMTS, INF, NINF, ref_round
except ImportError:  # tests/isa is not a package
    from test_semantics_elementwise import (
        CANON,
        FLOATS,
        LAYOUT,
        SHAPE,
        bits_strategy,
        carrier,
        check_float,
        expect_round,
        is_nan,
        is_snan,
        neg_bit,
        raw,
        value,
    )
    from test_semantics_oracle import FMTS, INF, NINF, ref_round

NV, DZ, OF, UF, NX = 1, 2, 4, 8, 16


def one_bits(dt: D) -> int:
    _, e, m, low = LAYOUT[dt]
    return ((1 << (e - 1)) - 1) << (m + low)


def unary_oracle(op: str, dt: D, b: int) -> tuple[object, int]:
    """``TileSFUUnarySpecialValue`` table, then the D5 profile on finite inputs."""
    x = value(dt, b)
    neg = neg_bit(dt, b)
    if x == "nan":
        return "nan", NV if is_snan(dt, b) else 0
    unb = {False: INF, True: NINF} if FMTS[dt.name].has_inf else {False: "nan", True: "nan"}
    if op == "exp":
        if x == 0:
            return Fraction(1), 0
        if x in (INF, NINF):
            return (INF, 0) if x == INF else ("+0", 0)
    if op == "log":
        if x == 1:
            return "+0", 0
        if x == 0:
            return unb[True], DZ
        if x == INF:
            return INF, 0
        if neg:
            return "nan", NV
    if op == "recip":
        if x == 0:
            return unb[neg], DZ
        if x in (INF, NINF):
            return ("-0" if neg else "+0"), 0
    if op == "sqrt":
        if x == 0:
            return ("-0" if neg else "+0"), 0
        if x == INF:
            return INF, 0
        if neg:
            return "nan", NV
    if op == "rsqrt":
        if x == 0:
            return unb[neg], DZ
        if x == INF:
            return "+0", 0
        if neg:
            return "nan", NV
    assert isinstance(x, Fraction)
    xf = float(x)
    if op == "recip":
        return expect_round(dt, 1 / x, neg)
    if op == "sqrt":
        # float64 sqrt then one rounding is exact-rounding for <= 26-bit formats (and
        # is IEEE for FP64); the NX flag comes from squaring back exactly.
        y = Fraction(math.sqrt(xf))
        r, f = expect_round(dt, y, False)
        exact = isinstance(r, Fraction) and r * r == x
        return r, (f & ~(NX | UF)) | (0 if exact else NX)
    if dt == D.FP64 and op in ("exp", "log", "rsqrt"):
        return _fp64_correctly_rounded(op, x, xf)
    if op == "exp" and xf > 709.78:
        y64 = math.inf
    elif op == "exp":
        y64 = math.exp(xf)
    elif op == "log":
        y64 = math.log(xf)
    else:
        y64 = 1.0 / math.sqrt(xf)
    if math.isinf(y64):
        return (INF if FMTS[dt.name].has_inf else "nan"), OF | NX
    if y64 == 0:
        return "+0", UF | NX
    r, _ = expect_round(dt, Fraction(y64), False)
    if op == "rsqrt" and Fraction(y64) ** 2 * x == 1:
        return r, 0
    # the true value is irrational: flags are those of a value just beyond y64
    _, flags = expect_round(dt, Fraction(y64) * (1 + Fraction(1, 2**200)), False)
    return r, flags


def _fp64_correctly_rounded(op: str, x: Fraction, xf: float) -> tuple[object, int]:
    """At FP64 the FP64 evaluation is the result, correctly rounded (D9): a 60-digit
    decimal value (decimal's exp, ln and sqrt are correctly rounded at that precision)
    rounded once; an irrational result's flags are those of a value just beyond it."""
    ctx = decimal.Context(prec=60, Emax=10**6, Emin=-(10**6))
    if op == "exp" and xf > 710:  # e**710 > 2**1024
        return INF, OF | NX
    if op == "exp" and xf < -746:  # e**-746 < 2**-1076
        return "+0", UF | NX
    if op == "exp":
        y = Fraction(ctx.exp(decimal.Decimal(xf)))
    elif op == "log":
        y = Fraction(ctx.ln(decimal.Decimal(xf)))
    else:
        # sqrt(x) is rational exactly when x's numerator and denominator are squares; the
        # 60-digit decimal root is not exact then for tiny x (2**-1074 has a 2**-537 root)
        rn, rd = math.isqrt(x.numerator), math.isqrt(x.denominator)
        if rn * rn == x.numerator and rd * rd == x.denominator:
            return expect_round(D.FP64, Fraction(rd, rn), False)
        y = Fraction(ctx.divide(1, ctx.sqrt(decimal.Decimal(xf))))
    r, _ = expect_round(D.FP64, y, False)
    _, flags = expect_round(D.FP64, y * (1 + Fraction(1, 2**300)), False)
    return r, flags


@pytest.mark.parametrize("dt", FLOATS, ids=lambda d: d.name)
@pytest.mark.parametrize("op", ["exp", "log", "recip", "sqrt", "rsqrt"])
@settings(max_examples=20)
@given(data=st.data())
def test_sfu_unary(dt: D, op: str, data: st.DataObject) -> None:
    """Special values per unary.asl; sqrt/recip correctly rounded; exp/log/rsqrt are
    numpy's FP64 value rounded once (D5) with NX set, at FP64 the correctly rounded
    value (D9)."""
    xb = data.draw(bits_strategy(dt))
    res, status = core.unary(op, dt, carrier(dt, xb))
    exp = [unary_oracle(op, dt, int(b)) for b in xb.ravel()]
    check_float(dt, op, res, status, exp)


def test_fp64_rsqrt_of_an_even_power_of_two_subnormal_is_exact() -> None:
    """rsqrt(2**-1074) = 2**537 and rsqrt(2**-1072) = 2**536 exactly: no NX (the root of
    a subnormal power of four is rational)."""
    x = np.array([[[1, 4, 0x10, 1 << 50]]], np.uint64).view(np.float64)
    res, status = core.unary("rsqrt", D.FP64, x)
    assert list(res.ravel()) == [2.0**537, 2.0**536, 2.0**535, 2.0**512]
    assert int(status[0]) == 0


@pytest.mark.parametrize("dt", FLOATS, ids=lambda d: d.name)
@settings(max_examples=15)
@given(data=st.data())
def test_abs_neg_relu_bits(dt: D, data: st.DataObject) -> None:
    """REFERENCE 10.1: TNEG flips only the sign bit and TABS clears it (NaN payloads
    survive, no status); TRELU gives +0 for negatives and -0, canonical NaN for NaN."""
    xb = data.draw(bits_strategy(dt))
    sign = 1 << (LAYOUT[dt][0] - 1)
    a = carrier(dt, xb)
    r, s = core.unary("neg", dt, a)
    assert list(raw(r).ravel()) == [int(b) ^ sign for b in xb.ravel()] and not s.any()
    r, s = core.unary("abs", dt, a)
    assert list(raw(r).ravel()) == [int(b) & ~sign for b in xb.ravel()] and not s.any()
    r, s = core.unary("relu", dt, a)
    want = []
    for b in (int(v) for v in xb.ravel()):
        if is_nan(dt, b):
            want.append(CANON[dt])
        elif neg_bit(dt, b) or value(dt, b) == 0:
            want.append(0)
        else:
            want.append(b)
    assert list(raw(r).ravel()) == want
    snan = [any(is_snan(dt, int(b)) for b in row) for row in xb.reshape(SHAPE[0], -1)]
    assert list(s) == [NV if f else 0 for f in snan]


@pytest.mark.parametrize("dt", FLOATS, ids=lambda d: d.name)
@settings(max_examples=15)
@given(data=st.data())
def test_compare_floats(dt: D, data: st.DataObject) -> None:
    """NaN makes every relation false except NE; sNaN sets NV; +0 == -0."""
    xb = data.draw(bits_strategy(dt))
    yb = data.draw(bits_strategy(dt))
    ops = [lambda a, b: a == b, lambda a, b: a != b, lambda a, b: a < b]
    ops += [lambda a, b: a > b, lambda a, b: a <= b, lambda a, b: a >= b]

    def num(b: int) -> float:
        v = value(dt, b)
        return {INF: math.inf, NINF: -math.inf, "nan": math.nan}.get(v, v)  # type: ignore[arg-type]

    for cmode in range(6):
        r, s = core.compare(cmode, dt, carrier(dt, xb), carrier(dt, yb))
        want = [ops[cmode](num(int(a)), num(int(b))) for a, b in zip(xb.ravel(), yb.ravel())]
        assert list(r.ravel()) == want, cmode
        snan = [
            any(is_snan(dt, int(a)) or is_snan(dt, int(b)) for a, b in zip(ra, rb))
            for ra, rb in zip(xb.reshape(SHAPE[0], -1), yb.reshape(SHAPE[0], -1))
        ]
        assert list(s) == [NV if f else 0 for f in snan]


@pytest.mark.parametrize("dt", [D.S8, D.U8, D.S32, D.U64], ids=lambda d: d.name)
def test_compare_integers_signedness(dt: D) -> None:
    c = info(dt).carrier
    a = np.array([[[-1 if info(dt).is_signed else 200, 5]]]).astype(c)
    b = np.array([[[1, 5]]], c)
    r, s = row("TCMP").semantics(dt, a, b, 2)
    assert list(r.ravel()) == [info(dt).is_signed, False] and not s.any()


@pytest.mark.parametrize("dt", FLOATS, ids=lambda d: d.name)
@settings(max_examples=20)
@given(data=st.data())
def test_tfma_single_rounding(dt: D, data: st.DataObject) -> None:
    """TFMA rounds x*y + z once; 0*Inf, Inf-Inf and sNaN give canonical NaN with NV."""
    xb, yb, zb = (data.draw(bits_strategy(dt)) for _ in range(3))
    res, status = row("TFMA").semantics(dt, carrier(dt, xb), carrier(dt, yb), carrier(dt, zb))
    exp = []
    for a, b, c in zip(xb.ravel(), yb.ravel(), zb.ravel()):
        a, b, c = int(a), int(b), int(c)
        x, y, z = value(dt, a), value(dt, b), value(dt, c)
        pneg = neg_bit(dt, a) != neg_bit(dt, b)
        pinf = x in (INF, NINF) or y in (INF, NINF)
        snan = any(is_snan(dt, v) for v in (a, b, c))
        zero_inf = pinf and (x == 0 or y == 0)
        if snan or zero_inf or (pinf and z in (INF, NINF) and (z == NINF) != pneg):
            exp.append(("nan", NV))
        elif "nan" in (x, y, z):
            exp.append(("nan", 0))
        elif pinf:
            exp.append((NINF if pneg else INF, 0))
        elif z in (INF, NINF):
            exp.append((z, 0))
        else:
            exact = x * y + z  # type: ignore[operator]
            zero_neg = pneg and neg_bit(dt, c)
            exp.append(expect_round(dt, exact, zero_neg))
    check_float(dt, "fma", res, status, exp)


def test_tfma_fp64_extreme_range_and_integers() -> None:
    """FP64 fma at the range limits uses the exact path; integer TFMA wraps."""
    x = np.array([[[1e-300, 1e300, 2.0**-1000, 3.0]]])
    y = np.array([[[1e-300, 1e10, 2.0**-74, 1.0 / 3.0]]])
    z = np.array([[[-0.0, -1e308, 2.0**-1074, -1.0]]])
    r, s = row("TFMA").semantics(D.FP64, x, y, z)
    want = [
        Fraction(a) * Fraction(b) + Fraction(c)
        for a, b, c in zip(x.ravel(), y.ravel(), z.ravel())
    ]
    fmt = FMTS["FP64"]
    for got, w in zip(r.ravel(), want):
        ref = ref_round(w, fmt)
        assert (got == math.inf and ref == INF) or Fraction(float(got)) == ref
    assert s[0] & NX and s[0] & UF and s[0] & OF
    a = np.array([[[100, -7]]], np.int8)
    r, s = row("TFMA").semantics(D.S8, a, a, np.array([[[1, 0]]], np.int8))
    assert (
        list(r.ravel()) == [(10001 & 0xFF) - 256 * ((10001 & 0xFF) > 127), 49] and not s.any()
    )


@settings(max_examples=20)
@given(
    st.lists(st.integers(0, 2**32 - 1), min_size=16, max_size=16),
    st.lists(st.booleans(), min_size=16, max_size=16),
)
def test_tsel_copies_bits(bits: list[int], pred: list[bool]) -> None:
    """TSEL is a raw-carrier copy: NaN payloads and signed zeros survive, no status."""
    a = np.array(bits, np.uint32).reshape(SHAPE).view(np.float32)
    b = np.roll(a, 3)
    p = np.array(pred).reshape(SHAPE)
    r, s = row("TSEL").semantics(D.FP32, p, a, b)
    assert np.array_equal(raw(r), np.where(p, raw(a), raw(b))) and not s.any()


def test_elementwise_table_is_complete() -> None:
    names = "TADD TSUB TMUL TDIV TREM TAND TOR TXOR TSHL TSHR TMAX TMIN TCMP TABS TNOT TNEG"
    names += " TEXP TLOG TRECIP TSQRT TRSQRT TRELU TSEL TCVT TFMA"
    with_semantics = {r.mnemonic for r in TABLE.values() if r.semantics is not None}
    assert set(names.split()) <= with_semantics
