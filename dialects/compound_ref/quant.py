"""Reference semantics of the quantization compound interfaces (pto-isa TQUANT, TDEQUANT).

``quantize_rows``, ``dequantize_rows`` (row-varying INT8 affine parameters) and
``quantize_mx``, ``dequantize_mx`` (OCP MXFP8: 32-element groups, E8M0 shared exponents,
E4M3 elements). Every FP32 operation is one IEEE binary32 operation with
round-to-nearest-even (numpy float32 arithmetic); a NaN result of an FP32 operation is
the canonical quiet NaN 0x7FC00000, as DECISIONS D5 states for every floating operation.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._common import (
    BF16,
    E4M3,
    E8M0,
    FP16,
    FP32,
    MX,
    CompoundError,
    as_dtype,
    bits,
    column,
    from_bits,
    nonempty,
    tile,
)

CANONICAL_NAN_FP32 = 0x7FC00000
CANONICAL_NAN_E4M3 = 0x7F
E8M0_NAN = 0xFF
MX_GROUP = 32
E4M3_EMAX = 8  # exponent of E4M3's largest normal, 448 = 1.75 * 2**8
E4M3_MAX = 448.0

_S8, _U8, _S16 = np.dtype(np.int8), np.dtype(np.uint8), np.dtype(np.int16)
_RANGE = {_S8: (-128, 127), _U8: (0, 255)}


def _canon(y: np.ndarray) -> np.ndarray:
    """FP32 results with every NaN replaced by the canonical quiet NaN (D5)."""
    return np.where(np.isnan(y), from_bits(np.uint32(CANONICAL_NAN_FP32), FP32), y).astype(FP32)


def quantize_rows(
    t: np.ndarray, scale: np.ndarray, offset: np.ndarray | None = None, dtype: Any = np.int8
) -> np.ndarray:
    """pto-isa TQUANT INT8_SYM / INT8_ASYM with per-row parameters.

    ``t`` FP32 (R, C); ``scale`` FP32 (R, 1) multipliers (pto-isa's reciprocal scale);
    ``offset`` FP32 (R, 1) float zero points or None; ``dtype`` S8 or U8.
    ``q = sat(rne(fl32(fl32(t * scale) + offset)))``: two FP32 roundings (one without
    offset), then round half to even to an integer and clamp to the destination range.
    NaN -> 0, +inf -> max, -inf -> min.
    """
    t = nonempty("t", tile("t", t, dtypes=(FP32,)))
    dt = as_dtype(dtype)
    if dt not in _RANGE:
        raise CompoundError(f"quantize_rows produces S8 or U8, not {dt}")
    rows = t.shape[0]
    s = column("scale", scale, rows)
    with np.errstate(all="ignore"):
        y = t * s  # float32 x float32 -> float32, one RNE rounding
        if offset is not None:
            y = y + column("offset", offset, rows)
        lo, hi = _RANGE[dt]
        r = np.rint(y.astype(np.float64))  # y is exact in float64; rint ties to even
        q = np.clip(np.where(np.isnan(r), 0.0, r), lo, hi)
    return q.astype(dt)


def dequantize_rows(q: np.ndarray, scale: np.ndarray, offset: np.ndarray | None) -> np.ndarray:
    """pto-isa TDEQUANT with per-row parameters: ``fl32(fl32(q - offset) * scale)``.

    ``q`` S8, U8 or S16 (R, C); ``scale`` and ``offset`` FP32 (R, 1) (offset None means
    no subtraction, identical to an offset of +0). Two FP32 roundings; NaN results are
    the canonical NaN. Returns FP32 (R, C).
    """
    q = nonempty("q", tile("q", q, dtypes=(_S8, _U8, _S16)))
    rows = q.shape[0]
    s = column("scale", scale, rows)
    with np.errstate(all="ignore"):
        y = q.astype(FP32)  # exact: |q| < 2**24
        if offset is not None:
            y = _canon(y - column("offset", offset, rows))
        y = _canon(y * s)
    return y


# ---------------------------------------------------------------- MXFP8

_MX_FORMATS = {"mxfp8", "mxfp8_e4m3", "e4m3"}


def _e4m3_rne_sat(x: np.ndarray) -> np.ndarray:
    """FP32 -> E4M3 (FN, no infinity): RNE, magnitudes beyond 448 saturate to +-448."""
    return np.clip(x, -E4M3_MAX, E4M3_MAX).astype(E4M3)


def quantize_mx(t: np.ndarray, fmt: str = "mxfp8") -> MX:
    """OCP MXFP8 quantization (pto-isa A5 TQUANT MXFP8, ND grouping).

    ``t`` FP32, FP16 or BF16 (R, C) with ``C % 32 == 0`` (pto-isa's constraint; other
    widths raise CompoundError). Each row is cut into groups of 32 consecutive columns.
    Per group: ``amax = max |x|``; ``E`` = the biased FP32 exponent of amax;
    ``e8m0 = max(E - 8, 0)``; ``scaling = 2**(127 - e8m0)`` (exact FP32);
    ``element = e4m3_rne_sat(x * scaling)``. A group holding a NaN has amax = NaN,
    scale 0xFF (E8M0 NaN), scaling = NaN and every element E4M3 NaN (0x7F). An infinite
    amax is the ordinary case E = 255 (scale 247, infinities saturate to +-448).
    Returns ``MX(elements, scales, amax, scaling)``.
    """
    if not isinstance(fmt, str) or fmt.lower() not in _MX_FORMATS:
        raise CompoundError(f"quantize_mx supports fmt='mxfp8' (E4M3 elements), not {fmt!r}")
    t = nonempty("t", tile("t", t, dtypes=(FP32, FP16, BF16)))
    rows, cols = t.shape
    if cols % MX_GROUP:
        raise CompoundError(f"MX quantization needs cols % 32 == 0 (pto-isa), not cols={cols}")
    with np.errstate(all="ignore"):  # NaN and infinity inputs are handled explicitly
        x = t.astype(FP32).reshape(rows, cols // MX_GROUP, MX_GROUP)  # exact widening
        nan_group = np.isnan(x).any(axis=2)
        amax = np.abs(np.where(np.isnan(x), 0, x)).max(axis=2).astype(FP32)
        e = (bits(amax) >> 23).astype(np.int64) & 0xFF
        e8m0 = np.maximum(e - E4M3_EMAX, 0)
        scaling = from_bits(((127 + 127 - e8m0) << 23).astype(np.uint32), FP32)
        # x * scaling is exact in FP32 except underflow, whose result is +-0 in E4M3 anyway
        scaled = x * scaling[:, :, None]
        elem_bits = bits(_e4m3_rne_sat(scaled))
    elem_bits = np.where(nan_group[:, :, None], CANONICAL_NAN_E4M3, elem_bits)
    nan32 = from_bits(np.uint32(CANONICAL_NAN_FP32), FP32)
    return MX(
        elements=from_bits(elem_bits.reshape(rows, cols), E4M3),
        scales=from_bits(np.where(nan_group, E8M0_NAN, e8m0), E8M0),
        amax=np.where(nan_group, nan32, amax).astype(FP32),
        scaling=np.where(nan_group, nan32, scaling).astype(FP32),
    )


def dequantize_mx(elements: np.ndarray, scales: np.ndarray) -> np.ndarray:
    """Inverse of :func:`quantize_mx`: ``fl32(e4m3 * 2**(scale - 127))`` -> FP32 (R, C).

    ``elements`` E4M3 (R, C) (float8_e4m3fn, or uint8 raw bits); ``scales`` E8M0
    (R, C/32) (float8_e8m0fnu, or uint8 raw bits). The product is exact in FP32 except
    overflow (-> +-inf). A NaN element or a NaN scale (0xFF) gives the canonical NaN.
    """
    elements = nonempty("elements", tile("elements", elements, dtypes=(E4M3, _U8)))
    scales = tile("scales", scales, dtypes=(E8M0, _U8))
    rows, cols = elements.shape
    if cols % MX_GROUP:
        raise CompoundError(f"MX elements need cols % 32 == 0, not cols={cols}")
    if scales.shape != (rows, cols // MX_GROUP):
        raise CompoundError(
            f"scales must have shape ({rows}, {cols // MX_GROUP}), not {scales.shape}"
        )
    with np.errstate(invalid="ignore"):
        ev = from_bits(bits(elements), E4M3).astype(np.float64)
    sb = bits(scales).astype(np.int64)
    factor = np.where(sb == E8M0_NAN, np.nan, np.ldexp(1.0, sb - 127))
    with np.errstate(over="ignore", invalid="ignore"):
        y = (ev.reshape(rows, -1, MX_GROUP) * factor[:, :, None]).astype(FP32)
    return _canon(y.reshape(rows, cols))
