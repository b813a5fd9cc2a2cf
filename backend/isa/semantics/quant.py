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
from .core import NV, NX, SemanticError, fold_status, from_bits, round_float

_RANGE = {DataType.S8: (-128, 127), DataType.U8: (0, 255)}
#: B.DATR RMode codes (0 = the operation default, RNE for both operations).
RNE, RTZ, RTM, RTP, RNA, RTO, RHB = 1, 2, 3, 4, 5, 6, 7
MULTIPLIER_ONE = 0x3F800000


def _mult_bits(multiplier_bits: np.ndarray) -> np.ndarray:
    """The raw FP32 multiplier: low 32 bits of each PE's GPR, uint32 (P,)."""
    return (np.asarray(multiplier_bits).astype(np.uint64) & np.uint64(0xFFFFFFFF)).astype(
        np.uint32
    )


def _zero_point(zero_point: np.ndarray) -> np.ndarray:
    """The zero point as a signed 64-bit value (raw uint64 GPRs are reinterpreted)."""
    zp = np.asarray(zero_point)
    if zp.dtype == np.uint64:
        return zp.view(np.int64)
    return zp.astype(np.int64)


def _multiplier_rule(multiplier_bits: np.ndarray) -> str | None:
    b = _mult_bits(multiplier_bits)
    if np.any(b & np.uint32(0x80000000)):
        return "multiplier must be positive"
    if np.any((b & np.uint32(0x7F800000)) == np.uint32(0x7F800000)):
        return "multiplier must be finite"
    if np.any(b == 0):
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
    z = _zero_point(zp)
    if np.any((z < lo) | (z > hi)):
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
    mult = from_bits(_mult_bits(multiplier_bits), DataType.FP32).astype(np.float64)
    with np.errstate(invalid="ignore"):  # a signalling NaN widens quietly
        x64 = np.asarray(x_fp32, np.float32).astype(np.float64)
    nan = np.isnan(x64)
    inf = np.isinf(x64)
    # Two FP32 significands multiply into at most 48 bits and the exponents stay within
    # float64's normal range, so the float64 product is the exact product.
    with np.errstate(invalid="ignore"):
        prod = np.where(nan | inf, 0.0, x64) * mult.reshape(p, 1, 1)
    zp = _zero_point(zero_point).reshape(p, 1, 1)
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
    out = (q & 0xFF).astype(np.uint8)
    if dst_dt == DataType.S8:
        out = out.view(np.int8)
    status = fold_status(nan | out_of_range, NV) | fold_status(inexact, NX)
    return out, status.astype(np.uint8)


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
    res, elem_status = round_float(DataType.FP32, exact, RNE if rmode == 0 else rmode)
    status = np.bitwise_or.reduce(elem_status.reshape(p, -1).astype(np.uint8), axis=1)
    return res, status.astype(np.uint8)
