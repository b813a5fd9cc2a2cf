"""Ragged tiles: tiles whose valid rows or columns are a run-time count (DECISIONS D12).

``tile.load %x[...] valid [axes](%n, ...)`` reads only the first ``n`` rows (axis 0) or
columns (axis 1) of its window (``n`` an ``i64``, at most the tile's extent): the extent
stays static -- it is the storage the allocator plans -- but only that many rows or
columns are valid, and every bundle computing on the tile runs with ``B.DIM n`` in the
register form (LB1 for rows, LB0 for columns). The counts travel with the data, axis by
axis: a result keeps an operand's count on an axis where their extents agree, so
elementwise, comparison, selection and conversion ops keep both, a row reduction keeps
the row count (its columns fold into one), a column reduction the column count, and a
broadcast takes the count of the operand it expands. A store writes the valid region.

A bundle's sources share its valid shape, so on every axis the operands that span it
(extent above 1) must have one count, or all be static: two different counts, or a
counted tile with a static one spanning the same axis, is not an operation the machine
has and the DSL refuses it; op families other than :data:`COUNTED` take no ragged tile.

:func:`result_counts` is the one rule, used while tracing and again by
:func:`ragged_values` over a finished kernel (``legalize``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from xdsl.ir import Operation, SSAValue

from .tile_compare import CmpOp, CmpsOp, SelOp, SelsOp
from .tile_elementwise import BinaryOp, CvtOp, FmaOp, ScalarOp, UnaryOp
from .tile_memory import LoadOp, StoreOp
from .tile_reduce import ExpandBinaryOp, ExpandCopyOp, ExpdifOp, ReduceOp
from .tile_types import TileType

#: op families whose bundles run over the valid region of their operands
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

#: (row count, column count) of a ragged tile; None on a static axis
Counts = tuple[SSAValue | None, SSAValue | None]


def _tiles(op: Operation) -> list[tuple[SSAValue, TileType]]:
    return [(v, v.type) for v in op.operands if isinstance(v.type, TileType)]


def axis_counts(
    op: Operation, counts: Mapping[SSAValue, Counts], axis: int
) -> list[SSAValue | None]:
    """The distinct counts on ``axis`` of the operands spanning it (None: a static one)."""
    out: list[SSAValue | None] = []
    for v, t in _tiles(op):
        if t.extent[axis] <= 1:
            continue  # a broadcast along this axis: no count of its own
        c = counts.get(v, (None, None))[axis]
        if all(c is not o for o in out):
            out.append(c)
    return out


def op_counts(op: Operation, counts: Mapping[SSAValue, Counts]) -> Counts:
    """The run-time counts ``op``'s bundles run with, (rows, columns)."""
    if isinstance(op, LoadOp):
        return op.valid_count(0), op.valid_count(1)
    found = [
        next((c for v, _ in _tiles(op) if (c := counts.get(v, (None, None))[a]) is not None),
             None)
        for a in (0, 1)
    ]  # fmt: skip
    return found[0], found[1]


def result_counts(op: Operation, counts: Mapping[SSAValue, Counts]) -> Counts:
    """The run-time counts of ``op``'s tile results (both None: a static result)."""
    if isinstance(op, LoadOp):
        return op.valid_count(0), op.valid_count(1)
    counted = _COUNTED.get(type(op))
    if counted is None:
        counted = _COUNTED[type(op)] = issubclass(type(op), COUNTED)
    if not counted or not op.results:
        return None, None
    r = op.results[0].type
    if not isinstance(r, TileType):
        return None, None
    out: list[SSAValue | None] = [None, None]
    for a in (0, 1):
        for v, t in _tiles(op):
            c = counts.get(v, (None, None))[a]
            if c is not None and t.extent[a] == r.extent[a] and r.extent[a] > 1:
                out[a] = c  # the axis survives into the result
                break
    if isinstance(op, ReduceOp):  # the folded axis is one row or column
        out[1 if op.ROW else 0] = None
    return out[0], out[1]


#: whether an op class loads a tile (asked for every op of a kernel)
_LOADS: dict[type, bool] = {}

#: whether an op class is one of :data:`COUNTED` (asked for every op)
_COUNTED: dict[type, bool] = {}


def ragged_values(root: Operation) -> dict[SSAValue, Counts]:
    """Every ragged tile value under ``root`` -> its (rows, columns) counts."""
    return ragged_values_of(root.walk())


def ragged_values_of(ops: Iterable[Operation]) -> dict[SSAValue, Counts]:
    """:func:`ragged_values` of the ops of a walk (in its order), for a caller that
    walked them already."""
    counts: dict[SSAValue, Counts] = {}
    loads = _LOADS
    for op in ops:
        if not counts:
            cls = type(op)
            load = loads.get(cls)
            if load is None:  # a fact of the op class (isinstance on op classes is slow)
                load = loads[cls] = issubclass(cls, LoadOp)
            if not load:
                continue  # only a load makes a tile ragged; the others take its counts
        c = result_counts(op, counts)
        if c != (None, None):
            for r in op.results:
                if isinstance(r.type, TileType):
                    counts[r] = c
    return counts


_AXES = ("rows", "columns")


def refusal(op: Operation, counts: Mapping[SSAValue, Counts]) -> str | None:
    """Why ``op`` cannot take its operands' run-time counts (None: it can)."""
    if not any(v in counts for v in op.operands):
        return None
    if not isinstance(op, (*COUNTED, StoreOp)):
        return "does not take tiles with a run-time number of valid rows or columns"
    for a in (0, 1):
        found = axis_counts(op, counts, a)
        if len(found) > 1:
            what = _AXES[a]
            if None in found:
                return (
                    f"mixes a tile with a run-time number of valid {what} and one whose "
                    f"{what} are all valid"
                )
            return f"mixes tiles with different run-time numbers of valid {what}"
    return None


__all__ = [
    "COUNTED",
    "Counts",
    "axis_counts",
    "op_counts",
    "ragged_values",
    "ragged_values_of",
    "refusal",
    "result_counts",
]
