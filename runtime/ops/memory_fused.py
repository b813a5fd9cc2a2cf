"""Fused forms of the ordinary TLOAD and TSTORE (``engine.execute_untraced``).

The common transfer -- whole-byte elements, each PE's rows aligned and inside a dense
global memory, proven in closed form from the B.IOR registers -- is executed here in
one call, without the per-bundle context, the footprint cache or the pending-write
list: a TLOAD copies the rows from views of the memory into the new tile, a TSTORE
writes the source's rows into views of the memory. Anything else (a 4-bit type, an
address that is misaligned or out of range, a grid launch's access log, a sparse
memory, a source with undefined elements, a full queue that cannot take the tile)
returns False before any effect, and the generic runner raises whatever fault applies
in its order. The results are the generic runners' own: the same rows, the same tile,
the same memory bytes.
"""

from __future__ import annotations

import numpy as np

from ptoc.backend.isa import DataType, info
from ptoc.backend.isa.fields import PAD_NULL

from ..alloc import Dests
from ..bundle import BundlePlan
from ..engine import Fused, build_tile, geometry
from ..spec import Spec
from ..state import MachineState
from ..tiles import Layout, layout_shape_legal
from .layout import generic_shape

#: layouts legal for every shape (see ``layout.check_dest_layout``)
_ANY_SHAPE = frozenset({Layout.ROW_MAJOR, Layout.COL_MAJOR})


def _rows(
    state: MachineState, plan: BundlePlan, pes: tuple[int, ...], rows: int, cols: int, eb: int
) -> list[tuple[int, int]] | None:
    """Each participating PE's (first byte, row stride) of a ``rows`` x ``cols`` transfer
    of ``eb``-byte elements when every element is aligned and inside the memory
    (``ProbeDataAccess`` passes; addresses grow from the base, so the last element
    bounds them all), else None."""
    ior = plan.ior
    if ior is None or rows < 1 or cols < 1:
        return None
    gpr = state.gpr
    base_reg, stride_reg = ior.src0, ior.src1
    limit = state.config.gm_size - eb
    span = (cols - 1) * eb
    out = []
    for pe in pes:
        b = int(gpr[pe, base_reg])
        s = int(gpr[pe, stride_reg])  # B.IOR is present: RegSrc1 even when it is zero
        if rows == 1:
            s = 0
        elif s % eb:
            return None
        if b % eb or b + (rows - 1) * s + span > limit:
            return None
        out.append((b, s))
    return out


def fused_tload(spec: Spec, dt: DataType, dests: Dests) -> Fused:
    """The fused form of an ordinary TLOAD into ``dests`` (one Local destination)."""
    if dests.fault is not None or len(dests.slots) != 1:
        return _never
    slot = dests.slots[0]
    eb = info(dt).bits // 8
    usable = (
        info(dt).bits % 8 == 0
        and slot.carrier.itemsize == eb
        and (
            slot.layout in _ANY_SHAPE
            or layout_shape_legal(slot.layout, slot.rows, slot.cols, info(dt).bits)
        )
    )
    vr, vc = slot.valid_rows, slot.valid_cols
    carrier, mask, hand, name = slot.carrier, slot.mask, slot.hand, spec.name

    def fused(state: MachineState, plan: BundlePlan) -> bool:
        gm = state.gm
        if not usable or state.access_log is not None or not isinstance(gm, np.ndarray):
            return False
        pes, p, pidx, _ = geometry(mask, state.config.pes)
        if pes[-1] >= state.config.pes or not gm.flags.c_contiguous:
            return False
        at = _rows(state, plan, pes, vr, vc, eb)
        if at is None:
            return False
        if p == 1:
            b, s = at[0]
            values = np.ndarray((1, vr, vc), carrier, gm, b, (0, s, eb))
        else:
            values = np.empty((p, vr, vc), carrier)
            for k, (b, s) in enumerate(at):
                values[k] = np.ndarray((vr, vc), carrier, gm, b, (s, eb))
        # a writable view of GM: publication copies it
        tile = build_tile(state, name, slot, values, PAD_NULL, pes, pidx, numbered=False)
        if not state.push_one(hand, tile):
            return False
        tile.serial = state.next_serial()
        return True

    return fused


def _never(state: MachineState, plan: BundlePlan) -> bool:
    return False


def fused_tstore(spec: Spec, dt: DataType, src_layout: Layout) -> Fused:
    """The fused form of an ordinary TSTORE of a Local source."""
    eb = info(dt).bits // 8
    whole_bytes = info(dt).bits % 8 == 0 and info(dt).carrier.itemsize == eb

    def fused(state: MachineState, plan: BundlePlan) -> bool:
        gm = state.gm
        if not whole_bytes or state.access_log is not None or not isinstance(gm, np.ndarray):
            return False
        npes = state.config.pes
        pes, _, pidx, _ = geometry(plan.mask, npes)
        if pes[-1] >= npes or not gm.flags.c_contiguous or len(plan.source_pos) != 1:
            return False
        hand, index, _ = plan.source_pos[0]
        queues = state.queues
        if hand >= len(queues) or index > state.config.depth or index > len(queues[hand]):
            return False
        t = queues[hand][index - 1]
        if (
            t.dtype != dt
            or t.layout is not src_layout
            or t.defined is not None
            or t.mask & plan.mask != plan.mask
        ):
            return False
        shape = generic_shape(spec, t)
        vr, vc = shape.valid_rows, shape.valid_cols
        if vr > t.valid_rows or vc > t.valid_cols or vc > shape.cols:
            return False
        at = _rows(state, plan, pes, vr, vc, eb)
        if at is None or any(s < vc * eb and vr > 1 for _, s in at):
            return False  # rows that overlap: the generic path keeps the last writer
        values = t.payload[pidx, :vr, :vc]
        carrier = values.dtype
        written = state.gm_written
        for k, (b, s) in enumerate(at):  # PEs in order: the later one wins
            np.ndarray((vr, vc), carrier, gm, b, (s, eb))[...] = values[k]
            if written is not None:
                written.rows(b, s, vr, vc * eb)
        return True

    return fused
