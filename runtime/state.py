"""Architectural state of one PTO core (DECISIONS D1-D3) and its deep snapshot.

* Global memory: one byte array shared by every PE (and, in a grid launch, by every
  core, D13): dense, or lazily paged when large (:mod:`ptoc.runtime.gm`).
* Per-PE GPRs: ``gpr[pe, reg]`` uint64 (24 architectural registers, ``zero`` reads 0).
* Four relative generation queues (D1): ``queues[hand][k-1]`` is ``hand#k``; a new
  destination becomes ``#1`` and the entry pushed past ``depth`` is released.
* Per-PE capacity accounting (D2): ``used[pe]`` bytes of the tiles allocated on ``pe``
  (Local tiles and allocated Shared registers alike).
* Shared registers S0..S255 (``shared[id]``, :mod:`ptoc.runtime.shared`): one core-wide
  record each, absent until its first write.
* Per-PE sticky numeric status NV/DZ/OF/UF/NX (``status[pe]``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ptoc.backend.isa.fields import GPR_COUNT, Hand, mask_pes
from ptoc.backend.program import TileRef
from ptoc.backend.target import MachineConfig

from .faults import TileAllocationFault, TileLegalityFault
from .gm import DENSE_LIMIT, Memory, memory_differences, memory_equal, new_memory
from .gm_pool import POOL, Written
from .shared import SharedTile
from .tiles import Tile, raw_bits

#: PE indices of every 4-bit PE_MASK
MASK_PES: tuple[tuple[int, ...], ...] = tuple(mask_pes(m) for m in range(16))


@dataclass(slots=True)
class PushPlan:
    """A checked queue push: per-PE usage afterwards, released tiles, and how many old
    entries each pushed hand keeps."""

    used: list[int]
    released: list[Tile]
    keep: dict[int, int]


class MachineState:
    """Mutable machine state; only the executor's commit step mutates it."""

    def __init__(self, config: MachineConfig, gm: Memory | None = None) -> None:
        self.config = config
        #: global memory (shared with the other cores of a grid when given)
        self.gm: Memory
        #: the chunks of a dense memory of its own the machine has written (every write
        #: to ``gm`` records itself here), None for any other memory: an owned memory
        #: goes back to :data:`~ptoc.runtime.gm_pool.POOL` with the machine
        self.gm_written: Written | None = None
        if gm is None and config.gm_size <= DENSE_LIMIT:
            self.gm, resident = POOL.take(config.gm_size)
            self.gm_written = Written(resident)
        else:
            self.gm = new_memory(config.gm_size) if gm is None else gm
        self._fresh()

    def _fresh(self) -> None:
        """Everything but the memory as a new core has it (``__init__`` and
        :meth:`reset`)."""
        config = self.config
        #: the grid's access recorder (races, merged writes); None: nothing is recorded
        self.access_log: Any = None
        #: the GPRs (:attr:`gpr`): the array, or None while only :attr:`gpr_ints` holds
        #: them (an integer scalar block's result, made an array when first read)
        self._gpr: np.ndarray | None = np.zeros((config.pes, GPR_COUNT), np.uint64)
        #: the GPRs as Python integers, one list per PE (a single list when every PE
        #: holds the same), or None; when both are set they agree and the array is
        #: read-only (an integer scalar block publishes them; a writer drops them)
        self.gpr_ints: list[list[int]] | None = None
        #: while ``_gpr`` is None: the last array and the registers written since (what
        #: :attr:`gpr` builds the array from)
        self._gpr_base: np.ndarray | None = None
        self._gpr_written: frozenset[int] = frozenset()
        self.queues: list[list[Tile]] = [[] for _ in range(config.hands)]
        self.used = [0] * config.pes
        self.status = np.zeros(config.pes, np.uint8)
        #: CORE_STATE[39:37], the FSU forms' active rounding mode (0: to nearest even);
        #: no modelled instruction writes it
        self.fp_rounding = 0
        #: the scalar temporary queues T and U (``_TQueue``/``_UQueue``): four entries
        #: each, entry 0 the newest, a value per PE and one validity per entry
        self.squeue = np.zeros((config.pes, 2, 4), np.uint64)
        self.squeue_valid = np.zeros((2, 4), bool)
        #: allocated Shared registers by id (S0..S255)
        self.shared: dict[int, SharedTile] = {}
        self._serial = 0

    def reset(self) -> bool:
        """Return to the state of a new core of the same configuration, keeping a dense
        memory of its own (zeroed again where it was written, as the pool does); False,
        changing nothing, when the memory is not its own or was written too widely to be
        worth zeroing (a new core is then the cheaper start)."""
        written, gm = self.gm_written, self.gm
        if written is None or written.chunks is None or not isinstance(gm, np.ndarray):
            return False
        POOL.clean(gm, written)
        self._fresh()
        return True

    def __del__(self) -> None:
        # (a state built without __init__ has no record; at interpreter exit the pool
        # may be gone already: keeping a memory is only ever an optimisation)
        written = self.__dict__.get("gm_written")
        gm = self.__dict__.get("gm")
        if written is not None and isinstance(gm, np.ndarray):
            with contextlib.suppress(Exception):
                POOL.give(gm, written, holders=3)  # the attribute, ``gm``, give's argument

    @property
    def gpr(self) -> np.ndarray:
        """Per-PE GPRs, ``gpr[pe, reg]`` uint64 (read-only when an integer scalar block
        published them: write through :meth:`writable_gpr`)."""
        g = self._gpr
        return self._gpr_array() if g is None else g

    @gpr.setter
    def gpr(self, value: np.ndarray) -> None:
        self._gpr, self.gpr_ints = value, None

    def _gpr_array(self) -> np.ndarray:
        """The array of :attr:`gpr_ints` (the last array with the registers written
        since), read-only, kept with the integers it agrees with."""
        regs, base = self.gpr_ints, self._gpr_base
        assert regs is not None and base is not None
        out = base.copy()
        for r in self._gpr_written:  # (a column per register: converting all costs more)
            out[:, r] = regs[0][r] if len(regs) == 1 else [pe[r] for pe in regs]
        out.flags.writeable = False
        self._gpr, self._gpr_base, self._gpr_written = out, None, frozenset()
        return out

    def gpr_lists(self) -> list[list[int]]:
        """The GPRs as Python integers for an integer block to change in place: one list
        per PE, or a single list when every PE holds the same. The GPRs stay what they
        were, whatever happens to the lists, until :meth:`publish_gpr_ints`."""
        regs = self.gpr_ints
        if regs is None:
            regs = self.gpr.tolist()
            first = regs[0]
            # PEs holding the same GPRs compute the same values and agree on the
            # condition: the block runs once (a loop's bookkeeping, bases not per PE)
            return [first] if all(pe == first for pe in regs) else regs
        if self._gpr is None:  # the lists are the only record: a copy
            return [list(pe) for pe in regs]
        self.gpr_ints = None  # (the array records them too)
        return regs

    def publish_gpr_ints(self, regs: list[list[int]], written: frozenset[int]) -> None:
        """Make ``regs`` (an integer scalar block's result, registers ``written``
        changed) the GPRs, their array made when something reads :attr:`gpr`."""
        g = self._gpr
        if g is not None:
            self._gpr_base, self._gpr_written = g, written
        else:
            self._gpr_written = self._gpr_written | written
        self._gpr, self.gpr_ints = None, regs

    def publish_gprs(self, gpr: np.ndarray, ints: list[list[int]]) -> None:
        """Make ``gpr`` (read-only, kept by the caller) the GPRs, ``ints`` the same
        values as Python integers (one list per PE, or a single list when every PE holds
        the same; the GPRs own it from now on): what an integer scalar block publishes,
        set at once."""
        assert not gpr.flags.writeable
        self._gpr, self.gpr_ints = gpr, ints
        self._gpr_base, self._gpr_written = None, frozenset()

    def gpr_values(self, regs: tuple[int, ...]) -> tuple[tuple[int, ...], ...]:
        """Per PE, the values of the GPRs ``regs`` as Python integers (read from
        :attr:`gpr_ints` when they are set: no array is made)."""
        ints = self.gpr_ints
        if ints is None:
            return tuple(map(tuple, self.gpr[:, list(regs)].tolist()))
        if len(ints) == 1:
            row = ints[0]
            return (tuple([row[r] for r in regs]),) * self.config.pes
        return tuple(tuple([pe[r] for r in regs]) for pe in ints)

    def gpr_column(self, reg: int, pes: tuple[int, ...]) -> list[int]:
        """GPR ``reg`` on each PE of ``pes`` (PEs of this machine) as Python integers
        (read from :attr:`gpr_ints` when they are set: no array is made)."""
        ints = self.gpr_ints
        if ints is None:
            column = self.gpr[:, reg].tolist()
            return [column[pe] for pe in pes]
        if len(ints) == 1:
            return [ints[0][reg]] * len(pes)
        return [ints[pe][reg] for pe in pes]

    def writable_gpr(self) -> np.ndarray:
        """``gpr``, to be written in place: a copy when it is a published read-only array
        (an integer scalar block's); :attr:`gpr_ints` no longer describes it."""
        gpr = self.gpr
        if not gpr.flags.writeable:
            gpr = gpr.copy()
        self.gpr = gpr
        return gpr

    # ------------------------------------------------------------------ queues

    def lookup(self, ref: TileRef) -> Tile:
        """The tile ``ref`` names before the current bundle commits (TileLegality if empty)."""
        hand = int(ref.hand)
        if hand >= self.config.hands:
            raise TileLegalityFault(
                f"{ref} names hand {ref.hand.name}, but this machine has "
                f"{self.config.hands} hand(s)"
            )
        if ref.index > self.config.depth:
            raise TileLegalityFault(
                f"{ref} is beyond the queue depth {self.config.depth} of this machine"
            )
        q = self.queues[hand]
        if ref.index > len(q):
            raise TileLegalityFault(
                f"{ref} selects an empty queue position (hand {ref.hand.name} holds "
                f"{len(q)} tile(s))"
            )
        return q[ref.index - 1]

    def next_serial(self) -> int:
        self._serial += 1
        return self._serial

    def check_push(self, new: Sequence[tuple[int, int, int]]) -> PushPlan:
        """Capacity after pushing ``new`` = (hand, mask, per-PE bytes) in binding order.

        The entry pushed past ``depth`` is released (D1), so it no longer counts; raises
        TileAllocationFault (D2) when a PE would still exceed its capacity. Mutates nothing.
        """
        cfg = self.config
        depth = cfg.depth
        if len(new) == 1:  # the common single-destination bundle
            hand, mask, capacity = new[0]
            if hand < cfg.hands:
                old = self.queues[hand]
                if len(old) < depth:  # nothing is pushed past the depth
                    kept, gone = len(old), []
                else:
                    kept = depth - 1
                    gone = old[kept:]
                    if len(gone) == 1 and gone[0].mask == mask and gone[0].capacity == capacity:
                        # the released tile frees exactly what the new one takes
                        return PushPlan(self.used, gone, {hand: kept})
                after = self.used.copy()
                for tile in gone:
                    for pe in MASK_PES[tile.mask]:
                        after[pe] -= tile.capacity
                for pe in MASK_PES[mask]:
                    after[pe] += capacity
                if max(after) <= cfg.capacity:
                    return PushPlan(after, gone, {hand: kept})
        pushes: dict[int, int] = {}
        for hand, _, _ in new:
            if hand >= cfg.hands:
                raise TileAllocationFault(
                    f"destination hand {Hand(hand).name} does not exist on this machine "
                    f"({cfg.hands} hand(s))"
                )
            pushes[hand] = pushes.get(hand, 0) + 1
        used = list(self.used)
        released: list[Tile] = []
        keep: dict[int, int] = {}
        for hand, k in pushes.items():
            old = self.queues[hand]
            kept = max(0, min(len(old), depth - k))
            keep[hand] = kept
            released.extend(old[kept:])
        for tile in released:
            for pe in MASK_PES[tile.mask]:
                used[pe] -= tile.capacity
        # a new entry pushed past the depth by a later one of the same bundle never counts
        seen: dict[int, int] = {}
        for hand, mask, capacity in reversed(new):
            seen[hand] = seen.get(hand, 0) + 1
            if seen[hand] <= depth:
                for pe in MASK_PES[mask]:
                    used[pe] += capacity
        cap = cfg.capacity
        for pe, u in enumerate(used):
            if u > cap:
                raise TileAllocationFault(
                    f"PE{pe} would hold {u} bytes of Local tiles after this commit, more "
                    f"than its capacity of {cap} bytes"
                )
        return PushPlan(used, released, keep)

    def push_one(self, hand: int, tile: Tile) -> bool:
        """Publish ``tile`` as the new ``hand#1`` when that is legal (the hand exists,
        every PE stays within capacity after the eviction, D1/D2): :meth:`check_push`
        and :meth:`apply_push` of one destination in one step. False: nothing changed
        (the caller takes the path that raises the fault)."""
        cfg = self.config
        if hand >= cfg.hands:
            return False
        old = self.queues[hand]
        mask, capacity = tile.mask, tile.capacity
        depth = cfg.depth
        if len(old) >= depth:
            gone = old[depth - 1 :]
            if len(gone) != 1:  # (a queue never holds more than depth tiles)
                try:
                    plan = self.check_push(((hand, mask, capacity),))
                except TileAllocationFault:
                    return False
                self.apply_push(plan, ((hand, tile),))
                return True
            g = gone[0]
            if g.mask == mask and g.capacity == capacity:
                # the released tile frees exactly what the new one takes
                self.queues[hand] = [tile, *old[: depth - 1]]
                return True
            # check_push of one destination on a full queue: the released tile's bytes
            # go, the new one's come
            after = self.used.copy()
            for pe in MASK_PES[g.mask]:
                after[pe] -= g.capacity
            for pe in MASK_PES[mask]:
                after[pe] += capacity
            if max(after) > cfg.capacity:
                return False
            self.queues[hand] = [tile, *old[: depth - 1]]
            self.used = after
            return True
        after = self.used.copy()
        for pe in MASK_PES[mask]:
            after[pe] += capacity
        if max(after) > cfg.capacity:
            return False
        self.queues[hand] = [tile, *old]
        self.used = after
        return True

    def apply_push(self, plan: PushPlan, tiles: Sequence[tuple[int, Tile]]) -> None:
        """Publish ``tiles`` (binding order) as checked by :meth:`check_push`."""
        depth = self.config.depth
        if len(tiles) == 1:
            hand, tile = tiles[0]
            q = self.queues[hand][: plan.keep[hand]]  # keep <= depth - 1
            q.insert(0, tile)
            self.queues[hand] = q
            self.used = plan.used
            return
        fresh: dict[int, list[Tile]] = {}
        for hand, tile in tiles:
            fresh.setdefault(hand, []).insert(0, tile)
        for hand, ts in fresh.items():
            self.queues[hand] = (ts + self.queues[hand][: plan.keep[hand]])[:depth]
        self.used = plan.used

    # ------------------------------------------------------------------ snapshot

    def snapshot(self) -> MachineSnapshot:
        """A deep, value-comparable copy of the whole architectural state."""
        return MachineSnapshot(
            gm=self.gm.copy(),
            gpr=self.gpr.copy(),
            queues=tuple(tuple(_tile_record(t) for t in q) for q in self.queues),
            used=tuple(self.used),
            status=self.status.copy(),
            squeue=self.squeue.copy(),
            squeue_valid=self.squeue_valid.copy(),
            shared=tuple(sorted((k, v.record()) for k, v in self.shared.items())),
        )


