"""The lean fused form of integer elementwise binary bundles (TADD, TSUB, TMUL, TAND,
TOR, TXOR, TMAX, TMIN on consecutive PEs): one numpy ufunc on the carriers, straight into the
new payload.

These operations raise no status at an integer type (``core.binary``: add, sub and mul
wrap modulo the element width, max and min select, and/or/xor act on the bits), so the
generic route's dispatch -- the float fast path's refusal, the carrier checks, the
unsigned views -- settles nothing a ufunc on the carrier does not: numpy array
arithmetic wraps modulo the carrier width, which is the element width for every
integer type but the packed 4-bit ones (left to the fused runner).
"""

from __future__ import annotations

from collections.abc import Callable
from threading import get_ident

import numpy as np

from ptoc.backend.isa import info
from ptoc.backend.isa.fields import PAD_NULL
from ptoc.backend.target import MachineConfig

from ..alloc import Dests
from ..bundle import BundlePlan
from ..engine import Fused, destination_pool
from ..payloads import PayloadPool
from ..spec import Spec
from ..state import MASK_PES, MachineState
from ..tiles import tile_maker

#: ``OpRow.arith`` -> the ufunc giving ``core.binary``'s integer result on the carriers
INT_UFUNCS: dict[str, Callable[..., np.ndarray]] = {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "and": np.bitwise_and,
    "or": np.bitwise_or,
    "xor": np.bitwise_xor,
    "max": np.maximum,
    "min": np.minimum,
}


def int_applies(op: str, spec: Spec) -> bool:
    """Whether :func:`int_runner` serves ``op`` at the bundle's DataType: an integer
    type whose carrier is its element (not a packed 4-bit pair)."""
    i = info(spec.dtype())
    return op in INT_UFUNCS and i.is_int and i.carrier.itemsize * 8 == i.bits


def int_runner(general: Fused, spec: Spec, dests: Dests, key: tuple[object, ...]) -> Fused:
    """The fused form of an :func:`int_applies` two-source bundle on consecutive PEs
    (every PE, or a run such as 1000 or 0110) whose sources have descriptor ``key``
    (fully defined, the destination's shape): the ufunc writes into the new payload,
    whose storage comes from a pool that starts it as the padding on the bundle's PEs
    and poison on the others (as the generic path builds it), published with no
    status. Anything else -- PEs the machine lacks, a source not found or of another
    descriptor, a capacity fault -- runs ``general`` (the fused runner), which settles
    it or falls back to the generic path with nothing changed."""
    slot = dests.slots[0]
    mask, hand = slot.mask, slot.hand
    (h0, i0, _), (h1, i1, _) = spec.plan.source_pos
    dt, rows, cols, vr, vc = slot.dtype, slot.rows, slot.cols, slot.valid_rows, slot.valid_cols
    pes = MASK_PES[mask] if 0 <= mask < len(MASK_PES) else ()
    if dt is None or not pes or pes != tuple(range(pes[0], pes[-1] + 1)):
        return general
    ufunc = INT_UFUNCS[spec.row.arith or ""]
    pad = spec.pad
    make = tile_maker(dt, rows, cols, vr, vc, slot.layout, mask, slot.capacity, pad != PAD_NULL)
    run = slice(pes[0], pes[-1] + 1)
    #: (configuration, thread) -> the payload pool of that machine (None: the bundle's
    #: PEs, queue positions or hand are not on it); pools are not shared across threads
    pools: dict[tuple[MachineConfig, int], PayloadPool | None] = {}

    #: the configuration, thread and pool found last (configurations hash slowly)
    last: list[object] = [None, 0, None]

    def pool_of(cfg: MachineConfig) -> PayloadPool | None:
        ident = get_ident()
        if last[0] is cfg and last[1] == ident:
            return last[2]  # type: ignore[return-value]
        k = (cfg, ident)
        if k not in pools:
            fits = pes[-1] < cfg.pes and max(h0, h1, hand) < cfg.hands
            fits = fits and max(i0, i1) <= cfg.depth
            pools[k] = destination_pool(cfg.pes, slot, pad, pes) if fits else None
        last[:] = cfg, ident, pools[k]
        return pools[k]

    def fused(state: MachineState, plan: BundlePlan) -> bool:
        pool = pool_of(state.config)
        if pool is None:
            return general(state, plan)
        queues = state.queues
        q0, q1 = queues[h0], queues[h1]
        if i0 > len(q0) or i1 > len(q1):
            return general(state, plan)
        a, b = q0[i0 - 1], q1[i1 - 1]
        if a.key != key or b.key != key or a.mask & mask != mask or b.mask & mask != mask:
            return general(state, plan)
        payload, storage, at = pool.take_writable()
        ufunc(a.payload[run, :vr, :vc], b.payload[run, :vr, :vc], out=storage[run, :vr, :vc])
        tile = make(payload, 0, None, at)
        if not state.push_one(hand, tile):  # capacity: the general path raises the fault
            return general(state, plan)
        tile.serial = state.next_serial()
        return True

    return fused
