"""Correctly rounded floating arithmetic of the reference profile (DECISIONS D5).

Every operation first settles NaN, Inf, zero-divisor and invalid cases from the operand
classes, then forms the exact result in the parts representation of :mod:`.floatfmt`
from float64 error-free transformations (TwoSum, Dekker TwoProduct, the exact remainder
of a quotient or square root) and rounds it once at the element type with RNE. FP64
operands are scaled by ``frexp`` first so that the transformations never under- or
overflow. NaN results are the canonical quiet NaN: the profile hooks of the ASL are
impdef here, and every result the ASL does fix (``TileSFUUnarySpecialValue``,
``HardwareNumericMinMaxSpecial``, ``TileProfileFusedInvalidResult``) is canonical.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from ..datatypes import DataType, bits_dtype, info
from .correct64 import exp_log64, rsqrt64
from .floatfmt import (
    CANONICAL_NAN,
    DZ,
    FORMATS,
    NV,
    NX,
    OF,
    RNE,
    RTM,
    RTO,
    UF,
    bitlen,
    classify,
    decode,
    encode_parts,
    max_finite_bits,
    overflow_bits,
    parts_from_pair,
    parts_from_sign,
    parts_of,
)

_Parts = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def _bits(a: np.ndarray) -> np.ndarray:
    a = np.asarray(a)
    if not a.flags.c_contiguous:
        a = a.copy(order="C")
    return a.view(bits_dtype(a.dtype.itemsize * 8)).astype(np.uint64)


def _carrier(bits: np.ndarray, dt: DataType) -> np.ndarray:
    width = info(dt).carrier.itemsize * 8
    return np.asarray(bits).astype(bits_dtype(width), order="C").view(info(dt).carrier)


def _nan_bits(dt: DataType) -> np.uint64:
    """Canonical NaN; formats without NaN get +0 (their NaN-producing cases set NV)."""
    return np.uint64(CANONICAL_NAN.get(dt, 0))


# ---------------------------------------------------------------- error-free transforms


def two_sum(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Knuth TwoSum: s = fl(a + b) and the exact error e, a + b = s + e."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _split(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    c = 134217729.0 * a  # 2**27 + 1 (Veltkamp)
    hi = c - (c - a)
    return hi, a - hi


def two_prod(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Dekker TwoProduct: p = fl(a * b) and the exact error (operands of moderate range)."""
    p = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


def _shift(parts: _Parts, de: np.ndarray) -> _Parts:
    neg, m, e, sticky = parts
    return neg, m, e + de, sticky


def _sgn(x: np.ndarray) -> np.ndarray:
    return np.sign(x).astype(np.int64)


# ---------------------------------------------------------------- exact finite kernels


def exact_add(x: np.ndarray, y: np.ndarray) -> tuple[_Parts, np.ndarray]:
    """Parts of x + y and the mask of float64 overflow (FP64 only)."""
    s, e = two_sum(x, y)
    ovf = ~np.isfinite(s)
    neg, m, ee, sticky = parts_from_pair(np.where(ovf, 1.0, s), np.where(ovf, 0.0, e))
    return (np.where(ovf, s < 0, neg), m, ee, sticky), ovf


def exact_mul(x: np.ndarray, y: np.ndarray) -> _Parts:
    """Parts of x * y (frexp-scaled TwoProduct: exact for every finite float64 pair)."""
    mx, ex = np.frexp(x)
    my, ey = np.frexp(y)
    p, e = two_prod(mx, my)
    return _shift(parts_from_pair(p, e), ex.astype(np.int64) + ey)


def exact_div(x: np.ndarray, y: np.ndarray) -> _Parts:
    """Parts of x / y, y != 0: the quotient of scaled significands plus the remainder sign."""
    mx, ex = np.frexp(x)
    my, ey = np.frexp(y)
    q = mx / my
    p, e = two_prod(q, my)
    r = (mx - p) - e  # exact: p is within a factor two of mx (Sterbenz)
    direction = _sgn(r) * _sgn(my) * np.where(q < 0, -1, 1)
    return _shift(parts_from_sign(q, direction), ex.astype(np.int64) - ey)


