"""CUBE matrix numerics (DECISIONS D11) against an independent exact oracle.

The oracle below decodes every input format itself (ml_dtypes for the formats it models,
bit fields and the ASL's ``ReferenceFP8FiniteValue`` for HiF8), keeps each running sum as
an exact rational with its IEEE class and zero sign, and rounds to FP32 with its own
integer rounding - one element and one step at a time. It shares no code with
``ptoc.backend.isa.semantics``. Results are compared as raw bits with the status bits.
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ptoc.backend.isa.datatypes import DataType
from ptoc.backend.isa.semantics.core import NV, NX, OF, UF, SemanticError
from ptoc.backend.isa.semantics.matmul import (
    MATRIX_INPUT_TYPES,
    MX_INPUT_TYPES,
    accumulator_type,
    add_bias,
    fold,
    matmul,
    pair_legal,
)

D = DataType
FLOATS = sorted(t for t in MATRIX_INPUT_TYPES if t.name[0] in "FBTHE")
SIGNED = [D.S16, D.S8, D.S4X2]
UNSIGNED = [D.U16, D.U8, D.U4X2]
RNE, RTZ, RTM, RTP, RNA, RTO, RHB = 1, 2, 3, 4, 5, 6, 7
MAX32 = (2 - Fraction(1, 2**23)) * Fraction(2) ** 127
CANON32 = 0x7FC00000

# ---------------------------------------------------------------- oracle: formats

#: (container bits, valid-bit mask, sign bit) of every matrix input type
LAYOUT = {
    D.FP32: (32, 0xFFFFFFFF, 31),
    D.TF32: (32, 0xFFFFE000, 31),
    D.HF32: (32, 0xFFFFF000, 31),
    D.FP16: (16, 0xFFFF, 15),
    D.BF16: (16, 0xFFFF, 15),
    D.HiF8: (8, 0xFF, 7),
    D.E4M3: (8, 0xFF, 7),
    D.E5M2: (8, 0xFF, 7),
    D.E3M2: (8, 0x3F, 5),
    D.E2M3: (8, 0x3F, 5),
    D.E2M1X2: (8, 0x0F, 3),
    D.E1M2X2: (8, 0x0F, 3),
}
ML = {
    D.FP16: np.float16,
    D.BF16: ml_dtypes.bfloat16,
    D.E4M3: ml_dtypes.float8_e4m3fn,
    D.E5M2: ml_dtypes.float8_e5m2,
    D.E3M2: ml_dtypes.float6_e3m2fn,
    D.E2M3: ml_dtypes.float6_e2m3fn,
    D.E2M1X2: ml_dtypes.float4_e2m1fn,
}
UINT = {8: np.uint8, 16: np.uint16, 32: np.uint32}


def hif8_value(code: int):
    """HiF8 as ``ReferenceFP8FiniteValue`` (matrix-quantization.asl) reads it."""
    if code == 0x80:
        return "nan"
    body, neg = code & 0x7F, code >> 7
    if body == 0x6F:
        return ("inf", neg)
    c = code
    if body <= 7:
        mag = Fraction(0) if body == 0 else Fraction(2) ** (body - 23)
    elif body <= 15:
        mag = 1 + Fraction(body - 8, 8)
    elif body <= 31:
        e = 1 if (c >> 3) & 1 == 0 else -1
        mag = (1 + Fraction(c & 7, 8)) * Fraction(2) ** e
    elif body <= 63:
        absolute = 2 + ((c >> 3) & 1)
        e = absolute if ((c >> 3) & 3) < 2 else -absolute
        mag = (1 + Fraction(c & 7, 8)) * Fraction(2) ** e
    elif body <= 95:
        absolute = 4 + ((c >> 2) & 3)
        e = absolute if ((c >> 2) & 7) < 4 else -absolute
        mag = (1 + Fraction(c & 3, 4)) * Fraction(2) ** e
    else:
        absolute = 8 + ((c >> 1) & 7)
        e = absolute if ((c >> 1) & 15) < 8 else -absolute
        mag = (1 + Fraction(c & 1, 2)) * Fraction(2) ** e
    return ("fin", -mag if neg else mag, bool(neg) and mag == 0)


def value_of(dt: DataType, code: int):
    """An input element as ("nan", snan) | ("inf", neg) | ("fin", Fraction, negzero)."""
    if dt == D.HiF8:
        v = hif8_value(code)
        return ("nan", False) if v == "nan" else v
    bits, mask, sign_bit = LAYOUT[dt]
    code &= mask
    neg = bool((code >> sign_bit) & 1)
    if dt in (D.FP32, D.TF32, D.HF32):
        f = float(np.array([code], np.uint32).view(np.float32)[0])
        if np.isnan(f):
            return ("nan", not (code >> 22) & 1)
    elif dt == D.E1M2X2:  # 1 exponent bit, bias 1, 2 fraction bits, no Inf/NaN
        e, m = (code >> 2) & 1, code & 3
        mag = Fraction(m, 4) if e == 0 else 1 + Fraction(m, 4)
        return ("fin", -mag if neg else mag, neg and mag == 0)
    else:
        raw = np.array([code], UINT[8 if bits == 8 else bits])
        f = float(raw.view(np.uint8 if bits == 8 else raw.dtype).view(ML[dt])[0])
        if np.isnan(f):
            quiet_bit = {D.FP16: 9, D.BF16: 6, D.E5M2: 1}.get(dt)
            return ("nan", quiet_bit is not None and not (code >> quiet_bit) & 1)
    if np.isinf(f):
        return ("inf", f < 0)
    return ("fin", Fraction(f), f == 0 and neg)


def carrier(dt: DataType, codes) -> np.ndarray:
    """The ptoc carrier array of raw codes."""
    from ptoc.backend.isa.semantics.core import from_bits

    return from_bits(np.asarray(codes, np.uint64), dt)


# ---------------------------------------------------------------- oracle: FP32 rounding


def ilog2(x: Fraction) -> int:
    e = x.numerator.bit_length() - x.denominator.bit_length()
    return e if Fraction(2) ** e <= x else e - 1


def round_int(q: Fraction, neg: bool, mode: int) -> int:
    """Round a non-negative magnitude to an integer (directions see the sign)."""
    n = q.numerator // q.denominator
    rem = q - n
    half = Fraction(1, 2)
    if rem == 0:
        return n
    if mode == RNE:
        return n + (rem > half or (rem == half and n % 2 == 1))
    if mode == RTZ:
        return n
    if mode == RTP:
        return n + (not neg)
    if mode == RTM:
        return n + neg
    if mode == RNA:
        return n + (rem >= half)
    if mode == RTO:
        return n + (n % 2 == 0)
    return n + (rem > half or (rem == half and not neg))  # RHB: half toward +Inf


def round_fp32(x: Fraction, mode: int):
    """Nonzero exact x to FP32: (("fin", Fraction, negzero) | ("inf", neg), flags)."""
    neg = x < 0
    mag = -x if neg else x
    e = ilog2(mag)
    q = max(e, -126) - 23
    n = round_int(mag / Fraction(2) ** q, neg, mode)
    r = n * Fraction(2) ** q
    inexact = r != mag
    flags = NX if inexact else 0
    n2 = round_int(mag / Fraction(2) ** (e - 23), neg, mode)  # unbounded exponent
    if inexact and n2 * Fraction(2) ** (e - 23) < Fraction(2) ** -126:
        flags |= UF
    if r > MAX32:
        to_inf = {RTZ: False, RTO: False, RTP: not neg, RTM: neg}.get(mode, True)
        return (("inf", neg) if to_inf else ("fin", -MAX32 if neg else MAX32, False)), OF | NX
    return ("fin", -r if neg else r, neg and r == 0), flags


def add(s, p, mode: int):
    """IEEE s + p rounded once to FP32 (operands already NaN-free of sNaN flags)."""
    if s[0] == "nan" or p[0] == "nan":
        return ("nan", False), 0
    if s[0] == "inf" and p[0] == "inf":
        return (s, 0) if s[1] == p[1] else (("nan", False), NV)
    if s[0] == "inf":
        return s, 0
    if p[0] == "inf":
        return p, 0
    total = s[1] + p[1]
    if total == 0:
        if s[1] == 0 and p[1] == 0:
            negzero = (s[2] or p[2]) if mode == RTM else (s[2] and p[2])
        else:
            negzero = mode == RTM
        return ("fin", Fraction(0), negzero), 0
    return round_fp32(total, mode)


def mul(a, b):
    """Exact product: (value, flags)."""
    if a[0] == "nan" or b[0] == "nan":
        return ("nan", False), 0
    a_zero = a[0] == "fin" and a[1] == 0
    b_zero = b[0] == "fin" and b[1] == 0
    if (a[0] == "inf" and b_zero) or (b[0] == "inf" and a_zero):
        return ("nan", False), NV
    sign_a = a[1] if a[0] == "inf" else (a[1] < 0 or a[2])
    sign_b = b[1] if b[0] == "inf" else (b[1] < 0 or b[2])
    if a[0] == "inf" or b[0] == "inf":
        return ("inf", sign_a != sign_b), 0
    v = a[1] * b[1]
    return ("fin", v, v == 0 and sign_a != sign_b), 0


def scaled(v, scale_code: int | None):
    """An MX operand times its E8M0 block scale (0xFF is NaN)."""
    if scale_code is None:
        return v
    if scale_code == 0xFF or v[0] == "nan":
        return ("nan", v[0] == "nan" and v[1])
    if v[0] == "inf":
        return v
    return ("fin", v[1] * Fraction(2) ** (scale_code - 127), v[2])


def snan(v) -> bool:
    return v[0] == "nan" and v[1]


def to_bits32(v) -> int:
    if v[0] == "nan":
        return CANON32
    if v[0] == "inf":
        return 0xFF800000 if v[1] else 0x7F800000
    if v[1] == 0:
        return 0x80000000 if v[2] else 0
    return int(np.array([float(v[1])], np.float32).view(np.uint32)[0])


def oracle_fold(a_dt, a_codes, b_dt, b_codes, acc_codes=None, mode=RNE, a_sc=None, b_sc=None):
    """D11 fold of raw code matrices: (FP32 bit matrix, status)."""
    m, k = len(a_codes), len(a_codes[0])
    n = len(b_codes[0])
    out = np.zeros((m, n), np.uint32)
    status = 0
    for i, j in itertools.product(range(m), range(n)):
        if acc_codes is None:
            s = ("fin", Fraction(0), False)
        else:
            s = value_of(D.FP32, acc_codes[i][j])
            if snan(s):
                status |= NV
        for kk in range(k):
            av = value_of(a_dt, a_codes[i][kk])
            bv = value_of(b_dt, b_codes[kk][j])
            if snan(av) or snan(bv):
                status |= NV
            av = scaled(av, None if a_sc is None else a_sc[i][kk // 32])
            bv = scaled(bv, None if b_sc is None else b_sc[kk // 32][j])
            p, f1 = mul(av, bv)
            s, f2 = add(s, p, mode)
            status |= f1 | f2
        out[i, j] = to_bits32(s)
    return out, status


def int_value(dt: DataType, code: int) -> int:
    width = {D.S16: 16, D.S8: 8, D.S4X2: 4, D.U16: 16, D.U8: 8, D.U4X2: 4}[dt]
    code &= (1 << width) - 1
    if dt in SIGNED and code >= 1 << (width - 1):
        return code - (1 << width)
    return code


# ---------------------------------------------------------------- strategies

SPECIAL32 = [0, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0x7F800001, 0xFFA00000, 1]
SPECIAL32 += [0x80000001, 0x007FFFFF, 0x00800000, 0x7F7FFFFF, 0xFF7FFFFF, 0x3F800000]


def codes(dt: DataType, finite_window: bool = False) -> st.SearchStrategy[int]:
    """Raw codes: every bit pattern, the format's specials, or a narrow exponent window."""
    bits, mask, sign_bit = LAYOUT.get(dt, (32, 0xFFFFFFFF, 31))
    anything = st.integers(0, (1 << bits) - 1).map(lambda c: c & mask)
    if dt in (D.FP32, D.TF32, D.HF32):
        special = st.sampled_from([c & mask for c in SPECIAL32])
        window = st.integers(0x3E000000, 0x41000000).map(lambda c: c & mask)
    else:
        special = st.sampled_from([0, 1 << sign_bit, mask & ~(1 << sign_bit), mask, 1])
        window = anything
    if finite_window:
        return window | st.integers(-1, 1).map(lambda s: 0 if s >= 0 else 1 << sign_bit)
    return st.one_of(anything, special, window)


