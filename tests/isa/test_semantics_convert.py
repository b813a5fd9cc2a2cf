"""TCVT and round_float against ml_dtypes, Python integers and the Fraction oracle."""

from __future__ import annotations

from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ptoc.backend.isa import row
from ptoc.backend.isa.datatypes import DataType as D
from ptoc.backend.isa.datatypes import info
from ptoc.backend.isa.semantics import core
from ptoc.backend.isa.semantics.convert import convert

try:
    from .test_semantics_oracle import (
        FMTS,
        INF,
        NINF,
        RHB,
        RNA,
        RNE,
        RTM,
        RTO,
        RTP,
        RTZ,
        hif8_encode_asl,
        hif8_value_asl,
        overflows,
        ref_round,
    )
except ImportError:  # tests/isa is not a package
    from test_semantics_oracle import (
        FMTS,
        INF,
        NINF,
        RHB,
        RNA,
        RNE,
        RTM,
        RTO,
        RTP,
        RTZ,
        hif8_encode_asl,
        hif8_value_asl,
        overflows,
        ref_round,
    )

NV, DZ, OF, UF, NX = 1, 2, 4, 8, 16
MODES = [RNE, RTZ, RTM, RTP, RNA, RTO, RHB]
ML = {
    D.FP16: np.float16, D.BF16: ml_dtypes.bfloat16, D.E4M3: ml_dtypes.float8_e4m3fn,
    D.E5M2: ml_dtypes.float8_e5m2, D.E3M2: ml_dtypes.float6_e3m2fn,
    D.E2M3: ml_dtypes.float6_e2m3fn, D.E2M1X2: ml_dtypes.float4_e2m1fn,
}  # fmt: skip


def f32(bits: list[int]) -> np.ndarray:
    return np.array(bits, np.uint32).reshape(1, 1, -1).view(np.float32)


def fvals(dt: D, r: np.ndarray) -> list[float]:
    return [float(v) for v in core.to_f64(dt, r).ravel()]


@pytest.mark.parametrize("dst", list(ML), ids=lambda d: d.name)
@settings(max_examples=30)
@given(st.lists(st.integers(0, 2**32 - 1), min_size=32, max_size=32))
def test_fp32_to_small_formats_match_ml_dtypes(dst: D, bits: list[int]) -> None:
    """D5: RNE conversions agree with ml_dtypes (single rounding from float32) on every
    non-NaN result; NaN results are the destination's canonical NaN."""
    a = f32(bits)
    r, _ = convert(D.FP32, dst, a, 0, 0)
    with np.errstate(all="ignore"):
        want = a.astype(ML[dst]).astype(np.float64).ravel()
    got = fvals(dst, r)
    for x, g, w in zip(a.ravel(), got, want):
        if np.isnan(x):
            continue  # ml_dtypes maps NaN to -0 for NaN-less formats; we give +0 with NV
        if np.isnan(w):
            assert np.isnan(g) and int(
                core.to_bits(r).ravel()[got.index(g)]
            ) == core.canonical_nan(dst)
        else:
            assert g == w or (g == 0 and w == 0), (x, g, w)


def test_exhaustive_fp16_bf16_round_trip_through_fp32() -> None:
    """Every FP16/BF16 encoding widens exactly and narrows back to itself (NaN canonical)."""
    for dt in (D.FP16, D.BF16):
        bits = np.arange(65536, dtype=np.uint16).reshape(1, 256, 256)
        a = bits.view(info(dt).carrier)
        wide, s1 = convert(dt, D.FP32, a)
        back, s2 = convert(D.FP32, dt, wide)
        nan = np.isnan(core.to_f64(dt, a))
        assert np.array_equal(core.to_bits(back)[~nan], bits[~nan])
        assert np.all(core.to_bits(back)[nan] == core.canonical_nan(dt))
        assert s1[0] == NV and s2[0] == 0  # sNaN encodings exist among all bit patterns


