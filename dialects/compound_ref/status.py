"""The numeric status of each compound interface (``docs/compound.md``, "Status").

The reference functions return values only; these functions return the sticky status
(bits NV=1, DZ=2, OF=4, UF=8, NX=16, as ``Machine.status``) that the interface's
documented operation chain raises for the same arguments, one PE's worth. A lowering
must publish exactly this on every PE that runs it: no flag from an intermediate step
that the chain does not have.

* Data movement (``sort32``, the merges, records, gathers, scatters, ``transpose``,
  the copied positions of ``partial_*``): NV when a value the interface orders or
  compares is a signalling NaN (sorts and merges only), nothing else.
* Arithmetic: the IEEE flags of each FP32 step of the chain, computed with the
  executor's element semantics (``ptoc.backend.isa.semantics``), which is what the
  chain's operations are.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ptoc.backend.isa.semantics import convert as _convert
from ptoc.backend.isa.semantics.core import NV, NX, binary, classify, to_bits

from ._common import BF16, E4M3, FP16, FP32, as_dtype, bits, datatype_of, tile

__all__ = [
    "dequantize_mx_status",
    "dequantize_rows_status",
    "merge_status",
    "movement_status",
    "partial_status",
    "quantize_mx_status",
    "quantize_rows_status",
    "sort_status",
]

MX_GROUP = 32
_RANGE = {np.dtype(np.int8): (-128, 127), np.dtype(np.uint8): (0, 255)}


def _snan(a: np.ndarray) -> bool:
    """Does the floating tile ``a`` hold a signalling NaN?"""
    a = np.asarray(a)
    if a.dtype not in (FP32, FP16, BF16):
        return False
    return bool(classify(datatype_of(a.dtype), to_bits(a).astype(np.uint64)).snan.any())


def _flags(status: np.ndarray) -> int:
    return int(np.bitwise_or.reduce(np.asarray(status, np.uint8).ravel(), initial=0))


def _fp32_step(op: str, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, int]:
    """One FP32 operation of a chain on (R, C) operands: (result, its status)."""
    x, y = np.broadcast_arrays(np.asarray(a, FP32), np.asarray(b, FP32))
    res, st = binary(op, datatype_of(FP32), x[None].copy(), y[None].copy())
    return np.asarray(res, FP32)[0], _flags(st)


def sort_status(*values: Any) -> int:
    """``sort32``, ``merge_sorted``, ``merge_blocks``: NV when any value (of any list or
    block, consumed or not) is a signalling NaN (the seed TSORT/TMRGSORT rule)."""
    return NV if any(_snan(np.asarray(v)) for v in values) else 0


merge_status = sort_status


def movement_status(*_args: Any) -> int:
    """Records, gathers, scatters and ``transpose`` move bits: no status."""
    return 0


def quantize_rows_status(
    t: np.ndarray, scale: np.ndarray, offset: np.ndarray | None = None, dtype: Any = np.int8
) -> int:
    """``fl32(t * s)`` and ``fl32(y + o)`` with their IEEE flags, then the integer step:
    NV when ``y`` is NaN or its RNE value lies outside the destination range (+-inf
    included), NX when that rounding is inexact."""
    rows = np.asarray(t).shape[0]
    s = np.asarray(scale, FP32).reshape(rows, 1)
    y, flags = _fp32_step("mul", t, s)
    if offset is not None:
        y, f = _fp32_step("add", y, np.asarray(offset, FP32).reshape(rows, 1))
        flags |= f
    lo, hi = _RANGE[as_dtype(dtype)]
    with np.errstate(invalid="ignore"):
        y64 = y.astype(np.float64)
        r = np.rint(y64)
        finite = np.isfinite(y64)
        if np.any(np.isnan(y64) | np.isinf(y64) | (finite & ((r < lo) | (r > hi)))):
            flags |= NV
        if np.any(finite & (r != y64)):
            flags |= NX
    return flags


def dequantize_rows_status(q: np.ndarray, scale: np.ndarray, offset: np.ndarray | None) -> int:
    """The IEEE flags of ``fl32(q - o)`` and ``fl32(y * s)``."""
    rows = np.asarray(q).shape[0]
    y = np.asarray(q).astype(FP32)
    flags = 0
    if offset is not None:
        y, flags = _fp32_step("sub", y, np.asarray(offset, FP32).reshape(rows, 1))
    _, f = _fp32_step("mul", y, np.asarray(scale, FP32).reshape(rows, 1))
    return flags | f


def quantize_mx_status(t: np.ndarray, fmt: str = "mxfp8") -> int:
    """NV when an input is a signalling NaN; for every group without a NaN, the element
    step's flags: the FP32 product ``x * scaling`` (UF|NX when it underflows inexactly)
    and its conversion to E4M3 with RNE and saturation (NX when inexact, OF|NX beyond
    the largest finite value, an infinity included). The shared exponent, ``amax`` and
    ``scaling`` are exact and raise nothing; a NaN group's elements are E4M3 NaN without
    arithmetic."""
    del fmt
    t = np.asarray(t)
    flags = NV if _snan(t) else 0
    rows, cols = t.shape
    with np.errstate(all="ignore"):
        x = t.astype(FP32)
        g = x.reshape(rows, cols // MX_GROUP, MX_GROUP)
        nan_group = np.isnan(g).any(axis=2)
        amax = np.abs(np.where(np.isnan(g), 0, g)).max(axis=2).astype(FP32)
    e = (bits(amax).astype(np.int64) >> 23) & 0xFF
    scale = np.maximum(e - 8, 0)
    scaling = ((254 - scale) << 23).astype(np.uint32).view(FP32)
    keep = np.repeat(~nan_group, MX_GROUP, axis=1)
    factor = np.repeat(scaling, MX_GROUP, axis=1)
    x_ok = np.where(keep, x, np.float32(0))
    y, f = _fp32_step("mul", x_ok, factor)
    _, st = _convert.convert(datatype_of(FP32), datatype_of(E4M3), y[None], 1, True)
    return flags | f | _flags(st)


def dequantize_mx_status(elements: np.ndarray, scales: np.ndarray) -> int:
    """The FP32 product ``e4m3 * 2**(scale - 127)``: OF|NX when it overflows (E4M3 has no
    signalling NaN; a NaN operand raises nothing)."""
    el = np.asarray(elements)
    sc = np.asarray(scales)
    with np.errstate(invalid="ignore"):
        ev = np.asarray(el.view(E4M3) if el.dtype == np.uint8 else el).astype(FP32)
    sb = bits(sc).astype(np.int64)
    factor = np.where(sb == 0xFF, np.nan, np.ldexp(1.0, sb - 127)).astype(FP32)
    rows = ev.shape[0]
    _, f = _fp32_step(
        "mul", ev.reshape(rows, -1), np.repeat(factor, MX_GROUP, axis=1).reshape(rows, -1)
    )
    return f


def partial_status(op: str, a: Any, b: Any, *_args: Any, **_kw: Any) -> int:
    """``partial_<op>``: the typed operation's status on the positions both sources
    cover; copies and pad set nothing."""
    a, b = tile("a", a), tile("b", b)
    r, c = min(a.shape[0], b.shape[0]), min(a.shape[1], b.shape[1])
    if not (r and c) or a.dtype.kind in "iu":
        return 0
    x = np.ascontiguousarray(a[:r, :c])[None]
    y = np.ascontiguousarray(b[:r, :c])[None]
    _, st = binary(op, datatype_of(a.dtype), x, y)
    return _flags(st)