@st.composite
def matrices(draw, dt: DataType, rows: int, cols: int, finite: bool = False):
    strat = codes(dt, finite)
    if finite:
        strat = strat.filter(lambda c: value_of(dt, c)[0] == "fin")
    return [[draw(strat) for _ in range(cols)] for _ in range(rows)]


SHAPES = st.tuples(st.integers(1, 4), st.integers(1, 4), st.integers(1, 7))
FLOAT_PAIRS = st.tuples(st.sampled_from(FLOATS), st.sampled_from(FLOATS))


def run_fold(a_dt, a, b_dt, b, acc=None, **kw):
    r, status = fold(
        carrier(a_dt, a),
        a_dt,
        carrier(b_dt, b),
        b_dt,
        acc=None if acc is None else carrier(D.FP32, acc),
        **kw,
    )
    return r.view(np.uint32), status


# ---------------------------------------------------------------- type rules


def test_accumulator_types_follow_the_asl_classes() -> None:
    assert accumulator_type(D.FP16, D.E4M3) == D.FP32
    assert accumulator_type(D.S8, D.S16) == D.S32
    assert accumulator_type(D.U4X2, D.U8) == D.U32
    assert accumulator_type(D.E2M1X2, D.BF16, mx=True) == D.FP32
    for a, b in [
        (D.FP16, D.S8),
        (D.S8, D.U8),
        (D.FP64, D.FP64),
        (D.E8M0, D.FP16),
        (D.S32, D.S32),
    ]:
        assert not pair_legal(a, b)
        with pytest.raises(SemanticError, match="TileOrdinaryMatrixInputTypesSameClass"):
            accumulator_type(a, b)
    assert not pair_legal(D.FP32, D.FP16, mx=True)  # FP32 is not an MX input
    assert pair_legal(D.FP16, D.E5M2, mx=True)
    assert len(MATRIX_INPUT_TYPES) == 18 and len(MX_INPUT_TYPES) == 6


