"""TSORT and TMRGSORT: stable group sort and two-stream merge (TEPL Mode 3, Fn 12/13).

Authority: seed ADR 0083 decisions 135 and 136; ASL ``asl/tile/model/ordering/sorting.asl``
(``TileSortLeftBefore``) and ``asl/tile/model/execution/sorting.asl``.

Both operations order elements with one total preorder, ``TileSortLeftBefore``:

* every non-NaN value precedes every NaN, in both directions, and NaNs keep their
  incoming order (a NaN never overtakes another NaN);
* +0 and -0 are equal, so their incoming order is kept;
* otherwise values compare by the monotone unsigned order key of their encoding
  (``TileFloatingOrderKey``), ascending or descending.

The ASL executes a bubble sort that swaps only on a strict inversion, which is exactly a
stable sort under that preorder; here it is one stable ``argsort`` of a packed integer key
``(is_nan << width) | directed_key`` per group. The merge is the ASL two-pointer merge
that takes the left element unless the right one strictly precedes it; for two sorted
inputs that equals a stable sort of ``left ++ right`` under the same key.
"""

from __future__ import annotations

from functools import cache

import numpy as np

from ..datatypes import DataType
from .core import NV, SemanticError, to_bits

#: DataTypes TSORT and TMRGSORT accept (seed decisions 135/136; BF16 was dropped).
SORT_DTYPES = frozenset({DataType.FP32, DataType.FP16})

#: sort_width domain of B.DIM LB0 (0 and omission select 32 before this module).
SORT_WIDTH_MIN, SORT_WIDTH_MAX, SORT_WIDTH_DEFAULT = 1, 64, 32

_FMT = {
    # dtype: (width, exponent mask, fraction mask, quiet bit)
    DataType.FP32: (32, 0x7F800000, 0x007FFFFF, 0x00400000),
    DataType.FP16: (16, 0x7C00, 0x03FF, 0x0200),
}


