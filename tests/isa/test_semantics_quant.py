"""TQUANT / TDEQUANT against exact-rational oracles (seed D133/D134, DECISIONS D5)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ptoc.backend.isa.datatypes import DataType
from ptoc.backend.isa.semantics.core import NV, NX, OF, SemanticError
from ptoc.backend.isa.semantics.quant import (
    tdequant,
    tdequant_scalars_legal,
    tquant,
    tquant_scalars_legal,
)

D = DataType
RANGE = {D.S8: (-128, 127), D.U8: (0, 255)}
ONE = 0x3F800000


def f32(bits: int) -> np.float32:
    return np.array([bits], np.uint32).view(np.float32)[0]


def bits32(v) -> int:
    return int(np.array([v], np.float32).view(np.uint32)[0])


def gpr(values) -> np.ndarray:
    """Signed Python ints as raw 64-bit GPR values."""
    return np.array([v % 2**64 for v in values], np.uint64)


def round_rational(v: Fraction, rmode: int) -> int:
    """ASL FloatingToInteger on an exact rational (RMode 0 = RNE)."""
    lower = v.numerator // v.denominator
    frac = v - lower
    half = Fraction(1, 2)
    if rmode in (0, 1):
        return lower + (frac > half or (frac == half and lower % 2 == 1))
    if rmode == 2:
        return math.trunc(v)
    if rmode == 3:
        return lower
    if rmode == 4:
        return lower + (frac != 0)
    if rmode == 5:
        return lower + (frac > half or (frac == half and v >= 0))
    if rmode == 6:
        return lower + (frac != 0 and lower % 2 == 0)
    return lower + (frac >= half)


def oracle_tquant(dst_dt, x_bits, m_bits, zp, rmode, sat):
    """D10 (seed decision 133, ASL ``TileProfileQuantize``): q = round(x*m + zp), the
    affine value as an exact rational, rounded once; NaN -> 0 with NV, an infinity
    saturates with NV, out of range -> NV, inexact -> NX."""
    lo, hi = RANGE[dst_dt]
    x, m = f32(x_bits), f32(m_bits)
    if math.isnan(x):
        return 0, NV
    if math.isinf(x):
        return (hi if x > 0 else lo), NV
    v = Fraction(float(x)) * Fraction(float(m)) + zp
    q = round_rational(v, rmode)
    flags = NX if q != v else 0
    if q < lo or q > hi:
        flags |= NV
        q = min(max(q, lo), hi) if sat else q
    q = (q - lo) % 256 + lo
    return q, flags


SPECIAL_X = [
    0x0,
    0x80000000,
    0x7F800000,
    0xFF800000,
    0x7FC00000,
    0x7F800001,
    0xFFC00001,
    0x3F000000,
    0xBF000000,
    0x3FC00000,
    0x40200000,
    0x437F0000,
    0x43000000,
    0xC3000000,
    0x4B000001,
    0x4F800000,
    0xCF800000,
    0x00000001,
    0x7F7FFFFF,
]
HALVES = st.integers(-700, 700).map(lambda k: bits32(np.float32(k / 2)))
X = st.one_of(
    st.sampled_from(SPECIAL_X),
    HALVES,
    st.integers(0, 2**32 - 1),
    st.floats(-300, 300, width=32).map(bits32),
)
M = st.one_of(
    st.sampled_from(
        [ONE, 0x3F000000, 0x40400000, 0x3D8590B2, 0x00000001, 0x7F7FFFFF, 0x3E5B6DB7]
    ),
    st.integers(1, 0x7F7FFFFF),
)


@pytest.mark.parametrize("dst_dt", [D.S8, D.U8])
@given(
    xs=st.lists(X, min_size=1, max_size=24),
    m=M,
    data=st.data(),
    rmode=st.integers(0, 7),
    sat=st.booleans(),
)
def test_tquant_matches_rational_oracle(dst_dt, xs, m, data, rmode, sat):
    lo, hi = RANGE[dst_dt]
    zp = data.draw(st.integers(lo, hi))
    x = np.array([[xs]], np.uint32).view(np.float32)
    q, status = tquant(dst_dt, x, gpr([m]), gpr([zp]), rmode, sat)
    assert q.dtype == (np.int8 if dst_dt == D.S8 else np.uint8) and q.shape == x.shape
    want_flags = 0
    for k, xb in enumerate(xs):
        want_q, fl = oracle_tquant(dst_dt, xb, m, zp, rmode, sat)
        assert int(q[0, 0, k]) == want_q, (hex(xb), hex(m), zp, rmode, sat)
        want_flags |= fl
    assert int(status[0]) == want_flags  # nothing but NV and NX: no FP32 product


def test_tquant_sat0_modulo():
    x = np.array([[[300.0, -200.0, 255.0, 256.0]]], np.float32)
    q, status = tquant(D.U8, x, gpr([ONE]), gpr([0]), 0, False)
    assert q.tolist() == [[[44, 56, 255, 0]]] and status.tolist() == [NV]
    q, _ = tquant(D.S8, x, gpr([ONE]), gpr([0]), 0, False)
    assert q.tolist() == [[[44, 56, -1, 0]]]


def test_tquant_sat1_clamps():
    x = np.array([[[300.0, -200.0, 127.4, -128.6]]], np.float32)
    q, status = tquant(D.S8, x, gpr([ONE]), gpr([0]), 0, True)
    assert q.tolist() == [[[127, -128, 127, -128]]] and status.tolist() == [NV | NX]


def test_tquant_nan_zero_sets_nv():
    x = np.array([[[0x7FC00000, 0xFF800001]], [[0x3F800000, 0x40000000]]], np.uint32).view(
        np.float32
    )
    q, status = tquant(D.U8, x, gpr([ONE, ONE]), gpr([7, 7]), 0, True)
    assert q.tolist() == [[[0, 0]], [[8, 9]]] and status.tolist() == [NV, 0]


def test_tquant_infinity_saturates_in_both_modes():
    x = np.array([[[0x7F800000, 0xFF800000]]], np.uint32).view(np.float32)
    for sat in (False, True):
        q, status = tquant(D.S8, x, gpr([ONE]), gpr([0]), 0, sat)
        assert q.tolist() == [[[127, -128]]] and status.tolist() == [NV]
    # A finite x whose product exceeds the FP32 range is an exact (huge, even) integer,
    # not an infinity: out of range (NV, no OF), its low 8 bits zero, clamped with Sat.
    big = np.array([[[1e30]]], np.float32)
    q, status = tquant(D.U8, big, gpr([0x7F7FFFFF]), gpr([0]), 0, False)
    assert q.tolist() == [[[0]]] and status.tolist() == [NV]
    q, status = tquant(D.U8, big, gpr([0x7F7FFFFF]), gpr([0]), 0, True)
    assert q.tolist() == [[[255]]] and status.tolist() == [NV]


def test_tquant_zero_point_added_exactly_and_rmodes():
    x = np.array([[[2.5, -2.5, 0.5, -0.5]]], np.float32)
    want = {
        0: [-98, -102, -100, -100],
        2: [-97, -102, -99, -100],
        3: [-98, -103, -100, -101],
        4: [-97, -102, -99, -100],
        5: [-98, -103, -100, -101],
        6: [-97, -103, -99, -101],
        7: [-97, -102, -99, -100],
    }
    for rmode, q_want in want.items():
        q, status = tquant(D.S8, x, gpr([ONE]), gpr([-100]), rmode, True)
        assert q.tolist() == [[q_want]], rmode
        assert status.tolist() == [NX]


def test_tquant_rounds_once_d10_witness():
    """D10's witness: x = 0x3FA868D4, m = 0x3FF3377A, exact product 2.50000000326,
    RNE, S8 gives 3 (rounding the product to FP32 first would give 2.5, then 2)."""
    x = np.array([[[0x3FA868D4]]], np.uint32).view(np.float32)
    q, status = tquant(D.S8, x, gpr([0x3FF3377A]), gpr([0]), 1, True)
    assert q.tolist() == [[[3]]] and status.tolist() == [NX]
    # x*m = 1.49999998 exactly: one rounding gives 1 (fl32 first would give 1.5, then 2).
    q, status = tquant(
        D.U8, np.array([[[23.0]]], np.float32), gpr([0x3D8590B2]), gpr([0]), 1, True
    )
    assert q.tolist() == [[[1]]] and status.tolist() == [NX]


def test_tquant_tiny_product_is_not_an_underflow():
    """The product is never rounded to FP32, so a tiny one raises no UF: only the
    integer rounding's NX. A tiny negative product below a zero point rounds by the
    exact value (RTZ: -1 + tiny -> 0; RTM: -1)."""
    q, status = tquant(
        D.S8, np.array([[[1e-30]]], np.float32), gpr([0x00000001]), gpr([3]), 0, True
    )
    assert q.tolist() == [[[3]]] and status.tolist() == [NX]
    x = np.array([[[0.5, -0.5]]], np.float32)
    for rmode, want in ((2, [0, -1]), (3, [-1, -2]), (4, [0, -1]), (1, [-1, -1])):
        q, status = tquant(D.S8, x, gpr([0x00000001]), gpr([-1]), rmode, True)
        assert q.tolist() == [[want]] and status.tolist() == [NX], rmode


def test_tquant_scalars_legal():
    ok = gpr([ONE])
    assert tquant_scalars_legal(D.S8, ok, gpr([-128])) is None
    assert tquant_scalars_legal(D.S8, ok, gpr([-1])) is None  # 0xFFFF_FFFF_FFFF_FFFF
    assert tquant_scalars_legal(D.S8, ok, gpr([0xFF])) is not None
    assert tquant_scalars_legal(D.S8, ok, gpr([128])) is not None
    assert tquant_scalars_legal(D.U8, ok, gpr([0xFF])) is None
    assert tquant_scalars_legal(D.U8, ok, gpr([-1])) is not None
    assert tquant_scalars_legal(D.U8, ok, gpr([0x1_00])) is not None
    for bad in (0x0, 0x80000000, 0xBF800000, 0x7F800000, 0x7FC00000, 0xFF800000):
        assert tquant_scalars_legal(D.U8, gpr([bad]), gpr([0])) is not None, hex(bad)
    assert tquant_scalars_legal(D.U8, gpr([0x00000001]), gpr([0])) is None  # subnormal
    assert tquant_scalars_legal(D.U8, gpr([0xFFFFFFFF_3F800000]), gpr([0])) is None
    assert tquant_scalars_legal(D.S16, ok, gpr([0])) is not None
    # One illegal PE makes the bundle illegal.
    assert tquant_scalars_legal(D.U8, gpr([ONE, 0]), gpr([0, 0])) is not None
    with pytest.raises(SemanticError):
        tquant(D.U8, np.zeros((1, 1, 1), np.float32), gpr([0]), gpr([0]), 0, False)


# ---- TDEQUANT ---------------------------------------------------------------------------

# Multipliers below 2**118 keep (q - zp) * m finite; overflow has its own test.
M_DQ = st.one_of(
    st.sampled_from([ONE, 0x3F000000, 0x3D8590B2, 0x00000001, 0x00800000]),
    st.integers(1, 0x7A7FFFFF),
)


@pytest.mark.parametrize("src_dt", [D.S8, D.U8])
@given(data=st.data(), m=M_DQ, rmode=st.integers(0, 4), n=st.integers(1, 40))
def test_tdequant_matches_rational_oracle(src_dt, data, m, rmode, n):
    lo, hi = RANGE[src_dt]
    zp = data.draw(st.integers(lo, hi))
    qs = data.draw(st.lists(st.integers(lo, hi), min_size=n, max_size=n))
    q = np.array([[qs]], np.int8 if src_dt == D.S8 else np.uint8)
    out, status = tdequant(src_dt, q, gpr([m]), gpr([zp]), rmode)
    assert out.dtype == np.float32
    flags = 0
    for k, qv in enumerate(qs):
        exact = Fraction(qv - zp) * Fraction(float(f32(m)))
        got = Fraction(float(out[0, 0, k]))
        # RNE / RTZ / RTM / RTP: the result is the right neighbour of the exact value.
        if exact == 0:
            assert bits32(out[0, 0, k]) == 0  # (q - zp) = 0 gives +0
            continue
        below = np.nextafter(np.float32(float(exact)), np.float32(-np.inf))
        cands = {
            Fraction(float(c))
            for c in (
                np.float32(float(exact)),
                below,
                np.nextafter(np.float32(float(exact)), np.float32(np.inf)),
            )
        }
        lower = max(c for c in cands if c <= exact)
        upper = min(c for c in cands if c >= exact)
        if rmode in (0, 1):
            want = lower if exact - lower < upper - exact else upper
            if exact - lower == upper - exact:
                want = lower if bits32(np.float32(float(lower))) % 2 == 0 else upper
        elif rmode == 2:
            want = lower if exact > 0 else upper
        elif rmode == 3:
            want = lower
        else:
            want = upper
        assert got == want, (qv, zp, hex(m), rmode)
        flags |= NX if got != exact else 0
    assert int(status[0]) & NX == flags


def test_tdequant_basic_and_scalars():
    q = np.array([[[-128, 0, 127]]], np.int8)
    out, status = tdequant(D.S8, q, gpr([0x3E800000]), gpr([-1]), 0)  # m = 0.25, zp = -1
    assert out.tolist() == [[[-31.75, 0.25, 32.0]]] and status.tolist() == [0]
    assert tdequant_scalars_legal(D.U8, gpr([ONE]), gpr([255])) is None
    assert tdequant_scalars_legal(D.U8, gpr([ONE]), gpr([-1])) is not None
    assert tdequant_scalars_legal(D.S8, gpr([0x80000000]), gpr([0])) is not None
    assert tdequant_scalars_legal(D.FP32, gpr([ONE]), gpr([0])) is not None
    with pytest.raises(SemanticError):
        tdequant(D.S8, q, gpr([0x7F800000]), gpr([0]), 0)


def test_tdequant_overflow_and_rmode():
    q = np.array([[[127, -128]]], np.int8)
    out, status = tdequant(D.S8, q, gpr([0x7F7FFFFF]), gpr([0]), 0)
    assert out.tolist() == [[[np.inf, -np.inf]]] and status[0] & (OF | NX) == OF | NX
    out, _ = tdequant(D.S8, q, gpr([0x7F7FFFFF]), gpr([0]), 2)  # RTZ: largest finite
    assert out.view(np.uint32).tolist() == [[[0x7F7FFFFF, 0xFF7FFFFF]]]


#: TDEQUANT multipliers of every kind of result: ordinary ones, any positive finite
#: FP32, those whose products overflow FP32 (OF), fall below its smallest normal
#: (subnormal results, UF) or land in the band just below it (tininess after rounding)
M_DQ_ALL = st.one_of(
    M_DQ,
    st.integers(1, 0x7F7FFFFF),
    st.sampled_from([0x7F7FFFFF, 0x7F000000, 0x7E800001, 0x00000001, 0x00000003,
                     0x007FFFFF, 0x00800000, 0x00800001, 0x01000000, 0x3B800000]),
)  # fmt: skip


@pytest.mark.parametrize("src_dt", [D.S8, D.U8])
@given(data=st.data())
def test_tdequant_native_rne_matches_the_exact_path(src_dt, data):
    """Round to nearest even (RMode 0 and RNE) takes the native narrowing: per-PE
    multipliers of every binade (overflowing, subnormal and near-normal products among
    them) and zero points, every source value; results and per-PE status equal the
    exact rounding's."""
    from ptoc.backend.isa.semantics import fastpath

    lo, hi = RANGE[src_dt]
    ms = data.draw(st.lists(M_DQ_ALL, min_size=4, max_size=4))
    zps = data.draw(st.lists(st.integers(lo, hi), min_size=4, max_size=4))
    qs = data.draw(st.lists(st.integers(lo, hi), min_size=4 * 2 * 9, max_size=4 * 2 * 9))
    q = np.array(qs, np.int8 if src_dt == D.S8 else np.uint8).reshape(4, 2, 9)
    q[:, 0, :2] = np.array([lo, hi])  # the extremes on every PE
    rmode = data.draw(st.sampled_from([0, 1]))
    got = tdequant(src_dt, q, gpr(ms), gpr(zps), rmode)
    with fastpath.exact_only():
        want = tdequant(src_dt, q, gpr(ms), gpr(zps), rmode)
    assert got[0].dtype == want[0].dtype == np.float32
    assert np.array_equal(got[0].view(np.uint32), want[0].view(np.uint32))
    assert np.array_equal(got[1], want[1])