@pytest.mark.parametrize(
    "dst",
    [
        D.FP32,
        D.TF32,
        D.HF32,
        D.FP16,
        D.BF16,
        D.E4M3,
        D.E5M2,
        D.E3M2,
        D.E2M3,
        D.E2M1X2,
        D.E1M2X2,
    ],
    ids=lambda d: d.name,
)
@pytest.mark.parametrize("mode", MODES)
@settings(max_examples=12)
@given(
    st.lists(
        st.floats(allow_nan=False, allow_infinity=False, width=64), min_size=12, max_size=12
    )
)
def test_round_float_all_modes_against_fraction_oracle(
    dst: D, mode: int, xs: list[float]
) -> None:
    """Every RMode (1 RNE .. 7 RHB) against the independent Fraction rounding, with OF/NX
    flags; overflow goes to Inf or the largest finite value per direction."""
    scale = {D.E2M1X2: 1e-300, D.E1M2X2: 1e-300, D.E3M2: 1e-300, D.E2M3: 1e-300}.get(dst, 1.0)
    x = np.array(xs) * scale if scale != 1.0 else np.array(xs)
    x = np.concatenate([x, [2.5, -2.5, 0.375, -1e-40, 1e39, -1e39, 7.9, 2.0**-130]])
    r, flags = core.round_float(dst, x, mode)
    fmt = FMTS[dst.name]
    for xi, gi, fi in zip(x, fvals(dst, r), flags):
        want = ref_round(Fraction(float(xi)), fmt, mode)
        if want in (INF, NINF) and not fmt.has_inf:
            if dst in (D.E4M3,):
                assert np.isnan(gi)
            else:
                assert abs(gi) == float(fmt.max)
            assert fi & OF
            continue
        w = float("inf") if want == INF else float("-inf") if want == NINF else float(want)
        assert gi == w, (xi, gi, w)
        assert bool(fi & OF) == overflows(Fraction(float(xi)), fmt, mode)
        assert bool(fi & NX) == (
            Fraction(float(xi)) != (want if isinstance(want, Fraction) else 0)
            or want in (INF, NINF)
        )
        if gi == 0:
            assert np.signbit(gi) == np.signbit(xi)


def test_bf16_from_float64_is_single_rounding() -> None:
    """ml_dtypes narrows float64 to BF16 through float32 (double rounding); we do not."""
    x = np.array([1 + 2.0**-8 + 2.0**-40])
    r, f = core.round_float(D.BF16, x)
    assert int(core.to_bits(r)[0]) == 0x3F81 and f[0] == NX


# ---------------------------------------------------------------- float <-> int


def int_oracle(x: Fraction, dst: D, mode: int, sat: bool) -> tuple[int, int]:
    w, signed = info(dst).bits, info(dst).is_signed
    lo, hi = (-(1 << (w - 1)), (1 << (w - 1)) - 1) if signed else (0, (1 << w) - 1)
    fl = x.numerator // x.denominator
    rem = x - fl
    if rem == 0:
        q = fl
    elif mode == RTZ:
        q = fl if x > 0 else fl + 1
    elif mode == RTM:
        q = fl
    elif mode == RTP:
        q = fl + 1
    elif mode == RNE:
        q = fl + (rem > Fraction(1, 2) or (rem == Fraction(1, 2) and fl % 2))
    elif mode == RNA:
        q = fl + (rem > Fraction(1, 2) or (rem == Fraction(1, 2) and x > 0))
    elif mode == RHB:
        q = fl + (rem >= Fraction(1, 2))
    else:
        q = fl if fl % 2 else fl + 1
    flags = NX if rem else 0
    if not lo <= q <= hi:
        flags |= NV
        q = min(max(q, lo), hi) if sat else q
    q &= (1 << w) - 1
    return (q - (1 << w) if signed and q >> (w - 1) else q), flags


@pytest.mark.parametrize(
    "dst", [D.S8, D.U8, D.S16, D.S32, D.U32, D.S64, D.U64, D.S4X2, D.U4X2], ids=lambda d: d.name
)
@pytest.mark.parametrize("mode", [0, *MODES])
@pytest.mark.parametrize("sat", [False, True])
@settings(max_examples=8)
@given(
    st.lists(
        st.one_of(st.floats(-1e3, 1e3), st.floats(allow_nan=False, allow_infinity=False)),
        min_size=10,
        max_size=10,
    )
)
def test_float_to_int(dst: D, mode: int, sat: bool, xs: list[float]) -> None:
    """RMode 0 is RTZ for float->int (TCVT.asl); out-of-range sets NV and clamps (Sat=1)
    or wraps modulo 2**width (Sat=0); inexact sets NX."""
    x = np.array([*xs, 2.5, -2.5, 0.5, -0.5, 300.7, -129.5], np.float64).reshape(1, 1, -1)
    r, s = convert(D.FP64, dst, x, mode, sat)
    want_flags = 0
    for xi, gi in zip(x.ravel(), r.ravel()):
        q, f = int_oracle(Fraction(float(xi)), dst, mode or RTZ, sat)
        want_flags |= f
        assert int(gi) == q, (xi, gi, q)
    assert s[0] == want_flags


