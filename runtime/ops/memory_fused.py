"""Fused forms of the ordinary TLOAD and TSTORE (``engine.execute_untraced``).

The common transfer -- whole-byte elements, each PE's rows aligned and inside the
memory, proven in closed form from the B.IOR registers -- is executed here in one call,
without the per-bundle context, the footprint cache or the pending-write list: a TLOAD
publishes the rows of :func:`~ptoc.runtime.memory.gather_view`, a TSTORE applies the
:class:`~ptoc.runtime.memory.DenseWrite` of each PE at once (what ``scatter_plan`` and
the commit would do). A grid launch's access log records the same footprints and bytes
as on the generic path. Anything else (a 4-bit type, an address that is misaligned or
out of range, rows that overlap, a source with undefined elements, a full queue that
cannot take the tile) returns False before any effect, and the generic runner raises
whatever fault applies in its order. The results are the generic runners' own.
"""

from __future__ import annotations

import numpy as np

from ptoc.backend.isa import DataType, info
from ptoc.backend.isa.fields import PAD_NULL

from ..alloc import Dests, Slot
from ..bundle import BundlePlan
from ..engine import Fused, build_tile, geometry, make_dests, one_source
from ..memory import DenseWrite, Footprint, gather_view, proven_rows
from ..spec import Spec
from ..state import MachineState
from ..tiles import CUBE_LAYOUTS, Layout, Tile
from .layout import dest_layout_legal, generic_shape


def _rows(
    state: MachineState, plan: BundlePlan, pes: tuple[int, ...], rows: int, cols: int, eb: int
) -> tuple[tuple[int, int], ...] | None:
    """Each participating PE's (first byte, row stride) when the whole transfer is proven
    aligned and inside the memory in closed form (:func:`~ptoc.runtime.memory.proven_rows`,
    the generic footprint's proof), else None. B.IOR is present: RegSrc1 is the stride
    even when it is the zero register."""
    ior = plan.ior
    if ior is None:
        return None
    gpr = state.gpr
    if len(pes) == 1:  # (the common one-PE kernel: two scalar reads)
        pe = pes[0]
        bases, strides = [int(gpr[pe, ior.src0])], [int(gpr[pe, ior.src1])]
    else:
        b, s = gpr[:, ior.src0].tolist(), gpr[:, ior.src1].tolist()
        bases, strides = [b[pe] for pe in pes], [s[pe] for pe in pes]
    return proven_rows(bases, strides, rows, cols, eb, state.config.gm_size)


def _one_pe(
    state: MachineState, plan: BundlePlan, pes: tuple[int, ...], rows: int, cols: int, eb: int
) -> tuple[np.ndarray, int, int] | None:
    """For the kernels' common case -- one PE, a dense memory, no grid access log -- the
    memory and the PE's (first byte, row stride), when :func:`_rows` would prove them (the
    same closed-form proof, on two scalar reads); None otherwise (the general path
    decides)."""
    gm, ior = state.gm, plan.ior
    if (
        len(pes) != 1
        or ior is None
        or state.access_log is not None
        or type(gm) is not np.ndarray
        or not gm.flags.c_contiguous
        or rows < 1
        or cols < 1
    ):
        return None
    pe, ints = pes[0], state.gpr_ints
    if ints is not None:  # (an integer block's GPRs: no array to make)
        regs = ints[0] if len(ints) == 1 else ints[pe]
        b, s = regs[ior.src0], regs[ior.src1]
    else:
        gpr = state.gpr
        b, s = int(gpr[pe, ior.src0]), int(gpr[pe, ior.src1])
    if b % eb or (rows > 1 and s % eb):
        return None
    if b + (rows - 1) * s + (cols - 1) * eb > state.config.gm_size - eb:
        return None
    return gm, b, s if rows > 1 else 0


