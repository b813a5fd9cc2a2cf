"""Numerics of the FSU scalar forms on 64-bit GPR words (``asl/scalar/model/fsu``).

Every entry point takes and returns uint64 words, one per PE, and returns the NV, DZ,
OF, UF, NX flags each PE raises. What the ASL fixes is followed exactly: source
normalisation (an FP32 operand is the low word), FMIN/FMAX (``ScalarFPMinMax``), the
compares (``ScalarFPEncodingCompare``: every relation, NE included, is false when an
operand is a NaN; NV on a signalling NaN, or on any NaN for the ...S forms), FABS (the
sign bit cleared, no flags, NaNs kept) and the result widths (``NormalizeScalarFPResult``,
``NormalizeScalarIntegerResult``). The numeric profile hooks the ASL leaves
implementation defined (``ScalarFPBinaryProfile`` and its kin) are ptoc's reference
profile, the one tile operations use (DECISIONS D5): correctly rounded in the given
rounding mode, the canonical quiet NaN for a NaN result, IEEE flags with tininess after
rounding; FEXP evaluates in FP64 and rounds once. Conversions to integers saturate to
the destination range with NV (a NaN gives 0 with NV), as TCVT's saturating profile.
A conversion between equal carriers copies the bits (as TCVT). The TF32 carrier is the
19-bit encoding (sign, 8 exponent, 10 fraction bits), right-justified.
"""

from __future__ import annotations

import numpy as np

from ..datatypes import DataType
from ..scalar_fp import FP_DESTINATION, FP_SOURCE, INT_DESTINATION, INT_SOURCE_BITS
from .floatarith import _minmax, float_binary, float_fma, float_unary, round_f64
from .floatfmt import (
    CANONICAL_NAN,
    NV,
    NX,
    _round_at,
    bitlen,
    classify,
    decode,
    encode_parts,
    parts_of,
)

_U = np.uint64
_M32 = _U(0xFFFFFFFF)
_TF32_PAD = 13  # ptoc's tile TF32 element keeps 13 zero bits under the fraction

Result = tuple[np.ndarray, np.ndarray]


def _source(words: np.ndarray, src_type: int) -> tuple[DataType, np.ndarray]:
    """``NormalizeScalarFPSource``: the carrier DataType and its raw bits."""
    dt = FP_SOURCE[src_type]
    w = np.asarray(words, _U)
    return dt, (w & _M32 if dt == DataType.FP32 else w)


def _carrier(dt: DataType, bits: np.ndarray) -> np.ndarray:
    return (
        bits.astype(np.uint32).view(np.float32)
        if dt == DataType.FP32
        else bits.view(np.float64)
    )


def _raw(dt: DataType, values: np.ndarray) -> np.ndarray:
    width = np.uint32 if dt == DataType.FP32 else np.uint64
    return np.ascontiguousarray(values).view(width).astype(_U)


def _sign_bit(dt: DataType) -> np.uint64:
    return _U(1 << 31) if dt == DataType.FP32 else _U(1 << 63)


def binary(op: str, src_type: int, left: np.ndarray, right: np.ndarray, rmode: int) -> Result:
    """FADD, FSUB, FMUL, FDIV (``op`` add, sub, mul, div) and FMIN, FMAX (min, max)."""
    dt, a = _source(left, src_type)
    _, b = _source(right, src_type)
    if op in ("min", "max"):
        r, flags = _minmax(op, dt, a, b)  # exactly ScalarFPMinMax
        return r.astype(_U), flags.astype(np.uint8)
    r, flags = float_binary(op, dt, _carrier(dt, a), _carrier(dt, b), rmode)
    return _raw(dt, r), flags


def fused(
    op: str, src_type: int, left: np.ndarray, right: np.ndarray, addend: np.ndarray, rmode: int
) -> Result:
    """``FloatingFused``: madd L*R + A, msub L*R - A, nmadd -(L*R + A), nmsub -(L*R - A),
    one rounding of the exact value (negating an operand's sign negates it exactly)."""
    dt, a = _source(left, src_type)
    _, b = _source(right, src_type)
    _, c = _source(addend, src_type)
    s = _sign_bit(dt)
    if op in ("nmadd", "nmsub"):
        a = a ^ s
    if op in ("msub", "nmadd"):
        c = c ^ s
    r, flags = float_fma(dt, _carrier(dt, a), _carrier(dt, b), _carrier(dt, c), rmode)
    return _raw(dt, r), flags


def unary(op: str, src_type: int, value: np.ndarray, rmode: int) -> Result:
    """FABS (``abs``: the sign bit cleared, no flags), FSQRT, FRECIP, FEXP."""
    dt, a = _source(value, src_type)
    if op == "abs":
        return a & ~_sign_bit(dt), np.zeros(a.shape, np.uint8)
    r, flags = float_unary(op, dt, _carrier(dt, a), rmode)
    return _raw(dt, r), flags


