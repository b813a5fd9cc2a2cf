"""The lean fused TMRGSORT: the common merge -- NaN-free sorted FP32/FP16 streams on
consecutive PEs, one direction on every PE -- written straight into a pooled payload.

The generic steps of the fused form (``irregular._fused_tmrgsort``: the geometry, the
source views, the tile builder, the status OR) cost more than the merge of a few
hundred elements. Here the two streams are concatenated into the new payload's storage
and sorted there in place: without NaNs ``TileSortLeftBefore`` is the numeric order
(+0 and -0 equal), so a stable sort of ``a ++ b`` is the merge, the left source first
on ties; there is no status (no signalling NaN). One comparison pass checks that both
streams are sorted, and a NaN fails every adjacent pair it is in (streams of one
element go to the fused form). Anything else goes to the fused form, which settles it or
falls back to the generic path with nothing changed.
"""

from __future__ import annotations

from threading import get_ident

import numpy as np

from ptoc.backend.isa import DataType

from ..alloc import Dests
from ..bundle import BundlePlan
from ..engine import Fused, destination_pool
from ..payloads import PayloadPool
from ..spec import Spec
from ..state import MASK_PES, MachineState
from ..tiles import Layout, Tile, tile_maker


def lean_tmrgsort(
    general: Fused, spec: Spec, dt: DataType, by_width: dict[int, Dests]
) -> Fused:
    """The lean form of a TMRGSORT bundle of ``dt`` on consecutive PEs whose output
    width ``n0 + n1`` the generic runner has met (``by_width``: its destinations):
    both sources fully defined row-major single-row tiles of ``dt`` with two or more
    columns each, covering the bundle's PEs, the descending flag one value (0 or 1) on
    every PE, both streams sorted in that direction and free of NaN. Anything else --
    and a push the queue cannot take -- runs ``general``."""
    mask = spec.plan.mask
    pes = MASK_PES[mask] if 0 <= mask < len(MASK_PES) else ()
    if not pes or pes != tuple(range(pes[0], pes[-1] + 1)) or len(spec.plan.source_pos) != 2:
        return general
    (h0, i0, _), (h1, i1, _) = spec.plan.source_pos
    run = slice(pes[0], pes[-1] + 1)
    p = len(pes)
    Entry = tuple[PayloadPool, object, int] | None
    #: (configuration, thread, output width) -> (pool, tile maker, hand), None where
    #: the bundle's PEs, queue positions or hand are not on that machine
    known: dict[tuple[object, int, int], Entry] = {}

    #: the configuration and thread seen last, and their entries by output width
    #: (configurations hash slowly)
    seen: tuple[object, int] = (None, 0)
    by_n: dict[int, Entry] = {}

    def entry(state: MachineState, n: int) -> Entry:
        nonlocal seen, by_n
        here = (state.config, get_ident())
        if seen[0] is here[0] and seen[1] == here[1]:
            if n in by_n:
                return by_n[n]
        else:
            seen, by_n = here, {}
        if n not in by_width:  # (not yet met: the generic runner makes its destinations)
            return None
        k = (*here, n)
        if k not in known and len(known) < 64:  # (a few widths per plan)
            known[k] = _entry(state, n)
        got = by_n[n] = known[k] if k in known else _entry(state, n)
        return got

    def _entry(state: MachineState, n: int) -> Entry:
        cfg = state.config
        dests = by_width.get(n)
        got = None
        if dests is not None and dests.fault is None and len(dests.slots) == 1:
            slot = dests.slots[0]
            fits = pes[-1] < cfg.pes and max(h0, h1, slot.hand) < cfg.hands
            if fits and max(i0, i1) <= cfg.depth:
                make = tile_maker(dt, slot.rows, slot.cols, slot.valid_rows, slot.valid_cols,
                                  slot.layout, slot.mask, slot.capacity, False)  # fmt: skip
                got = (destination_pool(cfg.pes, slot, spec.pad, pes), make, slot.hand)
        return got

    def fused(state: MachineState, plan: BundlePlan) -> bool:
        queues = state.queues
        if max(h0, h1) >= len(queues):
            return general(state, plan)
        q0, q1 = queues[h0], queues[h1]
        if i0 > len(q0) or i1 > len(q1):
            return general(state, plan)
        a, b = q0[i0 - 1], q1[i1 - 1]
        if not (_stream(a, dt, mask) and _stream(b, dt, mask)):
            return general(state, plan)
        desc = False
        ior = plan.ior
        if ior is not None:
            words = state.gpr[run, ior.sources[0]].tolist()
            desc = words[0] == 1
            if words[0] > 1 or words.count(words[0]) != p:
                return general(state, plan)
        n0, n1 = a.valid_cols, b.valid_cols
        n = n0 + n1
        got = entry(state, n)
        if got is None:
            return general(state, plan)
        pool, make, hand = got
        va, vb = a.payload[run, :1, :n0], b.payload[run, :1, :n1]
        lo_a, hi_a, lo_b, hi_b = va[..., :-1], va[..., 1:], vb[..., :-1], vb[..., 1:]
        ok_a = hi_a <= lo_a if desc else lo_a <= hi_a
        ok_b = hi_b <= lo_b if desc else lo_b <= hi_b
        if np.count_nonzero(ok_a) + np.count_nonzero(ok_b) != p * (n - 2):
            return general(state, plan)  # unsorted or a NaN: the fused form decides
        payload, storage, at = pool.take_writable()
        out = storage[run, :1, :n]
        out[..., :n0] = va
        out[..., n0:] = vb
        if desc:  # negation is exact and keeps -0 == +0: sort the mirrored values
            np.negative(out, out=out)
            out.sort(axis=-1, kind="stable")
            np.negative(out, out=out)
        else:
            out.sort(axis=-1, kind="stable")
        tile = make(payload, 0, None, at)  # type: ignore[operator]
        if not state.push_one(hand, tile):  # capacity: the general path raises the fault
            return general(state, plan)
        tile.serial = state.next_serial()
        return True

    return fused


def _stream(t: Tile, dt: DataType, mask: int) -> bool:
    """Whether ``t`` is a source the lean form merges: a fully defined row-major single
    row of ``dt`` of two or more columns allocated on every PE of ``mask``."""
    return (
        t.dtype == dt
        and t.layout is Layout.ROW_MAJOR
        and t.defined is None
        and t.valid_rows == 1
        and t.valid_cols >= 2
        and t.mask & mask == mask
    )
