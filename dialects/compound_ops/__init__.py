"""The compound ops of the ``tile`` dialect: one op per compound interface of
``docs/compound.md``, each defined by its ``compound_ref`` reference semantics, plus
``tile.view`` (a byte-exact reshape/bitcast through a GM scratch area) that their
lowerings use. ``ptoc-lower-compound`` rewrites every compound op into direct ops.
"""

from __future__ import annotations

from ..tile_base import TileOp
from ._common import CompoundOp
from .gather import (
    GATHER_OPS,
    GatherBlocksOp,
    GatherFlatOp,
    GatherPatternOp,
    ScatterFlatOp,
    TransposeOp,
)
from .partial import PARTIAL_OPS, PartialOp
from .quant import QUANT_OPS, DequantizeMxOp, DequantizeRowsOp, QuantizeMxOp, QuantizeRowsOp
from .sorting import (
    SORTING_OPS,
    MergeBlocksOp,
    MergeSortedOp,
    PackRecordsOp,
    Sort32Op,
    UnpackRecordsOp,
)
from .view import ViewOp

#: every compound op class, in a stable order
COMPOUND_OPS: tuple[type[CompoundOp], ...] = (
    *SORTING_OPS,
    *GATHER_OPS,
    *QUANT_OPS,
    *PARTIAL_OPS,
)

#: the ops this package adds to the ``tile`` dialect
COMPOUND_DIALECT_OPS: tuple[type[TileOp], ...] = (*COMPOUND_OPS, ViewOp)

__all__ = [
    "COMPOUND_DIALECT_OPS",
    "COMPOUND_OPS",
    "CompoundOp",
    "DequantizeMxOp",
    "DequantizeRowsOp",
    "GatherBlocksOp",
    "GatherFlatOp",
    "GatherPatternOp",
    "MergeBlocksOp",
    "MergeSortedOp",
    "PackRecordsOp",
    "PartialOp",
    "QuantizeMxOp",
    "QuantizeRowsOp",
    "ScatterFlatOp",
    "Sort32Op",
    "TransposeOp",
    "UnpackRecordsOp",
    "ViewOp",
]
