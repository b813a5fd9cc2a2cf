"""Elementwise functions: FMA, conversion, selection and tile creation (the unary math
functions, one operation each, are derived from the operation table in
:mod:`ptoc.lang.derived`)."""

from __future__ import annotations

import builtins
from typing import Any

from ptoc.backend.isa import op
from ptoc.dialects import tile_elementwise as ew
from ptoc.dialects import tile_irregular as irr
from ptoc.dialects.modes import RMode, RModeAttr
from ptoc.dialects.tile_types import TileType

from ..dtypes import DTYPES, DType, type_list
from ..tile import Tile
from ._core import (
    as_dtype,
    as_number,
    as_shape,
    as_tile,
    check_type,
    emit_tile,
    fail,
    is_scalar,
    same_type,
    scalar_for,
)
from .arith import broadcast_shape, broadcast_to


def fma(a: Tile, b: Tile, c: Tile) -> Tile:
    """``a * b + c`` with a single rounding (TFMA); broadcasts like the operators."""
    fn = "pt.fma"
    ta, tb, tc = (as_tile(x, fn, w) for x, w in ((a, "a"), (b, "b"), (c, "c")))
    same_type(fn, ta, tb)
    same_type(fn, ta, tc)
    shape = broadcast_shape(fn, broadcast_shape(fn, ta.shape, tb.shape), tc.shape)
    ta, tb, tc = (broadcast_to(x, shape, fn) for x in (ta, tb, tc))
    check_type(fn, ew.FmaOp.MNEMONIC, ta.dtype)
    return emit_tile(fn, ew.FmaOp(ta.value, tb.value, tc.value))


ROUNDING = tuple(m.value for m in RMode)


def rounding_mode(fn: str, rounding: Any) -> RMode:
    if not isinstance(rounding, str) or rounding.lower() not in ROUNDING:
        fail(f"{fn}: rounding must be one of {', '.join(ROUNDING)}, not {rounding!r}")
    return RMode(rounding.lower())


def cast(t: Tile, dtype: Any, rounding: str = "rne", saturate: bool | None = None) -> Tile:
    """Convert to ``dtype`` (TCVT). ``rounding`` is rne, rtz, rtm, rtp, rna, rto or rhb;
    ``saturate=True`` clamps out-of-range values instead of the conversion's default.

    Of a run-time integer, ``pt.cast(i, ptoc.fp32)`` is the run-time FP32 scalar nearest
    to it (SCVTF): ``t * (1.0 / pt.cast(rows, ptoc.fp32))`` scales by a run-time count."""
    fn = "pt.cast"
    from .control import Index, int_to_float

    if isinstance(t, Index):
        to = as_dtype(dtype, fn)
        if to.name != "fp32" or rounding != "rne" or saturate:
            fail(
                f"{fn} of a run-time integer gives an fp32 scalar (nearest even), not {to.name}"
            )
        return int_to_float(t, to, fn)  # type: ignore[return-value]
    t = as_tile(t, fn)
    to = as_dtype(dtype, fn)
    if to == t.dtype:
        return t
    check_type(fn, ew.CvtOp.MNEMONIC, t.dtype, "sources")
    check_type(fn, ew.CvtOp.MNEMONIC, to, "results")
    assert t.dtype.datatype is not None and to.datatype is not None  # check_type: not pred
    legal = op(ew.CvtOp.MNEMONIC).sources_for(to.datatype)
    if legal is not None and t.dtype.datatype not in legal:
        via = "fp32" if DTYPES["fp32"].datatype in legal else type_list(legal).split(",")[0]
        fail(
            f"{fn}: TCVT to {to.name} takes {type_list(legal)} sources, not {t.dtype.name} "
            "(the catalog's type-pair rule)",
            f"convert in two steps: pt.cast(pt.cast(t, ptoc.{via}), ptoc.{to.name})",
        )
    mode = RModeAttr(rounding_mode(fn, rounding))
    return emit_tile(fn, ew.CvtOp(t.value, to.catalog_name, mode, bool(saturate)))


def where(pred: Tile, a: Tile | float, b: Tile | float, dtype: Any = None) -> Tile:
    """``pred ? a : b`` elementwise, bit-exact (TSEL; TSELS when ``b`` is a number).

    ``pred`` is a comparison result; ``a`` and ``b`` broadcast to its shape. When both
    are numbers, ``dtype`` gives the element type.
    """
    fn = "pt.where"
    p = as_tile(pred, fn, "the predicate")
    if p.dtype != DTYPES["pred"]:
        fail(
            f"{fn}: the predicate must be a comparison result (pred tile), not {p.dtype.name}",
            "compare first, e.g. pt.where(t > 0, t, 0.0)",
        )
    like = next((x for x in (a, b) if isinstance(x, Tile)), None)
    if like is None:
        if dtype is None:
            fail(f"{fn}: with two numbers, give the element type: dtype=ptoc.fp32")
        like_dtype = as_dtype(dtype, fn)
    else:
        like_dtype = as_tile(like, fn).dtype
    if is_scalar(a):
        a = full(p.shape, scalar_for(fn, like_dtype, a), like_dtype)
    ta = broadcast_to(as_tile(a, fn, "a"), p.shape, fn)
    check_type(fn, ew.SelOp.MNEMONIC, ta.dtype)
    if is_scalar(b):
        s = scalar_for(fn, ta.dtype, b)
        return emit_tile(fn, ew.SelsOp(p.value, ta.value, s))
    tb = broadcast_to(as_tile(b, fn, "b"), p.shape, fn)
    same_type(fn, ta, tb)
    return emit_tile(fn, ew.SelOp(p.value, ta.value, tb.value))


def full(shape: Any, value: float, dtype: Any) -> Tile:
    """A ``shape`` tile with every element ``value`` (TEXPANDS)."""
    fn = "pt.full"
    rows, cols = as_shape(shape, fn)
    d = as_dtype(dtype, fn)
    check_type(fn, ew.FullOp.MNEMONIC, d)
    v = scalar_for(fn, d, value, "the value")
    return emit_tile(fn, ew.FullOp(v, TileType(d.catalog_name, (rows, cols))))


def iota(n: int, start: int = 0, descending: bool = False, dtype: Any = "s32") -> Tile:
    """One row ``start, start+1, ...`` (or ``start, start-1, ...``) of ``n`` integers,
    wrapping at the element width (TCI)."""
    fn = "pt.iota"
    _, cols = as_shape(n, fn, "n")
    d = as_dtype(dtype, fn)
    check_type(fn, irr.CiOp.MNEMONIC, d)
    s = int(as_number(start, fn, "start"))
    return emit_tile(
        fn, irr.CiOp(s, TileType(d.catalog_name, (1, cols)), builtins.bool(descending))
    )


def tri(shape: Any, diagonal: int = 0, upper: bool = False, dtype: Any = "fp32") -> Tile:
    """A triangular 0/1 mask: 1 where ``col <= row + diagonal`` (or ``col >= row +
    diagonal`` with ``upper=True``), else 0 (TTRI)."""
    fn = "pt.tri"
    rows, cols = as_shape(shape, fn)
    d: DType = as_dtype(dtype, fn)
    check_type(fn, irr.TriOp.MNEMONIC, d)
    k = int(as_number(diagonal, fn, "diagonal"))
    return emit_tile(
        fn, irr.TriOp(k, TileType(d.catalog_name, (rows, cols)), builtins.bool(upper))
    )


#: what ``ptoc.lang`` exports from this module
__all__ = [
    "cast",
    "fma",
    "full",
    "iota",
    "tri",
    "where",
]
