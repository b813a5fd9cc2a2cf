"""Row and column reductions, and the fused ``exp(t - b)`` against a broadcast.

A row reduction of an (R, C) tile is an (R, 1) column, a column reduction a (1, C)
row; both keep the element type (the ARG variants give u32 indices of the first
extremum). Reductions are left folds in increasing index order at the element type.
"""

from __future__ import annotations

from typing import Any

from ptoc.backend.isa import op
from ptoc.dialects import tile_reduce as red

from ..dtypes import type_list
from ..tile import Tile
from ._core import as_dtype, as_tile, check_type, emit_tile, fail, same_type

_REDUCE = {c.MNEMONIC: c for c in red.REDUCE_OPS}


def _reduce(fn: str, mnemonic: str, t: Tile) -> Tile:
    t = as_tile(t, fn)
    check_type(fn, mnemonic, t.dtype)
    return emit_tile(fn, _REDUCE[mnemonic](t.value))


def row_sum(t: Tile) -> Tile:
    """Sum of each row: (R, C) -> (R, 1) (TROWSUM)."""
    return _reduce("pt.row_sum", "TROWSUM", t)


def row_max(t: Tile) -> Tile:
    """Maximum of each row, TMAX's NaN and signed-zero rules (TROWMAX)."""
    return _reduce("pt.row_max", "TROWMAX", t)


def row_min(t: Tile) -> Tile:
    """Minimum of each row (TROWMIN)."""
    return _reduce("pt.row_min", "TROWMIN", t)


def row_prod(t: Tile) -> Tile:
    """Product of each row (TROWPROD)."""
    return _reduce("pt.row_prod", "TROWPROD", t)


def row_argmax(t: Tile) -> Tile:
    """Column index (u32) of each row's first maximum (TROWARGMAX)."""
    return _reduce("pt.row_argmax", "TROWARGMAX", t)


def row_argmin(t: Tile) -> Tile:
    """Column index (u32) of each row's first minimum (TROWARGMIN)."""
    return _reduce("pt.row_argmin", "TROWARGMIN", t)


def col_sum(t: Tile) -> Tile:
    """Sum of each column: (R, C) -> (1, C) (TCOLSUM)."""
    return _reduce("pt.col_sum", "TCOLSUM", t)


def col_max(t: Tile) -> Tile:
    """Maximum of each column (TCOLMAX)."""
    return _reduce("pt.col_max", "TCOLMAX", t)


def col_min(t: Tile) -> Tile:
    """Minimum of each column (TCOLMIN)."""
    return _reduce("pt.col_min", "TCOLMIN", t)


def col_prod(t: Tile) -> Tile:
    """Product of each column (TCOLPROD)."""
    return _reduce("pt.col_prod", "TCOLPROD", t)


def col_argmax(t: Tile) -> Tile:
    """Row index (u32) of each column's first maximum (TCOLARGMAX)."""
    return _reduce("pt.col_argmax", "TCOLARGMAX", t)


def col_argmin(t: Tile) -> Tile:
    """Row index (u32) of each column's first minimum (TCOLARGMIN)."""
    return _reduce("pt.col_argmin", "TCOLARGMIN", t)


def exp_diff(t: Tile, b: Tile, dtype: Any = None) -> Tile:
    """``exp(t - b)`` in one operation, ``b`` a (R, 1) column (TROWEXPANDEXPDIF) or a
    (1, C) row (TCOLEXPANDEXPDIF); ``dtype`` may widen fp16/bf16 results to fp32."""
    fn = "pt.exp_diff"
    tt, tb = as_tile(t, fn, "t"), as_tile(b, fn, "b")
    same_type(fn, tt, tb)
    rows, cols = tt.shape
    if tb.shape == (rows, 1):
        cls, mnemonic = red.RowExpandExpdifOp, "TROWEXPANDEXPDIF"
    elif tb.shape == (1, cols):
        cls, mnemonic = red.ColExpandExpdifOp, "TCOLEXPANDEXPDIF"
    else:
        fail(
            f"shape mismatch in {fn}: b must be a ({rows}, 1) column or a (1, {cols}) row of "
            f"the {tt.shape} tile, not {tb.shape}"
        )
    check_type(fn, mnemonic, tt.dtype)
    to = tt.dtype if dtype is None else as_dtype(dtype, fn)
    pairs = op(mnemonic).type_pairs
    if pairs and (tt.dtype.datatype, to.datatype) not in pairs:
        legal = [dst for src, dst in pairs if src == tt.dtype.datatype]
        fail(
            f"{fn}: {tt.dtype.name} -> {to.name} is not a {mnemonic} conversion; "
            f"{tt.dtype.name} gives {type_list(legal)}"
        )
    return emit_tile(fn, cls(tt.value, tb.value, None if to == tt.dtype else to.catalog_name))