def test_mx_scales_are_required_exactly_for_scaled_sides() -> None:
    a = carrier(D.E4M3, [[0x38]])
    b = carrier(D.FP16, [[0x3C00]])
    one = carrier(D.E8M0, [[127]])
    with pytest.raises(SemanticError, match="needs an E8M0 scale"):
        fold(a, D.E4M3, b, D.FP16, mx=True)
    with pytest.raises(SemanticError, match="takes no"):
        fold(a, D.E4M3, b, D.FP16, mx=True, a_scale=one, b_scale=one)
    r, st_ = fold(a, D.E4M3, b, D.FP16, mx=True, a_scale=one)
    assert r.view(np.uint32)[0, 0] == 0x3F800000 and st_ == 0


# ---------------------------------------------------------------- witnesses


def test_fp32_fused_step_has_no_double_rounding() -> None:
    # 1 + a*b lies just above the FP32 midpoint 1 + 2**-24 but within float64's half ulp:
    # fl32(fl64(1 + a*b)) ties to 1.0; the single rounding gives 1 + 2**-23
    r, status = run_fold(D.FP32, [[0x398007E0]], D.FP32, [[0x397FF041]], [[0x3F800000]])
    assert r[0, 0] == 0x3F800001 and status == NX
    naive = np.float32(
        1.0 + float(carrier(D.FP32, [0x398007E0])[0]) * float(carrier(D.FP32, [0x397FF041])[0])
    )
    assert naive == np.float32(1.0)  # the witness really separates the two


