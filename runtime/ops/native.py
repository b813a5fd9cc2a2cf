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

import ctypes
import sys
from collections.abc import Callable
from threading import get_ident
from typing import Any

import numpy as np

from ptoc.backend.isa import Axis
from ptoc.backend.isa.fields import PAD_NULL
from ptoc.backend.isa.semantics import compiled
from ptoc.backend.isa.semantics import fastpath as _fp
from ptoc.backend.isa.semantics.arith_kernels import (
    ArgBlock,
    ArithKernel,
    ArithPlan,
    FoldPlan,
    address,
    arg_block,
    block_entries,
    compiled_fold,
    writable_address,
)
from ptoc.backend.target import MachineConfig

from ..alloc import Dests, Slot, fresh
from ..alloc import template as alloc_template
from ..bundle import BundlePlan
from ..engine import Fused
from ..payloads import PayloadPool
from ..spec import Spec
from ..state import MASK_PES, MachineState
from ..tiles import Tile, tile_maker


def _address(t: Tile, strides: tuple[int, ...]) -> int:
    """The payload address of ``t`` for compiled kernels, asked once per tile; -1 when
    the payload is not laid out with byte ``strides`` (a view of another tile's
    storage)."""
    a = t.address
    if not a:
        p = t.payload
        a = t.address = address(p) if p.strides == strides else -1
    return a


class _Run:
    """What a compiled runner needs on one machine configuration in one thread (checked
    once: the bundle's PEs exist, its queue positions are within the depth): the
    bundle's consecutive PEs from ``first`` (``width`` of them), the pool its payloads
    come from (their storage starts as the padding, and poison on the other PEs), the
    argument blocks of the sources' geometry (``by_rows``: by the broadcast or folded
    source's Rows) and the machine status array last seen with its address.

    Two argument blocks per geometry: ``[0]`` without a status address (the runner ORs
    the statuses once the push is known to commit), ``[1]`` with it (the kernel ORs
    them itself, for a push that cannot fail)."""

    __slots__ = ("by_rows", "config", "depth", "first", "plans", "pool", "scalar_at",
                 "scalar_words", "scalars", "status", "status_at", "thread",
                 "width")  # fmt: skip

    def __init__(
        self, config: MachineConfig, first: int, width: int, pool: PayloadPool
    ) -> None:
        self.config, self.depth, self.thread = config, config.depth, get_ident()
        self.first, self.width, self.pool = first, width, pool
        self.by_rows: dict[int, Blocks] = {}
        self.plans: list[ArithPlan | FoldPlan] = []  # the geometry blocks args point at
        self.status: np.ndarray | None = None
        self.status_at = 0
        #: a tile-scalar bundle's operand: each PE's scalar (its GPR's low element bits)
        #: in a buffer the kernel reads with a zero row and column stride, its address
        #: and the GPR words it holds now
        self.scalars: np.ndarray | None = None
        self.scalar_at = 0
        self.scalar_words: list[int] | None = None

    def blocks(self, plan: ArithPlan | FoldPlan) -> Blocks:
        """The two argument blocks of ``plan`` (kept alive here: they point into it)
        and their addresses (for :func:`_caller`'s call)."""
        self.plans.append(plan)
        plain, direct = arg_block(plan), arg_block(plan)
        direct[4] = self.status_at
        return plain, direct, ctypes.addressof(plain), ctypes.addressof(direct)

    def watch(self, status: np.ndarray) -> int:
        """Point the status-writing blocks at ``status`` (the machine's status array,
        which a scalar block replaces) and return its address, or 0 where the kernel may
        not write it (then the runner ORs the statuses itself)."""
        ok = status.dtype == np.uint8 and status.flags.c_contiguous and status.flags.writeable
        self.status_at = writable_address(status) + self.first if ok else 0
        self.status = status
        for direct in self.by_rows.values():
            direct[1][4] = self.status_at
        return self.status_at


def _or_status(state: MachineState, first: int, width: int, packed: int) -> None:
    """OR the kernel's packed per-PE statuses into ``state.status[first:first+width]``."""
    if not packed & ((1 << (8 * width)) - 1):
        return  # no PE raised a flag (a max or min, an exact sum)
    status = state.status
    for p in range(width):
        status[first + p] |= (packed >> (8 * p)) & 0xFF


def _push(state: MachineState, hand: int, tile: Tile, r: _Run, packed: int) -> bool:
    """Publish ``tile`` and OR its statuses in, for a push that is not the plain one (a
    full queue releasing a tile of the same mask and capacity); False when it would
    fault (nothing changed: the caller takes the general path)."""
    if not state.push_one(hand, tile):  # capacity: the general path raises the fault
        return False
    _or_status(state, r.first, r.width, packed)
    return True


