"""Differential tests of the elementwise semantics (core.binary/unary/compare, TFMA).

Oracles are independent of the implementation: Python integers for integer ops,
``fractions.Fraction`` plus the from-scratch rounding of ``test_semantics_oracle`` for
floating ops, numpy/ml_dtypes casts for decoding.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ptoc.backend.isa import row
from ptoc.backend.isa.datatypes import DataType as D
from ptoc.backend.isa.datatypes import info
from ptoc.backend.isa.semantics import core

try:
    from .bulk_draw import elements
    from .test_semantics_oracle import FMTS, INF, NINF, frac, ref_round
except ImportError:  # tests/isa is not a package
    from bulk_draw import elements
    from test_semantics_oracle import FMTS, INF, NINF, frac, ref_round

NV, DZ, OF, UF, NX = 1, 2, 4, 8, 16
SHAPE = (2, 2, 4)
N = int(np.prod(SHAPE))

INTS = [D.S8, D.S16, D.S32, D.S64, D.U8, D.U16, D.U32, D.U64]
FLOATS = [D.FP64, D.FP32, D.TF32, D.HF32, D.FP16, D.BF16, D.E4M3, D.E5M2]

# (width, exponent bits, fraction bits, low zero bits) written from the format ASL
LAYOUT = {
    D.FP64: (64, 11, 52, 0), D.FP32: (32, 8, 23, 0), D.TF32: (32, 8, 10, 13),
    D.HF32: (32, 8, 11, 12), D.FP16: (16, 5, 10, 0), D.BF16: (16, 8, 7, 0),
    D.E4M3: (8, 4, 3, 0), D.E5M2: (8, 5, 2, 0),
}  # fmt: skip
CANON = {
    D.FP64: 0x7FF8000000000000, D.FP32: 0x7FC00000, D.TF32: 0x7FC00000,
    D.HF32: 0x7FC00000, D.FP16: 0x7E00, D.BF16: 0x7FC0, D.E4M3: 0x7F, D.E5M2: 0x7E,
}  # fmt: skip
UINT = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}


# ---------------------------------------------------------------- float helpers


def special_bits(dt: D) -> list[int]:
    w, e, m, low = LAYOUT[dt]
    s = 1 << (w - 1)
    one_exp = ((1 << (e - 1)) - 1) << (m + low)
    top = ((1 << e) - 1) << (m + low)
    vals = [0, s, one_exp, s | one_exp, 1 << low, s | (1 << low)]  # +-0, +-1, +-min sub
    vals += [
        (1 << (m + low)),
        ((1 << (m + low)) - 1) & ~((1 << low) - 1),
    ]  # min normal, max sub
    if dt == D.E4M3:
        vals += [0x7F, 0xFF, 0x7E, 0xFE]
    else:
        qnan = top | (1 << (m + low - 1))
        snan = top | (1 << low)
        vals += [top, s | top, qnan, s | qnan, snan, s | snan, qnan | (5 << low)]
        vals += [top - (1 << low), s | (top - (1 << low))]  # +-max finite
    return vals


def bits_strategy(dt: D) -> st.SearchStrategy[np.ndarray]:
    """SHAPE arrays of raw encodings: half special values, half uniform bits."""
    w, _, _, low = LAYOUT[dt]
    specials = special_bits(dt)

    def pick(kind: int, raw: int) -> int:
        return specials[kind % len(specials)] if kind < 128 else raw & ((1 << w) - 1)

    return elements(N, pick).map(
        lambda v: (
            (np.array(v, np.uint64) & np.uint64(((1 << w) - 1) & ~((1 << low) - 1)))
            .astype(UINT[w])
            .reshape(SHAPE)
        )
    )


def carrier(dt: D, bits: np.ndarray) -> np.ndarray:
    return bits.view(info(dt).carrier)


def raw(a: np.ndarray) -> np.ndarray:
    return a.view(UINT[a.dtype.itemsize * 8]).astype(np.uint64)


def value(dt: D, b: int) -> Fraction | str:
    """Independent decode of one raw element (numpy / ml_dtypes casts)."""
    w = LAYOUT[dt][0]
    with np.errstate(invalid="ignore"):
        x = np.array([b], UINT[w]).view(info(dt).carrier).astype(np.float64)[0]
    return frac(x)


def is_nan(dt: D, b: int) -> bool:
    return value(dt, b) == "nan"


def is_snan(dt: D, b: int) -> bool:
    if dt == D.E4M3 or not is_nan(dt, b):
        return False
    _, _, m, low = LAYOUT[dt]
    return not (b >> (m + low - 1)) & 1


def neg_bit(dt: D, b: int) -> bool:
    return bool(b >> (LAYOUT[dt][0] - 1))


def expect_round(dt: D, exact: Fraction, zero_neg: bool) -> tuple[object, int]:
    """(expected value or "nan"/inf marker, flags) of an exact finite result."""
    fmt = FMTS[dt.name]
    r = ref_round(exact, fmt)
    flags = 0
    if r in (INF, NINF):
        return ("nan" if not fmt.has_inf else r), OF | NX
    if r != exact:
        flags |= NX
        unbounded = ref_round(exact, type(fmt)(fmt.p, -(10**6), fmt.max * 2**64, True))
        assert isinstance(unbounded, Fraction)
        if abs(unbounded) < Fraction(2) ** fmt.emin:
            flags |= UF
    if r == 0:
        return ("-0" if (exact < 0 or (exact == 0 and zero_neg)) else "+0"), flags
    return r, flags


def got_value(dt: D, b: int) -> object:
    v = value(dt, b)
    if v == 0:
        return "-0" if neg_bit(dt, b) else "+0"
    if v == "nan":
        assert b == CANON[dt], hex(b)
    return v


def check_float(dt: D, op: str, res: np.ndarray, status: np.ndarray, exp: list) -> None:
    rb = raw(res).reshape(SHAPE[0], -1)
    for p in range(SHAPE[0]):
        want_flags = 0
        for i in range(rb.shape[1]):
            want, f = exp[p * rb.shape[1] + i]
            want_flags |= f
            assert got_value(dt, int(rb[p, i])) == want, (op, p, i, hex(int(rb[p, i])), want)
        assert int(status[p]) == want_flags, (op, p, status[p], want_flags)


def float_oracle(op: str, dt: D, xb: int, yb: int) -> tuple[object, int]:
    """IEEE-style reference of one element of add/sub/mul/div/rem (D5 profile)."""
    x, y = value(dt, xb), value(dt, yb)
    nv = NV if (is_snan(dt, xb) or is_snan(dt, yb)) else 0
    if x == "nan" or y == "nan":
        return "nan", nv
    xn, yn = neg_bit(dt, xb), neg_bit(dt, yb)
    if op == "sub":
        y = {INF: NINF, NINF: INF}.get(y, -y if isinstance(y, Fraction) else y)  # type: ignore[arg-type]
        yn = not yn
        op = "add"
    xinf, yinf = x in (INF, NINF), y in (INF, NINF)
    inf_of = {False: INF, True: NINF}
    if op == "add":
        if xinf and yinf:
            return ("nan", NV) if x != y else (x, 0)
        if xinf or yinf:
            return (x if xinf else y), 0
        return expect_round(dt, x + y, xn and yn)  # type: ignore[operator]
    if op == "mul":
        if (xinf and y == 0) or (yinf and x == 0):
            return "nan", NV
        if xinf or yinf:
            return inf_of[xn != yn], 0
        return expect_round(dt, x * y, xn != yn)  # type: ignore[operator]
    if op == "div":
        if (xinf and yinf) or (x == 0 and y == 0):
            return "nan", NV
        if xinf:
            return inf_of[xn != yn], 0
        if yinf:
            return ("-0" if xn != yn else "+0"), 0
        if y == 0:
            return ("nan" if dt == D.E4M3 else inf_of[xn != yn]), DZ
        return expect_round(dt, x / y, xn != yn)  # type: ignore[operator]
    if op == "rem":
        if xinf or y == 0:
            return "nan", NV
        if yinf:
            keep = x == 0 or xn == yn
            return (got_value(dt, xb) if keep else y), 0
        q = x / y  # type: ignore[operator]
        r = x - y * (q.numerator // q.denominator)  # type: ignore[operator]
        return expect_round(dt, r, yn)
    raise AssertionError(op)


@pytest.mark.parametrize("dt", FLOATS, ids=lambda d: d.name)
@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "rem"])
@settings(max_examples=25)
@given(data=st.data())
def test_float_binary_correctly_rounded(dt: D, op: str, data: st.DataObject) -> None:
    """D5: + - * / (and floor-modulo TREM) are correctly rounded RNE with exact flags."""
    xb = data.draw(bits_strategy(dt))
    yb = data.draw(bits_strategy(dt))
    res, status = core.binary(op, dt, carrier(dt, xb), carrier(dt, yb))
    assert res.dtype == info(dt).carrier and res.shape == SHAPE
    exp = [float_oracle(op, dt, int(a), int(b)) for a, b in zip(xb.ravel(), yb.ravel())]
    check_float(dt, op, res, status, exp)


@settings(max_examples=40)
@given(st.lists(st.integers(0, 2**32 - 1), min_size=N, max_size=N))
def test_fp32_matches_numpy_ieee(bits: list[int]) -> None:
    """numpy float32 arithmetic is IEEE RNE: a second oracle for finite, non-NaN results."""
    a = np.array(bits, np.uint32).reshape(SHAPE).view(np.float32)
    b = np.roll(a, 1)
    with np.errstate(all="ignore"):
        for op, f in (
            ("add", np.add),
            ("sub", np.subtract),
            ("mul", np.multiply),
            ("div", np.divide),
        ):
            want = f(a, b)
            got, _ = core.binary(op, D.FP32, a, b)
            ok = ~np.isnan(want)
            assert np.array_equal(raw(got)[ok], raw(want)[ok]), op
            assert np.all(raw(got)[~ok] == 0x7FC00000)


def test_fp64_exact_flags_at_extremes() -> None:
    """FP64 products and quotients near the subnormal and overflow limits."""
    tiny = np.array([[[5e-324, 2.0**-1022, 1.5 * 2.0**-1022, 1e308]]])
    other = np.array([[[0.5, 0.5, 0.75, 10.0]]])
    got, st_ = core.binary("mul", D.FP64, tiny, other)
    assert list(got.ravel()) == [0.0, 2.0**-1023, 1.125 * 2.0**-1022, np.inf]
    assert st_[0] == UF | NX | OF
    got, st_ = core.binary("div", D.FP64, np.array([[[1.0]]]), np.array([[[3.0]]]))
    assert got.ravel()[0] == 1.0 / 3.0 and st_[0] == NX
    got, st_ = core.binary(
        "add", D.FP64, np.array([[[1.0, 1e308]]]), np.array([[[2.0**-53, 1e308]]])
    )
    assert list(got.ravel()) == [1.0, np.inf] and st_[0] == NX | OF


# ---------------------------------------------------------------- TMAX / TMIN


@pytest.mark.parametrize("dt", FLOATS, ids=lambda d: d.name)
@settings(max_examples=20)
@given(data=st.data())
def test_max_min_nan_and_signed_zero_rules(dt: D, data: st.DataObject) -> None:
    """Seed/D5: one NaN selects the numeric operand, two NaNs give the canonical quiet
    NaN, a signalling NaN sets NV, max(+0,-0)=+0 and min(+0,-0)=-0."""
    xb = data.draw(bits_strategy(dt))
    yb = data.draw(bits_strategy(dt))
    for op in ("max", "min"):
        res, status = core.binary(op, dt, carrier(dt, xb), carrier(dt, yb))
        rb = raw(res).reshape(SHAPE[0], -1)
        for p in range(SHAPE[0]):
            flags = 0
            for i in range(rb.shape[1]):
                a, b = int(xb.reshape(SHAPE[0], -1)[p, i]), int(yb.reshape(SHAPE[0], -1)[p, i])
                flags |= NV if is_snan(dt, a) or is_snan(dt, b) else 0
                va, vb = value(dt, a), value(dt, b)
                if va == "nan" and vb == "nan":
                    want = CANON[dt]
                elif va == "nan":
                    want = b
                elif vb == "nan":
                    want = a
                elif va == 0 and vb == 0:
                    negs = (neg_bit(dt, a), neg_bit(dt, b))
                    sign = 1 << (LAYOUT[dt][0] - 1)
                    want = (
                        (sign if all(negs) else 0)
                        if op == "max"
                        else (sign if any(negs) else 0)
                    )
                else:
                    fa, fb = (
                        float("inf") if v == INF else float("-inf") if v == NINF else v
                        for v in (va, vb)
                    )
                    left = fa >= fb if op == "max" else fa <= fb  # type: ignore[operator]
                    want = a if left else b
                assert int(rb[p, i]) == want, (op, hex(a), hex(b))
            assert status[p] == flags


def test_max_min_seed_sentences() -> None:
    """Pinned: TMAX/TMIN exceptional cases from the seed contracts and D5."""
    a = np.array([[[np.nan, 1.0, np.nan, 0.0, -0.0, -0.0]]], np.float32)
    b = np.array([[[2.0, np.nan, np.nan, -0.0, 0.0, -0.0]]], np.float32)
    mx, s1 = row("TMAX").semantics(D.FP32, a, b)
    mn, s2 = row("TMIN").semantics(D.FP32, a, b)
    assert list(raw(mx).ravel()) == [0x40000000, 0x3F800000, 0x7FC00000, 0, 0, 0x80000000]
    assert list(raw(mn).ravel()) == [
        0x40000000,
        0x3F800000,
        0x7FC00000,
        0x80000000,
        0x80000000,
        0x80000000,
    ]
    assert s1[0] == 0 and s2[0] == 0
    snan = np.array([[[0x7F800001]]], np.uint32).view(np.float32)
    r, s = row("TMAX").semantics(D.FP32, snan, np.array([[[3.0]]], np.float32))
    assert r.ravel()[0] == 3.0 and s[0] == NV


# ---------------------------------------------------------------- integers


def int_strategy(dt: D) -> st.SearchStrategy[np.ndarray]:
    """SHAPE arrays of integers: half the range's edges and small values, half uniform."""
    w, signed = info(dt).bits, info(dt).is_signed
    lo, hi = (-(1 << (w - 1)), (1 << (w - 1)) - 1) if signed else (0, (1 << w) - 1)
    edges = [0, lo, hi, 1, -1 if signed else 2, lo + 1, hi - 1]

    def pick(kind: int, raw: int) -> int:
        return edges[kind % len(edges)] if kind < 128 else lo + raw % (hi - lo + 1)

    return elements(N, pick).map(lambda v: np.array(v, info(dt).carrier).reshape(SHAPE))