def test_float_to_int_specials() -> None:
    """NaN -> 0 with NV; Inf clamps (no modulo exists) with NV, with or without Sat."""
    x = f32([0x7FC00000, 0x7F800000, 0xFF800000, 0x7F800001])
    for sat in (0, 1):
        r, s = convert(D.FP32, D.S16, x, 0, sat)
        assert list(r.ravel()) == [0, 32767, -32768, 0] and s[0] == NV
    r, s = convert(D.FP32, D.U8, x, 0, 1)
    assert list(r.ravel()) == [0, 255, 0, 0] and s[0] == NV


def test_tquant_style_saturation_and_default_rtz_pinned() -> None:
    """Seed ADR 0083 / D5 wording applied to TCVT: Sat=1 clamps, Sat=0 keeps the low
    bits; the TCVT float->int default rounding is RTZ."""
    x = np.array([[[200.7, -200.7, 1.5, -1.5]]], np.float32)
    r, s = row("TCVT").semantics(D.FP32, x, D.S8)  # RMode 0 -> RTZ, Sat 0 -> wrap
    assert list(r.ravel()) == [200 - 256, -200 + 256, 1, -1] and s[0] == NV | NX
    r, s = row("TCVT").semantics(D.FP32, x, D.S8, 1, 1)  # RNE, saturate
    assert list(r.ravel()) == [127, -128, 2, -2] and s[0] == NV | NX
    r, s = row("TCVT").semantics(D.FP32, x, D.U8, 0, 1)
    assert list(r.ravel()) == [200, 0, 1, 0] and s[0] == NV | NX


@pytest.mark.parametrize(
    "src",
    [D.S8, D.U8, D.S16, D.U16, D.S32, D.U32, D.S64, D.U64, D.S4X2, D.U4X2],
    ids=lambda d: d.name,
)
@pytest.mark.parametrize(
    "dst", [D.S8, D.U8, D.S32, D.U64, D.S4X2, D.U4X2], ids=lambda d: d.name
)
@settings(max_examples=8)
@given(data=st.data())
def test_int_to_int(src: D, dst: D, data: st.DataObject) -> None:
    """TileConvertIntegerValue: Sat clamps to the destination range, else low bits."""
    w = info(src).bits
    lo, hi = (-(1 << (w - 1)), (1 << (w - 1)) - 1) if info(src).is_signed else (0, (1 << w) - 1)
    vals = data.draw(st.lists(st.integers(lo, hi), min_size=8, max_size=8))
    wide = np.int64 if info(src).is_signed else np.uint64
    a = np.array(vals, wide).astype(info(src).carrier).reshape(1, 2, 4)
    dw = info(dst).bits
    dlo, dhi = (
        (-(1 << (dw - 1)), (1 << (dw - 1)) - 1) if info(dst).is_signed else (0, (1 << dw) - 1)
    )
    for sat in (False, True):
        r, s = convert(src, dst, a, 0, sat)
        for v, g in zip(vals, r.ravel()):
            q = min(max(v, dlo), dhi) if sat else v & ((1 << dw) - 1)
            if not sat and info(dst).is_signed and q >> (dw - 1):
                q -= 1 << dw
            assert int(g) == q
        assert not s.any()


