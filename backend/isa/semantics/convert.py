"""TCVT: conversion between every pair of assigned DataTypes.

Integer to integer follows ``TileConvertIntegerValue`` (``asl/tile/model/numeric/
formats.asl``): saturate to the destination range when Sat=1, otherwise keep the low
destination bits, no status. Every pair with a floating side goes through the profile
hook ``TileProfileConvert``, which is impdef except for E8M0 destinations
(``asl/arch/profile/e8m0-conversion.asl``); this module is the reference profile:

* RMode 0 selects RTZ for floating to integer and RNE otherwise (``TCVT.asl``).
* Float to float rounds the exact source value once at the destination
  (:func:`.core.round_float`): overflow gives Inf or, with Sat=1, the largest finite
  value, with OF|NX; a source Inf into an Inf-less destination follows the same
  overflow rule (as E8M0's contract states for +Inf); a NaN becomes the destination's
  canonical NaN (NV if signalling) or, for a destination with no NaN encoding (E3M2,
  E2M3, E2M1X2, E1M2X2, HiF4X2), +0 with NV.
* Float to integer mirrors D5's TQUANT: NaN gives 0 with NV; a value whose rounded
  integer lies outside the destination range sets NV and is clamped (Sat=1) or reduced
  modulo 2**width (Sat=0); an Inf, which has no modulo, is clamped either way; an
  inexact rounding sets NX.
* Integer to float rounds the exact integer (OF|NX on overflow, NX when inexact).
* The same DataType on both sides is a bit copy. ``canonicalize`` only selects the
  private/public source representation, a legality matter for the executor; it does
  not change values here.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

import numpy as np

from .. import op as catalog_op
from ..datatypes import DataType, info
from . import fastconvert as _fc
from . import fastpath as _fp
from .core import (
    NV,
    NX,
    SemanticError,
    fold_flags,
    from_bits,
    is_float,
    round_float,
    to_bits,
)
from .floatfmt import (
    CANONICAL_NAN,
    RHB,
    RNA,
    RNE,
    RTM,
    RTO,
    RTP,
    RTZ,
    _round_at,
    bitlen,
    classify,
    decode,
    encode_parts,
    parts_of,
)

__all__ = ["convert", "float_to_int", "int_to_float", "int_to_int"]


def _e8m0_sources() -> frozenset[DataType]:
    """The TCVT contract's E8M0 source types (read from the catalog when needed, so that
    regenerating the catalog never depends on importing this module)."""
    return catalog_op("TCVT").type_rules["e8m0_sources"]


_U64 = np.uint64


@cache
def _int_range(dt: DataType) -> tuple[int, int]:
    w = info(dt).bits
    return (-(1 << (w - 1)), (1 << (w - 1)) - 1) if info(dt).is_signed else (0, (1 << w) - 1)


def _from_int64_bits(v: np.ndarray, dt: DataType) -> np.ndarray:
    """Carrier of integer ``dt`` from the low bits of uint64 two's-complement words."""
    w = info(dt).bits
    low = v & _U64((1 << w) - 1) if w < 64 else v
    if w == 4:  # int4/uint4 carriers take values, not raw nibbles
        s = low.astype(np.int64)
        if info(dt).is_signed:
            s = np.where(s >= 8, s - 16, s)
        return s.astype(info(dt).carrier)
    return from_bits(low, dt)


