"""The ``xdsl.universe`` entry point: ptoc's dialects and passes for ``xdsl-opt``."""

from __future__ import annotations

from xdsl.ir import Dialect
from xdsl.passes import ModulePass
from xdsl.universe import Universe


def _tile() -> Dialect:
    from ptoc.dialects.tile import Tile

    return Tile


def _pto() -> Dialect:
    from ptoc.dialects.pto import Pto

    return Pto


def _lower_compound() -> type[ModulePass]:
    from .lower_compound import LowerCompoundPass

    return LowerCompoundPass


def _legalize() -> type[ModulePass]:
    from . import lower_compound_legalize  # noqa: F401  (the tile.view legalize rule)
    from .legalize import LegalizePass

    return LegalizePass


def _allocate() -> type[ModulePass]:
    from .allocate import AllocatePass

    return AllocatePass


def _emit() -> type[ModulePass]:
    from .emit import EmitPass

    return EmitPass


PASSES = {
    "ptoc-lower-compound": _lower_compound,
    "ptoc-legalize": _legalize,
    "ptoc-allocate": _allocate,
    "ptoc-emit": _emit,
}

PTOC_UNIVERSE = Universe(
    all_dialects={"tile": _tile, "pto": _pto},
    all_passes=PASSES,
)
