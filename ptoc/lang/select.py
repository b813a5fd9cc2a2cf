"""Sorting, merging, indexed gather/scatter and partial (union-of-rectangles) operations."""

from __future__ import annotations

from typing import Any

from ptoc.backend.isa import op
from ptoc.dialects import tile_fill as fill
from ptoc.dialects import tile_irregular as irr

from ..dtypes import dtype_of, type_list
from ..tile import Tile
from . import compound
from ._core import as_tile, check_type, emit, emit_tile, fail, same_type
from .arith import broadcast_to

_PART = {c.MNEMONIC: c for c in irr.PART_OPS}


def sort(t: Tile, width: int = 32, descending: bool = False) -> tuple[Tile, Tile]:
    """Stable sort of each row's groups of ``width`` columns (NaN last, +0 == -0);
    returns ``(values, indices)``, the indices (u32) being original column offsets (TSORT)."""
    fn = "pt.sort"
    t = as_tile(t, fn)
    check_type(fn, irr.SortOp.MNEMONIC, t.dtype)
    if not isinstance(width, int) or isinstance(width, bool) or not 1 <= width <= 64:
        fail(f"{fn}: width is 1..64 columns, not {width!r}")
    o = emit(fn, irr.SortOp(t.value, width, bool(descending)))
    return Tile(o.results[0]), Tile(o.results[1])


def merge(a: Tile, b: Tile, descending: bool = False) -> Tile:
    """Stable merge of two sorted single-row tiles, ties from ``a`` first (TMRGSORT)."""
    fn = "pt.merge"
    ta, tb = as_tile(a, fn, "a"), as_tile(b, fn, "b")
    same_type(fn, ta, tb)
    if ta.shape[0] != 1 or tb.shape[0] != 1:
        fail(
            f"{fn} merges single-row tiles, not {ta.shape} and {tb.shape}",
            "merge rows one at a time (t[r]), or use pt.merge_sorted for 2-4 lists",
        )
    check_type(fn, irr.MrgSortOp.MNEMONIC, ta.dtype)
    return emit_tile(fn, irr.MrgSortOp(ta.value, tb.value, bool(descending)))


def _index(fn: str, mnemonic: str, idx: Tile) -> None:
    legal = op(mnemonic).type_rules.get("index")
    if legal and idx.dtype.datatype not in legal:
        fail(
            f"{fn}: index tiles of {mnemonic} are {type_list(legal)}, not {idx.dtype.name}",
            f"convert with pt.cast(rows, ptoc.{dtype_of(sorted(legal)[0]).name})",
        )


def gather(values: Tile, rows: Tile) -> Tile:
    """``out[i, c] = values[rows[i, c], c]``: rows picked by index (TGATHER). A (N, 1)
    column of row indices is broadcast across the columns (an embedding lookup)."""
    fn = "pt.gather"
    v, idx = as_tile(values, fn, "values"), as_tile(rows, fn, "rows")
    check_type(fn, irr.GatherOp.MNEMONIC, v.dtype, "values")
    _index(fn, irr.GatherOp.MNEMONIC, idx)
    if idx.shape[1] == 1 and v.shape[1] > 1:
        idx = broadcast_to(idx, (idx.shape[0], v.shape[1]), fn)
    if idx.shape[1] > v.shape[1]:
        fail(f"shape mismatch in {fn}: {idx.shape} indices select from {v.shape} values")
    return emit_tile(fn, irr.GatherOp(v.value, idx.value))