@pytest.mark.parametrize(
    "dst", [D.FP16, D.BF16, D.FP32, D.FP64, D.E4M3, D.E5M2, D.E2M1X2], ids=lambda d: d.name
)
@settings(max_examples=15)
@given(
    st.lists(st.integers(-(2**63), 2**63 - 1), min_size=8, max_size=8), st.sampled_from(MODES)
)
def test_int_to_float(dst: D, vals: list[int], mode: int) -> None:
    a = np.array(vals, np.int64).reshape(1, 1, -1)
    r, s = convert(D.S64, dst, a, mode)
    fmt = FMTS[dst.name]
    flags = 0
    for v, g in zip(vals, fvals(dst, r)):
        want = ref_round(Fraction(v), fmt, mode)
        if overflows(Fraction(v), fmt, mode):
            flags |= OF | NX
        if want in (INF, NINF):
            assert (
                np.isnan(g) if not fmt.has_inf and dst == D.E4M3 else abs(g) >= float(fmt.max)
            )
            continue
        flags |= NX if want != v else 0
        assert g == float(want)
    assert s[0] == flags
    r, s = convert(D.U64, D.FP32, np.array([[[2**64 - 1]]], np.uint64), 0)
    assert float(r.ravel()[0]) == 2.0**64 and s[0] == NX


# ---------------------------------------------------------------- E8M0 and HiF8


def test_e8m0_destination_rules() -> None:
    """e8m0-conversion.asl: zero/negative/NaN -> 0xFF with NV; +Inf and range overflow
    -> 0xFF (Sat=0) or 0xFE (Sat=1) with OF|NX; underflow -> 0xFF or 0x00 with UF|NX."""
    x = f32(
        [
            0,
            0x80000000,
            0xBF800000,
            0x7FC00000,
            0x7F800000,
            0x3F800000,
            0x3FC00000,
            1,
            0x7F7FFFFF,
        ]
    )
    for sat, ovf, unf in ((0, 0xFF, 0xFF), (1, 0xFE, 0x00)):
        r, s = convert(D.FP32, D.E8M0, x, 0, sat)
        b = list(core.to_bits(r).ravel())
        assert b[:5] == [0xFF, 0xFF, 0xFF, 0xFF, ovf]
        assert b[5] == 127 and b[6] == 128  # 1.5 > sqrt(2): rounds up the exponent
        assert b[7] == unf and b[8] == ovf
        assert s[0] == NV | OF | UF | NX
    r, s = convert(D.FP32, D.E8M0, f32([0x3FB504F3, 0x3FB504F4]), 3)  # RTM
    assert list(core.to_bits(r).ravel()) == [127, 127] and s[0] == NX
    r, _ = convert(D.FP32, D.E8M0, f32([0x3FB504F3, 0x3FB504F4]), 1)  # around sqrt(2)
    assert list(core.to_bits(r).ravel()) == [127, 128]
    with pytest.raises(core.SemanticError):
        convert(D.FP64, D.E8M0, np.ones((1, 1, 1)))


@settings(max_examples=25)
@given(
    st.lists(
        st.floats(-70000, 70000, width=32) | st.floats(-(2.0**-10), 2.0**-10, width=32),
        min_size=6,
        max_size=6,
    ),
    st.sampled_from(MODES),
    st.booleans(),
)
def test_hif8_encoding_matches_asl_search(xs: list[float], mode: int, sat: bool) -> None:
    """HiF8 encode equals the literal ReferenceFP8Encoding candidate search."""
    x = np.array(xs, np.float32).reshape(1, 1, -1)
    r, s = convert(D.FP32, D.HiF8, x, mode, sat)
    flags = 0
    for xi, code in zip(x.ravel(), core.to_bits(r).ravel()):
        want, f = hif8_encode_asl(Fraction(float(xi)), mode, sat)
        flags |= f
        assert int(code) == want, (xi, hex(int(code)), hex(want))
    assert s[0] == flags


def test_hif8_and_packed_decode() -> None:
    codes = np.arange(256, dtype=np.uint8).reshape(1, 16, 16)
    got = core.to_f64(D.HiF8, codes).ravel()
    for c in range(256):
        if c == 0x80:
            assert np.isnan(got[c])
        elif c & 0x7F == 0x6F:
            assert got[c] == (-np.inf if c & 0x80 else np.inf)
        else:
            assert got[c] == hif8_value_asl(c)
    e1 = core.to_f64(D.E1M2X2, np.arange(16, dtype=np.uint8)).ravel()
    assert list(e1[:8]) == [0, 0.25, 0.5, 0.75, 1, 1.25, 1.5, 1.75]
    assert np.array_equal(core.to_f64(D.HiF4X2, np.arange(16, dtype=np.uint8)), e1)


