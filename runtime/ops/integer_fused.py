"""The lean fused forms of integer elementwise binary bundles (TADD, TSUB, TMUL, TAND,
TOR, TXOR, TMAX, TMIN on consecutive PEs) and of their tile-scalar forms (TADDS ..
TMINS, TANDS, TORS, TXORS, TSHLS, TSHRS): one numpy ufunc on the carriers, straight into
the new payload.

These operations raise no status at an integer type (``core.binary``: add, sub and mul
wrap modulo the element width, max and min select, and/or/xor act on the bits), so the
generic route's dispatch -- the float fast path's refusal, the carrier checks, the
unsigned views -- settles nothing a ufunc on the carrier does not: numpy array
arithmetic wraps modulo the carrier width, which is the element width for every
integer type but the packed 4-bit ones (left to the fused runner). A tile-scalar
operand is the low element-width bits of each PE's RegSrc0 (``TileRawElementValue``) as
the carrier's value; the shifts take the low log2(width) bits of it as their count
(``TileIntegerShiftAmount``), shift left on the unsigned view and right arithmetically
exactly when the type is signed, as ``core.binary`` does.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ptoc.backend.isa import info

from ..alloc import Dests
from ..bundle import BundlePlan
from ..engine import Fused
from ..spec import Spec
from ..state import MachineState
from .lean import consecutive_pes, lean_target, publish

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
    dt, vr, vc = slot.dtype, slot.valid_rows, slot.valid_cols
    pes = consecutive_pes(mask)
    if dt is None or not pes:
        return general
    ufunc = INT_UFUNCS[spec.row.arith or ""]
    pad = spec.pad
    make, run, pool_of = lean_target(slot, pad, pes, max(h0, h1, hand), max(i0, i1))

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
        return publish(state, hand, make(payload, 0, None, at)) or general(state, plan)

    return fused


#: the shifts among the tile-scalar operations (``OpRow.arith`` -> ufunc)
_SHIFTS: dict[str, Callable[..., np.ndarray]] = {"shl": np.left_shift, "shr": np.right_shift}
#: ``OpRow.arith`` of the tile-scalar operations :func:`int_scalar_runner` serves: the
#: binary ones and the shifts
INT_SCALAR_OPS = frozenset(INT_UFUNCS) | frozenset(_SHIFTS)


def int_scalar_applies(spec: Spec) -> bool:
    """Whether :func:`int_scalar_runner` serves the tile-scalar bundle: an
    :data:`INT_SCALAR_OPS` operation at an integer type whose carrier is its element."""
    i = info(spec.dtype())
    return spec.row.arith in INT_SCALAR_OPS and i.is_int and i.carrier.itemsize * 8 == i.bits


def int_scalar_runner(
    general: Fused, spec: Spec, dests: Dests, key: tuple[object, ...]
) -> Fused:
    """The fused form of an :func:`int_scalar_applies` tile-scalar bundle on
    consecutive PEs whose source has descriptor ``key``: :func:`int_runner` with each
    PE's scalar operand (one carrier value when every PE holds the same, else a
    (P, 1, 1) array) in place of the second tile. Anything else -- PEs the machine
    lacks, a source not found or of another descriptor, a capacity fault -- runs
    ``general`` (the fused runner), which settles it or falls back to the generic path
    with nothing changed."""
    slot = dests.slots[0]
    mask, hand = slot.mask, slot.hand
    ((h0, i0, _),) = spec.plan.source_pos
    dt, vr, vc = slot.dtype, slot.valid_rows, slot.valid_cols
    pes = consecutive_pes(mask)
    if dt is None or not pes:
        return general
    op = spec.row.arith or ""
    carrier = slot.carrier
    width = carrier.itemsize * 8
    # the wrapping and bitwise operations and the left shift act on the bits: they run
    # on the unsigned view (no signed overflow in a ufunc); max, min and the right shift
    # (arithmetic exactly when the carrier is signed) on the carrier itself
    work = carrier if op in ("max", "min", "shr") else np.dtype(f"u{carrier.itemsize}")
    ufunc = _SHIFTS.get(op) or INT_UFUNCS[op]
    #: the bits of a raw word that make the operand: a shift's count, else the element
    low = width - 1 if op in _SHIFTS else (1 << width) - 1
    negative = 1 << (width - 1) if work.kind == "i" and op not in _SHIFTS else 0
    pad = spec.pad
    make, run, pool_of = lean_target(slot, pad, pes, max(h0, hand), i0)

    def operand(words: list[int]) -> object:
        """Each PE's operand of its raw word, in ``work``: one value when they agree."""
        vals = [w & low for w in words]
        if negative:
            vals = [v - (negative << 1) if v & negative else v for v in vals]
        first = vals[0]
        if vals.count(first) == len(vals):
            return work.type(first)
        return np.array(vals, work).reshape(-1, 1, 1)

    def fused(state: MachineState, plan: BundlePlan) -> bool:
        pool = pool_of(state.config)
        if pool is None:
            return general(state, plan)
        q0 = state.queues[h0]
        if i0 > len(q0):
            return general(state, plan)
        a = q0[i0 - 1]
        if a.key != key or a.mask & mask != mask:
            return general(state, plan)
        ior = plan.ior
        s = operand([0] if ior is None else state.gpr_column(ior.sources[0], pes))
        payload, storage, at = pool.take_writable()
        out = storage[run, :vr, :vc]
        ufunc(a.payload[run, :vr, :vc].view(work), s, out=out.view(work))
        return publish(state, hand, make(payload, 0, None, at)) or general(state, plan)

    return fused


