"""DECISIONS D11 written from the decision: the reference semantics of ``tile.matmul``.

This module is the IR's own account of the CUBE numerics, kept apart from the
executor's (``ptoc.backend.isa.semantics.matmul``, with its compiled kernels and native
fast paths) so that the two check each other: ``ptoc verify`` compares a compiled
program's bits with these.

Floating folds work on exact float64 values. Every operand format of the CUBE widens
exactly into float64, and so does every product (at most 24 x 24 significand bits, the
scaled MX values included). One step ``sum = round32(sum + p)`` takes the float64 sum
``hi`` and its exact error ``lo`` (Dekker's Fast2Sum on the operands ordered by
magnitude), then rounds ``hi + lo`` to the FP32 grid of ``hi``'s binade: the grid
position's fraction decides, and only an exact half is broken by ``lo`` (it cannot move
any other fraction across one half, being below half a float64 ulp). Flags per step:
NX when the exact sum is off the grid, OF when it rounds past the largest finite value,
UF when it is tiny after rounding (to 24 bits, unbounded exponent) and inexact.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

from ptoc.backend.isa import DataType, info

# the catalog's facts (type rule, block size, format fields, flag bits); the numerics
# below are this module's own
from ptoc.backend.isa.semantics.floatfmt import NV, NX, OF, UF, classify, decode
from ptoc.backend.isa.semantics.matmul import MX_BLOCK, accumulator_type

D = DataType
_MIN_NORMAL = 2.0**-126
_LIMIT = 2.0**128  # a rounded magnitude this large is an overflow
_QNAN32 = np.uint32(0x7FC00000)


def _bits(x: np.ndarray) -> np.ndarray:
    x = np.ascontiguousarray(x)
    return x.view(f"u{x.itemsize}").astype(np.uint64)


def _signalling(x: np.ndarray, dt: DataType) -> bool:
    """Whether ``x`` holds a signalling NaN of ``dt``."""
    return info(dt).is_float and bool(classify(dt, _bits(x)).snan.any())


def _values(x: np.ndarray, dt: DataType) -> np.ndarray:
    """Exact float64 values: a cast of the float carriers; the formats with no numpy
    type (HiF8, E1M2, whose carriers are the codes) through the catalog's format
    decoder."""
    x = np.asarray(x)
    if info(dt).is_float and x.dtype.kind in "iu":
        return decode(dt, _bits(x))
    with np.errstate(invalid="ignore"):
        return np.asarray(x).astype(np.float64)


def _scale(v: np.ndarray, scales: np.ndarray | None, axis: int) -> np.ndarray:
    """Each value times 2**(code - 127) of its K block (NaN for code 255)."""
    if scales is None:
        return v
    codes = _bits(np.asarray(scales).astype(ml_dtypes.float8_e8m0fnu)).astype(np.int64)
    factor = np.where(codes == 255, np.nan, np.ldexp(1.0, codes - 127))
    blocks = np.arange(v.shape[axis]) // MX_BLOCK
    full = factor[:, blocks] if axis == 1 else factor[blocks, :]
    with np.errstate(invalid="ignore"):
        return v * full


#: the bits of a float64 significand below the FP32 one, and their value at a tie
_BELOW = np.uint64((1 << 29) - 1)
_TIE = np.uint64(1 << 28)
#: below this magnitude a float64 sum rounds to a finite FP32 value (half an FP32 ulp
#: under the overflow threshold)
_FINITE_BELOW = 2.0**127 * (2 - 2.0**-24)


def round_step(s: np.ndarray, p: np.ndarray) -> tuple[np.ndarray, int]:
    """``round32(s + p)`` (RNE) of float64 arrays with IEEE special rules, and the flags.

    NaN in gives NaN; Inf - Inf gives NaN and NV; an Inf otherwise wins; two finite
    values round once (see the module docstring).

    The usual step -- finite sums in FP32's normal range or zero -- is decided on the
    float64 sum ``hi`` alone: rounding ``hi`` to FP32 rounds the exact sum the same way
    unless ``hi`` is a tie (its 29 bits below FP32's significand are 1000...0), which
    the exact error breaks; NX holds when ``hi`` is off the grid or the error is not
    zero. Ties with an error, sums below the normal range and anything special take
    :func:`round_step_exact` (those elements only)."""
    with np.errstate(invalid="ignore", over="ignore"):
        hi = s + p
        mag = np.abs(hi)
        top = mag.max(initial=0.0)
        if not top < _FINITE_BELOW:  # NaN, an infinity or an overflow among them
            return round_step_exact(s, p)
        r = hi.astype(np.float32).astype(np.float64)
        tie = (hi.view(np.uint64) & _BELOW) == _TIE
        low = (mag < _MIN_NORMAL) & (mag > 0)
        slow = tie | low
        ne = r != hi
        if not slow.any():
            if ne.any():
                return r, NX
            bv = hi - s
            lo = (s - (hi - bv)) + (p - bv)  # the exact error (TwoSum)
            return r, NX if (lo != 0).any() else 0
        bv = hi - s
        lo = (s - (hi - bv)) + (p - bv)
        redo = (tie & (lo != 0)) | low
        status = NX if ((ne | (lo != 0)) & ~redo).any() else 0
        if redo.any():
            fixed, st = round_step_exact(s[redo], p[redo])
            r[redo] = fixed
            status |= st
        return r, status


def round_step_exact(s: np.ndarray, p: np.ndarray) -> tuple[np.ndarray, int]:
    """:func:`round_step` by the FP32 grid of each sum's binade, for every case: the
    exact error breaks an exact half, tininess and overflow are decided on the grid."""
    status = 0
    with np.errstate(invalid="ignore", over="ignore"):
        special = ~(np.isfinite(s) & np.isfinite(p))
        any_special = bool(special.any())
        fs, fp = (
            (np.where(special, 0.0, s), np.where(special, 0.0, p)) if any_special else (s, p)
        )
        hi = fs + fp
        first = np.abs(fs) >= np.abs(fp)
        lo = np.where(first, fp - (hi - fs), fs - (hi - fp))  # exact: Fast2Sum
        mag = np.abs(hi)
        e = np.frexp(mag)[1] - 1  # |hi| in [2**e, 2**(e+1))
        toward = np.where(hi < 0, -lo, lo)  # lo along |hi|
        r, off = _grid_round(mag, toward, np.ldexp(1.0, np.maximum(e, -126) - 23))
        if off.any():
            status |= NX
            small = (mag < _MIN_NORMAL) & (mag > 0) & off
            if small.any():  # tiny after rounding to 24 bits at an unbounded exponent
                unbounded, _ = _grid_round(mag, toward, np.ldexp(1.0, e - 23))
                if (small & (unbounded < _MIN_NORMAL)).any():
                    status |= UF
        over = r >= _LIMIT  # past the largest finite value (an exact one too: |p| < 2**256)
        if over.any():
            status |= OF | NX
            r = np.where(over, np.inf, r)
        r = np.where(mag == 0, hi, np.copysign(r, hi))  # an exact zero keeps IEEE's sign
        if not any_special:
            return r, status
        nan = np.isnan(s) | np.isnan(p)
        inf_s, inf_p = np.isinf(s), np.isinf(p)
        clash = inf_s & inf_p & (np.signbit(s) != np.signbit(p))
        if clash.any():
            status |= NV
        out = np.where(inf_s, s, np.where(inf_p, p, r))
        return np.where(nan | clash, np.nan, out), status


def _grid_round(
    mag: np.ndarray, toward: np.ndarray, grid: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """RNE of ``mag + toward`` (toward below half a float64 ulp of mag) to multiples of
    ``grid``: (rounded magnitude, whether it differs from the exact value)."""
    q = mag / grid  # exact: a power-of-two scaling
    n = np.floor(q)
    frac = q - n
    half = frac == 0.5
    up = (frac > 0.5) | (half & ((toward > 0) | ((toward == 0) & (np.fmod(n, 2) == 1))))
    r = (n + up) * grid
    return r, (frac != 0) | (toward != 0)


def _fp32(v: np.ndarray) -> np.ndarray:
    """float64 values on the FP32 grid (or Inf, NaN) as FP32 carriers, canonical NaNs."""
    with np.errstate(over="ignore", invalid="ignore"):
        out = v.astype(np.float32)
    nan = np.isnan(v)
    if nan.any():
        out.view(np.uint32)[nan] = _QNAN32
    return out


def d11_matmul(
    a: np.ndarray,
    a_type: DataType,
    b: np.ndarray,
    b_type: DataType,
    *,
    acc: np.ndarray | None = None,
    bias: np.ndarray | None = None,
    a_scale: np.ndarray | None = None,
    b_scale: np.ndarray | None = None,
    mx: bool = False,
    relu: bool = False,
) -> tuple[np.ndarray, int]:
    """One PE's ``tile.matmul``: (M x N result carrier, NV/DZ/OF/UF/NX status).

    The fold starts at ``acc`` (or +0) and adds the products in increasing K, one
    rounding each; then the 1 x N ``bias`` with one more rounding; then ReLU (negatives,
    -0 and -Inf become +0; NaN stays the canonical NaN). Integer pairs are exact and
    wrap modulo 2**32."""
    a_type, b_type = DataType(a_type), DataType(b_type)
    out_type = accumulator_type(a_type, b_type, mx)
    if out_type != D.FP32:
        total = np.matmul(np.asarray(a).astype(np.int64), np.asarray(b).astype(np.int64))
        if acc is not None:
            total = total + np.asarray(acc).astype(np.int64)
        if bias is not None:
            total = total + np.asarray(bias).astype(np.int64).reshape(1, -1)
        if relu and out_type == D.S32:
            total = np.where(total.astype(np.uint32).view(np.int32) < 0, 0, total)
        low = total.astype(np.uint64).astype(np.uint32)
        return (low.view(np.int32) if out_type == D.S32 else low), 0
    status = NV if (_signalling(a, a_type) or _signalling(b, b_type)) else 0
    av = _scale(_values(a, a_type), a_scale, axis=1)
    bv = _scale(_values(b, b_type), b_scale, axis=0)
    m, n = av.shape[0], bv.shape[1]
    if acc is None:
        s = np.zeros((m, n))
    else:
        s = _values(acc, D.FP32)
        status |= NV if _signalling(acc, D.FP32) else 0
    with np.errstate(invalid="ignore", over="ignore"):
        # the K steps whose A column or B row holds an infinity (Inf x 0 is NV)
        infinite = np.isinf(av).any(axis=0) | np.isinf(bv).any(axis=1)
        for k in range(av.shape[1]):
            col, row = av[:, k], bv[k, :]
            p = np.multiply.outer(col, row)
            if infinite[k]:
                inf_zero = (np.isinf(col)[:, None] & (row == 0)[None, :]) | (
                    (col == 0)[:, None] & np.isinf(row)[None, :]
                )
                if inf_zero.any():
                    status |= NV
                    p = np.where(inf_zero, np.nan, p)
            s, st = round_step(s, p)
            status |= st
    if bias is not None:
        status |= NV if _signalling(bias, D.FP32) else 0
        s, st = round_step(s, np.broadcast_to(_values(bias, D.FP32).reshape(1, -1), s.shape))
        status |= st
    if relu:
        s = np.where(np.isnan(s), s, np.where(s > 0, s, 0.0))
    return _fp32(s), status
