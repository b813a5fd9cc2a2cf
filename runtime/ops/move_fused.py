"""The fused forms (``engine.execute_untraced``) of bundles that only move bits, TTRANS,
TGATHER and the broadcast copies TROWEXPAND and TCOLEXPAND: written straight into a
block of the destination's payload pool (every legal PE_MASK selects consecutive PEs,
whose payload rows are one slice).

Both copy source bits without status (``layout.ttrans``, ``indexed.tgather``), so once
their sources are found and of the expected kind, one numpy copy builds the new
payload: TTRANS assigns the transposed view of the source's valid region; TGATHER takes
``dst[r, c] = values[index[r, c], c]`` from the value tile's physical storage at flat
offsets ``index * Col + c`` (per PE, plus the PE's block), after checking that no index
is negative or past the value tile's ValidRow. An index tile computed from the program
alone (a constant tile of the memo, :attr:`Tile.origin`) keeps its checked offsets, per
value-tile geometry. Anything else -- an empty position, a source of another kind or
shape, a mask a source does not cover, an index out of range, a push the queue cannot
take -- returns False before any effect, and the generic path raises the fault.
"""

from __future__ import annotations

import numpy as np

from ptoc.backend.isa import DataType, info
from ptoc.backend.isa.fields import PAD_NULL
from ptoc.backend.isa.semantics import indexed as si

from ..alloc import Dests, Slot
from ..bundle import BundlePlan
from ..engine import Fused
from ..spec import Spec
from ..state import MachineState
from ..tiles import CUBE_LAYOUTS, Tile
from .lean import consecutive_pes, lean_target, publish

#: the index types TGATHER takes (``indexed.GATHER_INDEX_DTYPES``) -> the unsigned
#: view of their carrier: a negative signed index reads as 2**31 or more, past every
#: ValidRow (below 2**16), so one maximum checks both bounds (32-bit types only: an
#: intp holds every such index)
_INDEX_VIEWS = {dt: np.dtype(np.uint32) for dt in si.GATHER_INDEX_DTYPES if info(dt).bits == 32}
#: checked offsets kept per plan (index tiles and value geometries a plan meets)
MAX_OFFSETS = 8


def _plain(t: Tile, mask: int) -> bool:
    """A fully defined, non-CUBE tile allocated on every PE of ``mask``."""
    return t.defined is None and t.layout not in CUBE_LAYOUTS and t.mask & mask == mask


def fused_ttrans(spec: Spec, dt: DataType, slot: Slot) -> Fused:
    """The fused form of a TTRANS bundle into ``slot``: a fully defined non-CUBE source
    of ``dt`` covering the bundle's PEs whose valid shape is the destination's
    transposed."""
    mask, hand = slot.mask, slot.hand
    pes = consecutive_pes(mask)
    if not pes or len(spec.plan.source_pos) != 1:
        return _never
    ((h0, i0, _),) = spec.plan.source_pos
    vr, vc = slot.valid_rows, slot.valid_cols
    make, run, pool_of = lean_target(slot, PAD_NULL, pes, max(h0, hand), i0, dt)

    def fused(state: MachineState, plan: BundlePlan) -> bool:
        pool = pool_of(state.config)
        if pool is None:
            return False
        q0 = state.queues[h0]
        if i0 > len(q0):
            return False
        a = q0[i0 - 1]
        if a.dtype != dt or a.valid_rows != vc or a.valid_cols != vr or not _plain(a, mask):
            return False
        payload, storage, at = pool.take_writable()
        storage[run, :vr, :vc] = a.payload[run, :vc, :vr].transpose(0, 2, 1)
        return publish(state, hand, make(payload, 0, None, at))

    return fused