_BAD = 1 << 62
_refcount = sys.getrefcount
#: a geometry's two argument blocks (without and with the status address) and their
#: addresses
Blocks = tuple[ArgBlock, ArgBlock, int, int]


def _caller() -> Callable[[int, int, int, int, int], int] | None:
    """``callblock.call`` (a CPython entry that sets an argument block's operand words
    and calls a block entry: the per-bundle call without ctypes' argument conversion),
    or None when the extension cannot be built (the runners then call through ctypes)."""
    ext = compiled.extension("callblock")
    return None if ext is None else ext.call


def _entry_address(entry: Any) -> int:
    """The machine address of a ctypes function."""
    address = ctypes.cast(entry, ctypes.c_void_p).value
    assert address is not None
    return address


def _runs(
    pes: tuple[int, ...], slot: Slot, pad: int, positions: tuple[tuple[int, int], ...]
) -> tuple[Callable[[MachineState], _Run | None], list[_Run | None]]:
    """The run lookup of a runner: the run of the state's configuration and the calling
    thread, made on first use; None when the bundle's PEs are not all on the machine or
    a source position or the destination hand is outside its queues. Also the one-entry
    list of the run found last, for a runner's check before it calls the lookup."""
    hand = slot.hand
    #: (configuration, thread) -> its run, or None (configurations compare by value)
    known: dict[tuple[MachineConfig, int], _Run | None] = {}
    last: list[_Run | None] = [None]

    def run_of(state: MachineState) -> _Run | None:
        cfg = state.config
        k = (cfg, get_ident())
        if k not in known:
            fits = pes[-1] < cfg.pes and hand < cfg.hands
            fits = fits and all(h < cfg.hands and i <= cfg.depth for h, i in positions)
            known[k] = _start(cfg, pes, slot, pad) if fits else None
        r = known[k]
        if r is not None:  # equal configurations (a new Machine each) share one run
            r.config = cfg  # the identity the runner checks first
            last[0] = r
        return r

    return run_of, last


