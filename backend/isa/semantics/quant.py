"""TQUANT and TDEQUANT: per-PE affine (de)quantization, FP32 <-> S8/U8 (Mode 3, Fn 10/11).

Authority, in precedence order: seed ADR 0083 decisions 133/134; DECISIONS.md D5; ASL
``asl/tile/model/numeric/formats.asl`` (``TileQuantizationScaleLegal``,
``TileQuantizationZeroPointLegal``) and ``asl/arch/profile/reference-quantization.asl``.

TQUANT (D10, superseding D5's TQUANT bullet; seed decision 133 and the ASL
``TileProfileQuantize``): ``q = round_RMode(x * multiplier + zero_point)``, the affine
value evaluated exactly and rounded once. NaN gives 0 and NV. A rounded value outside the
destination range, and every infinite source, sets NV ("out of range before
saturation"). Sat=1 clamps; Sat=0 keeps the low 8 bits (two's complement for S8). NX is
set whenever the rounding to an integer is inexact (also for out-of-range values, as the
ASL reference profile does).

Decisions where D10 and the seed are silent (documented choices):

* An infinite source saturates to the range end of its sign under both Sat settings --
  there are no "low 8 bits" of infinity; this is the ASL reference profile's rule. Its
  status is NV (D5/D10's out-of-range rule), not the profile's OF|NX.
* An exact product beyond the FP32 range is not an overflow: nothing is rounded to FP32,
  so only the out-of-range rule (NV) applies.

TDEQUANT (D5): ``fl32((q - zero_point) * multiplier)``: the subtraction and the product
are exact in float64 (at most 9 + 24 significant bits), then one rounding by RMode.

GPR interpretation (ASL): the multiplier is the low 32 bits of RegSrc0 (upper bits are
ignored by ``TileQuantizationScaleLegal``). The zero point is the FULL 64-bit RegSrc1
value: ``NormalizeTileInteger(zp, dt) == zp`` means that, read as a signed 64-bit
integer, it lies in -128..127 for S8 and in 0..255 for U8 (so -1 is legal for S8 only as
0xFFFF_FFFF_FFFF_FFFF, and 0xFF is not a legal S8 zero point).
"""

from __future__ import annotations

import numpy as np

from ..datatypes import DataType
from . import fastconvert as _fc
from . import fastpath as _fp
from .core import NV, NX, SemanticError, fold_status, from_bits, round_float

_RANGE = {DataType.S8: (-128, 127), DataType.U8: (0, 255)}
_CARRIER = {DataType.S8: np.dtype(np.int8), DataType.U8: np.dtype(np.uint8)}
#: B.DATR RMode codes (0 = the operation default, RNE for both operations).
RNE, RTZ, RTM, RTP, RNA, RTO, RHB = 1, 2, 3, 4, 5, 6, 7
MULTIPLIER_ONE = 0x3F800000


def _mult_bits(multiplier_bits: np.ndarray) -> np.ndarray:
    """The raw FP32 multiplier: low 32 bits of each PE's GPR, uint32 (P,)."""
    return np.array([v & 0xFFFFFFFF for v in _words(multiplier_bits)], np.uint32)


def _words(gpr: np.ndarray) -> list[int]:
    """Raw GPR values (one per PE) as unsigned 64-bit Python ints."""
    a = np.asarray(gpr).reshape(-1)
    if a.dtype.kind not in "iu":
        a = a.astype(np.int64)
    return [int(v) & 0xFFFFFFFFFFFFFFFF for v in a.tolist()]


def _signed(words: list[int]) -> list[int]:
    return [v - (1 << 64) if v >> 63 else v for v in words]


def _zero_point(zero_point: np.ndarray) -> np.ndarray:
    """The zero point as a signed 64-bit value (raw uint64 GPRs are reinterpreted)."""
    zp = np.asarray(zero_point)
    if zp.dtype == np.uint64:
        return zp.view(np.int64)
    return zp.astype(np.int64)


