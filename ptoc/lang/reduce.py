"""Row and column reductions, and the fused ``exp(t - b)`` against a broadcast.

A row reduction of an (R, C) tile is an (R, 1) column, a column reduction a (1, C)
row; both keep the element type (the ARG variants give u32 indices of the first
extremum). Reductions are left folds in increasing index order at the element type.
The reductions themselves (``pt.row_sum`` ...) are one operation each and derived from the
operation table in :mod:`ptoc.lang.derived`; this module has the fused ``exp_diff``.
"""

from __future__ import annotations

from typing import Any

from ptoc.backend.isa import op
from ptoc.dialects import tile_reduce as red

from ..dtypes import type_list
from ..tile import Tile
from ._core import as_dtype, as_tile, check_type, emit_tile, fail, same_type


def exp_diff(t: Tile, b: Tile, dtype: Any = None) -> Tile:
    """``exp(t - b)`` in one operation, ``b`` a (R, 1) column (TROWEXPANDEXPDIF) or a
    (1, C) row (TCOLEXPANDEXPDIF); ``dtype`` may widen fp16/bf16 results to fp32."""
    fn = "pt.exp_diff"
    tt, tb = as_tile(t, fn, "t"), as_tile(b, fn, "b")
    same_type(fn, tt, tb)
    rows, cols = tt.shape
    if tb.shape == (rows, 1):
        cls = red.RowExpandExpdifOp
    elif tb.shape == (1, cols):
        cls = red.ColExpandExpdifOp
    else:
        fail(
            f"shape mismatch in {fn}: b must be a ({rows}, 1) column or a (1, {cols}) row of "
            f"the {tt.shape} tile, not {tb.shape}"
        )
    mnemonic = cls.MNEMONIC
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


#: what ``ptoc.lang`` exports from this module
__all__ = [
    "exp_diff",
]