def test_special_values_into_formats_without_inf_or_nan() -> None:
    x = f32([0x7F800000, 0xFF800000, 0x7FC00000, 0x7F800001])
    r, s = convert(D.FP32, D.E2M1X2, x)
    assert fvals(D.E2M1X2, r) == [6.0, -6.0, 0.0, 0.0] and s[0] == NV | OF | NX
    r, _ = convert(D.FP32, D.E4M3, x)
    assert list(core.to_bits(r).ravel()) == [0x7F, 0x7F, 0x7F, 0x7F]
    r, s = convert(D.FP32, D.E4M3, x, 0, 1)
    assert list(core.to_bits(r).ravel())[:2] == [0x7E, 0xFE] and s[0] == NV | OF | NX
    r, s = convert(D.FP32, D.FP16, f32([0x7F7FFFFF]), 0, 1)
    assert int(core.to_bits(r).ravel()[0]) == 0x7BFF and s[0] == OF | NX


def test_same_type_is_a_bit_copy() -> None:
    x = f32([0x7F800001, 0x80000000])
    r, s = row("TCVT").semantics(D.FP32, x)
    assert list(core.to_bits(r).ravel()) == [0x7F800001, 0x80000000] and not s.any()


def _asl_float_to_e8m0(dt: D, raw: int, rmode: int, sat: bool) -> tuple[int, int]:
    """An independent transcription of ``ReferenceFloatToE8M0`` and
    ``ReferenceE8M0RoundExponent`` (asl/arch/profile/e8m0-conversion.asl) on integers:
    (code, status). RMode codes: 0 RNE (the TCVT default), 1 RNE, 2 RTZ, 3 RTM, 4 RTP,
    5 RNA, 6 RTO, 7 RHB."""
    ebits, mbits = {D.FP32: (8, 23), D.FP16: (5, 10), D.BF16: (8, 7)}[dt]
    bias = (1 << (ebits - 1)) - 1
    sign, e, m = (
        raw >> (ebits + mbits),
        (raw >> mbits) & ((1 << ebits) - 1),
        raw & ((1 << mbits) - 1),
    )
    if e == (1 << ebits) - 1 and m:  # NaN
        return 0xFF, NV
    if sign or (e == 0 and m == 0):  # zero, negative values, -inf
        return 0xFF, NV
    if e == (1 << ebits) - 1:  # +inf
        return (0xFE if sat else 0xFF), OF | NX
    significand = m if e == 0 else m | (1 << mbits)
    exponent = (1 - bias if e == 0 else e - bias) - mbits
    highest = significand.bit_length() - 1
    floor_e = exponent + highest
    exact = significand == 1 << highest
    if floor_e < -127:
        return (0x00 if sat else 0xFF), UF | NX
    if floor_e == 127 and not exact:
        return (0xFE if sat else 0xFF), OF | NX
    if exact:
        return floor_e + 127, 0
    ceil_e = floor_e + 1
    mode = rmode or 1
    if mode == 3:
        r = floor_e
    elif mode == 4:
        r = ceil_e
    elif mode == 2:
        r = ceil_e if floor_e < 0 else floor_e
    elif mode == 6:
        r = floor_e if floor_e % 2 else ceil_e
    else:  # nearest: significand**2 against 2**(2*highest + 1); never a tie
        r = ceil_e if significand * significand > 1 << (2 * highest + 1) else floor_e
    return r + 127, NX


@settings(max_examples=200)
@given(
    dt=st.sampled_from([D.FP32, D.FP16, D.BF16]),
    data=st.data(),
    rmode=st.integers(0, 7),
    sat=st.booleans(),
)
def test_e8m0_matches_the_asl_reference(dt, data, rmode, sat) -> None:
    """TCVT to E8M0 is ``ReferenceFloatToE8M0`` bit for bit and flag for flag, for
    sources drawn from every binade (below 1, subnormals, the top binade, NaNs, +-0,
    +-inf) in every RMode and both Sat settings."""
    ebits, mbits = {D.FP32: (8, 23), D.FP16: (5, 10), D.BF16: (8, 7)}[dt]
    top = (1 << mbits) - 1
    raw = data.draw(
        st.builds(
            lambda s, e, m: (s << (ebits + mbits)) | (e << mbits) | m,
            st.integers(0, 1),
            st.integers(0, (1 << ebits) - 1),
            st.one_of(st.sampled_from([0, 1, top, 1 << (mbits - 1)]), st.integers(0, top)),
        )
    )
    carrier = {D.FP32: np.uint32, D.FP16: np.uint16, D.BF16: np.uint16}[dt]
    x = np.array([[[raw]]], carrier).view(info(dt).carrier)
    r, s = convert(dt, D.E8M0, x, rmode, sat)
    want, flags = _asl_float_to_e8m0(dt, raw, rmode, sat)
    assert (int(core.to_bits(r).ravel()[0]), int(s[0])) == (want, flags), hex(raw)


