"""Fused runners that compute with the certified compiled kernels (``arith_kernels``).

A warm bundle whose operation the compiled library runs -- FP32/FP64 add, sub, mul, div,
max and min of two tiles or of a tile and a broadcast row or column, and the row and
column folds -- is executed here in one call: the kernel writes the results straight
into the new payload and settles every PE's status. The runners check what the general
fused runner checks (sources found with the expected descriptors, the PEs covered,
capacity) and hand anything else to it, which settles it or falls back to the generic
path with nothing changed.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ptoc.backend.isa import Axis
from ptoc.backend.isa.fields import PAD_NULL
from ptoc.backend.isa.semantics.arith_kernels import (
    ArithKernel,
    ArithPlan,
    FoldPlan,
    address,
    arith_enabled,
    compiled_fold,
    writable_address,
)

from ..alloc import Dests, Slot, fresh
from ..alloc import template as alloc_template
from ..bundle import BundlePlan
from ..engine import Fused
from ..spec import Spec
from ..state import MASK_PES, MachineState
from ..tiles import Tile


def _address(t: Tile, strides: tuple[int, ...]) -> int:
    """The payload address of ``t`` for compiled kernels, asked once per tile; -1 when
    the payload is not laid out with byte ``strides`` (a view of another tile's
    storage)."""
    a = t.address
    if not a:
        p = t.payload
        a = t.address = address(p) if p.strides == strides else -1
    return a


class _Run(NamedTuple):
    """What a compiled runner needs per machine size: the bundle's consecutive PEs from
    ``first`` (``width`` of them), the storage its results start from (the padding, and
    poison on the other PEs; copied per bundle, never handed out; None: np.empty does),
    the plan of two same-shape sources and the plans by the broadcast source's Rows."""

    first: int
    width: int
    template: np.ndarray | None
    same: ArithPlan
    by_rows: dict[int, tuple[ArithPlan, tuple[int, ...]]]


def compiled_runner(
    kernel: ArithKernel,
    general: Fused,
    spec: Spec,
    dests: Dests,
    key: tuple[object, ...],
    broadcast: Axis | None = None,
    b_key: tuple[object, ...] | None = None,
) -> Fused:
    """The fused form of a two-source FP32/FP64 + - * / max min bundle whose PEs are
    consecutive (every PE, or a run such as 1000 or 0110), computed by the certified
    compiled kernel (``arith_kernels``): one pass that writes the results straight into
    the new payload, canonicalises NaN results and settles every PE's status, whatever
    the operands hold (NaNs and infinities included), and says whether every result is
    finite (published as :attr:`Tile.finite`).

    Both sources have descriptor ``key``, or for a row (column) expansion, ``broadcast``,
    the second is the one-column (one-row) tile whose descriptor starts with ``b_key``
    and has any physical Rows; it is broadcast along the rows (columns) by a zero stride.
    Anything else -- other PEs, a source not found or of another descriptor, a capacity
    fault, the exact engine or the numpy route asked for -- runs ``general`` (the fused
    runner), which settles it or falls back to the generic path with nothing changed.
    """
    slot = dests.slots[0]
    mask, hand = slot.mask, slot.hand
    (h0, i0, _), (h1, i1, _) = spec.plan.source_pos
    dt, rows, cols, vr, vc = slot.dtype, slot.rows, slot.cols, slot.valid_rows, slot.valid_cols
    layout, capacity, pad = slot.layout, slot.capacity, spec.pad
    pes = MASK_PES[mask] if 0 <= mask < len(MASK_PES) else ()
    if dt is None or not pes or pes != tuple(range(pes[0], pes[-1] + 1)):
        return general
    whole = vr == rows and vc == cols
    pad_defined = pad != PAD_NULL
    carrier = slot.carrier
    size = carrier.itemsize
    op = spec.row.arith or ""
    strides = (rows * cols, cols, 1)  # a dense payload of this shape, in elements
    nbytes = tuple(s * size for s in strides)
    shape = (len(pes), vr, vc)
    #: machine PEs -> the run (see :class:`_Run`)
    runs: dict[int, _Run] = {}

    def run_for(npes: int) -> _Run | None:
        if pes[-1] >= npes:
            return None
        if whole and len(pes) == npes:
            template = None
        else:
            template = fresh(dt, (npes, rows, cols), PAD_NULL)  # poison everywhere
            template[pes[0] : pes[-1] + 1] = alloc_template(dt, (1, rows, cols), pad)
        same = ArithPlan(kernel, op, dt, shape, strides, strides, strides)
        got = runs[npes] = _Run(pes[0], len(pes), template, same, {})
        return got

    def broadcast_plan(r: _Run, b: Tile) -> tuple[ArithPlan, tuple[int, ...]]:
        b_strides = (b.rows * b.cols, b.cols, 1)
        y = (b_strides[0], b_strides[1], 0) if broadcast is Axis.ROW else (b_strides[0], 0, 1)
        got = r.by_rows[b.rows] = (
            ArithPlan(kernel, op, dt, shape, strides, y, strides),
            tuple(s * size for s in b_strides),
        )
        return got

    def fused(state: MachineState, plan: BundlePlan) -> bool:
        cfg = state.config
        queues, depth = state.queues, cfg.depth
        r = runs.get(cfg.pes) or run_for(cfg.pes)
        if (
            r is None
            or h0 >= len(queues)
            or h1 >= len(queues)
            or i0 > depth
            or i1 > depth
            or not arith_enabled()
        ):
            return general(state, plan)
        q0, q1 = queues[h0], queues[h1]
        if i0 > len(q0) or i1 > len(q1):
            return general(state, plan)
        a, b = q0[i0 - 1], q1[i1 - 1]
        if a.key != key or a.mask & mask != mask or b.mask & mask != mask:
            return general(state, plan)
        if broadcast is None:
            if b.key != key:
                return general(state, plan)
            call, b_bytes = r.same, nbytes
        else:
            k = b.key
            if k[:5] != b_key or not k[6]:
                return general(state, plan)
            call, b_bytes = r.by_rows.get(b.rows) or broadcast_plan(r, b)
        x, y = _address(a, nbytes), _address(b, b_bytes)
        if x < 0 or y < 0:
            return general(state, plan)
        t = r.template
        payload = np.empty((cfg.pes, rows, cols), carrier) if t is None else t.copy()
        z = writable_address(payload)
        first = r.first
        status, not_finite = call(
            x + first * nbytes[0], y + first * b_bytes[0], z + first * nbytes[0]
        )
        payload.setflags(write=False)
        tile = Tile(dt, rows, cols, vr, vc, layout, mask, capacity, payload, None, pad_defined)
        if not state.push_one(hand, tile):  # capacity: the general path raises the fault
            return general(state, plan)
        tile.serial = state.next_serial()
        tile.finite = not not_finite
        tile.address = z
        if r.width == cfg.pes:
            np.bitwise_or(state.status, status, out=state.status)
        else:
            view = state.status[first : first + r.width]
            np.bitwise_or(view, status, out=view)
        return True

    return fused