def test_bf16_product_below_fp32_range_rounds_once_with_its_sign() -> None:
    # (-2**-100) * 2**-100 = -2**-200: the fused step rounds +0 + (-2**-200) to -0 with
    # UF|NX; rounding the product to FP32 first would give -0 and then +0 + -0 = +0
    r, status = run_fold(D.BF16, [[0x8D80]], D.BF16, [[0x0D80]])
    assert r[0, 0] == 0x80000000 and status == UF | NX
    r, _ = run_fold(D.BF16, [[0x0D80]], D.BF16, [[0x0D80]], rmode=RTP)
    assert r[0, 0] == 1  # 2**-200 rounds up to the smallest subnormal


def test_bf16_product_beyond_fp32_range_cancels_exactly() -> None:
    # -FLT_MAX + 2**64 * 2**64 = 2**104 exactly; an FP32 product would be +Inf
    r, status = run_fold(D.BF16, [[0x5F80]], D.BF16, [[0x5F80]], [[0xFF7FFFFF]])
    assert r[0, 0] == 0x73800000 and status == 0  # 2**104


def test_signed_zeros_follow_ieee_addition() -> None:
    neg_zero_products = ([[0x8000, 0x8000]], [[0x3C00], [0x3C00]])  # -0 * 1, twice
    r, status = run_fold(D.FP16, neg_zero_products[0], D.FP16, neg_zero_products[1])
    assert r[0, 0] == 0 and status == 0  # the fold starts at +0
    r, _ = run_fold(
        D.FP16, *neg_zero_products[:1], D.FP16, neg_zero_products[1], [[0x80000000]]
    )
    assert r[0, 0] == 0x80000000  # -0 + -0 stays -0
    # x + (-x) = +0, but -0 under RTM
    r, _ = run_fold(D.FP16, [[0x3C00, 0xBC00]], D.FP16, [[0x3C00], [0x3C00]])
    assert r[0, 0] == 0
    r, _ = run_fold(D.FP16, [[0x3C00, 0xBC00]], D.FP16, [[0x3C00], [0x3C00]], rmode=RTM)
    assert r[0, 0] == 0x80000000