def fused_tgather(spec: Spec, dt: DataType, slot: Slot) -> Fused:
    """The fused form of a TGATHER bundle into ``slot``: a fully defined non-CUBE value
    tile of ``dt`` with at least the destination's ValidCol and a fully defined non-CUBE
    index tile of a legal index type and the destination's valid shape, both covering
    the bundle's PEs, every index in range."""
    mask, hand = slot.mask, slot.hand
    pes = consecutive_pes(mask)
    vr, vc = slot.valid_rows, slot.valid_cols
    if (
        not pes
        or len(spec.plan.source_pos) != 2
        or si.tgather_types_legal(dt, DataType.U32) is not None
        or vr * vc == 0
    ):
        return _never
    (hv, iv, _), (hi, ii, _) = spec.plan.source_pos
    make, run, pool_of = lean_target(slot, PAD_NULL, pes, max(hv, hi, hand), max(iv, ii), dt)
    p = len(pes)
    whole_rows = vc == slot.cols
    column = p == 1 and vc == 1 and whole_rows
    #: (index tile origin, value Rows, Col, ValidRow) -> the checked flat offsets of a
    #: constant index tile (None: an index out of range)
    kept: dict[tuple[object, int, int, int], np.ndarray | None] = {}

    def offsets(idx: Tile, rows: int, cols: int, limit: int) -> np.ndarray | None:
        """The flat offsets into the value tile's storage on the bundle's PEs (``rows``
        x ``cols`` per PE), or None when an index is negative or not below ``limit``."""
        f = idx.payload[run, :vr, :vc].view(_INDEX_VIEWS[idx.dtype]).astype(np.intp)
        if f.max() >= limit:
            return None
        if cols != 1:
            f *= cols
        if p != 1 or vc != 1:  # (else every offset is 0)
            f += _column_offsets(p, rows * cols, vc)
        return f

    def fused(state: MachineState, plan: BundlePlan) -> bool:
        pool = pool_of(state.config)
        if pool is None:
            return False
        queues = state.queues
        qv, qi = queues[hv], queues[hi]
        if iv > len(qv) or ii > len(qi):
            return False
        vals, idx = qv[iv - 1], qi[ii - 1]
        if (
            idx.dtype not in _INDEX_VIEWS
            or vals.dtype != dt
            or idx.valid_rows != vr
            or idx.valid_cols != vc
            or vals.valid_cols < vc
            or not _plain(vals, mask)
            or not _plain(idx, mask)
        ):
            return False
        rows, cols, limit = vals.rows, vals.cols, vals.valid_rows
        origin = idx.origin
        if column and origin is None and cols == 1:
            # one PE, one-column tiles (a flat gather's chunks): ``take`` checks the
            # indices against the valid rows itself, before the result is published
            payload, storage, at = pool.take_writable()
            try:
                vals.payload[run, :limit].reshape(-1).take(
                    idx.payload[run, :vr, :1].view(_INDEX_VIEWS[idx.dtype]),
                    out=storage[run, :vr],
                )
            except IndexError:  # an index out of range: the generic path raises it
                return False
            return publish(state, hand, make(payload, 0, None, at))
        if origin is None:
            f = offsets(idx, rows, cols, limit)
        else:
            k = (origin, rows, cols, limit)
            if k in kept:
                f = kept[k]
            else:
                f = offsets(idx, rows, cols, limit)
                if f is not None:
                    f.flags.writeable = False
                if len(kept) >= MAX_OFFSETS:
                    kept.clear()
                kept[k] = f
        if f is None:  # an index out of range: the generic path raises it
            return False
        payload, storage, at = pool.take_writable()
        flat = vals.payload[run].reshape(-1)
        if whole_rows:  # (rows of the block itself: taken straight into it)
            flat.take(f, out=storage[run, :vr], mode="clip")  # (in range: no clipping)
        else:
            storage[run, :vr, :vc] = flat.take(f)
        return publish(state, hand, make(payload, 0, None, at))

    return fused


def _never(state: MachineState, plan: BundlePlan) -> bool:
    return False


def _column_offsets(p: int, block: int, c: int) -> np.ndarray:
    """(P, 1, c) offsets ``pe * block + col``: added to ``row * Col`` they give the flat
    index of ``[pe, row, col]`` in ``p`` consecutive blocks of ``block`` elements."""
    key = (p, block, c)
    off = _OFFSETS.get(key)
    if off is None:
        off = (np.arange(p, dtype=np.intp) * block)[:, None, None] + np.arange(c, dtype=np.intp)
        off.flags.writeable = False
        if len(_OFFSETS) >= 256:
            _OFFSETS.clear()
        _OFFSETS[key] = off
    return off


_OFFSETS: dict[tuple[int, int, int], np.ndarray] = {}


def lean_expand_copy(
    general: Fused,
    spec: Spec,
    dests: Dests,
    b_key: tuple[object, ...],
    b_valid: tuple[int, int],
) -> Fused:
    """The lean form of a broadcast copy (TROWEXPAND, TCOLEXPAND) on consecutive PEs:
    the broadcast tile's ``b_valid`` (ValidRow, ValidCol) region -- one column or one
    row -- assigned over the destination's valid region (raw carriers, no status, as
    ``expand._apply`` copies them). The source has ``b_key`` in its first five fields
    (any physical Rows), is fully defined and covers the bundle's PEs. Anything else --
    and a push the queue cannot take -- runs ``general`` (the fused runner)."""
    slot = dests.slots[0]
    mask, hand = slot.mask, slot.hand
    pes = consecutive_pes(mask)
    if slot.dtype is None or not pes or len(spec.plan.source_pos) != 1:
        return general
    ((h0, i0, _),) = spec.plan.source_pos
    vr, vc = slot.valid_rows, slot.valid_cols
    br, bc = b_valid
    pad = spec.pad
    make, run, pool_of = lean_target(slot, pad, pes, max(h0, hand), i0)

    def fused(state: MachineState, plan: BundlePlan) -> bool:
        pool = pool_of(state.config)
        if pool is None:
            return general(state, plan)
        q0 = state.queues[h0]
        if i0 > len(q0):
            return general(state, plan)
        b = q0[i0 - 1]
        bk = b.key
        if bk[:5] != b_key or not bk[6] or b.mask & mask != mask:
            return general(state, plan)
        payload, storage, at = pool.take_writable()
        storage[run, :vr, :vc] = b.payload[run, :br, :bc]
        return publish(state, hand, make(payload, 0, None, at)) or general(state, plan)

    return fused