def compiled_reduction_runner(
    general: Fused, spec: Spec, dests: Dests, key: tuple[object, ...], axis: Axis
) -> Fused:
    """The fused form of an FP32/FP64 row (``axis`` ROW) or column reduction -- sum,
    prod, max, min -- of one source tile whose descriptor starts with ``key`` (any
    physical Rows) on a run of PEs: one call of the compiled fold per bundle, the
    results straight into the new payload (see :func:`compiled_runner` for the rest)."""
    kernel = compiled_fold()
    slot = dests.slots[0]
    mask, hand = slot.mask, slot.hand
    ((h0, i0, _),) = spec.plan.source_pos
    dt, rows, cols, vr, vc = slot.dtype, slot.rows, slot.cols, slot.valid_rows, slot.valid_cols
    pes = MASK_PES[mask] if 0 <= mask < len(MASK_PES) else ()
    if kernel is None or dt is None or not pes or pes != tuple(range(pes[0], pes[-1] + 1)):
        return general
    op = spec.row.arith or ""
    carrier = slot.carrier
    size = carrier.itemsize
    z_strides = (rows * cols, cols if axis is Axis.ROW else 1)
    #: machine PEs -> (the first PE, the storage results start from)
    runs: dict[int, tuple[int, np.ndarray]] = {}
    #: the source's physical Rows -> (the fold plan, the source payload's byte strides)
    plans: dict[int, tuple[FoldPlan, tuple[int, ...]]] = {}

    def plan_for(a: Tile) -> tuple[FoldPlan, tuple[int, ...]]:
        x = (a.rows * a.cols, a.cols, 1)  # (PE, row, column) of a dense payload
        if axis is Axis.ROW:  # fold each valid row over its columns
            shape, strides = (len(pes), a.valid_rows, a.valid_cols), x
        else:  # fold each valid column over its rows
            shape, strides = (len(pes), a.valid_cols, a.valid_rows), (x[0], 1, x[1])
        got = plans[a.rows] = (
            FoldPlan(kernel, op, dt, shape, strides, z_strides),
            tuple(s * size for s in x),
        )
        return got

    def fused(state: MachineState, plan: BundlePlan) -> bool:
        cfg = state.config
        queues = state.queues
        r = runs.get(cfg.pes) or _start(cfg.pes, pes, slot, spec.pad, runs)
        if r is None or h0 >= len(queues) or i0 > cfg.depth or not arith_enabled():
            return general(state, plan)
        q0 = queues[h0]
        if i0 > len(q0):
            return general(state, plan)
        a = q0[i0 - 1]
        k = a.key
        if k[:5] != key or not k[6] or a.mask & mask != mask:
            return general(state, plan)
        call, a_bytes = plans.get(a.rows) or plan_for(a)
        x = _address(a, a_bytes)
        if x < 0:
            return general(state, plan)
        first, template = r
        payload = template.copy()
        z = writable_address(payload)
        status = call(x + first * a_bytes[0], z + first * z_strides[0] * size)
        payload.setflags(write=False)
        pad_defined = spec.pad != PAD_NULL
        tile = Tile(dt, rows, cols, vr, vc, slot.layout, mask, slot.capacity, payload, None,
                    pad_defined)  # fmt: skip
        if not state.push_one(hand, tile):  # capacity: the general path raises the fault
            return general(state, plan)
        tile.serial = state.next_serial()
        tile.address = z
        if len(pes) == cfg.pes:
            np.bitwise_or(state.status, status, out=state.status)
        else:
            view = state.status[first : first + len(pes)]
            np.bitwise_or(view, status, out=view)
        return True

    return fused


def _start(
    npes: int,
    pes: tuple[int, ...],
    slot: Slot,
    pad: int,
    runs: dict[int, tuple[int, np.ndarray]],
) -> tuple[int, np.ndarray] | None:
    """(the first PE, the storage a result starts from: ``pad`` on the bundle's PEs and
    poison on the others) on a machine of ``npes`` PEs, recorded in ``runs``; None when
    the bundle's PEs are not all there."""
    if pes[-1] >= npes:
        return None
    dt, rows, cols = slot.dtype, slot.rows, slot.cols
    template = fresh(dt, (npes, rows, cols), PAD_NULL)  # poison everywhere
    template[pes[0] : pes[-1] + 1] = alloc_template(dt, (1, rows, cols), pad)
    got = runs[npes] = (pes[0], template)
    return got