def exact_sqrt(x: np.ndarray) -> _Parts:
    """Parts of sqrt(x), x >= 0 finite."""
    mx, ex = np.frexp(x)
    odd = (ex & 1) == 1
    m2 = np.where(odd, mx * 2.0, mx)
    e2 = np.where(odd, ex - 1, ex).astype(np.int64)
    s = np.sqrt(m2)
    p, e = two_prod(s, s)
    return _shift(parts_from_sign(s, _sgn((m2 - p) - e)), e2 // 2)


def exact_rem(x: np.ndarray, y: np.ndarray) -> _Parts:
    """Parts of the floor modulo x - y*floor(x/y) (y != 0, x finite; sign of y on zero)."""
    r = np.fmod(x, y)  # exact
    adj = (r != 0) & (np.signbit(r) != np.signbit(y))
    s, e = two_sum(r, np.where(adj, y, 0.0))
    s = np.where(s == 0, np.copysign(0.0, y), s)
    return parts_from_pair(s, e)


def _ro_add(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Round-to-odd a + b in float64 and whether it was inexact (Boldo-Melquiond)."""
    s, e = two_sum(a, b)
    inexact = e != 0
    even = (s.view(np.uint64) & np.uint64(1)) == 0
    bump = inexact & even
    toward = np.where(e > 0, np.inf, -np.inf)
    return np.where(bump, np.nextafter(s, toward), s), inexact


def exact_fma64(x: np.ndarray, y: np.ndarray, z: np.ndarray) -> tuple[_Parts, np.ndarray]:
    """Parts of x*y + z for FP64 and an extra NX mask.

    Boldo and Melquiond's emulation, RN(th + RO(ul + tl)), is exact-rounding for
    moderate exponents; elements near the float64 range limits use exact fractions.
    """
    mx, ex = np.frexp(x)
    my, ey = np.frexp(y)
    _, ez = np.frexp(z)
    pe = ex.astype(np.int64) + ey
    zero_p = (x == 0) | (y == 0)
    safe = zero_p | ((pe > -900) & (pe < 1000))
    safe &= (z == 0) | ((ez > -900) & (ez < 1020))
    zs = np.where(safe, z, 0.0)
    # the product of the frexp significands is exact as p + e; scaling back by 2**pe
    # neither overflows nor underflows inside the safe range
    p, e = two_prod(np.where(safe, mx, 0.0), np.where(safe, my, 0.0))
    uh, ul = np.ldexp(p, np.where(safe, pe, 0)), np.ldexp(e, np.where(safe, pe, 0))
    th, tl = two_sum(zs, uh)
    v, ro_nx = _ro_add(ul, tl)
    s, e = two_sum(th, v)
    s = np.where((th == 0) & (v == 0), th, s)  # keep -0 + -0 = -0 (v carries no sign)
    ovf = ~np.isfinite(s)
    neg, m, ee, sticky = parts_from_pair(np.where(ovf, 1.0, s), np.where(ovf, 0.0, e))
    m = np.where(ovf, np.uint64(1), m)
    ee = np.where(ovf, 5000, ee)  # rounds to overflow
    neg = np.where(ovf, s < 0, neg)
    for idx in zip(*np.nonzero(~safe)):
        exact = Fraction(float(x[idx])) * Fraction(float(y[idx])) + Fraction(float(z[idx]))
        neg[idx], m[idx], ee[idx], sticky[idx] = _fraction_parts(exact)
    return (neg, m, ee, sticky), ro_nx & safe


def _fraction_parts(v: Fraction) -> tuple[bool, np.uint64, int, bool]:
    """Parts of an exact rational with a 62-bit truncated significand and sticky bit."""
    if v == 0:
        return False, np.uint64(0), 0, False
    mag = abs(v)
    k = 62 - (mag.numerator.bit_length() - mag.denominator.bit_length())
    q, r = divmod(mag.numerator << max(k, 0), mag.denominator << max(-k, 0))
    while q.bit_length() > 63:
        r = r + (q & 1) * (mag.denominator << max(-k, 0))
        q >>= 1
        k -= 1
    return v < 0, np.uint64(q), -k, r != 0


# ---------------------------------------------------------------- typed operations


def round_f64(
    dt: DataType, x: np.ndarray, rmode: int, sat: bool, tininess_before: bool
) -> tuple[np.ndarray, np.ndarray]:
    """Raw bits and per-element flags of float64 ``x`` rounded to ``dt`` (see core)."""
    x = np.asarray(x, np.float64)
    xb = np.ascontiguousarray(x).view(np.uint64)
    nan = np.isnan(x)
    snan = nan & ((xb >> np.uint64(51)) & np.uint64(1) == 0)
    inf = np.isinf(x)
    fin = np.where(nan | inf, 0.0, x)
    neg, m, e = parts_of(fin)
    bits, flags = encode_parts(
        dt, neg, m, e, np.zeros(x.shape, bool), rmode, sat, tininess_before
    )
    neg_inf = np.signbit(x)
    if dt == DataType.E8M0:
        inf_bits = np.where(neg_inf, 0xFF, 0xFE if sat else 0xFF)
        inf_flags = np.where(neg_inf, NV, OF | NX)
        nan_flags = np.full(x.shape, NV)
    else:
        has_inf = FORMATS[dt].has_inf if dt in FORMATS else True
        if has_inf:
            inf_bits, inf_flags = overflow_bits(dt, neg_inf), np.zeros(x.shape, int)
        else:
            sign = np.where(neg_inf, np.uint64(1) << np.uint64(FORMATS[dt].sign_bit), 0)
            big = sign.astype(np.uint64) | max_finite_bits(dt)
            inf_bits = big if sat else overflow_bits(dt, neg_inf)
            inf_flags = np.full(x.shape, OF | NX)
        nan_flags = np.where(snan | (dt not in CANONICAL_NAN), NV, 0)
    bits = np.where(inf, inf_bits, bits)
    flags = np.where(inf, inf_flags, flags)
    bits = np.where(nan, _nan_bits(dt), bits)
    flags = np.where(nan, nan_flags, flags)
    return bits.astype(np.uint64), flags.astype(np.uint8)


def _minmax(
    op: str, dt: DataType, ab: np.ndarray, bb: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``HardwareNumericMinMaxSpecial`` then ordinary ordering (ties keep the left)."""
    ca, cb = classify(dt, ab), classify(dt, bb)
    x, y = decode(dt, ab), decode(dt, bb)
    with np.errstate(invalid="ignore"):
        pick_left = (x >= y) if op == "max" else (x <= y)
    r = np.where(pick_left, ab, bb)
    both0 = ca.zero & cb.zero
    if op == "max":
        z = np.where(ca.neg & cb.neg, ab, np.uint64(0))
    else:
        z = np.where(ca.neg, ab, np.where(cb.neg, bb, np.uint64(0)))
    r = np.where(both0, z, r)
    r = np.where(ca.nan, bb, np.where(cb.nan, ab, r))
    r = np.where(ca.nan & cb.nan, _nan_bits(dt), r)
    return r, np.where(ca.snan | cb.snan, NV, 0)


def _exact_zero_sign(
    parts: _Parts, left_neg: np.ndarray, right_neg: np.ndarray, rmode: int
) -> _Parts:
    """IEEE 754 6.3: an exact zero sum of two terms keeps their common sign; terms of
    opposite signs give +0, or -0 when rounding toward -Inf."""
    neg, m, e, sticky = parts
    zero = (m == 0) & ~sticky
    summed = np.where(left_neg == right_neg, left_neg, rmode == RTM)
    return np.where(zero, summed, neg), m, e, sticky


def _huge_parts(neg: np.ndarray) -> _Parts:
    """Parts of a magnitude far beyond every format: rounds to overflow per direction."""
    shape = np.shape(neg)
    return (
        np.asarray(neg, bool),
        np.ones(shape, np.uint64),
        np.full(shape, 5000, np.int64),
        np.ones(shape, bool),
    )


def float_binary(
    op: str, dt: DataType, a: np.ndarray, b: np.ndarray, rmode: int = RNE
) -> tuple[np.ndarray, np.ndarray]:
    """Floating ``a op b`` (add, sub, mul, div, rem, max, min): (carrier, element flags).

    NaN operands give the canonical NaN (NV if either is signalling); inf-inf, 0*inf,
    0/0, inf/inf, rem by zero and rem of an infinity give the canonical NaN with NV;
    x/0 gives a signed infinity with DZ (E4M3: the canonical NaN, as unary.asl's
    ``TileFloatingUnaryUnboundedResult``). rem is the floor modulo (result takes the
    divisor's sign, as REFERENCE 10.1 states for signed integers; the ASL leaves
    floating TREM to ``TileProfileFloatingModulo``); x rem Inf is x when the signs agree
    or x is zero and the infinity otherwise (the floor-modulo limit, as numpy).
    ``rmode`` (a :mod:`.floatfmt` code) rounds every finite result; an exact zero sum
    takes its sign as IEEE 754 6.3 says.
    """
    ab, bb = np.broadcast_arrays(_bits(a), _bits(b))
    if op in ("max", "min"):
        r, flags = _minmax(op, dt, ab, bb)
        return _carrier(r, dt), flags.astype(np.uint8)
    ca, cb = classify(dt, ab), classify(dt, bb)
    x, y = decode(dt, ab), decode(dt, bb)
    if op == "sub":
        y = -y
        op = "add"
    fin = ~(ca.nan | cb.nan | ca.inf | cb.inf)
    with np.errstate(all="ignore"):
        xs, ys = np.where(fin, x, 1.0), np.where(fin, y, 1.0)
        ovf = np.zeros(x.shape, bool)
        if op == "add":
            parts, ovf = exact_add(xs, ys)
            parts = _exact_zero_sign(parts, np.signbit(xs), np.signbit(ys), rmode)
            invalid = ca.inf & cb.inf & (np.signbit(x) != np.signbit(y))
            special = np.where(ca.inf, x, y)
        elif op == "mul":
            parts = exact_mul(xs, ys)
            invalid = (ca.inf & cb.zero) | (ca.zero & cb.inf)
            special = x * y
        elif op == "div":
            zero_div = fin & cb.zero & ~ca.zero
            parts = exact_div(xs, np.where(cb.zero, 1.0, ys))
            invalid = (ca.zero & cb.zero) | (ca.inf & cb.inf)
            quotient_neg = np.signbit(x) != np.signbit(y)
            special = np.where(quotient_neg, -1.0, 1.0) * np.where(ca.inf, np.inf, 0.0)
            fin = fin & ~cb.zero
        elif op == "rem":
            parts = exact_rem(xs, np.where(cb.zero, 1.0, ys))
            invalid = ca.inf | cb.zero
            keep_x = (x == 0) | (np.signbit(x) == np.signbit(y))
            special = np.where(keep_x, x, y)
            special_bits = np.where(keep_x, ab, bb)
            fin = fin & ~cb.zero
        else:
            raise ValueError(f"unknown floating binary op {op!r}")
        bits, flags = encode_parts(dt, *parts, rmode)
    if ovf.any():
        obits, oflags = encode_parts(dt, *_huge_parts(parts[0]), rmode)
        bits = np.where(ovf, obits, bits)
        flags = np.where(ovf, oflags, flags)
    sp = ~fin
    sbits, _ = round_f64(dt, np.where(sp, special, 0.0), RNE, False, False)
    if op == "rem":
        sbits = np.where(cb.inf, special_bits, sbits)
    res = np.where(sp, sbits, bits)
    flg = np.where(sp, 0, flags)
    if op == "div":
        res = np.where(zero_div, overflow_bits(dt, np.signbit(x) != np.signbit(y)), res)
        flg = np.where(zero_div, DZ, flg)
    invalid = invalid & ~(ca.nan | cb.nan)  # a quiet NaN operand propagates silently
    bad = invalid | ca.nan | cb.nan
    res = np.where(bad, _nan_bits(dt), res)
    flg = np.where(invalid | ca.snan | cb.snan, NV, np.where(bad, 0, flg))
    return _carrier(res, dt), flg.astype(np.uint8)


def float_fma(
    dt: DataType, a: np.ndarray, b: np.ndarray, c: np.ndarray, rmode: int = RNE
) -> tuple[np.ndarray, np.ndarray]:
    """Fused a*b + c with one rounding in ``rmode`` (``TileFixedFusedMultiplyAddValue``).

    sNaN, 0*Inf and Inf - Inf give the canonical NaN with NV
    (``TileProfileFusedInvalidResult``); quiet NaNs give the canonical NaN.
    """
    ab, bb, cc = np.broadcast_arrays(_bits(a), _bits(b), _bits(c))
    ca, cb, ccl = classify(dt, ab), classify(dt, bb), classify(dt, cc)
    x, y, z = decode(dt, ab), decode(dt, bb), decode(dt, cc)
    nan = ca.nan | cb.nan | ccl.nan
    pinf = ca.inf | cb.inf
    pneg = np.signbit(x) != np.signbit(y)
    invalid = (ca.zero & cb.inf) | (ca.inf & cb.zero)
    invalid |= pinf & ccl.inf & (pneg != np.signbit(z))
    invalid |= ca.snan | cb.snan | ccl.snan
    fin = ~(nan | pinf | ccl.inf)
    with np.errstate(all="ignore"):
        xs, ys, zs = (np.where(fin, v, 0.0) for v in (x, y, z))
        extra = np.zeros(x.shape, bool)
        if dt == DataType.FP64:
            parts, extra = exact_fma64(xs, ys, zs)
        else:
            s, e = two_sum(xs * ys, zs)  # the product is exact for <= 26-bit significands
            parts = parts_from_pair(s, e)
        parts = _exact_zero_sign(parts, pneg, np.signbit(zs), rmode)
        bits, flags = encode_parts(dt, *parts, rmode)
    flags = np.where(extra, flags | NX | np.where(_is_tiny(dt, bits), UF, 0), flags)
    special = np.where(pinf, np.where(pneg, -np.inf, np.inf), z)
    sbits, _ = round_f64(dt, np.where(fin, 0.0, special), RNE, False, False)
    res = np.where(fin, bits, sbits)
    flg = np.where(fin, flags, 0)
    res = np.where(nan | invalid, _nan_bits(dt), res)
    flg = np.where(invalid, NV, np.where(nan, 0, flg))
    return _carrier(res, dt), flg.astype(np.uint8)


def _is_tiny(dt: DataType, bits: np.ndarray) -> np.ndarray:
    v = np.abs(decode(dt, bits))
    return v < 2.0 ** FORMATS[dt].emin if dt in FORMATS else np.zeros(v.shape, bool)


def float_unary(
    op: str, dt: DataType, a: np.ndarray, rmode: int = RNE
) -> tuple[np.ndarray, np.ndarray]:
    """SFU exp, log, recip, sqrt, rsqrt: ``TileSFUUnarySpecialValue`` then the D5 profile.

    sqrt and recip are correctly rounded (recip = 1/x; for formats of at most 26
    significand bits this equals D5's "FP64 then round once", as an FP64 quotient of
    such operands is never a double-rounding midpoint). exp, log and rsqrt evaluate
    numpy's FP64 exp/log/(1/sqrt) and round that once to the element type; their results
    are transcendental or irrational, so NX is always set (rsqrt of 4**k is exact). At
    FP64 itself that evaluation is the result, so it is the correctly rounded one
    (:mod:`.correct64`, D9) rather than numpy's. ``rmode`` rounds the ordinary results
    (the special values are exact).
    """
    ab = _bits(a)
    c = classify(dt, ab)
    x = decode(dt, ab)
    one = np.where(np.isfinite(x), x, 0.0) == 1.0
    fin = ~(c.nan | c.inf | c.zero)
    with np.errstate(all="ignore"):
        xs = np.where(fin & (x > 0), x, 1.0)
        if op == "sqrt":
            bits, flags = encode_parts(dt, *exact_sqrt(xs), rmode)
        elif op == "recip":
            quotient = exact_div(np.ones_like(xs), np.where(fin, x, 1.0))
            bits, flags = encode_parts(dt, *quotient, rmode)
        elif dt == DataType.FP64:  # the FP64 evaluation is the result: correctly rounded
            if op == "exp":
                ordinary = fin
            elif op == "log":  # log(1) = +0 exactly is a special value below
                ordinary = fin & (x > 0) & (x != 1.0)
            else:
                ordinary = fin & (x > 0)
            bits = np.zeros(ab.shape, np.uint64)
            flags = np.zeros(ab.shape, np.uint8)
            if ordinary.any():
                v = x[ordinary]
                b, f = rsqrt64(v, rmode) if op == "rsqrt" else exp_log64(op, v, rmode)
                bits[ordinary], flags[ordinary] = b, f
        else:
            if op == "exp":
                y = np.exp(np.where(fin, x, 1.0))
            elif op == "log":
                y = np.log(xs)
            else:  # one FP64 evaluation of 1/sqrt, then one rounding to the element type
                y = 1.0 / np.sqrt(xs)
            big = np.isinf(y)
            yf = np.where(np.isfinite(y) & (y != 0), y, 1.0)
            neg, m, e = parts_of(yf)
            # beyond FP64's range: a magnitude far above or below every format
            e = np.where(big, 5000, np.where(y == 0, -5000, e))
            bits, _ = encode_parts(dt, neg, m, e, np.zeros(y.shape, bool), rmode)
            # flags as for a value just beyond y: inexact, with after-rounding tininess
            neg4, m4, e4 = neg, m << np.uint64(2), e - 2
            _, flags = encode_parts(dt, neg4, m4, e4, np.ones(y.shape, bool), rmode)
            if op == "rsqrt":
                _, mm, ee = parts_of(xs)
                exact = ((mm & (mm - np.uint64(1))) == 0) & ((ee + bitlen(mm) - 1) % 2 == 0)
                flags = np.where(exact, 0, flags)
            if rmode == RNE:  # the tile profile's unbounded results (unchanged)
                bits = np.where(big, overflow_bits(dt, y < 0), bits)
                flags = np.where(big, OF | NX, flags)
                flags = np.where(y == 0, UF | NX, flags)
    neg = c.neg
    qnan = _nan_bits(dt)
    pz = np.uint64(0)
    nz = np.uint64(0) if dt == DataType.HiF8 else np.uint64(1) << np.uint64(info(dt).bits - 1)
    unb_neg = overflow_bits(dt, np.ones(ab.shape, bool))
    unb_pos = overflow_bits(dt, np.zeros(ab.shape, bool))
    one_bits, _ = round_f64(dt, np.ones(ab.shape), RNE, False, False)
    sp_bits = np.zeros(ab.shape, np.uint64)
    sp_flags = np.zeros(ab.shape, np.int64)
    sp = ~fin.copy()
    if op == "exp":
        sp_bits = np.where(c.zero, one_bits, np.where(neg, pz, ab))
    elif op == "log":
        sp |= one | (fin & neg)
        sp_bits = np.where(one, pz, np.where(c.zero, unb_neg, np.where(neg, qnan, ab)))
        sp_flags = np.where(one, 0, np.where(c.zero, DZ, np.where(neg, NV, 0)))
    elif op == "recip":
        sp_bits = np.where(c.zero, np.where(neg, unb_neg, unb_pos), np.where(neg, nz, pz))
        sp_flags = np.where(c.zero, DZ, 0)
    elif op == "sqrt":
        sp |= fin & neg
        sp_bits = np.where(c.zero | (c.inf & ~neg), ab, qnan)
        sp_flags = np.where(c.zero | (c.inf & ~neg), 0, NV)
    elif op == "rsqrt":
        sp |= fin & neg
        sp_bits = np.where(c.zero, np.where(neg, unb_neg, unb_pos), np.where(neg, qnan, pz))
        sp_flags = np.where(c.zero, DZ, np.where(neg, NV, 0))
    else:
        raise ValueError(f"unknown floating unary op {op!r}")
    res = np.where(sp, sp_bits, bits)
    flg = np.where(sp, sp_flags, flags)
    res = np.where(c.nan, qnan, res)
    flg = np.where(c.nan, np.where(c.snan, NV, 0), flg)
    return _carrier(res, dt), flg.astype(np.uint8)


__all__ = [
    "RTO",
    "exact_add",
    "exact_div",
    "exact_fma64",
    "exact_mul",
    "exact_rem",
    "exact_sqrt",
    "float_binary",
    "float_fma",
    "float_unary",
    "round_f64",
    "two_prod",
    "two_sum",
]
