"""Binary arithmetic and comparisons with numpy-style broadcasting.

How an expression maps onto the tile ops (``a`` is (R, C)):

=========================  =====================================================
``a + b``, b (R, C)        TADD (and TSUB, TMUL, TDIV, TREM, TMAX, ... alike)
``a + b``, b (R, 1)        TROWEXPANDADD (ADD, SUB, MUL, DIV, MAX, MIN)
``a + b``, b (1, C)        TCOLEXPANDADD
``a + 2.5``                TADDS (the tile-scalar form)
``2.5 + a``                TADDS for commutative ops; else TEXPANDS then TSUB/TDIV/...
other broadcasts           TROWEXPAND / TCOLEXPAND to the common shape, then the op
``a < b``, ``a < 2.5``     TCMP / TCMPS, giving a pred tile
=========================  =====================================================

Element types never change implicitly: both operands must have the same type.
"""

from __future__ import annotations

from typing import Any

from ptoc.dialects import tile_elementwise as ew
from ptoc.dialects import tile_reduce as red
from ptoc.dialects.modes import CMode
from ptoc.dialects.tile_types import TileType

from ..tile import Tile
from ._core import (
    as_tile,
    check_type,
    emit_tile,
    fail,
    is_scalar,
    same_type,
    scalar_for,
)

_BINARY = {c.MNEMONIC: c for c in ew.BINARY_OPS}
_SCALAR = {c.MNEMONIC: c for c in ew.SCALAR_OPS}
_EXPAND = {c.MNEMONIC: c for c in red.EXPAND_BINARY_OPS}

#: how each kind is spelled in diagnostics
SYMBOL = {
    "ADD": "'+'",
    "SUB": "'-'",
    "MUL": "'*'",
    "DIV": "'/'",
    "REM": "'%'",
    "AND": "'&'",
    "OR": "'|'",
    "XOR": "'^'",
    "SHL": "'<<'",
    "SHR": "'>>'",
    "MAX": "pt.maximum",
    "MIN": "pt.minimum",
}
#: kinds where swapping the operands gives the same bits (IEEE add/mul, TMAX/TMIN rules)
COMMUTATIVE = frozenset({"ADD", "MUL", "MAX", "MIN", "AND", "OR", "XOR"})
#: kinds that have TROWEXPAND<kind> / TCOLEXPAND<kind> forms
EXPANDABLE = frozenset({"ADD", "SUB", "MUL", "DIV", "MAX", "MIN"})

_CMP_SYMBOL = {"lt": "'<'", "le": "'<='", "gt": "'>'", "ge": "'>='", "eq": "'=='", "ne": "'!='"}


def broadcast_shape(fn: str, a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int]:
    """numpy's rule for two (rows, cols) shapes, or a diagnostic naming both."""
    out = []
    for x, y in zip(a, b):
        if x != y and 1 not in (x, y):
            fail(
                f"shape mismatch in {fn}: {a} and {b} cannot be broadcast together",
                "operands need equal shapes, or one of them is (rows, 1), (1, cols) or a "
                "Python scalar",
            )
        out.append(max(x, y))
    return (out[0], out[1])


def broadcast_to(t: Tile, shape: tuple[int, int], fn: str = "pt.broadcast_to") -> Tile:
    """``t`` repeated to ``shape``: a (R, 1) column with TROWEXPAND, a (1, C) row with
    TCOLEXPAND (a (1, 1) tile takes both)."""
    t = as_tile(t, fn)
    r, c = t.shape
    rows, cols = shape
    if broadcast_shape(fn, t.shape, shape) != tuple(shape):
        fail(f"{fn}: a {t.shape} tile cannot be broadcast to {tuple(shape)}")
    if c != cols:  # a column (or a single element) spreads along its rows
        check_type(fn, red.RowExpandOp.MNEMONIC, t.dtype)
        t = emit_tile(fn, red.RowExpandOp(t.value, TileType(t.type.dtype, (r, cols))))
    if r != rows:
        check_type(fn, red.ColExpandOp.MNEMONIC, t.dtype)
        t = emit_tile(fn, red.ColExpandOp(t.value, TileType(t.type.dtype, (rows, cols))))
    return t


def _full_like(fn: str, value: Any, like: Tile) -> Tile:
    from .elementwise import full

    scalar_for(fn, like.dtype, value)
    return full(like.shape, value, like.dtype)