@pytest.mark.parametrize(
    ("a", "b", "acc", "status"),
    [
        ([[0x7C00]], [[0x0000]], None, NV),  # Inf * 0
        ([[0x7C00, 0xFC00]], [[0x3C00], [0x3C00]], None, NV),  # Inf - Inf
        ([[0x7E01]], [[0x3C00]], None, 0),  # quiet NaN payload
        ([[0x7C01]], [[0x3C00]], None, NV),  # signalling NaN
        ([[0x3C00]], [[0x3C00]], [[0x7FA00000]], NV),  # signalling NaN accumulator
        ([[0x7E00]], [[0x7C00]], None, 0),  # NaN * Inf: no invalid operation
    ],
)
def test_invalid_operations_give_the_canonical_nan(a, b, acc, status) -> None:
    r, got = run_fold(D.FP16, a, D.FP16, b, acc)
    assert r[0, 0] == CANON32 and got == status


def test_overflow_rounds_by_mode() -> None:
    big = [[0x7BFF, 0x7BFF]]  # 65504 * 65504 twice ~ 2**32: fine; use the accumulator
    col = [[0x7BFF], [0x7BFF]]
    acc = [[0x7F7FFFFF]]
    r, status = run_fold(D.FP16, big, D.FP16, col, acc)
    assert r[0, 0] == 0x7F7FFFFF and status == NX  # MAX + 2**32 rounds back to MAX
    r, status = run_fold(D.FP32, [[0x7F7FFFFF]], D.FP32, [[0x40000000]])
    assert r[0, 0] == 0x7F800000 and status == OF | NX
    r, status = run_fold(D.FP32, [[0x7F7FFFFF]], D.FP32, [[0x40000000]], rmode=RTZ)
    assert r[0, 0] == 0x7F7FFFFF and status == OF | NX


def test_integer_products_wrap_modulo_the_accumulator() -> None:
    a = carrier(D.S16, [[0x7FFF] * 4])
    b = carrier(D.S16, [[0x7FFF]] * 4)
    r, status = fold(a, D.S16, b, D.S16)
    assert r.dtype == np.int32 and status == 0
    assert int(r[0, 0]) == ((4 * 32767 * 32767 + 2**31) % 2**32) - 2**31
    u = carrier(D.U16, [[0xFFFF] * 3])
    r, _ = fold(u, D.U16, carrier(D.U16, [[0xFFFF]] * 3), D.U16, acc=np.array([[7]], np.uint32))
    assert r.dtype == np.uint32 and int(r[0, 0]) == (3 * 65535 * 65535 + 7) % 2**32