def _multiplier_rule(multiplier_bits: np.ndarray) -> str | None:
    b = [v & 0xFFFFFFFF for v in _words(multiplier_bits)]
    if any(v & 0x80000000 for v in b):
        return "multiplier must be positive"
    if any(v & 0x7F800000 == 0x7F800000 for v in b):
        return "multiplier must be finite"
    if any(v == 0 for v in b):
        return "multiplier must be nonzero"
    return None


def _scalars_rule(
    op: str, int_dt: DataType, mult_bits: np.ndarray, zp: np.ndarray
) -> str | None:
    int_dt = DataType(int_dt)
    if int_dt not in _RANGE:
        return f"{op} integer DataType {int_dt.name} is not S8 or U8"
    rule = _multiplier_rule(mult_bits)
    if rule is not None:
        return f"{op} {rule}"
    lo, hi = _RANGE[int_dt]
    if any(z < lo or z > hi for z in _signed(_words(zp))):
        return f"{op} zero point is outside the {int_dt.name} range"
    return None


def tquant_scalars_legal(dst_dt: DataType, mult_bits: np.ndarray, zp: np.ndarray) -> str | None:
    """TQUANT preflight: multiplier finite, positive, nonzero; zero point in dst range."""
    return _scalars_rule("TQUANT", dst_dt, mult_bits, zp)


def tdequant_scalars_legal(
    src_dt: DataType, mult_bits: np.ndarray, zp: np.ndarray
) -> str | None:
    """TDEQUANT preflight: multiplier finite, positive, nonzero; zero point in src range."""
    return _scalars_rule("TDEQUANT", src_dt, mult_bits, zp)


def _round_split(n: np.ndarray, frac: np.ndarray, rmode: int) -> np.ndarray:
    """Round ``n + frac`` (int64 ``n``, float64 ``-1 < frac < 1``) to an integer by RMode.

    ASL ``FloatingToInteger``. Splitting off the integer part keeps every decision exact:
    ``x * m + zero_point`` itself is not representable in float64 when the product is
    tiny, and neither is ``1 + frac`` for a tiny negative ``frac``, so the fraction keeps
    its sign and the comparisons with one half are made on it directly.
    """
    rmode = RNE if rmode == 0 else rmode
    below = frac < 0
    lo = n - below  # floor of the value; the value is in [lo, lo + 1)
    inexact = frac != 0
    half = np.abs(frac) == 0.5
    above = (frac > 0.5) | (below & (frac > -0.5))  # nearer lo + 1 than lo
    neg = lo < 0  # the value is negative exactly when its floor is
    if rmode == RNE:
        up = above | (half & (lo % 2 != 0))
    elif rmode == RTZ:
        up = inexact & neg
    elif rmode == RTM:
        up = np.zeros(n.shape, bool)
    elif rmode == RTP:
        up = inexact
    elif rmode == RNA:
        up = above | (half & ~neg)
    elif rmode == RTO:
        up = inexact & (lo % 2 == 0)
    elif rmode == RHB:
        up = above | half
    else:
        raise ValueError(f"unknown RMode {rmode}")
    return np.where(inexact, lo + up, n)


def tquant(
    dst_dt: DataType,
    x_fp32: np.ndarray,
    multiplier_bits: np.ndarray,
    zero_point: np.ndarray,
    rmode: int,
    sat: bool,
) -> tuple[np.ndarray, np.ndarray]:
    """TQUANT: FP32 (P, R, C) -> S8/U8 (P, R, C) by ``round(x * m + zp)``, evaluated
    exactly and rounded once (D10, ``TileProfileQuantize``).

    ``multiplier_bits`` are the raw per-PE GPRs (low 32 bits = FP32 multiplier),
    ``zero_point`` the raw per-PE GPRs (see the module docstring), ``rmode`` the B.DATR
    RMode code (0 = RNE), ``sat`` B.DATR.Sat. Illegal scalars raise
    :class:`SemanticError` (the executor checks :func:`tquant_scalars_legal` first).
    Returns ``(q, status)``.
    """
    dst_dt = DataType(dst_dt)
    rule = tquant_scalars_legal(dst_dt, multiplier_bits, zero_point)
    if rule is not None:
        raise SemanticError(rule)
    p = x_fp32.shape[0]
    mult = _mult_bits(multiplier_bits).view(np.float32).astype(np.float64)
    zp = _zero_point(zero_point)
    with np.errstate(invalid="ignore"):  # a signalling NaN widens quietly
        x64 = np.asarray(x_fp32, np.float32).astype(np.float64)
    if _fp.enabled() and rmode in (0, RNE) and x64.ndim == 3:
        return _tquant_rne(dst_dt, x64, mult, zp, sat)
    out, nv, nx = _tquant_exact(dst_dt, x64, mult.reshape(p, 1, 1), zp.reshape(p, 1, 1),
                                rmode, sat)  # fmt: skip
    status = fold_status(nv, NV) | fold_status(nx, NX)
    return out, status.astype(np.uint8)


