"""Tiles whose valid row count is a run-time integer (ragged tails, DECISIONS D12).

``tile.load %x[...] rows %n`` reads only the first ``n`` rows of its window (``n`` an
``i64``, at most the tile's rows): the tile's extent stays static -- it is the storage the
allocator plans -- but only ``n`` rows are valid, and every bundle computing on it runs
with ``B.DIM n, ->LB1`` (the register form). The count travels with the data: an
elementwise, comparison, selection, conversion, row-reduction or expansion op of such a
tile has the same count; a column reduction folds the valid rows into one static row; a
store writes the valid rows. Mixing two tiles with different counts, or a counted tile
with a static one of several rows, is not an operation the machine has (a bundle's
sources share its valid shape), so the DSL refuses it; other op families do not take
counted tiles.

:func:`result_count` is the one rule, used while tracing and again by
:func:`valid_counts` over a finished kernel (``legalize``).
"""

from __future__ import annotations

from collections.abc import Mapping

from xdsl.ir import Operation, SSAValue

from .tile_compare import CmpOp, CmpsOp, SelOp, SelsOp
from .tile_elementwise import BinaryOp, CvtOp, FmaOp, ScalarOp, UnaryOp
from .tile_memory import LoadOp, StoreOp
from .tile_reduce import ExpandBinaryOp, ExpandCopyOp, ExpdifOp, ReduceOp
from .tile_types import TileType

#: op families whose bundles run over the valid rows of their operands
COUNTED = (
    BinaryOp,
    UnaryOp,
    ScalarOp,
    FmaOp,
    CvtOp,
    CmpOp,
    CmpsOp,
    SelOp,
    SelsOp,
    ReduceOp,
    ExpandBinaryOp,
    ExpandCopyOp,
    ExpdifOp,
)


def operand_counts(op: Operation, counts: Mapping[SSAValue, SSAValue]) -> list[SSAValue]:
    """The distinct run-time row counts of ``op``'s tile operands."""
    out: list[SSAValue] = []
    for v in op.operands:
        c = counts.get(v)
        if c is not None and all(c is not o for o in out):
            out.append(c)
    return out


def op_count(op: Operation, counts: Mapping[SSAValue, SSAValue]) -> SSAValue | None:
    """The run-time row count ``op``'s bundles run with (None: static)."""
    if isinstance(op, LoadOp):
        return op.valid_rows
    found = operand_counts(op, counts)
    return found[0] if found else None


def result_count(op: Operation, counts: Mapping[SSAValue, SSAValue]) -> SSAValue | None:
    """The run-time row count of ``op``'s tile results (None: static rows)."""
    if isinstance(op, LoadOp):
        return op.valid_rows
    if isinstance(op, ReduceOp) and not op.ROW:
        return None  # the valid rows fold into one
    return op_count(op, counts) if isinstance(op, COUNTED) else None


def valid_counts(root: Operation) -> dict[SSAValue, SSAValue]:
    """Every tile value under ``root`` with a run-time row count -> that count."""
    counts: dict[SSAValue, SSAValue] = {}
    for op in root.walk():
        c = result_count(op, counts)
        if c is not None:
            for r in op.results:
                if isinstance(r.type, TileType):
                    counts[r] = c
    return counts


def refusal(op: Operation, counts: Mapping[SSAValue, SSAValue]) -> str | None:
    """Why ``op`` cannot take its operands' run-time row counts (None: it can)."""
    found = operand_counts(op, counts)
    if not found:
        return None
    if not isinstance(op, (*COUNTED, StoreOp)):
        return "does not take tiles with a run-time number of valid rows"
    if len(found) > 1:
        return "mixes tiles with different run-time numbers of valid rows"
    for v in op.operands:
        t = v.type
        if isinstance(t, TileType) and v not in counts and t.extent[0] > 1:
            return (
                f"mixes a tile with a run-time number of valid rows and a {t.extent[0]}-row "
                "tile whose rows are all valid"
            )
    return None


__all__ = ["COUNTED", "op_count", "operand_counts", "refusal", "result_count", "valid_counts"]
