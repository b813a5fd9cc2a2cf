"""The ``tile`` dialect: value-semantics tile IR with a numpy reference per op.

Ops are grouped by concern in ``tile_elementwise``, ``tile_reduce``, ``tile_irregular``,
``tile_fill``, ``tile_quant`` and ``tile_memory``; this module assembles them into
:data:`Tile`.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from xdsl.ir import Dialect

from .compound_ops import COMPOUND_DIALECT_OPS
from .dtypes import DTypeAttr
from .modes import CModeAttr, RModeAttr
from .scalars import CoreOp, FloatOp, IntToFloatOp, LoadScalarOp
from .tile_base import CompoundTileOp, RefEnv, ScalarAttr, TileOp
from .tile_elementwise import BINARY_OPS, OTHER_ELEMENTWISE_OPS, SCALAR_OPS, UNARY_OPS
from .tile_fill import FILL_OPS
from .tile_irregular import IRREGULAR_OPS
from .tile_matmul import MATMUL_OPS
from .tile_memory import MEMORY_OPS, PES_ATTR, LoadOp, StoreOp, kernel_pes
from .tile_quant import QUANT_OPS
from .tile_reduce import REDUCE_EXPAND_OPS
from .tile_types import LayoutAttr, TensorType, TileType

__all__ = [
    "ALL_TILE_OPS",
    "OP_CLASS",
    "PES_ATTR",
    "CompoundTileOp",
    "LoadOp",
    "RefEnv",
    "StoreOp",
    "Tile",
    "TileOp",
    "kernel_pes",
]

#: every op class of the dialect, in a stable order
ALL_TILE_OPS: tuple[type[TileOp], ...] = (
    *BINARY_OPS,
    *UNARY_OPS,
    *SCALAR_OPS,
    *OTHER_ELEMENTWISE_OPS,
    *REDUCE_EXPAND_OPS,
    *IRREGULAR_OPS,
    *FILL_OPS,
    *QUANT_OPS,
    *MATMUL_OPS,
    *MEMORY_OPS,
    *COMPOUND_DIALECT_OPS,
)

Tile = Dialect(
    "tile",
    [*ALL_TILE_OPS, LoadScalarOp, CoreOp, FloatOp, IntToFloatOp],
    [TileType, TensorType, DTypeAttr, LayoutAttr, CModeAttr, RModeAttr, ScalarAttr],
)

#: the op class of every catalog operation the dialect models, by mnemonic
OP_CLASS: Mapping[str, type[TileOp]] = MappingProxyType(
    {c.MNEMONIC: c for c in ALL_TILE_OPS if c.MNEMONIC is not None}
)
