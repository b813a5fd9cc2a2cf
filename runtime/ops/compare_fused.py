"""The fused forms of the comparisons that publish a predicate tile (TCMP, TCMPS).

Their destination copies the first source's Rows/Col/valid shape
(``ResolveBundlePredicateDestination``), so its descriptor is known only once a bundle
has run: the generic runner remembers it per source geometry (``common.predicate_slot``)
and the fused form uses what it remembered. Anything it has not seen, or anything
unusual, returns False before any effect and the generic path runs (and raises).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ptoc.backend.isa import DataType
from ptoc.backend.isa.semantics.core import SemanticError, scalar_operand

from ..alloc import Dests, Slot
from ..bundle import BundlePlan
from ..engine import Fused, fused_sources, geometry, gpr_words, push_fused, region, tile_builder
from ..faults import MachineFault
from ..spec import Shape
from ..state import MachineState
from ..tiles import Tile
from .common import ENCODING_TYPES, RM, invalid_encoding

#: a fused form's constructor of its destination tile (``engine.tile_builder``)
Builder = Callable[[MachineState, np.ndarray], Tile]


def fused_compare(
    sem: Callable[..., tuple[np.ndarray, np.ndarray]],
    dt: DataType,
    shape: Shape,
    mask: int,
    cmode: object,
    pad: int,
    name: str,
    predicates: dict[tuple[int, ...], Dests],
    scalar: bool,
) -> Fused:
    """The fused form of TCMP (two sources; ``scalar`` False) or TCMPS (one source and
    the B.IOR RegSrc0 scalar): ``sem(dt, a, b_or_scalar, cmode)`` into the predicate
    destination the generic runner remembered in ``predicates`` for the first source's
    geometry. The sources must be fully defined row-major ``dt`` tiles of ``shape``
    (TCMP: of one physical Rows); ``dt``'s encoding rules are checked as the generic
    runner does (an invalid encoding returns False: the generic path raises it)."""
    want = (dt, RM, shape.valid_rows, shape.valid_cols, shape.cols)
    vr, vc = shape.valid_rows, shape.valid_cols
    enc = dt in ENCODING_TYPES
    nsources = 1 if scalar else 2
    #: (machine PEs, id of a remembered slot) -> the slot and its tile builder
    builders: dict[
        tuple[int, int], tuple[Slot, Callable[[MachineState, np.ndarray], Tile]]
    ] = {}

    def fused(state: MachineState, plan: BundlePlan) -> bool:
        npes = state.config.pes
        pes, p, pidx, pkey = geometry(mask, npes)
        if pes[-1] >= npes or len(plan.source_pos) != nsources:
            return False
        srcs = fused_sources(state, plan, mask)
        if srcs is None:
            return False
        a = srcs[0]
        k = a.key
        if k[:5] != want or not k[6]:
            return False
        dests = predicates.get((mask, a.rows, a.cols, vr, vc))
        if dests is None:  # not seen yet: the generic runner allocates (or faults)
            return False
        va = region(a, pidx, pkey)
        if scalar:
            other = gpr_words(state, plan, 0, 0, p, pidx, pkey)
            if enc and invalid_encoding(dt, scalar_operand(dt, other)):
                return False
        else:
            b = srcs[1]
            if b.key != k:  # (the same descriptor: of one physical Rows too)
                return False
            other = region(b, pidx, pkey)
            if enc and invalid_encoding(dt, other):
                return False
        if enc and invalid_encoding(dt, va):
            return False
        try:
            res, st = sem(dt, va, other, cmode)
        except (MachineFault, SemanticError):
            return False  # nothing has changed: the generic path raises it in order
        slot = dests.slots[0]
        known = builders.get((npes, id(slot)))
        if known is None or known[0] is not slot:
            if len(builders) >= 16:  # (slots of other source geometries: bounded)
                builders.clear()
            known = builders[(npes, id(slot))] = (
                slot,
                tile_builder(npes, name, slot, pad, pes),
            )
        return push_fused(state, slot.hand, known[1](state, res), st, pidx, p)

    return fused
