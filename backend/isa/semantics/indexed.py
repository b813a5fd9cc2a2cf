"""TGATHER and TSCATTER: row-selecting gather and scatter (TEPL Mode 3, Fn 15/16).

Authority: seed ADR 0083 decisions 138 and 139 (they narrow the 0.58.3 type sets);
ASL ``asl/tile/model/execution/indexed-rearrangement.asl`` and
``asl/tile/model/legality/indexed-rearrangement.asl`` (``TileIndexedRowIsNegative``,
``TileIndexedRowValue``, ``TileGatherReferencesLegal``, ``TileScatterReferencesLegal``).

An index element names a logical *row*; the column is always the element's own column.
Signed indices are negative when their sign bit is set; otherwise an index is read as
the unsigned value of its element width. Both operations copy values bit-for-bit and
never produce numeric status.
"""

from __future__ import annotations

import numpy as np

from ..datatypes import DataType, info
from .core import SemanticError, no_status

_D = DataType

#: Seed decision 138: TGATHER value and index DataTypes.
GATHER_VALUE_DTYPES = frozenset({_D.FP32, _D.FP16, _D.S32, _D.S16, _D.U32, _D.U16})
GATHER_INDEX_DTYPES = frozenset({_D.S32, _D.U32})

#: Seed decision 139: TSCATTER value DataType -> the index DataTypes of matching width.
SCATTER_INDEX_DTYPES: dict[DataType, frozenset[DataType]] = {
    **{v: frozenset({_D.S32, _D.U32}) for v in (_D.FP32, _D.S32, _D.U32)},
    **{
        v: frozenset({_D.S16, _D.U16}) for v in (_D.FP16, _D.BF16, _D.S16, _D.U16, _D.S8, _D.U8)
    },
}


def tgather_types_legal(dt: DataType, idx_dt: DataType) -> str | None:
    """The violated TGATHER type rule, or None when (value, index) types are legal."""
    if DataType(dt) not in GATHER_VALUE_DTYPES:
        return f"TGATHER value DataType {DataType(dt).name} is not supported"
    if DataType(idx_dt) not in GATHER_INDEX_DTYPES:
        return f"TGATHER index DataType {DataType(idx_dt).name} is not S32 or U32"
    return None


def tscatter_types_legal(dt: DataType, idx_dt: DataType) -> str | None:
    """The violated TSCATTER width-pairing rule, or None when the pair is legal."""
    allowed = SCATTER_INDEX_DTYPES.get(DataType(dt))
    if allowed is None:
        return f"TSCATTER value DataType {DataType(dt).name} is not supported"
    if DataType(idx_dt) not in allowed:
        return (
            f"TSCATTER index DataType {DataType(idx_dt).name} does not pair with "
            f"value DataType {DataType(dt).name}"
        )
    return None


def _row_indices(idx_dt: DataType, index: np.ndarray, limit: int, op: str) -> np.ndarray:
    """Index elements as int64 rows; SemanticError if any is negative or >= ``limit``."""
    ii = info(idx_dt)
    if not ii.is_int or ii.bits not in (16, 32, 64):
        raise ValueError(f"{op} index DataType {DataType(idx_dt).name} is not an integer")
    if index.size == 0:
        return index.astype(np.int64)
    if ii.is_signed and index.min() < 0:
        raise SemanticError(f"{op} index is negative")
    if int(index.max()) >= limit:  # a Python int: exact for every width
        raise SemanticError(f"{op} index is not below the selected ValidRow {limit}")
    return index.astype(np.int64)


def _column_offsets(p: int, rows: int, cols: int, c: int) -> np.ndarray:
    """Flat offsets ``pe * rows * cols + col`` (P, 1, c) of a C-contiguous (P, rows,
    cols) array: adding ``row * cols`` gives the flat index of ``[pe, row, col]``."""
    key = (p, rows, cols, c)
    off = _OFFSETS.get(key)
    if off is None:
        off = (np.arange(p, dtype=np.int64) * (rows * cols))[:, None, None] + np.arange(
            c, dtype=np.int64
        )
        off.flags.writeable = False
        if len(_OFFSETS) >= 256:
            _OFFSETS.clear()
        _OFFSETS[key] = off
    return off