def _tquant_exact(
    dst_dt: DataType,
    x64: np.ndarray,
    mult: np.ndarray,
    zp: np.ndarray,
    rmode: int,
    sat: bool,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The exact TQUANT of float64 sources ``x64`` with float64 multipliers and int64
    zero points broadcastable to it: (carrier result, NV per element, NX per element)."""
    nan = np.isnan(x64)
    inf = np.isinf(x64)
    # Two FP32 significands multiply into at most 48 bits and the exponents stay within
    # float64's normal range, so the float64 product is the exact product.
    with np.errstate(invalid="ignore"):
        prod = np.where(nan | inf, 0.0, x64) * mult
    lo, hi = _RANGE[dst_dt]
    # |prod| >= 2**53 is an integer far out of range: only its low 8 bits matter (fmod
    # is exact). Below that, trunc(prod) and prod - trunc(prod) are exact in float64.
    big = np.abs(prod) >= 2.0**53
    whole = np.trunc(prod)
    frac = np.where(big, 0.0, prod - whole)
    whole = np.where(big, np.fmod(prod, 256.0), whole).astype(np.int64)
    q = _round_split(whole + zp, frac, rmode)
    inexact = ~nan & ~inf & (frac != 0)
    sign = np.where(prod < 0, -1, 1).astype(np.int64)
    q = np.where(big, q + sign * 2**16, q)  # keeps the low 8 bits, out of range by sign
    out_of_range = inf | (q < lo) | (q > hi)
    if sat:
        q = np.clip(q, lo, hi)
    q = np.where(inf, np.where(x64 < 0, lo, hi), q)
    q = np.where(nan, 0, q)
    return _low_byte(dst_dt, q), nan | out_of_range, inexact


def _low_byte(dst_dt: DataType, q: np.ndarray) -> np.ndarray:
    """The S8/U8 carrier of the low 8 bits of int64 ``q``."""
    out = (q & 0xFF).astype(np.uint8)
    return out.view(np.int8) if dst_dt == DataType.S8 else out


#: |x * m| below this bound keeps ``x * m + zp`` within 2**21, where float64's rounding
#: error is below 2**-33, far under :data:`_MARGIN` (see :func:`_tquant_rne`)
_PROD_BOUND = 2.0**20
_MARGIN = 2.0**-30


def _tquant_rne(
    dst_dt: DataType, x64: np.ndarray, mult: np.ndarray, zp: np.ndarray, sat: bool
) -> tuple[np.ndarray, np.ndarray]:
    """TQUANT rounded to nearest even, natively where that provably is the exact answer.

    ``prod = x * m`` is exact (as in :func:`_tquant_exact`); ``s = prod + zp`` is its
    float64 rounding, within 2**-33 of the exact affine value v when ``|prod| < 2**20``.
    With ``r = rint(s)`` and ``d = |s - r|`` (exact): if ``d < 1/2 - 2**-30`` no
    half-integer lies between v and s, so v rounds to r too; if moreover ``d != 0``, v
    is not an integer (an integer v would be s itself), so NX. ``d == 0`` is exact when
    prod is itself an integer. NaN and infinite sources, larger products, near-ties
    and the other ``d == 0`` elements are the exact path's, as one subset. Range, Sat
    and the low 8 bits then follow :func:`_tquant_exact`.
    """
    p = x64.shape[0]
    m, z = mult.reshape(p, 1, 1), zp.reshape(p, 1, 1).astype(np.float64)
    lo, hi = _RANGE[dst_dt]
    with np.errstate(invalid="ignore", over="ignore"):
        prod = x64 * m
        s = prod + z
        r = np.rint(s)
        d = s - r
        np.abs(d, out=d)
        # every element ordinary (a NaN anywhere fails the comparisons) and none with
        # d == 0: one pass of reductions settles the tile
        if (
            prod.size
            and prod.max() < _PROD_BOUND
            and prod.min() > -_PROD_BOUND
            and d.max() < 0.5 - _MARGIN
            and d.min() > 0
        ):
            rr = r.reshape(p, -1)
            nv = (rr.min(axis=1) < lo) | (rr.max(axis=1) > hi)
            if sat:
                out = np.clip(r, lo, hi).astype(_CARRIER[dst_dt])
            elif not nv.any():
                out = r.astype(_CARRIER[dst_dt])
            else:
                out = _low_byte(dst_dt, r.astype(np.int64))
            return out, np.where(nv, np.uint8(NV | NX), np.uint8(NX))
        ok = (np.abs(prod) < _PROD_BOUND) & (d < 0.5 - _MARGIN)  # NaN compares False
    zero = d == 0
    if zero.any():
        ok &= ~zero | (np.trunc(prod) == prod)
    q = np.where(ok, r, 0.0).astype(np.int64)
    out_of_range = (q < lo) | (q > hi)
    if sat:
        q = np.clip(q, lo, hi)
    out = _low_byte(dst_dt, q)
    flags = np.where(out_of_range, np.uint8(NV), np.uint8(0))
    flags |= np.where(d != 0, np.uint8(NX), np.uint8(0))
    if not ok.all():
        bad = ~ok
        shape = x64.shape
        sub, nv, nx = _tquant_exact(
            dst_dt, x64[bad], np.broadcast_to(m, shape)[bad],
            np.broadcast_to(zp.reshape(p, 1, 1), shape)[bad], RNE, sat,
        )  # fmt: skip
        out[bad] = sub
        flags[bad] = np.where(nv, np.uint8(NV), np.uint8(0)) | np.where(
            nx, np.uint8(NX), np.uint8(0)
        )
    return out, np.bitwise_or.reduce(flags.reshape(p, -1), axis=1).astype(np.uint8)


def tdequant(
    src_dt: DataType,
    q: np.ndarray,
    multiplier_bits: np.ndarray,
    zero_point: np.ndarray,
    rmode: int,
) -> tuple[np.ndarray, np.ndarray]:
    """TDEQUANT: S8/U8 (P, R, C) -> FP32 (P, R, C) by ``fl32((q - zp) * m)``.

    One rounding by ``rmode`` (0 = RNE) with its OF/UF/NX status. Illegal scalars raise
    :class:`SemanticError`. Returns ``(fp32, status)``.
    """
    src_dt = DataType(src_dt)
    rule = tdequant_scalars_legal(src_dt, multiplier_bits, zero_point)
    if rule is not None:
        raise SemanticError(rule)
    p = q.shape[0]
    mult = from_bits(_mult_bits(multiplier_bits), DataType.FP32).astype(np.float64)
    diff = q.astype(np.int64) - _zero_point(zero_point).reshape(p, 1, 1)
    exact = diff.astype(np.float64) * mult.reshape(p, 1, 1)
    if _fp.enabled() and rmode in (0, RNE) and exact.ndim == 3:
        # the native narrowing, certified element by element; the rest (overflow, the
        # band just below the smallest normal) through the exact rounding
        return _fc.narrow_rne(DataType.FP64, DataType.FP32, exact, _round_fp32_rne)
    res, elem_status = round_float(DataType.FP32, exact, RNE if rmode == 0 else rmode)
    status = np.bitwise_or.reduce(elem_status.reshape(p, -1).astype(np.uint8), axis=1)
    return res, status.astype(np.uint8)


def _round_fp32_rne(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The exact rounding of float64 values to FP32, to nearest even (values, flags)."""
    return round_float(DataType.FP32, x, RNE)