def compiled_runner(
    kernel: ArithKernel,
    general: Fused,
    spec: Spec,
    dests: Dests,
    key: tuple[object, ...],
    broadcast: Axis | None = None,
    b_key: tuple[object, ...] | None = None,
    scalar: bool = False,
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
    With ``scalar`` (TADDS .. TMINS), the one source has descriptor ``key`` and the
    second operand is each PE's B.IOR scalar (the low element-width bits of its GPR, 0
    when B.IOR is omitted: ``semantics.scalar``'s operand), read with zero row and
    column strides: the same arithmetic as the two-tile operation with that value.
    Anything else -- other PEs, a source not found or of another descriptor, a capacity
    fault, the exact engine or the numpy route asked for -- runs ``general`` (the fused
    runner), which settles it or falls back to the generic path with nothing changed.
    """
    slot = dests.slots[0]
    mask, hand = slot.mask, slot.hand
    if scalar:
        ((h0, i0, _),) = spec.plan.source_pos
        h1, i1 = h0, i0  # (the one source: its position is checked twice)
    else:
        (h0, i0, _), (h1, i1, _) = spec.plan.source_pos
    dt, rows, cols, vr, vc = slot.dtype, slot.rows, slot.cols, slot.valid_rows, slot.valid_cols
    capacity = slot.capacity
    pes = MASK_PES[mask] if 0 <= mask < len(MASK_PES) else ()
    entries = block_entries()
    if entries is None or dt is None or not pes or pes != tuple(range(pes[0], pes[-1] + 1)):
        return general
    entry = entries[0]
    call, entry_at = _caller(), _entry_address(entry)
    make = tile_maker(dt, rows, cols, vr, vc, slot.layout, mask, capacity, spec.pad != PAD_NULL)
    op = spec.row.arith or ""
    strides = (rows * cols, cols, 1)  # a dense payload of this shape, in elements
    size = slot.carrier.itemsize
    nbytes = tuple(s * size for s in strides)
    shape = (len(pes), vr, vc)
    off = pes[0] * nbytes[0]  # the first PE's offset in the payload and in a source
    run_of, last = _runs(pes, slot, spec.pad, ((h0, i0), (h1, i1)))
    same_rows = -1  # the by_rows key of two same-shape sources
    low = (1 << (8 * size)) - 1  # the GPR bits a scalar operand keeps

    def scalar_operand(r: _Run, words: list[int]) -> int:
        """The address of the run's scalar buffer holding ``words``' low bits."""
        if words != r.scalar_words:
            if r.scalars is None:
                r.scalars = np.zeros(len(pes), slot.carrier)
                r.scalar_at = address(r.scalars)
            r.scalars.view(f"u{size}")[:] = [w & low for w in words]
            r.scalar_words = words
        return r.scalar_at

    def plan_for(r: _Run, b: Tile | None) -> Blocks:
        if scalar:
            got = r.by_rows[same_rows] = r.blocks(
                ArithPlan(kernel, op, dt, shape, strides, (1, 0, 0), strides)
            )
        elif broadcast is None:
            got = r.by_rows[same_rows] = r.blocks(
                ArithPlan(kernel, op, dt, shape, strides, strides, strides)
            )
        else:
            assert b is not None
            b_strides = (b.rows * b.cols, b.cols, 1)
            y = (
                (b_strides[0], b_strides[1], 0)
                if broadcast is Axis.ROW
                else (b_strides[0], 0, 1)
            )
            got = r.by_rows[b.rows] = r.blocks(
                ArithPlan(kernel, op, dt, shape, strides, y, strides)
            )
        return got

    def fused(state: MachineState, plan: BundlePlan) -> bool:
        r = last[0]
        if r is None or r.config is not state.config or r.thread != get_ident():
            r = run_of(state)
            if r is None:
                return general(state, plan)
        if not _fp._enabled or compiled._suspended:
            return general(state, plan)
        queues = state.queues
        q0, q1 = queues[h0], queues[h1]
        if i0 > len(q0) or i1 > len(q1):
            return general(state, plan)
        a, b = q0[i0 - 1], q1[i1 - 1]
        if a.key != key or a.mask & mask != mask or b.mask & mask != mask:
            return general(state, plan)
        if scalar:
            blocks = r.by_rows.get(same_rows) or plan_for(r, None)
            ior = plan.ior
            y = scalar_operand(r, [0] * len(pes) if ior is None
                               else state.gpr_column(ior.sources[0], pes))  # fmt: skip
            y_off = 0
        elif broadcast is None:
            if b.key != key:
                return general(state, plan)
            blocks = r.by_rows.get(same_rows) or plan_for(r, b)
            y = b.address or _address(b, nbytes)
            y_off = off
        else:
            k = b.key
            if k[:5] != b_key or not k[6]:
                return general(state, plan)
            blocks = r.by_rows.get(b.rows) or plan_for(r, b)
            b_bytes = (b.rows * b.cols * size, b.cols * size, size)
            y = b.address or _address(b, b_bytes)
            y_off = pes[0] * b_bytes[0]
        x = a.address or _address(a, nbytes)
        if x < 0 or y < 0:
            return general(state, plan)
        q = queues[hand]
        # the plain push -- a full queue releasing a tile of the same mask and capacity,
        # which commits whatever the kernel finds -- lets the kernel OR the statuses in
        plain = len(q) == r.depth and q[-1].mask == mask and q[-1].capacity == capacity
        if plain:
            status = state.status
            plain = (r.status_at if status is r.status else r.watch(status)) != 0
        pool = r.pool
        got = None
        if plain and pool.large:
            gone = q[-1]  # released by this push: its storage can take the result when
            # nothing else holds the tile (the queue, this local, getrefcount's argument)
            if gone is not a and gone is not b and _refcount(gone) == 3:
                got = pool.reclaim(gone.payload)
            del gone
        payload, z = got or pool.take()
        if call is not None:
            packed = call(entry_at, blocks[3] if plain else blocks[2], x + off, y + y_off,
                          z + off)  # fmt: skip
        else:
            args = blocks[1] if plain else blocks[0]
            args[1] = x + off
            args[2] = y + y_off
            args[3] = z + off
            packed = entry(args)
        state._serial += 1
        tile = make(payload, state._serial, packed < _BAD, z)
        if plain:  # the kernel ORed the statuses in: the push cannot fail
            q.pop()  # released (no other holder: lists are replaced or changed whole)
            q.insert(0, tile)
            return True
        if _push(state, hand, tile, r, packed):
            return True
        state._serial -= 1
        return general(state, plan)

    return fused


def compiled_reduction_runner(
    general: Fused, spec: Spec, dests: Dests, key: tuple[object, ...], axis: Axis
) -> Fused:
    """The fused form of an FP32/FP64 row (``axis`` ROW) or column reduction -- sum,
    prod, max, min -- of one source tile whose descriptor starts with ``key`` (any
    physical Rows) on a run of PEs: one call of the compiled fold per bundle, the
    results straight into the new payload (see :func:`compiled_runner` for the rest)."""
    kernel = compiled_fold()
    entries = block_entries()
    slot = dests.slots[0]
    mask, hand = slot.mask, slot.hand
    ((h0, i0, _),) = spec.plan.source_pos
    dt, rows, cols, vr, vc = slot.dtype, slot.rows, slot.cols, slot.valid_rows, slot.valid_cols
    capacity = slot.capacity
    pes = MASK_PES[mask] if 0 <= mask < len(MASK_PES) else ()
    if (
        kernel is None
        or entries is None
        or dt is None
        or not pes
        or pes != tuple(range(pes[0], pes[-1] + 1))
    ):
        return general
    entry = entries[1]
    call, entry_at = _caller(), _entry_address(entry)
    make = tile_maker(dt, rows, cols, vr, vc, slot.layout, mask, capacity, spec.pad != PAD_NULL)
    op = spec.row.arith or ""
    size = slot.carrier.itemsize
    z_strides = (rows * cols, cols if axis is Axis.ROW else 1)
    z_off = pes[0] * z_strides[0] * size
    run_of, last = _runs(pes, slot, spec.pad, ((h0, i0),))

    def plan_for(r: _Run, a: Tile) -> Blocks:
        x = (a.rows * a.cols, a.cols, 1)  # (PE, row, column) of a dense payload
        if axis is Axis.ROW:  # fold each valid row over its columns
            shape, strides = (len(pes), a.valid_rows, a.valid_cols), x
        else:  # fold each valid column over its rows
            shape, strides = (len(pes), a.valid_cols, a.valid_rows), (x[0], 1, x[1])
        assert kernel is not None
        got = r.by_rows[a.rows] = r.blocks(FoldPlan(kernel, op, dt, shape, strides, z_strides))
        return got

    def fused(state: MachineState, plan: BundlePlan) -> bool:
        r = last[0]
        if r is None or r.config is not state.config or r.thread != get_ident():
            r = run_of(state)
            if r is None:
                return general(state, plan)
        if not _fp._enabled or compiled._suspended:
            return general(state, plan)
        queues = state.queues
        q0 = queues[h0]
        if i0 > len(q0):
            return general(state, plan)
        a = q0[i0 - 1]
        k = a.key
        if k[:5] != key or not k[6] or a.mask & mask != mask:
            return general(state, plan)
        blocks = r.by_rows.get(a.rows) or plan_for(r, a)
        a_bytes = (a.rows * a.cols * size, a.cols * size, size)
        x = a.address or _address(a, a_bytes)
        if x < 0:
            return general(state, plan)
        payload, z = r.pool.take()
        q = queues[hand]
        # the plain push -- a full queue releasing a tile of the same mask and capacity,
        # which commits whatever the kernel finds -- lets the kernel OR the statuses in
        plain = len(q) == r.depth and q[-1].mask == mask and q[-1].capacity == capacity
        if plain:
            status = state.status
            plain = (r.status_at if status is r.status else r.watch(status)) != 0
        if call is not None:  # (a fold's word 3 is unused)
            packed = call(entry_at, blocks[3] if plain else blocks[2],
                          x + pes[0] * a_bytes[0], z + z_off, 0)  # fmt: skip
        else:
            args = blocks[1] if plain else blocks[0]
            args[1] = x + pes[0] * a_bytes[0]
            args[2] = z + z_off
            packed = entry(args)
        state._serial += 1
        tile = make(payload, state._serial, None, z)
        if plain:  # the kernel ORed the statuses in: the push cannot fail
            q.pop()  # released (no other holder: lists are replaced or changed whole)
            q.insert(0, tile)
            return True
        if _push(state, hand, tile, r, packed):
            return True
        state._serial -= 1
        return general(state, plan)

    return fused


def _start(cfg: MachineConfig, pes: tuple[int, ...], slot: Slot, pad: int) -> _Run:
    """The run of a bundle on ``pes`` on a machine of ``cfg``, its payloads starting as
    ``pad`` on the bundle's PEs and poison on the others (undefined bytes when the
    kernel writes every element)."""
    npes = cfg.pes
    dt, rows, cols = slot.dtype, slot.rows, slot.cols
    if len(pes) == npes and slot.valid_rows == rows and slot.valid_cols == cols:
        template = None  # the whole payload is results
    else:
        template = fresh(dt, (npes, rows, cols), PAD_NULL)  # poison everywhere
        template[pes[0] : pes[-1] + 1] = alloc_template(dt, (1, rows, cols), pad)
    pool = PayloadPool((npes, rows, cols), slot.carrier, template)
    return _Run(cfg, pes[0], len(pes), pool)
