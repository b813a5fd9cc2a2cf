"""Element types of kernel tensors and tiles: ``ptoc.fp32``, ``ptoc.bf16``, ``ptoc.s8``, ...

Every DataType of the instruction catalog has a lower-case name here, generated from
:class:`ptoc.backend.isa.DataType` so the two can never disagree. ``pred`` is the one
addition: the one-bit predicate tile that comparisons produce and ``pt.where`` consumes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ptoc.backend.isa import DataType, info


@dataclass(frozen=True)
class DType:
    """An element type. ``datatype`` is the catalog DataType (None for ``pred``)."""

    name: str
    datatype: DataType | None

    @property
    def catalog_name(self) -> str:
        """The name used in IR and bundle text (``FP32``), ``PRED`` for predicates."""
        return "PRED" if self.datatype is None else self.datatype.name

    @property
    def bits(self) -> int:
        return 1 if self.datatype is None else info(self.datatype).bits

    @property
    def carrier(self) -> np.dtype:
        """The numpy dtype holding one element in input and output arrays."""
        return np.dtype(bool) if self.datatype is None else info(self.datatype).carrier

    @property
    def is_float(self) -> bool:
        return self.datatype is not None and info(self.datatype).is_float

    @property
    def is_int(self) -> bool:
        return self.datatype is not None and info(self.datatype).is_int

    def __repr__(self) -> str:
        return f"ptoc.{self.name}"

    __str__ = __repr__


#: every element type by its ``ptoc`` name, in DataType code order, then ``pred``
DTYPES: dict[str, DType] = {d.name.lower(): DType(d.name.lower(), d) for d in DataType}
DTYPES["pred"] = DType("pred", None)

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