def scatter(values: Tile, rows: Tile, out_rows: int) -> Tile:
    """A zero tile of ``out_rows`` rows with ``out[rows[i, c], c] = values[i, c]``;
    duplicate targets are a machine fault (TSCATTER)."""
    fn = "pt.scatter"
    v, idx = as_tile(values, fn, "values"), as_tile(rows, fn, "rows")
    check_type(fn, irr.ScatterOp.MNEMONIC, v.dtype, "values")
    if idx.shape[1] == 1 and v.shape[1] > 1:
        idx = broadcast_to(idx, v.shape, fn)
    if idx.shape != v.shape:
        fail(f"shape mismatch in {fn}: indices {idx.shape} and values {v.shape} differ")
    if not isinstance(out_rows, int) or isinstance(out_rows, bool) or out_rows < 1:
        fail(f"{fn}: out_rows is a positive integer, not {out_rows!r}")
    return emit_tile(fn, irr.ScatterOp(v.value, idx.value, out_rows))


def _partial(kind: str, a: Any, b: Any, shape: Any, pad: Any) -> Tile:
    fn = f"pt.partial_{kind}"
    if a is None or b is None:  # an empty source covers nothing: the compound form
        return compound.partial(kind, a, b, shape, pad)
    ta, tb = as_tile(a, fn, "a"), as_tile(b, fn, "b")
    same_type(fn, ta, tb)
    big = (max(ta.shape[0], tb.shape[0]), max(ta.shape[1], tb.shape[1]))
    covered = big in (ta.shape, tb.shape)
    if pad is None and covered and (shape is None or tuple(shape) == big):
        mnemonic = f"TPART{kind.upper()}"
        check_type(fn, mnemonic, ta.dtype)
        return emit_tile(fn, _PART[mnemonic](ta.value, tb.value))
    return compound.partial(kind, ta, tb, shape, pad)


def partial_add(a: Tile, b: Tile, shape: Any = None, pad: Any = None) -> Tile:
    """Union of two top-left-anchored rectangles: ``a + b`` where both cover, the covering
    source's bits where one does (TPARTADD). ``shape`` and ``pad`` give a destination
    that neither source covers, and a source may be None (empty) -- the compound form,
    whose uncovered elements are ``pad`` (default 0)."""
    return _partial("add", a, b, shape, pad)


def partial_mul(a: Tile, b: Tile, shape: Any = None, pad: Any = None) -> Tile:
    """As :func:`partial_add` with ``a * b`` (TPARTMUL)."""
    return _partial("mul", a, b, shape, pad)


def partial_max(a: Tile, b: Tile, shape: Any = None, pad: Any = None) -> Tile:
    """As :func:`partial_add` with TMAX's rules (TPARTMAX; pad default -inf / type min)."""
    return _partial("max", a, b, shape, pad)


def partial_min(a: Tile, b: Tile, shape: Any = None, pad: Any = None) -> Tile:
    """As :func:`partial_add` with TMIN's rules (TPARTMIN; pad default +inf / type max)."""
    return _partial("min", a, b, shape, pad)


def histogram(t: Tile, byte_filter: Tile, byte: int) -> Tile:
    """Per row, the inclusive prefix histogram (256 u32 bins) of byte ``byte`` of the u16/
    u32 values whose more significant bytes match the u8 ``byte_filter`` (THISTOGRAM)."""
    from ptoc.dialects.tile_fill import HistogramOp

    fn = "pt.histogram"
    src, f = as_tile(t, fn, "t"), as_tile(byte_filter, fn, "filter")
    check_type(fn, fill.HistogramOp.MNEMONIC, src.dtype)
    legal = op(fill.HistogramOp.MNEMONIC).type_rules.get("filter")
    if legal and f.dtype.datatype not in legal:
        fail(f"{fn}: the filter is {type_list(legal)}, not {f.dtype.name}")
    if not isinstance(byte, int) or isinstance(byte, bool):
        fail(f"{fn}: byte is an integer, not {byte!r}")
    return emit_tile(fn, HistogramOp(src.value, f.value, byte))


#: what ``ptoc.lang`` exports from this module
__all__ = [
    "gather",
    "histogram",
    "merge",
    "partial_add",
    "partial_max",
    "partial_min",
    "partial_mul",
    "scatter",
    "sort",
]