def _classify(dt: DataType, a: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(raw bits as uint64, is_nan, is_signalling_nan) of an FP32/FP16 carrier array."""
    _width, exp_mask, frac_mask, quiet = _FMT[dt]
    bits = to_bits(a).astype(np.uint64)
    is_nan = ((bits & exp_mask) == exp_mask) & ((bits & frac_mask) != 0)
    is_snan = is_nan & ((bits & quiet) == 0)
    return bits, is_nan, is_snan


def _descending(descending: bool | np.ndarray, p: int) -> np.ndarray:
    """The direction as a (P, 1, 1) bool array (a bool, or per-PE flags from RegSrc0)."""
    d = np.asarray(descending)
    if d.dtype != bool and np.any(d.astype(np.uint64) > 1):
        raise SemanticError(descending_gpr_legal(d) or "descending must be zero or one")
    return np.broadcast_to(d.astype(bool).reshape(-1, 1, 1), (p, 1, 1))


def descending_gpr_legal(gpr: np.ndarray) -> str | None:
    """B.IOR RegSrc0 of TSORT/TMRGSORT must be exactly 0 (ascending) or 1 (descending)."""
    if np.any(np.asarray(gpr).astype(np.uint64) > 1):
        return "the descending selector must be exactly zero or one"
    return None


def _sort_key(
    dt: DataType, a: np.ndarray, descending: bool | np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Sort key of every element (unsigned, the element's width) and the per-element
    signalling-NaN mask.

    Smaller key = earlier position. With m the magnitude bits, numbers get
    ``sign + m`` (positive), ``sign - m`` (negative) or ``sign`` (both zeros): the order
    of ``TileFloatingOrderKey`` (positive -> carrier | sign, negative -> NOT carrier;
    only the order matters to a stable sort), with +0 and -0 equal. Descending mirrors
    the numbers around ``sign``. Every number's key lies in ``(0, sign + Inf's
    magnitude]``, below the all-ones value that every NaN gets (all equal, after every
    number), so a stable sort keeps their order.
    """
    width, exp_mask, _frac_mask, quiet = _FMT[dt]
    ut = np.uint32 if width == 32 else np.uint16
    sign = ut(1 << (width - 1))
    bits = to_bits(a)
    mag = bits & ut(sign - 1)
    negative = bits >= sign
    desc = np.asarray(descending)
    if desc.ndim == 0 and desc.dtype == bool:
        flip = ~negative if desc else negative  # the side of ``sign``
    else:
        flip = negative ^ _descending(descending, a.shape[0])
    key = np.where(flip, sign - mag, sign + mag).astype(ut, copy=False)
    is_nan = mag > ut(exp_mask)  # all-ones exponent and a nonzero fraction
    if not is_nan.any():
        return key, is_nan  # no NaN: none signals either
    key[is_nan] = ut((1 << width) - 1)
    return key, is_nan & ((bits & ut(quiet)) == 0)


def _snan_status(is_snan: np.ndarray, p: int) -> np.ndarray:
    """NV (P,) on every PE holding a signalling NaN."""
    return np.where(is_snan.reshape(p, -1).any(axis=1), np.uint8(NV), np.uint8(0))


def _take(values: np.ndarray, order: np.ndarray) -> np.ndarray:
    """``take_along_axis(values, order, axis=-1)`` of a (P, R, C) array as one flat
    ``np.take`` (much cheaper than the index grids ``take_along_axis`` builds)."""
    p, r, c = values.shape
    if p * r == 1:  # one row: no offsets
        return values.reshape(-1)[order.reshape(-1)].reshape(order.shape)
    flat = np.ascontiguousarray(values).reshape(-1)
    offsets = (np.arange(p * r, dtype=np.intp) * c).reshape(p, r, 1)
    return np.take(flat, order + offsets)


def _check_dtype(dt: DataType) -> DataType:
    if dt not in SORT_DTYPES:
        raise ValueError(f"sorting is defined for FP32/FP16 only, not {DataType(dt).name}")
    return DataType(dt)


def tsort(
    dt: DataType, src: np.ndarray, sort_width: int, descending: bool | np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """TSORT: stably sort each row's consecutive groups of ``sort_width`` columns.

    ``src`` is (P, R, C) in the FP32/FP16 carrier. Groups start at column 0; the last group
    holds only the remaining valid columns. ``descending`` is a bool or the per-PE
    RegSrc0 values (P,) (see :func:`descending_gpr_legal`). Returns
    ``(values, indices, status)``: the reordered values (source DataType), each value's
    original column offset within its group as U32, and NV for every PE whose source
    valid region holds a signalling NaN
    (the sNaN itself is moved bit-for-bit, never quieted).
    """
    dt = _check_dtype(dt)
    if not SORT_WIDTH_MIN <= int(sort_width) <= SORT_WIDTH_MAX:
        raise ValueError(f"sort_width {sort_width} outside 1..64")
    p = src.shape[0]
    key, is_snan = _sort_key(dt, src, descending)
    order, local = _group_order(dt, key, int(sort_width))
    values = _take(src, order)
    return values, local.astype(np.uint32), _snan_status(is_snan, p)


def _group_order(
    dt: DataType, key: np.ndarray, sort_width: int
) -> tuple[np.ndarray, np.ndarray]:
    """The stable order (column indices, intp) that sorts each row's groups of
    ``sort_width`` columns by ``key`` (from :func:`_sort_key`, consumed), and each
    sorted element's column within its group.

    The packed key is ``(group, key, column within the group)``: the group number is
    the most significant part, so one sort per row sorts every group independently and
    never moves an element across groups (position ``j`` of the sorted row belongs to
    group ``j // sort_width``); with the in-group column as the least significant part
    every packed key is unique, so an unstable sort (numpy's SIMD quicksort) gives
    exactly the stable order: equal keys (both zeros, NaNs) keep their column order.
    Rows too wide for the packing take a stable argsort instead.
    """
    c = key.shape[-1]
    key_bits = _FMT[dt][0]
    groups = -(-c // sort_width)
    local_bits = max(sort_width - 1, 1).bit_length()
    if key_bits + local_bits + max(groups - 1, 1).bit_length() > 64:
        return _stable_group_order(key, sort_width, key_bits)
    pack, base = _packing(c, sort_width, key_bits, local_bits)
    wide = key.astype(np.uint64)
    wide <<= np.uint64(local_bits)
    wide |= pack
    wide.sort(axis=-1)
    wide &= np.uint64((1 << local_bits) - 1)
    return wide.astype(np.intp) + base, wide


def _stable_group_order(
    key: np.ndarray, sort_width: int, key_bits: int
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_group_order` by a stable argsort of ``(group, key)`` (rows of more than
    2**26 groups, whose packed key would not fit 64 bits)."""
    col = np.arange(key.shape[-1], dtype=np.uint64)
    wide = key.astype(np.uint64) | ((col // np.uint64(sort_width)) << np.uint64(key_bits))
    order = np.argsort(wide, axis=-1, kind="stable")
    return order, order % sort_width


@cache
def _packing(
    c: int, width: int, key_bits: int, local_bits: int
) -> tuple[np.ndarray, np.ndarray]:
    """Per column: the packed ``group << (key_bits + local_bits) | column in group``,
    and per sorted position the first column of its group (read-only, per geometry)."""
    col = np.arange(c, dtype=np.uint64)
    group = col // np.uint64(width)
    pack = (group << np.uint64(key_bits + local_bits)) | (col % np.uint64(width))
    base = (group * np.uint64(width)).astype(np.intp)
    pack.flags.writeable = False
    base.flags.writeable = False
    return pack, base


def tmrgsort_sorted(
    dt: DataType, stream: np.ndarray, descending: bool | np.ndarray
) -> np.ndarray:
    """Per-PE bool (P,): is this (P, 1, n) stream sorted under ``TileSortLeftBefore``?"""
    dt = _check_dtype(dt)
    key, _ = _sort_key(dt, stream, descending)
    key = key.reshape(key.shape[0], -1)
    return np.all(key[:, :-1] <= key[:, 1:], axis=1)


def tmrgsort(
    dt: DataType, a: np.ndarray, b: np.ndarray, descending: bool | np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """TMRGSORT: stably merge two sorted single-row streams ``a`` (P,1,n0), ``b`` (P,1,n1).

    ``descending`` is a bool or per-PE RegSrc0 values. Equal values take the left source
    first; NaNs come last in both directions, keep their order, and left NaNs precede
    right NaNs. If either stream of any PE is not sorted in
    the selected direction the complete block is illegal (:class:`SemanticError`). Returns
    ``(merged (P, 1, n0 + n1), status)`` with NV where a source holds a signalling NaN.
    """
    dt = _check_dtype(dt)
    if a.ndim != 3 or b.ndim != 3 or a.shape[1] != 1 or b.shape[1] != 1:
        raise ValueError("TMRGSORT sources are single-row (P, 1, n) streams")
    if a.shape[2] == 0 or b.shape[2] == 0:
        raise ValueError("TMRGSORT sources are nonempty")
    both = np.concatenate((a, b), axis=2)
    p, n0 = both.shape[0], a.shape[2]
    desc = np.asarray(descending)
    if desc.ndim == 0 and desc.dtype == bool and not np.isnan(both).any():
        # without NaNs the order is the numeric one (+0 == -0 compare equal, so the
        # stable sort keeps their incoming order): sort the values themselves
        x = -both if desc else both  # negation is exact and keeps -0 == +0
        _require_sorted(x.reshape(p, -1), n0)
        return _take(both, x.argsort(axis=-1, kind="stable")), np.zeros(p, np.uint8)
    # one key computation for both streams (the key is elementwise)
    key, is_snan = _sort_key(dt, both, descending)
    k = key.reshape(p, -1)
    _require_sorted(k, n0)
    order = key.argsort(axis=-1, kind="stable")
    return _take(both, order), _snan_status(is_snan, p)


def _require_sorted(k: np.ndarray, n0: int) -> None:
    """Both streams of the (P, n0 + n1) keys (or NaN-free values) ascend, as
    :func:`tmrgsort_sorted` asks; one comparison pass, the seam pair excluded."""
    ordered = k[:, :-1] <= k[:, 1:]
    ordered[:, n0 - 1] = True  # the seam between the streams is no pair
    if not ordered.all():
        name = "left" if not ordered[:, : n0 - 1].all() else "right"
        raise SemanticError(f"TMRGSORT {name} source is not sorted in the selected order")
