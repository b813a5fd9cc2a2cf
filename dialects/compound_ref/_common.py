"""Shared helpers of the compound reference semantics: errors, types, records, ordering.

Nothing here is a lowering. Every helper states a rule of the reference semantics in
plain numpy so that the interface modules read like their documentation
(``docs/compound.md``).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import ml_dtypes
import numpy as np

from ptoc.backend.errors import Error
from ptoc.backend.isa.datatypes import DataType, dtype_by_name, info


class CompoundError(Error, ValueError):
    """A compound interface was called with arguments its reference semantics rejects.

    ``rule`` is one sentence naming the broken rule; ``op`` the IR name of the op whose
    reference raised it, when one did (the message is then ``op: rule``).
    """

    def __init__(self, rule: str, op: str | None = None) -> None:
        super().__init__(rule if op is None else f"{op}: {rule}")
        #: one sentence naming the broken rule
        self.rule = rule
        self.op = op


class Records(NamedTuple):
    """ptoc's struct-of-arrays record tile: a value tile and a U32 payload tile.

    Record ``k`` of row ``r`` is ``(values[r, k], payload[r, k])``; both tiles have the
    same 2-D shape. ``pack_records`` turns it into pto-isa's interleaved 8-byte layout.
    """

    values: np.ndarray
    payload: np.ndarray


class MX(NamedTuple):
    """The four results of ``quantize_mx`` (shapes for an (R, C) source).

    ``elements`` (R, C) E4M3; ``scales`` (R, C/32) E8M0; ``amax`` (R, C/32) FP32 group
    maximum of |x|; ``scaling`` (R, C/32) FP32 multiplier 2**(127 - scale exponent).
    """

    elements: np.ndarray
    scales: np.ndarray
    amax: np.ndarray
    scaling: np.ndarray


# ---------------------------------------------------------------- data types

FP32 = np.dtype(np.float32)
FP16 = np.dtype(np.float16)
BF16 = np.dtype(ml_dtypes.bfloat16)
E4M3 = np.dtype(ml_dtypes.float8_e4m3fn)
E8M0 = np.dtype(ml_dtypes.float8_e8m0fnu)
U32 = np.dtype(np.uint32)

_UINT = {
    1: np.dtype(np.uint8),
    2: np.dtype(np.uint16),
    4: np.dtype(np.uint32),
    8: np.dtype(np.uint64),
}

#: numpy carrier -> DataType for the carriers that name exactly one DataType
_BY_CARRIER: dict[np.dtype, DataType] = {
    np.dtype(np.float64): DataType.FP64,
    FP32: DataType.FP32,
    FP16: DataType.FP16,
    BF16: DataType.BF16,
    E4M3: DataType.E4M3,
    np.dtype(ml_dtypes.float8_e5m2): DataType.E5M2,
    E8M0: DataType.E8M0,
    np.dtype(np.int64): DataType.S64,
    np.dtype(np.int32): DataType.S32,
    np.dtype(np.int16): DataType.S16,
    np.dtype(np.int8): DataType.S8,
    np.dtype(np.uint64): DataType.U64,
    np.dtype(np.uint32): DataType.U32,
    np.dtype(np.uint16): DataType.U16,
    np.dtype(np.uint8): DataType.U8,
}


def as_dtype(spec: Any) -> np.dtype:
    """A numpy carrier dtype from a dtype-like, a ``DataType`` or a DataType name."""
    if isinstance(spec, DataType):
        return info(spec).carrier
    if isinstance(spec, str):
        try:
            return info(dtype_by_name(spec)).carrier
        except KeyError:
            pass
    try:
        return np.dtype(spec)
    except TypeError:
        raise CompoundError(f"{spec!r} is not an element type") from None


def datatype_of(dt: np.dtype) -> DataType:
    """The DataType whose carrier is ``dt`` (CompoundError for other dtypes)."""
    try:
        return _BY_CARRIER[np.dtype(dt)]
    except KeyError:
        raise CompoundError(f"element type {np.dtype(dt)} has no PTO DataType") from None


def bits(a: np.ndarray) -> np.ndarray:
    """The raw bits of an array as the unsigned integer of the same width (a copy)."""
    a = np.ascontiguousarray(a)
    return a.view(_UINT[a.dtype.itemsize]).copy()


def from_bits(b: np.ndarray, dt: np.dtype) -> np.ndarray:
    """An array of carrier ``dt`` holding the raw bits ``b`` (same width)."""
    dt = np.dtype(dt)
    return np.ascontiguousarray(np.asarray(b).astype(_UINT[dt.itemsize])).view(dt)


def tile(name: str, a: Any, *, dtypes: tuple[np.dtype, ...] | None = None) -> np.ndarray:
    """Check that ``a`` is a 2-D numpy tile (of one of ``dtypes``) and return it."""
    if not isinstance(a, np.ndarray):
        raise CompoundError(f"{name} must be a numpy array, not {type(a).__name__}")
    if a.ndim != 2:
        raise CompoundError(f"{name} must be a 2-D (rows, cols) tile, not shape {a.shape}")
    if dtypes is not None and a.dtype not in dtypes:
        names = ", ".join(str(d) for d in dtypes)
        raise CompoundError(f"{name} has element type {a.dtype}; expected one of {names}")
    return a


def nonempty(name: str, a: np.ndarray) -> np.ndarray:
    if a.shape[0] == 0 or a.shape[1] == 0:
        raise CompoundError(f"{name} must have a nonzero valid shape, not {a.shape}")
    return a


def column(name: str, a: Any, rows: int) -> np.ndarray:
    """A per-row FP32 parameter column: shape (rows, 1) or (rows,), returned as (rows, 1)."""
    if not isinstance(a, np.ndarray) or a.dtype != FP32:
        raise CompoundError(f"{name} must be an FP32 numpy array of shape ({rows}, 1)")
    if a.shape not in ((rows, 1), (rows,)):
        raise CompoundError(f"{name} must have shape ({rows}, 1), not {a.shape}")
    return a.reshape(rows, 1)


def index_tile(name: str, a: Any) -> np.ndarray:
    """An integer index tile as int64 (CompoundError for non-integer or non-2-D tiles)."""
    a = tile(name, a)
    if a.dtype.kind not in "iu":
        raise CompoundError(f"{name} must have an integer element type, not {a.dtype}")
    return a.astype(np.int64)


def is_nan(a: np.ndarray) -> np.ndarray:
    """Elementwise NaN test that works for every carrier (ml_dtypes included)."""
    if a.dtype.kind == "f" or a.dtype in (BF16, E4M3, E8M0):
        with np.errstate(invalid="ignore"):
            return np.isnan(a.astype(np.float64))
    return np.zeros(a.shape, bool)


# ---------------------------------------------------------------- sort order

SORT_DTYPES = (FP32, FP16)


def order_keys(values: np.ndarray, descending: bool) -> tuple[np.ndarray, np.ndarray]:
    """(nan, key) such that a stable lexsort by (nan, key) is the seed sort order.

    ADR 0083 TSORT/TMRGSORT order: numeric values first (descending or ascending), NaNs
    last in both directions; +0 and -0 are equal, so a stable sort keeps their order.
    """
    with np.errstate(invalid="ignore"):  # a signalling NaN is only observed here
        v = values.astype(np.float64)
    nan = np.isnan(v)
    key = np.where(nan, 0.0, -v if descending else v)
    # -(+0) and -(-0) compare equal in numpy's sort, so signed zeros stay in source order
    return nan, key


def stable_order(values: np.ndarray, descending: bool) -> np.ndarray:
    """Stable sort permutation along the last axis under the seed order."""
    nan, key = order_keys(values, descending)
    return np.lexsort((key, nan), axis=-1)


def check_sorted(name: str, values: np.ndarray, descending: bool) -> None:
    """CompoundError unless the 1-D ``values`` are sorted in the selected seed order."""
    with np.errstate(invalid="ignore"):
        v = values.astype(np.float64)
    nan = np.isnan(v)
    if np.any(nan[:-1] & ~nan[1:]):
        raise CompoundError(f"{name} is not sorted: a number follows a NaN (NaNs sort last)")
    num = v[~nan]
    bad = num[1:] > num[:-1] if descending else num[1:] < num[:-1]
    if np.any(bad):
        order = "descending" if descending else "ascending"
        k = int(np.argmax(bad))
        raise CompoundError(
            f"{name} is not sorted {order}: {num[k]!r} is followed by {num[k + 1]!r}"
        )


def records_of(
    name: str, r: Any, *, rows_one: bool = False
) -> tuple[np.ndarray, np.ndarray | None]:
    """Split a Records (or a 2-tuple) into (values, payload); a bare tile gives payload None."""
    if isinstance(r, tuple):
        if len(r) != 2:
            raise CompoundError(f"{name} must be a value tile or Records(values, payload)")
        values, payload = r
        values = tile(f"{name}.values", values, dtypes=SORT_DTYPES)
        payload = tile(f"{name}.payload", payload, dtypes=(U32,))
        if payload.shape != values.shape:
            raise CompoundError(
                f"{name}.payload shape {payload.shape} differs from values {values.shape}"
            )
    else:
        values, payload = tile(name, r, dtypes=SORT_DTYPES), None
    nonempty(name, values)
    if rows_one and values.shape[0] != 1:
        raise CompoundError(f"{name} must be a single row, not {values.shape[0]} rows")
    return values, payload
