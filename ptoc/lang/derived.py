"""The ``ptoc.lang`` functions that are one operation each, derived from the operation
table: every row with a ``lang`` name in a family of :data:`FAMILIES` gets its function.
A unary function or reduction ``pt.<lang>(t)`` checks the row's DataTypes and records
its op; a binary one ``pt.<lang>(a, b)`` is :func:`ptoc.lang.arith.binary` of the row's
arithmetic kind, which broadcasts a scalar, column or row operand onto the tile-scalar
or expansion form of the same kind, like the Python operators.

Adding such an operation to the table adds its function, its ``__all__`` entry and its
reference-page entry; only the docstring below is written by hand (the catalog summary
stands in when there is none).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType

from ptoc.backend.isa import OpRow, TileFamily, rows
from ptoc.dialects.tile import OP_CLASS

from ..tile import Tile
from ._core import as_tile, check_type, emit_tile
from .arith import binary

#: the families whose ``lang`` functions are derived, and the reference-page section
FAMILIES: Mapping[TileFamily, str] = MappingProxyType(
    {TileFamily.BINARY: "arith", TileFamily.UNARY: "elementwise", TileFamily.REDUCE: "reduce"}
)

#: binary kinds whose operands are integers (annotated ``Tile | int``)
_INTEGER_KINDS = frozenset({"and", "or", "xor", "shl", "shr"})

#: the name diagnostics give a function when it is reached through an operator
_LABELS = {"bitwise_not": "'~'"}

#: docstrings by ``lang`` name
DOCS: Mapping[str, str] = MappingProxyType(
    {
        "add": "``a + b`` (TADD; integers wrap).",
        "sub": "``a - b`` (TSUB).",
        "mul": "``a * b`` (TMUL).",
        "div": "``a / b`` (TDIV; an integer zero divisor is a machine fault).",
        "rem": "``a % b`` (TREM).",
        "bitwise_and": "``a & b`` on integer tiles (TAND; TANDS against a scalar).",
        "bitwise_or": "``a | b`` on integer tiles (TOR; TORS against a scalar).",
        "bitwise_xor": "``a ^ b`` on integer tiles (TXOR; TXORS against a scalar).",
        "shl": "``a << b`` (TSHL: shifts by the low log2(width) bits of ``b``).",
        "shr": "``a >> b`` (TSHR: arithmetic on signed types).",
        "maximum": "Elementwise maximum (TMAX; TROWEXPANDMAX/TCOLEXPANDMAX/TMAXS when "
        "broadcasting).\n\nOne NaN selects the number, two NaNs give the canonical NaN, "
        "max(+0, -0) = +0. Of two run-time integers (or one and a Python int): their "
        "signed maximum, a run-time integer (MAX).",
        "minimum": "Elementwise minimum (TMIN and its broadcast forms); min(+0, -0) = -0. "
        "Of two run-time integers (or one and a Python int): their signed minimum, a "
        "run-time integer (MIN) -- ``pt.minimum(rows - r, BLOCK)`` is the size of a tail.",
        "abs": "``|t|`` (TABS; floats clear the sign bit).",
        "bitwise_not": "``~t`` on integer tiles (TNOT).",
        "neg": "``-t`` (TNEG; integers wrap, floats flip the sign bit).",
        "exp": "``e ** t`` elementwise (TEXP; computed in FP64 and rounded once).",
        "log": "Natural logarithm (TLOG).",
        "recip": "``1 / t`` (TRECIP).",
        "sqrt": "Square root, correctly rounded (TSQRT).",
        "rsqrt": "``1 / sqrt(t)`` (TRSQRT).",
        "relu": "``max(t, 0)``; negative numbers and -0 give +0 (TRELU).",
        "row_sum": "Sum of each row: (R, C) -> (R, 1) (TROWSUM).",
        "row_max": "Maximum of each row, TMAX's NaN and signed-zero rules (TROWMAX).",
        "row_min": "Minimum of each row (TROWMIN).",
        "row_prod": "Product of each row (TROWPROD).",
        "row_argmax": "Column index (u32) of each row's first maximum (TROWARGMAX).",
        "row_argmin": "Column index (u32) of each row's first minimum (TROWARGMIN).",
        "col_sum": "Sum of each column: (R, C) -> (1, C) (TCOLSUM).",
        "col_max": "Maximum of each column (TCOLMAX).",
        "col_min": "Minimum of each column (TCOLMIN).",
        "col_prod": "Product of each column (TCOLPROD).",
        "col_argmax": "Row index (u32) of each column's first maximum (TCOLARGMAX).",
        "col_argmin": "Row index (u32) of each column's first minimum (TCOLARGMIN).",
    }
)


def _binary(r: OpRow, label: str) -> Callable[..., Tile]:

    kind = (r.arith or "").upper()

    def function(a: Tile | float, b: Tile | float) -> Tile:
        return binary(kind, a, b, label)

    if r.arith in _INTEGER_KINDS:
        function.__annotations__ = {"a": "Tile | int", "b": "Tile | int", "return": "Tile"}
    return function


def _one_tile(r: OpRow, label: str) -> Callable[..., Tile]:
    mnemonic, cls = r.mnemonic, OP_CLASS[r.mnemonic]

    def function(t: Tile) -> Tile:
        t = as_tile(t, label)
        check_type(label, mnemonic, t.dtype)
        return emit_tile(label, cls(t.value))  # type: ignore[call-arg]

    return function


def _function(r: OpRow) -> Callable[..., Tile]:
    assert r.lang is not None
    label = _LABELS.get(r.lang, f"pt.{r.lang}")
    function = _binary(r, label) if r.tile is TileFamily.BINARY else _one_tile(r, label)
    function.__name__ = function.__qualname__ = r.lang
    function.__doc__ = DOCS.get(r.lang, f"{r.op.summary} ({r.mnemonic}).")
    function.__module__ = __name__
    return function


#: the derived rows, in catalog order
ROWS: tuple[OpRow, ...] = tuple(r for f in FAMILIES for r in rows(tile=f) if r.lang)

#: ``lang`` name -> function, in catalog order
DERIVED: Mapping[str, Callable[..., Tile]] = MappingProxyType(
    {r.lang: _function(r) for r in ROWS if r.lang is not None}
)
