"""Element types as an xDSL attribute, shared by the ``tile`` and ``pto`` dialects.

The attribute wraps the one element-type model, :class:`ptoc.backend.isa.elements.
ElementType`: its names are the catalog's DataType names (``FP32``, ``BF16``, ``S8``, ...)
plus ``PRED``, so IR text reads like bundle text. The helpers below read every fact
(bits, carrier, whether it is the predicate) from that model.
"""

from __future__ import annotations

from enum import StrEnum
from functools import cache

import numpy as np
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import SpacedOpaqueSyntaxAttribute
from xdsl.irdl import irdl_attr_definition

from ptoc.backend.isa import DataType
from ptoc.backend.isa.elements import ELEMENT_TYPES, ElementType, element_type

#: Every element type by its catalog name (the DataTypes, then PRED).
DType = StrEnum("DType", [(name, name) for name in ELEMENT_TYPES])  # type: ignore[misc]


@irdl_attr_definition
class DTypeAttr(EnumAttribute[DType], SpacedOpaqueSyntaxAttribute):  # type: ignore[valid-type]
    """An element type: ``#tile.dtype FP32`` standalone, ``FP32`` inside types."""

    name = "tile.dtype"

    @property
    def element(self) -> ElementType:
        """The element type this attribute names."""
        return ELEMENT_TYPES[self.data]  # a DType member is its name (a StrEnum)


@cache
def dtype_attr(dt: DataType | ElementType | str | DType) -> DTypeAttr:
    """The attribute of an element type, a DataType, a DType or a name (cached:
    attributes are immutable, and legalize asks for one per bundle)."""
    return DTypeAttr(DType(element_type(dt).name))


def element_of(dt: DTypeAttr | ElementType | DType | str) -> ElementType:
    """The element type of an attribute, a DType or a catalog name."""
    # the attribute first, without a property call: allocation asks per queue entry
    return ELEMENT_TYPES[dt.data] if type(dt) is DTypeAttr else _element_of(dt)


def _element_of(dt: DTypeAttr | ElementType | DType | str) -> ElementType:
    return dt.element if isinstance(dt, DTypeAttr) else element_type(dt)


def is_pred(dt: DTypeAttr | DType | str) -> bool:
    return element_of(dt).datatype is None


def data_type(dt: DTypeAttr | DType | str) -> DataType:
    """The catalog DataType of a (non-predicate) element type."""
    d = element_of(dt).datatype
    if d is None:
        raise KeyError("PRED has no DataType")
    return d


def element_bits(dt: DTypeAttr | DType | str) -> int:
    """Bits per element: the DataType width, 1 for predicates."""
    return element_of(dt).bits


def carrier(dt: DTypeAttr | DType | str) -> np.dtype:
    """The numpy dtype that holds one element in reference arrays (bool for PRED)."""
    return element_of(dt).carrier
