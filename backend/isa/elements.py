"""Element types: what one element of a tile or tensor is -- a catalog DataType, or the
packed one-bit predicate.

This is the one element-type model of ptoc. The ``tile``/``pto`` dialect attribute
(``ptoc.dialects.dtypes.DTypeAttr``) and the user objects ``ptoc.fp32``, ``ptoc.pred``
(``ptoc.dtypes``) are views of it; the predicate's special case (one bit, no DataType
code, a bool carrier) is written here and nowhere else.

``PRED`` is what TCMP/TCMPS produce and TSEL/TSELS consume: one bit per element, packed,
with no code of its own in the 5-bit DataType field.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .datatypes import DataType, DTypeInfo, info

#: the name of the predicate element type (IR and bundle text)
PRED_NAME = "PRED"


@dataclass(frozen=True)
class ElementType:
    """One element type: ``datatype`` is its catalog DataType, None for the predicate."""

    datatype: DataType | None

    @property
    def is_pred(self) -> bool:
        """True for the packed one-bit predicate."""
        return self.datatype is None

    @property
    def name(self) -> str:
        """The catalog name used in IR and bundle text: ``FP32``, ``S4X2``, ``PRED``."""
        return PRED_NAME if self.datatype is None else self.datatype.name

    @property
    def info(self) -> DTypeInfo | None:
        """The catalog facts of the DataType (None for the predicate)."""
        return None if self.datatype is None else info(self.datatype)

    @property
    def bits(self) -> int:
        """Bits per element: the DataType width, 1 for the predicate."""
        return 1 if self.datatype is None else info(self.datatype).bits

    @property
    def carrier(self) -> np.dtype:
        """The numpy dtype that holds one element in reference and user arrays (bool for
        the predicate)."""
        return np.dtype(bool) if self.datatype is None else info(self.datatype).carrier

    @property
    def is_float(self) -> bool:
        return self.datatype is not None and info(self.datatype).is_float

    @property
    def is_int(self) -> bool:
        return self.datatype is not None and info(self.datatype).is_int

    def storage_bytes(self, elements: int) -> int:
        """Bit-packed storage of ``elements`` elements."""
        return (elements * self.bits + 7) // 8


#: every element type by its catalog name, in DataType code order, then PRED
ELEMENT_TYPES: dict[str, ElementType] = {d.name: ElementType(d) for d in DataType}
ELEMENT_TYPES[PRED_NAME] = ElementType(None)
#: the packed one-bit predicate
PRED = ELEMENT_TYPES[PRED_NAME]


def element_type(spec: Any) -> ElementType:
    """The element type of an ElementType, a DataType or a catalog name (``"FP32"``,
    ``"PRED"``; any object whose ``str`` is one, such as the dialect's enum members).
    KeyError for anything else."""
    if isinstance(spec, ElementType):
        return spec
    if isinstance(spec, DataType):
        return ELEMENT_TYPES[spec.name]
    return ELEMENT_TYPES[str(spec)]