def wrap(v: int, dt: D) -> int:
    w, signed = info(dt).bits, info(dt).is_signed
    v &= (1 << w) - 1
    return v - (1 << w) if signed and v >> (w - 1) else v


def int_oracle(op: str, dt: D, a: int, b: int) -> int:
    w = info(dt).bits
    if op == "add":
        return wrap(a + b, dt)
    if op == "sub":
        return wrap(a - b, dt)
    if op == "mul":
        return wrap(a * b, dt)
    if op == "div":
        q = abs(a) // abs(b)
        return wrap(-q if (a < 0) != (b < 0) else q, dt)
    if op == "rem":
        return wrap(a - b * (a // b), dt)  # Python // is floor division
    if op == "max":
        return max(a, b)
    if op == "min":
        return min(a, b)
    if op in ("and", "or", "xor"):
        f = {"and": int.__and__, "or": int.__or__, "xor": int.__xor__}[op]
        return wrap(f(a & ((1 << w) - 1), b & ((1 << w) - 1)), dt)
    cnt = (b & ((1 << w) - 1)) & (w - 1)
    if op == "shl":
        return wrap(a << cnt, dt)
    return a >> cnt  # Python >> is arithmetic; unsigned values are non-negative


@pytest.mark.parametrize("dt", INTS, ids=lambda d: d.name)
@pytest.mark.parametrize(
    "op", ["add", "sub", "mul", "div", "rem", "max", "min", "and", "or", "xor", "shl", "shr"]
)
@settings(max_examples=15)
@given(data=st.data())
def test_integer_binary(dt: D, op: str, data: st.DataObject) -> None:
    """D5: add/sub/mul wrap, division truncates, signed TREM is floor modulo, shifts use
    the low log2(width) count bits, TSHR is arithmetic for signed types."""
    a = data.draw(int_strategy(dt))
    b = data.draw(int_strategy(dt))
    if op in ("div", "rem"):
        b = np.where(b == 0, info(dt).carrier.type(3), b)
    res, status = core.binary(op, dt, a, b)
    assert res.dtype == info(dt).carrier and not status.any()
    want = [int_oracle(op, dt, int(x), int(y)) for x, y in zip(a.ravel(), b.ravel())]
    assert [int(v) for v in res.ravel()] == want


@pytest.mark.parametrize("dt", [d for d in INTS if info(d).is_signed], ids=lambda d: d.name)
@pytest.mark.parametrize("op", ["div", "rem"])
@settings(max_examples=25)
@given(data=st.data())
def test_signed_divrem_without_a_minus_one_divisor(dt: D, op: str, data: st.DataObject) -> None:
    """Tiles without a -1 divisor (the native fmod/remainder path; a -1 anywhere takes
    the word path): every edge dividend, INT_MIN divisors included."""
    a = data.draw(int_strategy(dt))
    b = data.draw(int_strategy(dt))
    b = np.where((b == 0) | (b == -1), info(dt).carrier.type(-3), b)
    res, _ = core.binary(op, dt, a, b)
    want = [int_oracle(op, dt, int(x), int(y)) for x, y in zip(a.ravel(), b.ravel())]
    assert [int(v) for v in res.ravel()] == want


@pytest.mark.parametrize("dt", INTS, ids=lambda d: d.name)
def test_integer_zero_divisor_is_illegal(dt: D) -> None:
    a = np.ones(SHAPE, info(dt).carrier)
    b = np.ones(SHAPE, info(dt).carrier)
    b[1, 1, 2] = 0
    for m in ("TDIV", "TREM"):
        with pytest.raises(core.SemanticError) as e:
            row(m).semantics(dt, a, b)
        assert "zero divisor" in e.value.rule


def test_integer_pinned_cases() -> None:
    """INT_MIN / -1 wraps; TREM takes the divisor's sign; shift counts are masked."""
    r, _ = core.binary(
        "div", D.S32, np.array([[[-(2**31)]]], np.int32), np.array([[[-1]]], np.int32)
    )
    assert r.ravel()[0] == -(2**31)
    r, _ = core.binary(
        "rem",
        D.S8,
        np.array([[[7, -7, 7, -7]]], np.int8),
        np.array([[[3, 3, -3, -3]]], np.int8),
    )
    assert list(r.ravel()) == [1, 2, -2, -1]
    r, _ = core.binary("shl", D.U8, np.array([[[1]]], np.uint8), np.array([[[9]]], np.uint8))
    assert r.ravel()[0] == 2
    r, _ = core.binary(
        "shr", D.S16, np.array([[[-256]]], np.int16), np.array([[[0x14]]], np.int16)
    )
    assert r.ravel()[0] == -16
    r, _ = core.binary(
        "add", D.U64, np.array([[[2**64 - 1]]], np.uint64), np.array([[[2]]], np.uint64)
    )
    assert r.ravel()[0] == 1


@pytest.mark.parametrize("dt", INTS, ids=lambda d: d.name)
@settings(max_examples=15)
@given(data=st.data())
def test_integer_unary(dt: D, data: st.DataObject) -> None:
    """abs and neg wrap (abs(INT_MIN) = INT_MIN), not is bitwise, relu clamps negatives."""
    a = data.draw(int_strategy(dt))
    for op, f in (
        ("abs", lambda v: wrap(abs(v), dt)),
        ("neg", lambda v: wrap(-v, dt)),
        ("not", lambda v: wrap(~v, dt)),
        ("relu", lambda v: max(v, 0)),
    ):
        res, status = core.unary(op, dt, a)
        assert [int(v) for v in res.ravel()] == [f(int(v)) for v in a.ravel()], op
        assert not status.any()
