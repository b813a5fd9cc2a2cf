"""Operation handlers, one module per family, and the registry that names them.

Each handler is a *preparer*: given the static :class:`~ptoc.runtime.spec.Spec` of a
bundle it performs every check that depends only on the header (cached per bundle plan
and LB tuple) and returns a *runner* that reads the sources, allocates the destinations
and calls the ``ptoc.backend.isa.semantics`` function of the operation. Which preparer
runs an operation is its operation-table row's ``executor``. Each family module states
its own ``PREPARERS`` beside the preparers it defines; :data:`PREPARERS` is their union
(an executor kind claimed twice is an error at import).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from ptoc.backend.isa import Executor

from ..engine import Preparer
from . import cube, elementwise, irregular, layout, memory, reduce, tile_scalar

#: the family modules, each with its ``PREPARERS``
FAMILIES = (elementwise, tile_scalar, reduce, layout, irregular, memory, cube)


def _union() -> Mapping[Executor, Preparer]:
    merged: dict[Executor, Preparer] = {}
    for family in FAMILIES:
        for kind, preparer in family.PREPARERS.items():
            if kind in merged:
                raise RuntimeError(f"executor kind {kind} has two preparers")
            merged[kind] = preparer
    return MappingProxyType(merged)


#: the preparer of every executor kind (the table says which operations each runs)
PREPARERS: Mapping[Executor, Preparer] = _union()

__all__ = ["FAMILIES", "PREPARERS"]