def _run_scalar(kind: str, a: Any, b: Any, fn: str) -> Tile:
    """``t <kind> s`` with a run-time scalar ``s`` (the tile-scalar form reading the
    parameter's register)."""
    from .control import RunScalar

    if isinstance(a, RunScalar) and isinstance(b, RunScalar):
        fail(f"{fn} needs a tile operand, not two run-time scalars")
    if isinstance(a, RunScalar):
        if kind not in COMMUTATIVE:
            fail(
                f"{fn}: the run-time scalar is the left operand of a non-commutative "
                "operation, which has no tile-scalar form",
                "rewrite it with the tile on the left (s - t = -(t - s)), or load the "
                "value as a tile",
            )
        a, b = b, a
    s = b
    t = as_tile(a, fn, "the tile operand")
    if t.dtype != s.dtype:
        fail(
            f"{fn}: the run-time scalar is {s.dtype.name} and the tile {t.dtype.name}",
            f"convert the tile: pt.cast(t, ptoc.{s.dtype.name})",
        )
    check_type(fn, f"T{kind}S", t.dtype)
    return emit_tile(fn, _SCALAR[f"T{kind}S"](t.value, s.value))


def binary(kind: str, a: Any, b: Any, fn: str | None = None) -> Tile:
    """``a <kind> b`` for kind ADD, SUB, MUL, DIV, REM, AND, OR, XOR, SHL, SHR, MAX, MIN."""
    fn = fn or SYMBOL[kind]
    from .control import Index, RunScalar, extreme

    tiles = isinstance(a, Tile) or isinstance(b, Tile)
    runtime = (Index, RunScalar)
    if (
        kind in ("MIN", "MAX")
        and not tiles
        and (isinstance(a, runtime) or isinstance(b, runtime))
    ):
        return extreme(kind, a, b, fn)  # type: ignore[no-any-return]  # run-time scalars
    if isinstance(a, RunScalar) or isinstance(b, RunScalar):
        return _run_scalar(kind, a, b, fn)
    if is_scalar(a) and is_scalar(b):
        fail(f"{fn} needs at least one tile operand, not two numbers")
    if is_scalar(b):
        t = as_tile(a, fn, "the left operand")
        check_type(fn, f"T{kind}S", t.dtype)
        s = scalar_for(fn, t.dtype, b)
        return emit_tile(fn, _SCALAR[f"T{kind}S"](t.value, s))
    if is_scalar(a):
        t = as_tile(b, fn, "the right operand")
        if kind in COMMUTATIVE:
            return binary(kind, t, a, fn)
        a = _full_like(fn, a, t)  # s - t: no reversed selector, so materialize s
    ta = as_tile(a, fn, "the left operand")
    tb = as_tile(b, fn, "the right operand")
    same_type(fn, ta, tb)
    shape = broadcast_shape(fn, ta.shape, tb.shape)
    if ta.shape == tb.shape:
        check_type(fn, f"T{kind}", ta.dtype)
        return emit_tile(fn, _BINARY[f"T{kind}"](ta.value, tb.value))
    if kind in EXPANDABLE:
        if ta.shape == shape and (axis := _bcast_axis(tb.shape, shape)):
            return _expand_op(fn, kind, axis, ta, tb)
        if tb.shape == shape and kind in COMMUTATIVE and (axis := _bcast_axis(ta.shape, shape)):
            return _expand_op(fn, kind, axis, tb, ta)
    ta, tb = broadcast_to(ta, shape, fn), broadcast_to(tb, shape, fn)
    check_type(fn, f"T{kind}", ta.dtype)
    return emit_tile(fn, _BINARY[f"T{kind}"](ta.value, tb.value))


def _bcast_axis(small: tuple[int, int], shape: tuple[int, int]) -> str | None:
    """ROW when ``small`` is a (R, 1) column of ``shape``, COL for a (1, C) row."""
    if small == (shape[0], 1):
        return "ROW"
    if small == (1, shape[1]):
        return "COL"
    return None


def _expand_op(fn: str, kind: str, axis: str, full: Tile, bcast: Tile) -> Tile:
    mnemonic = f"T{axis}EXPAND{kind}"
    check_type(fn, mnemonic, full.dtype)
    return emit_tile(fn, _EXPAND[mnemonic](full.value, bcast.value))


def compare(mode: str, a: Any, b: Any, fn: str | None = None) -> Tile:
    """The predicate tile ``a <mode> b`` (TCMP, or TCMPS against a number)."""
    fn = fn or _CMP_SYMBOL[mode]
    cmode = CMode(mode)
    ta = as_tile(a, fn, "the left operand")
    if is_scalar(b):
        check_type(fn, ew.CmpsOp.MNEMONIC, ta.dtype)
        s = scalar_for(fn, ta.dtype, b)
        return emit_tile(fn, ew.CmpsOp(cmode, ta.value, s))
    tb = as_tile(b, fn, "the right operand")
    same_type(fn, ta, tb)
    shape = broadcast_shape(fn, ta.shape, tb.shape)
    ta, tb = broadcast_to(ta, shape, fn), broadcast_to(tb, shape, fn)
    check_type(fn, ew.CmpOp.MNEMONIC, ta.dtype)
    return emit_tile(fn, ew.CmpOp(cmode, ta.value, tb.value))


#: what ``ptoc.lang`` exports from this module
__all__ = [
    "broadcast_to",
]