def compare(
    op: str, src_type: int, left: np.ndarray, right: np.ndarray, signalling: bool
) -> Result:
    """``ScalarFPEncodingCompare`` (eq, ne, lt, ge) as 0/1 words and its NV flag."""
    dt, a = _source(left, src_type)
    _, b = _source(right, src_type)
    ca, cb = classify(dt, a), classify(dt, b)
    x, y = decode(dt, a), decode(dt, b)
    nan = ca.nan | cb.nan
    with np.errstate(invalid="ignore"):
        holds = {"eq": x == y, "ne": x != y, "lt": x < y, "ge": x >= y}[op]
    holds = holds & ~nan
    raise_nv = (nan if signalling else np.zeros(a.shape, bool)) | ca.snan | cb.snan
    return holds.astype(_U), np.where(raise_nv, NV, 0).astype(np.uint8)


def _fp_result(dst: DataType, width: int, bits: np.ndarray) -> np.ndarray:
    """``NormalizeScalarFPResult``: the carrier's bits, zero-extended from ``width``."""
    bits = np.asarray(bits, _U)
    if dst == DataType.TF32:
        bits = bits >> _U(_TF32_PAD)
    return bits & _U((1 << width) - 1) if width < 64 else bits


def convert_float(src_type: int, dst_type: int, value: np.ndarray, rmode: int) -> Result:
    """FCVT: a floating source rounded once to the floating destination carrier."""
    dt, a = _source(value, src_type)
    dst, width = FP_DESTINATION[dst_type]
    if dst == dt:
        return a.copy(), np.zeros(a.shape, np.uint8)
    c = classify(dt, a)
    x = decode(dt, a)
    bits, flags = round_f64(dst, np.where(c.nan, 0.0, x), rmode, False, False)
    # a NaN: the destination's canonical NaN (NV if signalling); +0 with NV where the
    # destination has no NaN (its NaN status comes from the source class: a float64
    # view of a narrower signalling NaN is quiet)
    has_nan = dst in CANONICAL_NAN and dst != DataType.E8M0
    nan_bits = _U(CANONICAL_NAN.get(dst, 0))
    nan_flags = np.where(c.snan | (not has_nan), NV, 0)
    bits = np.where(c.nan, nan_bits, bits)
    flags = np.where(c.nan, nan_flags, flags)
    return _fp_result(dst, width, bits), flags.astype(np.uint8)


def convert_to_int(src_type: int, dst_type: int, value: np.ndarray, rmode: int) -> Result:
    """FCVTA/M/N/P/Z: round to an integer in ``rmode``, saturate to the carrier's range
    (NV when out of range or NaN, which gives 0; NX when inexact)."""
    dt, a = _source(value, src_type)
    carrier = INT_DESTINATION[dst_type]
    c = classify(dt, a)
    x = decode(dt, a)
    fin = ~(c.nan | c.inf)
    neg, m, e = parts_of(np.where(fin, x, 0.0))
    huge = fin & (m != 0) & (e + bitlen(m) > 64)  # |x| >= 2**64: beyond every carrier
    shape = a.shape
    kept, inexact = _round_at(
        np.where(huge, _U(0), m),
        e,
        np.zeros(shape, bool),
        np.zeros(shape, np.int64),
        neg,
        rmode,
    )
    lo, hi = carrier.range
    mag = [int(k) for k in kept]
    out = np.zeros(shape, _U)
    flags = np.zeros(shape, np.uint8)
    for i in range(a.size):
        if c.nan[i]:
            v, f = 0, NV
        elif c.inf[i] or huge[i]:
            v, f = (lo if (c.neg[i] if c.inf[i] else neg[i]) else hi), NV
        else:
            v = -mag[i] if neg[i] else mag[i]
            f = NX if inexact[i] else 0
            if not lo <= v <= hi:
                v, f = min(max(v, lo), hi), NV
        out[i] = v & ((1 << 64) - 1)
        flags[i] = f
    return out, flags


def convert_from_int(
    signed: bool, src_type: int, dst_type: int, value: np.ndarray, rmode: int
) -> Result:
    """SCVTF/UCVTF: the (sign- or zero-extended) integer rounded once to the floating
    destination carrier."""
    w = np.asarray(value, _U)
    bits = INT_SOURCE_BITS[src_type]
    if bits == 32:
        w = w & _M32
    neg = np.zeros(w.shape, bool)
    if signed:
        top = _U(1 << (bits - 1))
        neg = (w & top) != 0
        full = _U((1 << 64) - 1) if bits == 64 else _M32
        w = np.where(neg, ((~w) + _U(1)) & full, w)  # the magnitude
    dst, width = FP_DESTINATION[dst_type]
    out, flags = encode_parts(
        dst, neg, w, np.zeros(w.shape, np.int64), np.zeros(w.shape, bool), rmode
    )
    return _fp_result(dst, width, out), flags


__all__ = [
    "binary",
    "compare",
    "convert_float",
    "convert_from_int",
    "convert_to_int",
    "fused",
    "unary",
]
