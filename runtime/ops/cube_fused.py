"""Fused forms (``engine.execute_untraced``) of the common CUBE bundles: the transport
load, the transport store and the plain matrix operation.

Speed only: each performs what the generic runner of :mod:`.cube` and ``engine.commit``
do on the common path -- source lookup, mask coverage, descriptor checks, capacity, the
GM probe, the computation, publication, status -- without the per-bundle context object
and without re-deriving facts that are static per bundle. Anything unusual (an empty
queue position, another source descriptor, a probe, allocation or semantic fault, a grid
launch recording its GM accesses) returns False before any effect, and the generic path
then raises whatever fault applies, in its order.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from ptoc.backend.isa import DataType
from ptoc.backend.isa import cube as isa_cube
from ptoc.backend.isa.cube import CubeLayout
from ptoc.backend.isa.fields import PAD_NULL
from ptoc.backend.isa.semantics import fpatr as sf
from ptoc.backend.isa.semantics import matmul as sm
from ptoc.backend.isa.semantics.core import SemanticError

from ..alloc import Slot
from ..bundle import BundlePlan
from ..engine import Fused, build_tile, geometry, gpr_words, or_status, region
from ..faults import MachineFault
from ..memory import footprint, gather, scatter_plan
from ..state import MachineState
from ..tiles import Layout, Tile

_Geometry = tuple[tuple[int, ...], int, slice | list[int], object]

#: a matrix bundle's source descriptors, (:attr:`Tile.key`, capacity) in stream order
Signature = tuple[tuple[tuple[object, ...], int], ...]

#: how many source signatures one matrix bundle remembers (a loop body sees few)
MAX_SIGNATURES = 8


def never(state: MachineState, plan: BundlePlan) -> bool:
    """The fused form of a bundle that always takes the generic path."""
    return False


def _geometries(mask: int) -> Callable[[int], _Geometry]:
    """``engine.geometry`` of ``mask`` per machine size, kept by the runner."""
    known: dict[int, _Geometry] = {}

    def of(npes: int) -> _Geometry:
        g = known.get(npes)
        if g is None:
            g = known[npes] = geometry(mask, npes)
        return g

    return of


def _sources(state: MachineState, plan: BundlePlan, mask: int) -> list[Tile] | None:
    """The source tiles in binding order when each queue position holds one whose
    allocation mask covers ``mask``, else None (the generic path names the fault)."""
    queues, depth = state.queues, state.config.depth
    out = []
    for h, index, _ in plan.source_pos:
        if h >= len(queues) or index > depth:
            return None
        q = queues[h]
        if index > len(q):
            return None
        t = q[index - 1]
        if t.mask & mask != mask:
            return None
        out.append(t)
    return out


def fused_load(
    plan: BundlePlan, name: str, dt: DataType, slot: Slot | str, vr: int, vc: int, pad: int,
    stride: int,
) -> Fused:  # fmt: skip
    """The fused CUBE transport load of ``vr`` x ``vc`` ``dt`` elements into ``slot``
    (padding ``pad``; ``stride``: the B.IOR stride's omission default)."""
    if isinstance(slot, str) or plan.source_pos:
        return never
    mask, hand = slot.mask, slot.hand
    geo = _geometries(mask)

    def fused(state: MachineState, plan: BundlePlan) -> bool:
        if state.access_log is not None:  # a grid launch records what it reads
            return False
        cfg = state.config
        pes, p, pidx, pkey = geo(cfg.pes)
        if pes[-1] >= cfg.pes:
            return False
        base = gpr_words(state, plan, 0, 0, p, pidx, pkey)
        step = gpr_words(state, plan, 1, stride, p, pidx, pkey)
        try:
            fp = footprint(dt, base, step, vr, vc, cfg.gm_size, name, False, pes)
        except MachineFault:
            return False
        tile = build_tile(state, name, slot, gather(state.gm, fp, dt), pad, pes, pidx,
                          numbered=False)  # fmt: skip
        if not state.push_one(hand, tile):  # capacity: the generic path raises the fault
            return False
        tile.serial = state.next_serial()
        return True

    return fused


def fused_store(
    plan: BundlePlan, name: str, dt: DataType, layout: CubeLayout, vr: int, vc: int,
    stride: int,
) -> Fused:  # fmt: skip
    """The fused CUBE transport store of a fully defined ``vr`` x ``vc`` ``dt`` source of
    ``layout`` (``stride``: the B.IOR stride's omission default)."""
    if len(plan.source_pos) != 1:
        return never
    g = isa_cube.geometry(layout, dt, vr, vc)
    want = (dt, Layout.of_cube(layout), vr, vc, g.cols, g.rows, True)
    #: source capacity -> whether the descriptor is legal there (TileCubeDescriptorLegal)
    legal: dict[int, bool] = {}
    mask = plan.mask
    geo = _geometries(mask)

    def fused(state: MachineState, plan: BundlePlan) -> bool:
        if state.access_log is not None:  # a grid launch records what it writes
            return False
        cfg = state.config
        pes, p, pidx, pkey = geo(cfg.pes)
        if pes[-1] >= cfg.pes:
            return False
        srcs = _sources(state, plan, mask)
        if srcs is None:
            return False
        t = srcs[0]
        if t.key != want:
            return False
        ok = legal.get(t.capacity)
        if ok is None:
            ok = isa_cube.shape_rule(t.capacity, layout, dt, vr, vc) is None
            if len(legal) < 16:
                legal[t.capacity] = ok
        if not ok:
            return False
        base = gpr_words(state, plan, 0, 0, p, pidx, pkey)
        step = gpr_words(state, plan, 1, stride, p, pidx, pkey)
        try:
            fp = footprint(dt, base, step, vr, vc, cfg.gm_size, name, True, pes)
        except MachineFault:
            return False
        gm = state.gm
        for w in scatter_plan(gm, fp, t.payload[pidx, :vr, :vc], step):
            w.apply(gm)
        return True

    return fused


def signature(tiles: Sequence[Tile]) -> Signature | None:
    """The descriptors a matrix bundle's checks read of its sources, or None when one is
    not fully defined by its descriptor (its definedness map must be read)."""
    out = []
    for t in tiles:
        k = t.key
        if not k[6]:
            return None
        out.append((k, t.capacity))
    return tuple(out)


class MatrixForm:
    """The static facts of a plain matrix bundle (Local A, B and, for the ACC forms, C;
    no scale, bias, vector or scalar parameter, no RowMax/GroupMax output) that its
    fused form needs, and the source signatures the generic runner accepted with the D
    destination each derived."""

    def __init__(
        self, a_type: DataType, b_type: DataType, mx: bool, f: sf.Fpatr,
        pos: dict[str, int], rmode: int, sat: bool,
    ) -> None:  # fmt: skip
        self.a_type, self.b_type, self.mx, self.f = a_type, b_type, mx, f
        self.a, self.b, self.c = pos["A"], pos["B"], pos.get("C")
        self.rmode, self.sat = rmode, sat
        #: source signature -> D's descriptor, filled by the generic runner
        self.accepted: dict[Signature, Slot] = {}

    def accept(self, tiles: Sequence[Tile], d_slot: Slot) -> None:
        """Remember that the generic runner passed every check on sources of these
        descriptors and derived ``d_slot`` (the checks read nothing else of them)."""
        sig = signature(tiles)
        if sig is not None and len(self.accepted) < MAX_SIGNATURES:
            self.accepted[sig] = d_slot

    def products(
        self, av: np.ndarray, bv: np.ndarray, cv: np.ndarray | None, p: int, slot: Slot
    ) -> tuple[np.ndarray, np.ndarray]:
        """D (P, M, N) in ``slot``'s carrier and the status per PE: one
        :func:`~ptoc.backend.isa.semantics.matmul.matmul` per participating PE."""
        ds = []
        status = np.zeros(p, np.uint8)
        for q in range(p):
            r = sm.matmul(
                av[q], self.a_type, bv[q], self.b_type,
                acc=None if cv is None else cv[q],
                mx=self.mx, rmode=self.rmode, sat=self.sat, fpatr=self.f,
            )  # fmt: skip
            ds.append(r.d)
            status[q] = r.status
        d = np.stack(ds)
        if d.dtype != slot.carrier:
            d = d.astype(slot.carrier)
        return d, status


def fused_matrix(plan: BundlePlan, name: str, form: MatrixForm) -> Fused:
    """The fused form of a plain matrix bundle (:class:`MatrixForm`): it runs when its
    sources carry a signature the generic runner accepted."""
    mask = plan.mask
    geo = _geometries(mask)
    accepted = form.accepted
    ia, ib, ic = form.a, form.b, form.c

    def fused(state: MachineState, plan: BundlePlan) -> bool:
        cfg = state.config
        pes, p, pidx, pkey = geo(cfg.pes)
        if pes[-1] >= cfg.pes:
            return False
        srcs = _sources(state, plan, mask)
        if srcs is None:
            return False
        sig = signature(srcs)
        slot = None if sig is None else accepted.get(sig)
        if slot is None:
            return False
        a, b = srcs[ia], srcs[ib]
        cv = None if ic is None else region(srcs[ic], pidx, pkey)
        try:
            d, st = form.products(region(a, pidx, pkey), region(b, pidx, pkey), cv, p, slot)
        except (MachineFault, SemanticError):
            return False  # nothing has changed: the generic path raises it in order
        tile = build_tile(state, name, slot, d, PAD_NULL, pes, pidx, numbered=False)
        if not state.push_one(slot.hand, tile):  # capacity: the generic path faults
            return False
        tile.serial = state.next_serial()
        or_status(state, st, pidx, p)
        return True

    return fused


__all__ = [
    "MAX_SIGNATURES",
    "MatrixForm",
    "Signature",
    "fused_load",
    "fused_matrix",
    "fused_store",
    "never",
    "signature",
]