def int_expand_runner(
    general: Fused,
    spec: Spec,
    dests: Dests,
    key: tuple[object, ...],
    b_key: tuple[object, ...],
    b_valid: tuple[int, int],
) -> Fused:
    """The fused form of an :func:`int_applies` broadcast expansion (TROWEXPANDADD ..,
    TCOLEXPANDMUL ..) on consecutive PEs: :func:`int_runner` whose second operand is
    the broadcast tile's ``b_valid`` (ValidRow, ValidCol) region -- one column or one
    row -- broadcast by the ufunc (``expand._expand`` hands integer operands to
    ``core.binary`` the same way). The full source has descriptor ``key``, the
    broadcast one ``b_key`` in its first five fields (any physical Rows) and is fully
    defined. Anything else runs ``general``."""
    slot = dests.slots[0]
    mask, hand = slot.mask, slot.hand
    (h0, i0, _), (h1, i1, _) = spec.plan.source_pos
    dt, vr, vc = slot.dtype, slot.valid_rows, slot.valid_cols
    pes = consecutive_pes(mask)
    if dt is None or not pes:
        return general
    ufunc = INT_UFUNCS[spec.row.arith or ""]
    br, bc = b_valid
    pad = spec.pad
    make, run, pool_of = lean_target(slot, pad, pes, max(h0, h1, hand), max(i0, i1))

    def fused(state: MachineState, plan: BundlePlan) -> bool:
        pool = pool_of(state.config)
        if pool is None:
            return general(state, plan)
        queues = state.queues
        q0, q1 = queues[h0], queues[h1]
        if i0 > len(q0) or i1 > len(q1):
            return general(state, plan)
        a, b = q0[i0 - 1], q1[i1 - 1]
        bk = b.key
        if a.key != key or bk[:5] != b_key or not bk[6]:
            return general(state, plan)
        if a.mask & mask != mask or b.mask & mask != mask:
            return general(state, plan)
        payload, storage, at = pool.take_writable()
        ufunc(a.payload[run, :vr, :vc], b.payload[run, :br, :bc], out=storage[run, :vr, :vc])
        return publish(state, hand, make(payload, 0, None, at)) or general(state, plan)

    return fused