def _near_ties(k: int, m_bits: int) -> list[int]:
    """FP32 sources whose product with the multiplier lies on, or one FP32 step either
    side of, the half-integer ``k + 1/2`` and the integer ``k`` (where the native path's
    certificate is decided)."""
    m = float(f32(m_bits))
    out = []
    for target in (k + 0.5, float(k)):
        with np.errstate(over="ignore"):  # a tiny multiplier: the source is Inf
            x = np.float32(target / m)
        out += [bits32(x), bits32(np.nextafter(x, np.float32(np.inf))),
                bits32(np.nextafter(x, np.float32(-np.inf)))]  # fmt: skip
    return out


@pytest.mark.parametrize("dst_dt", [D.S8, D.U8])
@given(data=st.data(), sat=st.booleans())
def test_tquant_native_rne_matches_the_exact_path(dst_dt, data, sat):
    """Round to nearest even (RMode 0 and RNE) takes the native path: per-PE multipliers
    and zero points (odd and even), near-ties, exact integers, specials, every binade;
    results and per-PE status equal the exact path's."""
    from ptoc.backend.isa.semantics import fastpath

    lo, hi = RANGE[dst_dt]
    ms = data.draw(st.lists(M, min_size=4, max_size=4))
    zps = data.draw(st.lists(st.integers(lo, hi), min_size=4, max_size=4))
    rows = []
    for m in ms:
        ks = data.draw(st.lists(st.integers(-300, 300), min_size=1, max_size=3))
        xs = data.draw(st.lists(X, min_size=4, max_size=12))
        row = xs + [b for k in ks for b in _near_ties(k, m)]
        rows.append((row * 3)[:30])
    x = np.array(rows, np.uint32).view(np.float32).reshape(4, 3, 10)
    rmode = data.draw(st.sampled_from([0, 1]))
    got = tquant(dst_dt, x, gpr(ms), gpr(zps), rmode, sat)
    with fastpath.exact_only():
        want = tquant(dst_dt, x, gpr(ms), gpr(zps), rmode, sat)
    assert got[0].dtype == want[0].dtype
    assert np.array_equal(got[0], want[0])
    assert np.array_equal(got[1], want[1])