def test_mx_scales_apply_per_block_of_32() -> None:
    k = 40
    a = carrier(D.E4M3, [[0x38] * k])  # ones
    b = carrier(D.E4M3, [[0x38]] * k)
    a_sc = carrier(D.E8M0, [[127 + 3, 127]])  # block 0 scaled by 8, block 1 by 1
    b_sc = carrier(D.E8M0, [[127], [127 - 1]])  # block 1 halved
    r, status = fold(a, D.E4M3, b, D.E4M3, mx=True, a_scale=a_sc, b_scale=b_sc)
    assert float(r[0, 0]) == 32 * 8 + 8 * 0.5 and status == 0
    nan_scale = carrier(D.E8M0, [[0xFF, 127]])
    r, status = fold(a, D.E4M3, b, D.E4M3, mx=True, a_scale=nan_scale, b_scale=b_sc)
    assert r.view(np.uint32)[0, 0] == CANON32 and status == 0


# ---------------------------------------------------------------- property tests


@given(FLOAT_PAIRS, SHAPES, st.data())
def test_float_fold_matches_the_exact_oracle(pair, shape, data) -> None:
    a_dt, b_dt = pair
    m, n, k = shape
    a = data.draw(matrices(a_dt, m, k))
    b = data.draw(matrices(b_dt, k, n))
    acc = data.draw(st.none() | matrices(D.FP32, m, n))
    mode = data.draw(st.sampled_from([RNE, RNE, RNE, RTZ, RTM, RTP, RNA, RTO, RHB]))
    got, status = run_fold(a_dt, a, b_dt, b, acc, rmode=mode)
    want, want_status = oracle_fold(a_dt, a, b_dt, b, acc, mode)
    np.testing.assert_array_equal(got, want)
    assert status == want_status


@given(FLOAT_PAIRS, SHAPES, st.data())
def test_finite_folds_take_the_native_path_bit_exactly(pair, shape, data) -> None:
    a_dt, b_dt = pair
    m, n, k = shape
    a = data.draw(matrices(a_dt, m, k, finite=True))
    b = data.draw(matrices(b_dt, k, n, finite=True))
    acc = data.draw(st.none() | matrices(D.FP32, m, n, finite=True))
    got, status = run_fold(a_dt, a, b_dt, b, acc)
    slow, slow_status = run_fold(a_dt, a, b_dt, b, acc, exact=True)
    want, want_status = oracle_fold(a_dt, a, b_dt, b, acc)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(slow, want)
    assert status == slow_status == want_status


@given(
    st.sampled_from(sorted(MX_INPUT_TYPES)),
    st.sampled_from(sorted(MX_INPUT_TYPES)),
    st.integers(1, 3),
    st.integers(1, 3),
    st.integers(1, 70),
    st.data(),
)
@settings(max_examples=30)
def test_mx_fold_matches_the_exact_oracle(a_dt, b_dt, m, n, k, data) -> None:
    a = data.draw(matrices(a_dt, m, k))
    b = data.draw(matrices(b_dt, k, n))
    blocks = (k + 31) // 32
    sc = st.one_of(
        st.integers(0, 255), st.sampled_from([0, 127, 254, 255]), st.integers(110, 140)
    )
    a_sc = (
        [[data.draw(sc) for _ in range(blocks)] for _ in range(m)]
        if a_dt in (D.E4M3, D.E5M2, D.E2M1X2, D.E1M2X2)
        else None
    )
    b_sc = (
        [[data.draw(sc) for _ in range(n)] for _ in range(blocks)]
        if b_dt in (D.E4M3, D.E5M2, D.E2M1X2, D.E1M2X2)
        else None
    )
    acc = data.draw(st.none() | matrices(D.FP32, m, n))
    got, status = fold(
        carrier(a_dt, a),
        a_dt,
        carrier(b_dt, b),
        b_dt,
        mx=True,
        acc=None if acc is None else carrier(D.FP32, acc),
        a_scale=None if a_sc is None else carrier(D.E8M0, a_sc),
        b_scale=None if b_sc is None else carrier(D.E8M0, b_sc),
    )
    want, want_status = oracle_fold(a_dt, a, b_dt, b, acc, RNE, a_sc, b_sc)
    np.testing.assert_array_equal(got.view(np.uint32), want)
    assert status == want_status


