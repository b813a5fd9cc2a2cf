"""Shared pieces of the operation handlers."""

from __future__ import annotations

import numpy as np

from ptoc.backend.isa import DataType

from ..alloc import Dests, Slot
from ..engine import Ctx
from ..faults import TileLegalityFault
from ..spec import Shape, Spec
from ..tiles import Layout, Tile, raw_bits

RM = Layout.ROW_MAJOR

#: raw-bit masks that must be zero for a valid encoding (``TileNumericEncodingValid``:
#: TF32 keeps 10 fraction bits, HF32 11, the 6-bit floats live in the low 6 bits)
_ENCODING_ZERO_BITS: dict[DataType, int] = {
    DataType.TF32: 0x1FFF,
    DataType.HF32: 0x0FFF,
    DataType.E3M2: 0xC0,
    DataType.E2M3: 0xC0,
}


#: DataTypes with constrained encodings (``TileNumericEncodingValid``)
ENCODING_TYPES = frozenset(_ENCODING_ZERO_BITS)


def predicate_slot(ctx: Ctx, like: Tile, cache: dict[tuple[int, ...], Dests]) -> Slot:
    """``ctx.allocate_predicate(like)``, remembered per geometry of ``like``: the first
    bundle of a plan with this geometry allocates (and raises the allocation fault when
    the predicate does not fit its TSize), a later one reserves the same descriptor."""
    key = (ctx.mask, like.rows, like.cols, like.valid_rows, like.valid_cols)
    dests = cache.get(key)
    if dests is None:
        slot = ctx.allocate_predicate(like)
        if len(cache) < 16:  # physical Rows may vary with the source: bounded
            cache[key] = Dests((slot,), ((slot.hand, slot.mask, slot.capacity),))
        return slot
    return ctx.reserve(dests)[0]


def source_key(dt: DataType, shape: Shape, rows: int | None) -> tuple[object, ...] | None:
    """The :attr:`Tile.key` a fully defined row-major source of this geometry has (None
    when the destination geometry is itself illegal, so only the slow path runs)."""
    if rows is None:
        return None
    return (dt, RM, shape.valid_rows, shape.valid_cols, shape.cols, rows, True)


def invalid_encoding(dt: DataType | None, values: np.ndarray) -> bool:
    """True when some element of ``values`` is not a valid encoding of ``dt``."""
    bits = _ENCODING_ZERO_BITS.get(dt) if dt is not None else None
    if bits is None:
        return False
    raw = raw_bits(values)
    return bool(np.any(raw & raw.dtype.type(bits)))


def require_encodings(ctx: Ctx, i: int, t: Tile, values: np.ndarray | None = None) -> None:
    """``TileSourceEncodingsValid``: every valid element of source ``i`` is a valid encoding."""
    v = ctx.values(t) if values is None else values
    if invalid_encoding(t.dtype, v):
        raise TileLegalityFault(
            f"{ctx.ref(i)} holds an invalid {t.type_name} encoding", ctx.name
        )


def same_rows(ctx: Ctx, i: int, t: Tile, rows: int) -> None:
    """Source and destination physical Rows match (``TileShapeAndTypeMatch``)."""
    if t.rows != rows:
        raise TileLegalityFault(
            f"{ctx.ref(i)} has {t.rows} physical rows but the destination has {rows}: "
            "source and destination physical shapes must match",
            ctx.name,
        )


__all__ = ["RM", "Ctx", "Spec", "Tile", "invalid_encoding"]
