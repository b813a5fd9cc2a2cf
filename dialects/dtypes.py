"""Element DataTypes as an xDSL attribute, shared by the ``tile`` and ``pto`` dialects.

The names are the catalog's DataType names (``FP32``, ``BF16``, ``S8``, ...), so IR text
reads like bundle text. ``PRED`` is the one addition: the packed one-bit predicate that
TCMP/TCMPS produce and TSEL/TSELS consume, which has no DataType code of its own.
"""

from __future__ import annotations

from enum import StrEnum

import numpy as np
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import SpacedOpaqueSyntaxAttribute
from xdsl.irdl import irdl_attr_definition

from ptoc.backend.isa import DataType, info

#: Every catalog DataType name, plus PRED.
DType = StrEnum("DType", [(d.name, d.name) for d in DataType] + [("PRED", "PRED")])  # type: ignore[misc]


@irdl_attr_definition
class DTypeAttr(EnumAttribute[DType], SpacedOpaqueSyntaxAttribute):  # type: ignore[valid-type]
    """An element DataType: ``#tile.dtype FP32`` standalone, ``FP32`` inside types."""

    name = "tile.dtype"


def dtype_attr(dt: DataType | str | DType) -> DTypeAttr:
    """The attribute of a DataType, a DType or a name."""
    name = dt.name if isinstance(dt, DataType) else str(dt)
    return DTypeAttr(DType(name))


def is_pred(dt: DTypeAttr | DType | str) -> bool:
    value = dt.data if isinstance(dt, DTypeAttr) else dt
    return str(value) == "PRED"


def data_type(dt: DTypeAttr | DType | str) -> DataType:
    """The catalog DataType of a (non-predicate) element type."""
    value = dt.data if isinstance(dt, DTypeAttr) else dt
    return DataType[str(value)]


def element_bits(dt: DTypeAttr | DType | str) -> int:
    """Bits per element: the DataType width, 1 for predicates."""
    return 1 if is_pred(dt) else info(data_type(dt)).bits


def carrier(dt: DTypeAttr | DType | str) -> np.dtype:
    """The numpy dtype that holds one element in reference arrays (bool for PRED)."""
    return np.dtype(bool) if is_pred(dt) else info(data_type(dt)).carrier