@given(
    st.sampled_from(
        [(x, y) for x in SIGNED for y in SIGNED] + [(x, y) for x in UNSIGNED for y in UNSIGNED]
    ),
    SHAPES,
    st.data(),
)
def test_integer_fold_is_exact_and_wraps(pair, shape, data) -> None:
    a_dt, b_dt = pair
    m, n, k = shape
    width = {D.S16: 16, D.S8: 8, D.S4X2: 4, D.U16: 16, D.U8: 8, D.U4X2: 4}
    a = [
        [data.draw(st.integers(0, (1 << width[a_dt]) - 1)) for _ in range(k)] for _ in range(m)
    ]
    b = [
        [data.draw(st.integers(0, (1 << width[b_dt]) - 1)) for _ in range(n)] for _ in range(k)
    ]
    signed = a_dt in SIGNED
    acc_dt = np.int32 if signed else np.uint32
    acc = data.draw(
        st.none()
        | st.just([[data.draw(st.integers(0, 2**32 - 1)) for _ in range(n)] for _ in range(m)])
    )
    acc_arr = None if acc is None else np.array(acc, np.uint64).astype(np.uint32).view(acc_dt)
    got, status = fold(carrier(a_dt, a), a_dt, carrier(b_dt, b), b_dt, acc=acc_arr)
    assert status == 0 and got.dtype == acc_dt
    for i, j in itertools.product(range(m), range(n)):
        total = 0 if acc is None else acc[i][j]
        total += sum(int_value(a_dt, a[i][kk]) * int_value(b_dt, b[kk][j]) for kk in range(k))
        assert int(got.view(np.uint32)[i, j]) == total % 2**32


@given(FLOAT_PAIRS, st.integers(1, 3), st.integers(1, 3), st.integers(2, 12), st.data())
def test_a_k_split_through_acc_equals_one_fold(pair, m, n, k, data) -> None:
    a_dt, b_dt = pair
    finite = data.draw(st.booleans())
    a = data.draw(matrices(a_dt, m, k, finite))
    b = data.draw(matrices(b_dt, k, n, finite))
    cut = data.draw(st.integers(1, k - 1))
    whole, st_whole = run_fold(a_dt, a, b_dt, b)
    first, st1 = run_fold(a_dt, [r[:cut] for r in a], b_dt, b[:cut])
    rest, st2 = run_fold(a_dt, [r[cut:] for r in a], b_dt, b[cut:], first.tolist())
    np.testing.assert_array_equal(rest, whole)
    assert st1 | st2 == st_whole


def test_integer_k_split_through_acc_equals_one_fold() -> None:
    rng = np.random.default_rng(7)
    a = rng.integers(-128, 128, (3, 50)).astype(np.int8)
    b = rng.integers(-128, 128, (50, 5)).astype(np.int8)
    whole, _ = fold(a, D.S8, b, D.S8)
    part, _ = fold(a[:, :17], D.S8, b[:17], D.S8)
    rest, _ = fold(a[:, 17:], D.S8, b[17:], D.S8, acc=part)
    np.testing.assert_array_equal(rest, whole)


@given(SHAPES, st.data())
def test_bias_adds_once_after_the_fold(shape, data) -> None:
    m, n, k = shape
    a = data.draw(matrices(D.FP16, m, k))
    b = data.draw(matrices(D.FP16, k, n))
    bias = data.draw(matrices(D.FP32, 1, n))
    res = matmul(
        carrier(D.FP16, a), D.FP16, carrier(D.FP16, b), D.FP16, bias=carrier(D.FP32, bias)
    )
    folded, st_fold = oracle_fold(D.FP16, a, D.FP16, b)
    status = st_fold
    for i, j in itertools.product(range(m), range(n)):
        s = value_of(D.FP32, int(folded[i, j]))
        bv = value_of(D.FP32, bias[0][j])
        status |= NV if snan(bv) else 0
        r, f = add(s, bv, RNE)
        status |= f
        assert res.d.view(np.uint32)[i, j] == to_bits32(r)
    assert res.status == status and res.row_max is None and res.group_max is None


def test_integer_bias_wraps() -> None:
    v = np.array([[2**31 - 1, 5]], np.int32)
    r, status = add_bias(v, D.S32, np.array([1, -7], np.int32))
    assert r.tolist() == [[-(2**31), -2]] and status == 0
