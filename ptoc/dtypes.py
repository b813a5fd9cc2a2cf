"""Element types of kernel tensors and tiles: ``ptoc.fp32``, ``ptoc.bf16``, ``ptoc.s8``, ...

Every element type of the one model (:mod:`ptoc.backend.isa.elements`: each catalog
DataType, and ``pred``, the one-bit predicate tile that comparisons produce and
``pt.where`` consumes) has a lower-case name here. A :class:`DType` is a thin view of an
:class:`~ptoc.backend.isa.elements.ElementType` that only adds the user-facing name and
``repr``; every fact it answers is the model's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ptoc.backend.isa import DataType
from ptoc.backend.isa.elements import ELEMENT_TYPES, ElementType


@dataclass(frozen=True)
class DType:
    """An element type as kernels name it: ``name`` (``fp32``) and the model ``element``."""

    name: str
    element: ElementType

    @property
    def datatype(self) -> DataType | None:
        """The catalog DataType (None for ``pred``)."""
        return self.element.datatype

    @property
    def catalog_name(self) -> str:
        """The name used in IR and bundle text (``FP32``), ``PRED`` for predicates."""
        return self.element.name

    @property
    def bits(self) -> int:
        return self.element.bits

    @property
    def carrier(self) -> np.dtype:
        """The numpy dtype holding one element in input and output arrays."""
        return self.element.carrier

    @property
    def is_float(self) -> bool:
        return self.element.is_float

    @property
    def is_int(self) -> bool:
        return self.element.is_int

    def __repr__(self) -> str:
        return f"ptoc.{self.name}"

    __str__ = __repr__


#: every element type by its ``ptoc`` name, in DataType code order, then ``pred``
DTYPES: dict[str, DType] = {
    e.name.lower(): DType(e.name.lower(), e) for e in ELEMENT_TYPES.values()
}

_BY_CATALOG = {d.catalog_name: d for d in DTYPES.values()}


def dtype_of(spec: Any) -> DType:
    """The DType named by a DType, a catalog DataType, or a name (``"fp32"``, ``"FP32"``).

    Raises ``KeyError`` naming the known types for anything else.
    """
    if isinstance(spec, DType):
        return spec
    if isinstance(spec, DataType):
        return DTYPES[spec.name.lower()]
    if isinstance(spec, str):
        hit = DTYPES.get(spec.lower()) or _BY_CATALOG.get(spec)
        if hit is not None:
            return hit
    raise KeyError(f"{spec!r} is not an element type (use one of {type_list(DTYPES.values())})")


def type_list(types: Any) -> str:
    """``fp32, fp16, bf16`` for an iterable of DTypes or DataTypes, in catalog code order."""
    names = [dtype_of(t) for t in types]
    order = list(DTYPES)
    return ", ".join(d.name for d in sorted(set(names), key=lambda d: order.index(d.name)))