def fused_tload(spec: Spec, dt: DataType, dests: Dests) -> Fused:
    """The fused form of an ordinary TLOAD into ``dests`` (one Local destination)."""
    if dests.fault is not None or len(dests.slots) != 1:
        return _never
    slot = dests.slots[0]
    eb = info(dt).bits // 8
    usable = info(dt).bits % 8 == 0 and slot.carrier.itemsize == eb and dest_layout_legal(slot)
    vr, vc = slot.valid_rows, slot.valid_cols
    mask, hand, name, carrier = slot.mask, slot.hand, spec.name, slot.carrier

    def fused(state: MachineState, plan: BundlePlan) -> bool:
        if not usable:
            return False
        pes, _, pidx, _ = geometry(mask, state.config.pes)
        if pes[-1] >= state.config.pes:
            return False
        one = _one_pe(state, plan, pes, vr, vc, eb)
        log = None
        if one is not None:  # (``gather_view``'s strided view of the memory, inlined)
            gm, b, st = one
            values = np.ndarray((1, vr, vc), carrier, gm, b, (0, st, eb))
        else:
            at = _rows(state, plan, pes, vr, vc, eb)
            if at is None:
                return False
            fp = Footprint(None, eb, None, at, vr, vc)
            log = state.access_log
            if log is not None:  # a grid launch records what it read (D13)
                mark = len(log.records)
                log.read_footprint(fp)
            # (a view of a dense memory is writable: publication copies it)
            values = gather_view(state.gm, fp, dt)
        tile = build_tile(state, name, slot, values, PAD_NULL, pes, pidx, numbered=False)
        if not state.push_one(hand, tile):
            if log is not None:  # the generic path raises the fault before reading
                log.forget(mark)
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
    #: by source descriptor (``Tile.key``): the (rows, columns) stored, or None when
    #: the generic path decides (another type or layout, undefined elements, a shape
    #: past the source)
    stored: dict[tuple[object, ...], tuple[int, int] | None] = {}

    def transfer(t: Tile) -> tuple[int, int] | None:
        if t.dtype != dt or t.layout is not src_layout or t.defined is not None:
            return None
        shape = generic_shape(spec, t)
        vr, vc = shape.valid_rows, shape.valid_cols
        if vr > t.valid_rows or vc > t.valid_cols or vc > shape.cols:
            return None
        return vr, vc

    def fused(state: MachineState, plan: BundlePlan) -> bool:
        if not whole_bytes:
            return False
        got = one_source(state, plan, plan.mask)
        if got is None:
            return False
        pes, t = got[0], got[4]
        key = t.key
        if key in stored:
            shape = stored[key]
        else:
            shape = stored[key] = transfer(t)
        if shape is None:
            return False
        vr, vc = shape
        written = state.gm_written
        one = _one_pe(state, plan, pes, vr, vc, eb)
        if one is not None:  # (the DenseWrite's strided assignment and record, inlined)
            dense, b, st = one
            if vr > 1 and st < vc * eb:
                return False  # rows that overlap: the generic path keeps the last writer
            v = t.payload[pes[0], :vr, :vc]
            np.ndarray(v.shape, v.dtype, dense, b, (st, eb))[...] = v
            if written is not None:
                written.rows(b, st, vr, vc * eb)
            return True
        gm, log = state.gm, state.access_log
        at = _rows(state, plan, pes, vr, vc, eb)
        if at is None or any(s < vc * eb and vr > 1 for _, s in at):
            return False  # rows that overlap: the generic path keeps the last writer
        payload = t.payload  # each PE's rows as a view (indexing by the PE list copies)
        for pe, (b, s) in zip(pes, at, strict=True):  # PEs in order: the later one wins
            w = DenseWrite(b, s, payload[pe, :vr, :vc], eb)
            w.apply(gm)
            if written is not None:
                w.record(written)
            if log is not None:  # a grid launch records what each core wrote (D13)
                log.write_rows(b, s, vr, vc * eb)
        return True

    return fused


def fused_tmov(
    spec: Spec, dt: DataType | None, src_layout: Layout, dst_layout: Layout
) -> Fused:
    """The fused form of a TMOV of a Local numeric tile: the generic runner's steps for a
    fully defined source of ``src_layout`` (and of ``dt`` unless it is None: the
    source's) whose shape the bundle's dimensions repeat -- the same destination
    descriptor (kept per source descriptor), the same :func:`build_tile` of its physical
    payload. Anything else (a predicate, a CUBE tile, another shape or layout, undefined
    elements, a capacity fault) returns False before any effect."""
    name, mask = spec.name, spec.plan.mask
    #: by source descriptor (``Tile.key``): the destination slot, or None when the
    #: generic path decides
    slots: dict[tuple[object, ...], Slot | None] = {}

    def slot_for(t: Tile) -> Slot | None:
        if t.dtype is None or (dt is not None and t.dtype != dt) or t.defined is not None:
            return None
        if t.layout is not src_layout or t.layout in CUBE_LAYOUTS:
            return None
        shape = generic_shape(spec, t)
        if (shape.valid_rows, shape.valid_cols, shape.cols) != (
            t.valid_rows, t.valid_cols, t.cols,
        ):  # fmt: skip
            return None
        dests = make_dests(spec, mask, ((t.dtype, shape, dst_layout),))
        if dests.fault is not None or len(dests.slots) != 1:
            return None
        slot = dests.slots[0]
        if not dest_layout_legal(slot) or slot.rows != t.rows:
            return None
        return slot

    def fused(state: MachineState, plan: BundlePlan) -> bool:
        got = one_source(state, plan, mask)
        if got is None:
            return False
        pes, _, pidx, _, t = got
        key = t.key
        if key in slots:
            slot = slots[key]
        else:
            slot = slot_for(t)
            if len(slots) < 16:  # (a few source descriptors per plan)
                slots[key] = slot
        if slot is None:
            return False
        tile = build_tile(state, name, slot, t.payload[pidx], PAD_NULL, pes, pidx, whole=True,
                          pad_defined=t.pad_defined, numbered=False)  # fmt: skip
        if not state.push_one(slot.hand, tile):
            return False
        tile.serial = state.next_serial()  # (a copy: no status)
        return True

    return fused