def test_e8m0_rounds_the_exponent_not_the_value() -> None:
    """The cases that make TCVT unusable for an MX shared exponent: RTZ rounds a
    negative exponent toward zero (0.75 = 1.5 * 2**-1 gives 2**0, code 127; RTM gives
    126); a non-power of two with exponent 127 overflows in every mode."""
    r, s = convert(D.FP32, D.E8M0, f32([0x3F400000]), 2)  # 0.75, RTZ
    assert int(core.to_bits(r).ravel()[0]) == 127 and s[0] == NX
    r, s = convert(D.FP32, D.E8M0, f32([0x3F400000]), 3)  # RTM
    assert int(core.to_bits(r).ravel()[0]) == 126 and s[0] == NX
    for rmode in range(8):
        r, s = convert(D.FP32, D.E8M0, f32([0x7F400000]), rmode)  # 1.5 * 2**127
        assert int(core.to_bits(r).ravel()[0]) == 0xFF and s[0] == OF | NX


# ------------------------------------------------- float -> int: native path vs exact


def _f2i_edges() -> list[float]:
    """float64 values at every boundary float -> int rounding has: zeros, subnormals,
    ties k + 0.5 and their neighbours, neighbours of the integer range limits of every
    destination width, 2**52 (where float64 spacing reaches 1), huge, Inf and NaN."""
    edges = [0.0, 5e-324, 2.2250738585072014e-308, 0.3, 0.49999999999999994, 0.5, 0.7]
    edges += [1.5, 2.5, 3.5, 2.4999999999999996, 2.5000000000000004, 7.0]
    for w in (3, 4, 7, 8, 15, 16, 31, 32, 52, 53, 63, 64):
        for base in (2.0 ** (w - 1), 2.0**w):
            edges += [base - 1, base - 0.5, base, base + 0.5, base + 1]
    edges += [1e300, float("inf"), float("nan")]
    return edges + [-v for v in edges]


def _f2i_values() -> st.SearchStrategy[float]:
    bits = st.integers(0, (1 << 64) - 1).map(
        lambda b: float(np.array(b, np.uint64).view(np.float64))
    )
    return st.one_of(
        st.sampled_from(_f2i_edges()), st.floats(-1e4, 1e4), st.floats(allow_nan=True), bits
    )


F2I_DESTS = [D.S64, D.S32, D.S16, D.S8, D.S4X2, D.U64, D.U32, D.U16, D.U8, D.U4X2]


def _f2i_same(x: np.ndarray, dst: D, rmode: int, sat: bool) -> None:
    from ptoc.backend.isa.semantics import fastpath
    from ptoc.backend.isa.semantics.convert import float_to_int

    got, got_flags = float_to_int(x, dst, rmode, sat)
    with fastpath.exact_only():
        want, want_flags = float_to_int(x, dst, rmode, sat)
    assert got.dtype == want.dtype
    assert np.array_equal(got.astype(np.int64), want.astype(np.int64))
    assert np.array_equal(got_flags, want_flags)


@pytest.mark.parametrize("dst", F2I_DESTS)
@pytest.mark.parametrize("rmode", range(8))
def test_float_to_int_native_path_matches_the_exact_path_at_the_edges(
    dst: D, rmode: int
) -> None:
    """Every rounding mode (0 = RTZ) x integer destination x saturation, at every edge."""
    x = np.array(_f2i_edges(), np.float64)
    for sat in (False, True):
        _f2i_same(x, dst, rmode, sat)


@given(st.lists(_f2i_values(), min_size=1, max_size=24), st.sampled_from(F2I_DESTS),
       st.integers(0, 7), st.booleans())  # fmt: skip