@pytest.mark.parametrize("dst_dt", [D.S8, D.U8])
def test_tquant_native_rne_near_ties_within_float64_rounding(dst_dt):
    """Products 2**-47 below one half and 2**-46 below one: ``prod + zp`` rounds in
    float64 onto the tie (or the integer) for a large zero point, so the native path
    must hand them to the exact path (a wrong tie or a lost NX otherwise); products
    beyond 2**53, where an odd zero point is rounded away (a wrong low byte)."""
    from ptoc.backend.isa.semantics import fastpath

    lo, hi = RANGE[dst_dt]
    pairs = [(1 - 2.0**-23, 0.5 + 2.0**-24), (1 - 2.0**-23, 1 + 2.0**-23),
             (2.0**30 + 2.0**7, 2.0**23)]  # fmt: skip
    xs, ms = [], []
    for x, m in pairs:
        for k in (-2, 0, 3):
            for sign in (1, -1):
                xs.append(sign * x * 2.0**k)
                ms.append(m * 2.0**-k)
    zps = [z for z in (65, 127, 255, -65, -128, 64, 0) if lo <= z <= hi]
    for zp in zps:
        for sat in (False, True):
            x = np.array(xs, np.float32).reshape(len(xs), 1, 1)
            mb = gpr([bits32(np.float32(m)) for m in ms])
            zb = gpr([zp] * len(xs))
            got = tquant(dst_dt, x, mb, zb, 0, sat)
            with fastpath.exact_only():
                want = tquant(dst_dt, x, mb, zb, 0, sat)
            assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])