def _int_words(dt: DataType, a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(negative, magnitude as uint64) of an integer carrier array."""
    v = np.asarray(a).astype(np.int64 if info(dt).is_signed else np.uint64)
    if info(dt).is_signed:
        neg = v < 0
        u = v.view(_U64)
        return neg, np.where(neg, _U64(0) - u, u)
    return np.zeros(v.shape, bool), v


def int_to_int(src: DataType, dst: DataType, a: np.ndarray, sat: bool) -> np.ndarray:
    """``TileConvertIntegerValue``: saturating or modular integer narrowing/widening."""
    neg, mag = _int_words(src, a)
    word = np.where(neg, _U64(0) - mag, mag)
    if sat:
        lo, hi = _int_range(dst)
        too_low = neg & (mag > _U64(-lo)) if lo < 0 else neg & (mag != 0)
        too_high = ~neg & (mag > _U64(hi))
        word = np.where(too_low, _U64(lo & 0xFFFFFFFFFFFFFFFF), word)
        word = np.where(too_high, _U64(hi), word)
    return _from_int64_bits(word, dst)


def float_to_int(
    x: np.ndarray, dst: DataType, rmode: int, sat: bool, nan: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Round float64 values to integer ``dst``: (carrier array, per-element flags).

    ``rmode`` is a B.DATR code (0 means RTZ here). NaN -> 0 with NV; out of range ->
    NV and clamp (``sat``) or modulo 2**width; Inf -> clamp with NV; inexact -> NX.
    """
    x = np.asarray(x, np.float64)
    rmode = rmode or RTZ
    if _fp.enabled() and rmode in _NATIVE_ROUND:
        return _float_to_int_native(x, dst, rmode, sat, nan)
    return _float_to_int_exact(x, dst, rmode, sat, nan)


def _round_away(x: np.ndarray) -> np.ndarray:
    t = np.trunc(x)
    return t + np.where(np.abs(x - t) >= 0.5, np.sign(x), 0.0)


def _round_half_up(x: np.ndarray) -> np.ndarray:
    t = np.floor(x)
    return t + (x - t >= 0.5)


def _round_odd(x: np.ndarray) -> np.ndarray:
    t = np.trunc(x)
    return t + np.where((t != x) & (np.fmod(t, 2.0) == 0), np.sign(x), 0.0)


#: B.DATR rounding modes as float64 operations that are exact for |x| < 2**52: there
#: every float64 is a multiple of 2**-52 below 2**52, so the fraction ``x - trunc(x)``
#: (or ``x - floor(x)``) is exact, and so is every integer result
_NATIVE_ROUND: dict[int, Callable[[np.ndarray], np.ndarray]] = {
    RTZ: np.trunc,
    RNE: np.rint,  # ties to even
    RTP: np.ceil,
    RTM: np.floor,
    RNA: _round_away,  # ties away from zero
    RHB: _round_half_up,  # ties toward +Inf
    RTO: _round_odd,  # truncate, then make an inexact magnitude odd
}


def _float_to_int_native(
    x: np.ndarray, dst: DataType, rmode: int, sat: bool, nan: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`float_to_int` computed natively where that is provably exact: finite
    values below 2**52 in magnitude whose rounded integer lies in ``dst``'s range (the
    integer and its inexactness are then exact in float64, and the only flag is NX).
    Every other element -- NaN, infinity, huge or out of range -- is handed to the exact
    path as one subset."""
    lo, hi = _int_range(dst)
    with np.errstate(invalid="ignore"):
        r = _NATIVE_ROUND[rmode](x)
        # every element ordinary: a NaN makes both extrema NaN and fails the tests; a
        # rounded value below 2**52 in magnitude has a source below 2**52 (from 2**52
        # on every float64 is an integer, which rounds to itself)
        if r.size and info(dst).bits != 4:
            rmin, rmax = r.min(), r.max()
            if rmin >= max(lo, 1 - 2**52) and rmax <= min(hi, 2**52 - 1):
                res = r.astype(info(dst).carrier)  # in range: exact
                return res, np.where(r != x, np.uint8(NX), np.uint8(0))
        ok = (np.abs(x) < 2.0**52) & (r >= lo) & (r <= hi)
    if nan is not None:
        ok &= ~nan
    word = np.where(ok, r, 0.0).astype(np.int64).view(_U64)
    res = _from_int64_bits(word, dst)
    flags = np.where(r != x, np.uint8(16), np.uint8(0))
    if not ok.all():
        bad = ~ok
        sub, sub_flags = _float_to_int_exact(
            x[bad], dst, rmode, sat, None if nan is None else nan[bad]
        )
        res[bad] = sub
        flags[bad] = sub_flags
    return res, flags


def _float_to_int_exact(
    x: np.ndarray, dst: DataType, rmode: int, sat: bool, nan: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`float_to_int` by exact integer arithmetic on the float64 parts."""
    nan = np.isnan(x) if nan is None else nan
    inf = np.isinf(x)
    neg, m, e = parts_of(np.where(nan | inf, 0.0, x))
    neg = np.where(inf, np.signbit(x), neg)
    # Magnitudes of 2**64 and above: out of range for every destination; the low
    # 64 bits of M * 2**E are M << E for E < 64 and zero beyond.
    huge = (m != 0) & (e + bitlen(m) > 64)
    kept, inexact = _round_at(
        m, e, np.zeros(x.shape, bool), np.zeros(x.shape, np.int64), neg, rmode
    )
    kept = np.where(huge, np.where(e < 64, m << np.clip(e, 0, 63).astype(_U64), _U64(0)), kept)
    lo, hi = _int_range(dst)
    if lo < 0:
        out = np.where(neg, kept > _U64(-lo), kept > _U64(hi))
    else:
        out = (kept > _U64(hi)) | (neg & (kept != 0))
    out |= huge | inf
    word = np.where(neg, _U64(0) - kept, kept)
    clamp = np.where(neg, _U64(lo & 0xFFFFFFFFFFFFFFFF), _U64(hi))
    word = np.where(out & (sat | inf), clamp, word)
    word = np.where(nan, _U64(0), word)
    flags = np.where(inexact & ~huge, 16, 0) | np.where(out | nan, NV, 0)
    return _from_int64_bits(word, dst), flags.astype(np.uint8)


def int_to_float(
    src: DataType, dst: DataType, a: np.ndarray, rmode: int, sat: bool
) -> tuple[np.ndarray, np.ndarray]:
    """Round exact integers to floating ``dst``: (carrier array, per-element flags)."""
    neg, mag = _int_words(src, a)
    bits, flags = encode_parts(
        dst,
        neg,
        mag,
        np.zeros(mag.shape, np.int64),
        np.zeros(mag.shape, bool),
        rmode or RNE,
        sat,
    )
    return from_bits(bits, dst), flags


def convert(
    src_dt: DataType,
    dst_dt: DataType,
    a: np.ndarray,
    rmode: int = 0,
    sat: bool | int = False,
    canonicalize: int = 0,
) -> tuple[np.ndarray, np.ndarray]:
    """TCVT one tile: (destination carrier array, status (P,)). See the module docstring.

    Raises :class:`SemanticError` for a source-to-E8M0 pair other than FP16, BF16 or
    FP32 (``HardwareTCVTTypePairSupported``), which the executor should reject first.
    """
    src_dt, dst_dt = DataType(src_dt), DataType(dst_dt)
    a = np.asarray(a)
    sat = bool(sat)
    p = a.shape[0] if a.ndim else 1
    if src_dt == dst_dt:
        return a.copy(), np.zeros(p, np.uint8)
    if dst_dt == DataType.E8M0 and src_dt not in _e8m0_sources():
        raise SemanticError(
            f"TCVT to E8M0 accepts only FP16, BF16 or FP32 sources, not {src_dt.name}"
        )
    if not is_float(src_dt):
        if is_float(dst_dt):
            if _fp.enabled():
                fast = _native_convert(src_dt, dst_dt, a, rmode, p)
                if fast is not None:
                    return fast
            r, flags = int_to_float(src_dt, dst_dt, a, rmode, sat)
            return r, fold_flags(flags)
        return int_to_int(src_dt, dst_dt, a, sat), np.zeros(p, np.uint8)
    if _fp.enabled():
        fast = _native_convert(src_dt, dst_dt, a, rmode, p)
        if fast is not None:
            return fast
        if a.ndim and a.dtype == info(src_dt).carrier and src_dt in _fc.EXACT_WIDEN:
            if not is_float(dst_dt):  # the exact float64 value and its NaN mask
                x = _fc.widen64(src_dt, a)  # NaNs are found by the native rounding
                r, flags = float_to_int(x, dst_dt, rmode, sat)
                return r, fold_flags(flags)
            if dst_dt in _fc.NARROW_DESTS and rmode in (0, RNE):
                return _fc.narrow_rne(
                    src_dt, dst_dt, a, lambda sub: _float_to_float(src_dt, dst_dt, sub, 0, sat)
                )
    if not is_float(dst_dt):
        bits = to_bits(a)
        x = decode(src_dt, bits)
        r, flags = float_to_int(x, dst_dt, rmode, sat, classify(src_dt, bits).nan)
        return r, fold_flags(flags)
    r, flags = _float_to_float(src_dt, dst_dt, a, rmode, sat)
    return r, fold_flags(flags)


def _float_to_float(
    src_dt: DataType, dst_dt: DataType, a: np.ndarray, rmode: int, sat: bool
) -> tuple[np.ndarray, np.ndarray]:
    """The exact engine's float to float conversion: (carrier array, per-element flags)."""
    bits = to_bits(a)
    cls = classify(src_dt, bits)
    x = decode(src_dt, bits)
    # The float64 value is exact; NaN status must come from the source class because
    # a float64 view of a narrower signalling NaN is already quiet.
    r, flags = round_float(dst_dt, np.where(cls.nan, np.nan, x), rmode or RNE, sat=sat)
    nan_nv = cls.snan | (cls.nan & (dst_dt == DataType.E8M0))
    quiet = cls.nan & ~nan_nv & (classify(dst_dt, to_bits(r).astype(_U64)).nan)
    flags = np.where(cls.nan, np.where(nan_nv | ~quiet, NV, 0), flags).astype(np.uint8)
    return r, flags


# ---------------------------------------------------------------- native conversions

#: float -> float pairs where every source value (NaN aside) is exactly a destination
#: value and the carriers convert exactly (numpy, ml_dtypes): the conversion is a cast
_WIDENING = frozenset(
    {(s, DataType.FP32) for s in ("FP16", "BF16", "E4M3", "E5M2", "E8M0")}
    | {(s, DataType.FP64) for s in ("FP32", "FP16", "BF16", "E4M3", "E5M2", "E8M0")}
)
#: integer sources whose every value is exactly an FP32 (FP64: every integer up to 32 bits)
_EXACT_IN_FP32 = frozenset({DataType.S8, DataType.U8, DataType.S16, DataType.U16})
_TO_FP64 = _EXACT_IN_FP32 | {DataType.S32, DataType.U32}


def _native_int_rounding() -> bool:
    """Native int64/int32/uint32 -> float32 casts round to nearest even (checked once;
    otherwise the wide integer sources take the exact path)."""
    cases = [2**24 + 1, 2**24 + 3, -(2**24 + 1), 2**31 - 1, -(2**31)]
    want = [2.0**24, 2.0**24 + 4, -(2.0**24), 2.0**31, -(2.0**31)]
    u = [2**32 - 1, 2**24 + 3]
    return (
        np.array(cases, np.int64).astype(np.float32).tolist() == want
        and np.array(cases, np.int32).astype(np.float32).tolist() == want
        and np.array(u, np.uint32).astype(np.float32).tolist() == [2.0**32, 2.0**24 + 4]
    )


_INT_RNE = _native_int_rounding()


def _native_convert(
    src: DataType, dst: DataType, a: np.ndarray, rmode: int, p: int
) -> tuple[np.ndarray, np.ndarray] | None:
    """The conversions a native cast computes exactly as the reference profile (None
    for the others):

    * float widenings (:data:`_WIDENING`): the value is kept exactly (no rounding, no
      overflow, no flag); a NaN becomes the destination's canonical NaN, with NV when
      the source NaN signals (the rule of :func:`convert`);
    * integers up to 16 bits to FP32, up to 32 bits to FP64: exact, no flag;
    * S32/U32 to FP32 under RNE (RMode 0 or RNE): the native cast rounds to nearest
      even, NX wherever the rounded value differs from the integer (no overflow).
    """
    if a.ndim == 0 or a.dtype != info(src).carrier:
        return None
    if is_float(src):
        if (src.name, dst) not in _WIDENING:
            return None
        r = _fp._quiet(a.astype, info(dst).carrier)  # a signalling NaN raises invalid
        nan = np.isnan(r)
        if not nan.any():
            return r, np.zeros(p, np.uint8)
        cls = classify(src, to_bits(a))
        ub = np.dtype(f"u{r.dtype.itemsize}")
        r.view(ub)[nan] = CANONICAL_NAN[dst]
        return r, fold_flags(np.where(cls.snan, NV, 0).astype(np.uint8))
    if dst == DataType.FP64 and src in _TO_FP64:
        return a.astype(np.float64), np.zeros(p, np.uint8)
    if dst != DataType.FP32:
        return None
    if src in _EXACT_IN_FP32:
        return a.astype(np.float32), np.zeros(p, np.uint8)
    if src in (DataType.S32, DataType.U32) and _INT_RNE and rmode in (0, RNE):
        r = a.astype(np.float32)
        inexact = r.astype(np.int64) != a.astype(np.int64)  # |r| <= 2**32: exact back
        return r, fold_flags(np.where(inexact, NX, 0).astype(np.uint8))
    return None