@dataclass(frozen=True, eq=False)
class TileRecord:
    """The value of one queue entry: descriptor fields, payload bits, definedness."""

    descriptor: tuple[object, ...]
    payload: np.ndarray
    defined: np.ndarray

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TileRecord):
            return NotImplemented
        return (
            self.descriptor == other.descriptor
            and self.payload.shape == other.payload.shape
            and bool(np.array_equal(self.payload, other.payload))
            and bool(np.array_equal(self.defined, other.defined))
        )

    __hash__ = None  # type: ignore[assignment]


def _tile_record(t: Tile) -> TileRecord:
    desc = (
        t.type_name,
        t.rows,
        t.cols,
        t.valid_rows,
        t.valid_cols,
        t.layout,
        t.mask,
        t.capacity,
    )
    return TileRecord(desc, raw_bits(t.payload).copy(), t.definedness().copy())


@dataclass(frozen=True, eq=False)
class MachineSnapshot:
    """A full copy of the machine state; ``==`` compares every bit (NaN payloads too)."""

    gm: Memory
    gpr: np.ndarray
    queues: tuple[tuple[TileRecord, ...], ...]
    used: tuple[int, ...]
    status: np.ndarray
    squeue: np.ndarray | None = None
    squeue_valid: np.ndarray | None = None
    shared: tuple[tuple[int, tuple[object, ...]], ...] = ()

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, MachineSnapshot):
            return NotImplemented
        return (
            memory_equal(self.gm, other.gm)
            and bool(np.array_equal(self.gpr, other.gpr))
            and self.queues == other.queues
            and self.used == other.used
            and bool(np.array_equal(self.status, other.status))
            and _same(self.squeue, other.squeue)
            and _same(self.squeue_valid, other.squeue_valid)
            and self.shared == other.shared
        )

    __hash__ = None  # type: ignore[assignment]

    def differences(self, other: MachineSnapshot) -> list[str]:
        """Human-readable list of what differs (for test failure messages)."""
        out = []
        count, first = memory_differences(self.gm, other.gm)
        if count:
            out.append(f"GM differs at {count} byte(s), first 0x{first:x}")
        if not np.array_equal(self.gpr, other.gpr):
            out.append("GPRs differ")
        if self.queues != other.queues:
            out.append("tile queues differ")
        if self.used != other.used:
            out.append(f"capacity use differs: {self.used} vs {other.used}")
        if not np.array_equal(self.status, other.status):
            out.append(f"status differs: {self.status} vs {other.status}")
        queues = _same(self.squeue, other.squeue) and _same(
            self.squeue_valid, other.squeue_valid
        )
        if not queues:
            out.append("scalar temporary queues differ")
        if self.shared != other.shared:
            out.append("Shared registers differ")
        return out


def _same(a: np.ndarray | None, b: np.ndarray | None) -> bool:
    if a is None or b is None:
        return a is b
    return bool(np.array_equal(a, b))