_OFFSETS: dict[tuple[int, int, int, int], np.ndarray] = {}


def tgather(
    dt: DataType,
    idx_dt: DataType,
    values: np.ndarray,
    index: np.ndarray,
    values_defined: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """TGATHER: ``dst[r, c] = values[index[r, c], c]``.

    ``values`` is the value source's valid region (P, Rv, Cv) with Cv >= C; ``index`` the
    index tile (P, R, C), which also gives the destination shape. A negative signed index
    or one >= Rv makes the block illegal (:class:`SemanticError`); indices never wrap or
    clamp. ``values_defined``, a bool (P, Rv, Cv) definedness map, optionally enforces the
    seed rule that every *selected* source element is defined. Returns ``(dst, status)``.
    """
    p, _r, c = index.shape
    if values.shape[0] != p or values.shape[2] < c:
        raise ValueError("TGATHER value source must cover the destination columns")
    rows = _row_indices(idx_dt, index, values.shape[1], "TGATHER")
    if values_defined is not None:
        picked = np.take_along_axis(values_defined[:, :, :c], rows, axis=1)
        if not np.all(picked):
            raise SemanticError("TGATHER selects an undefined value-source element")
    v = np.ascontiguousarray(values)
    rv, cv = v.shape[1], v.shape[2]
    rows *= cv
    rows += _column_offsets(p, rv, cv, c)
    return v.reshape(-1).take(rows), no_status(p)


def tscatter(
    dt: DataType,
    idx_dt: DataType,
    values: np.ndarray,
    index: np.ndarray,
    dst_rows: int,
    dst_shape_physical: tuple[int, int],
) -> tuple[np.ndarray, np.ndarray]:
    """TSCATTER: ``dst[index[r, c], c] = values[r, c]`` into a zero-initialised tile.

    ``values`` and ``index`` are (P, R, C); ``dst_rows`` is the destination ValidRow and
    ``dst_shape_physical`` its physical (Rows, Col). Every physical element starts as the
    value type's positive/integer zero (all of them defined), so the result is the FULL
    physical tile (P, Rows, Col) with the valid rectangle at [:dst_rows, :C]. A negative or
    out-of-range index, or two source elements selecting one destination coordinate,
    makes the complete block illegal (:class:`SemanticError`). Returns ``(dst, status)``.
    """
    p, r, c = values.shape
    rows_phys, cols_phys = dst_shape_physical
    if index.shape != values.shape:
        raise ValueError("TSCATTER value and index sources have one valid shape")
    if not 0 < dst_rows <= rows_phys or c > cols_phys:
        raise ValueError("TSCATTER destination valid shape does not fit its physical shape")
    rows = _row_indices(idx_dt, index, dst_rows, "TSCATTER")
    # the flat destination index of every source element: a target is (PE, row, col)
    rows *= cols_phys
    rows += _column_offsets(p, rows_phys, cols_phys, c)
    if r > 1:
        # two elements select one target exactly when writing each element's number
        # to its target leaves some element reading back another's number
        ids = np.arange(rows.size, dtype=np.intp).reshape(rows.shape)
        owner = np.empty(p * rows_phys * cols_phys, np.intp)
        owner[rows] = ids
        if not np.array_equal(owner[rows], ids):
            raise SemanticError("TSCATTER two source elements select one destination element")
    # np.zeros is +0.0 for every float carrier and 0 for every integer carrier.
    dst = np.zeros((p, rows_phys, cols_phys), dtype=info(dt).carrier)
    dst.reshape(-1)[rows] = values
    return dst, no_status(p)