def test_float_to_int_native_path_matches_the_exact_path(
    values: list[float], dst: D, rmode: int, sat: bool
) -> None:
    _f2i_same(np.array(values, np.float64), dst, rmode, sat)


#: the conversions a native cast computes (see convert._native_convert)
NATIVE_PAIRS = [
    *((s, D.FP32) for s in (D.FP16, D.BF16, D.E4M3, D.E5M2, D.E8M0)),
    *((s, D.FP64) for s in (D.FP32, D.FP16, D.BF16, D.E4M3, D.E5M2, D.E8M0)),
    *((s, D.FP32) for s in (D.S8, D.U8, D.S16, D.U16, D.S32, D.U32)),
    *((s, D.FP64) for s in (D.S8, D.U8, D.S16, D.U16, D.S32, D.U32)),
]


@pytest.mark.parametrize(("src", "dst"), NATIVE_PAIRS, ids=lambda d: d.name)
@given(data=st.data())
def test_native_conversions_match_the_exact_engine(src: D, dst: D, data: st.DataObject) -> None:
    """Widening float casts (NaNs of both kinds included: canonical NaN, NV when
    signalling) and integer-to-float casts (S32/U32 -> FP32 rounding with NX) against
    the exact engine, bit for bit with the status, in every rounding mode."""
    from ptoc.backend.isa.semantics import fastpath

    width = info(src).bits
    raw = np.dtype(f"u{max(width, 8) // 8}")
    n = 4 * 6
    words = data.draw(st.lists(st.integers(0, (1 << width) - 1), min_size=n, max_size=n))
    if width == 8:  # every encoding of an 8-bit format, then the drawn ones
        words = list(range(256)) + words
        n = len(words)
    bits = np.array(words, np.uint64).astype(raw).reshape(4, n // 4, 1)
    a = bits.view(info(src).carrier)
    rmode = data.draw(st.sampled_from([0, RNE, RTZ, RTP]))
    got = convert(src, dst, a, rmode)
    with fastpath.exact_only():
        want = convert(src, dst, a, rmode)
    gb, wb = (np.ascontiguousarray(r).view(f"u{r.dtype.itemsize}") for r in (got[0], want[0]))
    assert np.array_equal(gb, wb)
    assert np.array_equal(got[1], want[1])


_SMALLEST_NORMAL = {  # ml_dtypes' own format facts, independent of ptoc's tables
    D.FP16: np.float16, D.BF16: ml_dtypes.bfloat16, D.E4M3: ml_dtypes.float8_e4m3fn,
    D.E5M2: ml_dtypes.float8_e5m2, D.E2M3: ml_dtypes.float6_e2m3fn,
    D.E3M2: ml_dtypes.float6_e3m2fn,
}  # fmt: skip


@pytest.mark.parametrize("dt", list(_SMALLEST_NORMAL))
def test_subnormal_is_every_nonzero_value_below_the_smallest_normal(dt: D) -> None:
    from ptoc.backend.isa.semantics.floatfmt import subnormal

    t = _SMALLEST_NORMAL[dt]
    width = 16 if dt in (D.FP16, D.BF16) else (8 if dt in (D.E4M3, D.E5M2) else 6)
    codes = np.arange(1 << width, dtype=np.uint64)
    carrier = codes.astype(np.uint16 if width == 16 else np.uint8).view(t)
    mag = np.abs(carrier.astype(np.float64))
    want = (mag > 0) & (mag < float(ml_dtypes.finfo(t).smallest_normal))
    assert np.array_equal(subnormal(dt, codes), want)


def test_subnormal_follows_the_asl_descriptors_of_hif8_and_the_packed_formats() -> None:
    from ptoc.backend.isa.semantics.floatfmt import subnormal

    codes = np.arange(256, dtype=np.uint64)
    # HiF8: the Denormal dot field (value[6:3] == 0000) with a nonzero mantissa
    assert np.flatnonzero(subnormal(D.HiF8, codes)).tolist() == [*range(1, 8), *range(129, 136)]
    for dt in (D.E2M1X2, D.E1M2X2, D.HiF4X2, D.E8M0, D.S8, D.U8):  # has_subnormal = FALSE
        assert not subnormal(dt, codes).any()
