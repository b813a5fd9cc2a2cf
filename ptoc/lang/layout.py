"""Layout operations: transpose, concatenation and sub-tiles (bit copies)."""

from __future__ import annotations

from typing import Any

from ptoc.dialects import tile_fill as fill
from ptoc.dialects import tile_irregular as irr
from ptoc.dialects.tile_types import TileType

from ..tile import Tile
from ._core import as_shape, as_tile, check_type, emit_tile, fail, same_type


def transpose(t: Tile, scratch: Any = None, dtype: Any = None) -> Tile:
    """``out[c, r] = t[r, c]`` bit for bit (TTRANS). ``scratch`` is accepted for pto-isa
    compatibility (``TTRANS(dst, src, tmp)``, the compound ``tile.transpose``) and never
    changes the result; ``dtype`` (same width) reinterprets the bits."""
    fn = "pt.transpose"
    if scratch is not None or dtype is not None:
        from . import compound

        return compound.transpose(t, scratch, dtype)
    t = as_tile(t, fn)
    check_type(fn, irr.TransOp.MNEMONIC, t.dtype)
    return emit_tile(fn, irr.TransOp(t.value))


def concat(a: Tile, b: Tile) -> Tile:
    """The columns of ``a`` followed by those of ``b`` (same rows; TCONCAT)."""
    fn = "pt.concat"
    ta, tb = as_tile(a, fn, "a"), as_tile(b, fn, "b")
    same_type(fn, ta, tb)
    if ta.shape[0] != tb.shape[0]:
        fail(f"shape mismatch in {fn}: {ta.shape} and {tb.shape} have different row counts")
    check_type(fn, irr.ConcatOp.MNEMONIC, ta.dtype)
    return emit_tile(fn, irr.ConcatOp(ta.value, tb.value))


def extract(t: Tile, row: int, col: int, shape: Any) -> Tile:
    """The ``shape`` window of ``t`` whose top-left element is ``t[row, col]`` (TEXTRACT)."""
    fn = "pt.extract"
    t = as_tile(t, fn)
    rows, cols = as_shape(shape, fn)
    for v, what in ((row, "row"), (col, "col")):
        if not isinstance(v, int) or isinstance(v, bool) or v < 0:
            fail(f"{fn}: {what} is a nonnegative integer, not {v!r}")
    if row + rows > t.shape[0] or col + cols > t.shape[1]:
        fail(
            f"{fn}: the window rows {row}..{row + rows - 1}, cols {col}..{col + cols - 1} is "
            f"outside the {t.shape} tile"
        )
    check_type(fn, irr.ExtractOp.MNEMONIC, t.dtype)
    return emit_tile(
        fn, irr.ExtractOp(t.value, (row, col), TileType(t.type.dtype, (rows, cols)))
    )


def _axis(key: Any, size: int, what: str) -> tuple[int, int]:
    """(start, count) of one axis of ``t[key]``: an int (one row/col) or a unit-step slice."""
    if isinstance(key, int) and not isinstance(key, bool):
        k = key + size if key < 0 else key
        if not 0 <= k < size:
            fail(f"t[...]: {what} index {key} is outside 0..{size - 1}")
        return k, 1
    if isinstance(key, slice):
        start, stop, step = key.indices(size)
        if step != 1 or stop <= start:
            fail(
                f"t[...]: the {what} slice {key.start}:{key.stop}:{key.step} must select a "
                "nonempty range with step 1",
                "take every n-th row when loading: pt.load(x, step=n)",
            )
        return start, stop - start
    fail(
        f"t[...] takes integers and slices with constant bounds, not {type(key).__name__}",
        "gather by index with pt.gather(values, rows)",
    )


def subtile(t: Tile, key: Any) -> Tile:
    """``t[r0:r1, c0:c1]`` (TEXTRACT). An integer keeps its axis: ``t[3]`` is row 3 as a
    (1, C) tile, ``t[:, 0]`` column 0 as (R, 1); tiles stay two-dimensional."""
    t = as_tile(t, "t[...]")
    if not isinstance(key, tuple):
        key = (key, slice(None))
    if len(key) != 2:
        fail(f"t[...] takes two indices (rows, cols), not {len(key)}")
    r0, nr = _axis(key[0], t.shape[0], "row")
    c0, nc = _axis(key[1], t.shape[1], "column")
    if (r0, c0, nr, nc) == (0, 0, *t.shape):
        return t
    return extract(t, r0, c0, (nr, nc))


def insert(old: Tile, src: Tile, row: int = 0, col: int = 0) -> Tile:
    """``old`` with ``src`` written at ``[row, col]`` (TINSERT); ``old`` is unchanged."""
    from ptoc.dialects.tile_fill import InsertOp

    fn = "pt.insert"
    to, ts = as_tile(old, fn, "old"), as_tile(src, fn, "src")
    same_type(fn, to, ts)
    for v, what in ((row, "row"), (col, "col")):
        if not isinstance(v, int) or isinstance(v, bool) or v < 0:
            fail(f"{fn}: {what} is a nonnegative integer, not {v!r}")
    if row + ts.shape[0] > to.shape[0] or col + ts.shape[1] > to.shape[1]:
        fail(f"{fn}: a {ts.shape} tile at [{row}, {col}] does not fit in the {to.shape} tile")
    check_type(fn, fill.InsertOp.MNEMONIC, to.dtype)
    return emit_tile(fn, InsertOp(to.value, ts.value, (row, col)))


def fillpad(t: Tile, shape: Any, value: float) -> Tile:
    """``t`` widened to ``shape`` (anchored at [0, 0]); the new elements are ``value``
    (TFILLPAD)."""
    from ptoc.dialects.tile_fill import FillPadOp

    from ._core import scalar_for

    fn = "pt.fillpad"
    t = as_tile(t, fn)
    rows, cols = as_shape(shape, fn)
    if rows < t.shape[0] or cols < t.shape[1]:
        fail(f"{fn}: the shape {(rows, cols)} must contain the {t.shape} tile")
    check_type(fn, fill.FillPadOp.MNEMONIC, t.dtype)
    v = scalar_for(fn, t.dtype, value, "the fill value")
    return emit_tile(fn, FillPadOp(t.value, v, TileType(t.type.dtype, (rows, cols))))


#: what ``ptoc.lang`` exports from this module
__all__ = [
    "concat",
    "extract",
    "fillpad",
    "insert",
    "transpose",
]