@pytest.mark.parametrize("dst_dt", [D.S8, D.U8])
@given(data=st.data(), sat=st.booleans())
def test_tquant_native_rne_whole_tile_of_ordinary_values(dst_dt, data, sat):
    """Tiles whose every product is ordinary (finite, small, inexact, no near-tie) are
    settled by reductions alone: in range on some PEs and beyond it on others."""
    from ptoc.backend.isa.semantics import fastpath

    lo, hi = RANGE[dst_dt]
    ms = data.draw(st.lists(st.sampled_from([0x3F400000, 0x3DCCCCCD, 0x40133333, ONE]),
                            min_size=4, max_size=4))  # fmt: skip
    zps = data.draw(st.lists(st.integers(lo, hi), min_size=4, max_size=4))
    scale = data.draw(st.sampled_from([1.0, 40.0, 1000.0]))
    xs = data.draw(st.lists(st.floats(-1, 1, width=32), min_size=24, max_size=24))
    x = (np.array(xs, np.float32) * np.float32(scale) + np.float32(0.3)).reshape(4, 2, 3)
    got = tquant(dst_dt, x, gpr(ms), gpr(zps), 0, sat)
    with fastpath.exact_only():
        want = tquant(dst_dt, x, gpr(ms), gpr(zps), 0, sat)
    assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])
