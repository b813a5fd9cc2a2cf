"""Execution of one tile bundle: commit-time preflight, source snapshot, atomic publication.

Order (REFERENCE section 7, seeds "ordering"): header faults (raised in command order
when the plan was built) -> strict no-op when every binding had PE_MASK 0000 ->
unsupported operations -> LB values -> the operation's static preflight (binding
schema, B.IOR/B.IOS, B.DATR, DataTypes, dimensions; cached per plan and LB tuple) ->
source resolution against the queues *before* commit (empty position, allocation mask
coverage) -> source descriptor and definedness checks -> destination shape and capacity
(``Fault_TileAllocation``) -> data-dependent checks and computation (semantics
functions; ``SemanticError`` -> ``Fault_TileLegality``) -> memory probes -> publication
of every destination, numeric status and GM store at once. Nothing is mutated before
the last step, so a fault leaves the machine exactly as it was.

Speed: a plan whose LBs are constants caches its static preparation (``plan.ready``),
so re-executing an identical bundle goes straight to the runner; handlers compute their
destination descriptors once (:meth:`Spec.dests`) and only check capacity per run.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from types import EllipsisType

import numpy as np

from ptoc.backend.isa import TABLE, DataType, Executor, Family
from ptoc.backend.isa import shared as isa_shared
from ptoc.backend.isa.cube import TRANSPORT_CODES as CUBE_TRANSPORT_CODES
from ptoc.backend.isa.elements import ElementType
from ptoc.backend.isa.fields import PAD_NULL, first_pes_mask, mask_text
from ptoc.backend.isa.semantics.core import BundleControlSemanticError, SemanticError
from ptoc.backend.isa.semantics.fastpath import remember_finite

from .alloc import Dests, Slot, fresh, make_dests, template
from .bundle import BundlePlan
from .faults import (
    BundleControlFault,
    MachineFault,
    TileAllocationFault,
    TileLegalityFault,
    unsupported,
)
from .memory import DenseWrite, GMWrite
from .payloads import PayloadPool
from .shared import SharedTile
from .spec import Shape, Spec, elem_bits
from .state import MASK_PES, MachineState, PushPlan
from .tiles import CUBE_LAYOUTS, Layout, Tile, size_code_bytes, tile_maker

Runner = Callable[["Ctx"], None]
Preparer = Callable[[Spec], Runner]


#: (mask, machine PEs) -> (participating PEs, their count, payload index, view-cache key:
#: None for every PE)
_GEOMETRY: dict[tuple[int, int], tuple[tuple[int, ...], int, slice | list[int], object]] = {}


#: participating PEs -> a basic slice selecting them when they are consecutive (else the
#: PE list): for stores into fresh arrays, where a view and a copy do the same
_RUNS: dict[tuple[int, ...], slice | list[int]] = {}


def _run_index(pes: tuple[int, ...]) -> slice | list[int]:
    r = _RUNS.get(pes)
    if r is None:
        consecutive = pes == tuple(range(pes[0], pes[0] + len(pes)))
        r = _RUNS[pes] = slice(pes[0], pes[-1] + 1) if consecutive else list(pes)
    return r


def geometry(mask: int, npes: int) -> tuple[tuple[int, ...], int, slice | list[int], object]:
    """(participating PEs, their count, payload index, view-cache key) of a PE_MASK."""
    g = _GEOMETRY.get((mask, npes))
    if g is None:
        pes = MASK_PES[mask]
        full = npes == len(pes)
        # every PE: a basic slice (views); a subset: fancy indexing (copies)
        g = (pes, len(pes), slice(None) if full else list(pes), None if full else pes)
        _GEOMETRY[(mask, npes)] = g
    return g


class Ctx:
    """Dynamic execution context handed to an operation's runner."""

    __slots__ = (
        "P", "dims", "gm_writes", "mask", "name", "pes", "pidx", "pkey", "plan", "push",
        "released", "shared_write", "slots", "sources", "spec", "state", "status", "tiles",
    )  # fmt: skip

    def __init__(self, state: MachineState, plan: BundlePlan, spec: Spec) -> None:
        self.state = state
        self.plan = plan
        self.spec = spec
        self.name = spec.name
        self.dims = spec.dims
        npes = state.config.pes
        mask = self.mask = participation(plan, npes)
        pes, self.P, self.pidx, self.pkey = geometry(mask, npes)
        self.pes = pes
        if pes[-1] >= npes:
            raise TileLegalityFault(
                f"mask={mask_text(mask)} selects PE{pes[-1]}, but this machine has "
                f"{npes} PE(s)",
                self.name,
            )
        self.slots: tuple[Slot, ...] = ()
        self.tiles: list[Tile | None] = []
        self.status: np.ndarray | None = None
        self.gm_writes: list[GMWrite | DenseWrite] = []
        #: a checked Shared register write: (id, the new record, per-PE usage after)
        self.shared_write: tuple[int, SharedTile, list[int]] | None = None
        self.push: PushPlan | None = None
        self.released: list[Tile] = []
        queues = state.queues
        depth = state.config.depth
        srcs = []
        for hand, index, ref in plan.source_pos:
            if hand < len(queues) and index <= depth and index <= len(queues[hand]):
                tile = queues[hand][index - 1]
            else:
                tile = state.lookup(ref)  # raises the fault that names the rule
            if tile.layout in CUBE_LAYOUTS and not spec.reads_cube:
                raise TileLegalityFault(
                    f"{ref} is a {tile.layout.value} tile; a CUBE tile is not generically "
                    "indexable (TileGenericIndexingPermitted), so only the matrix "
                    "operations and the CUBE store conversion read it",
                    self.name,
                )
            if tile.mask & mask != mask:
                raise TileLegalityFault(
                    f"{ref} was allocated with mask={mask_text(tile.mask)}, which does not "
                    f"cover the bundle mask={mask_text(mask)}",
                    self.name,
                )
            srcs.append(tile)
        self.sources = srcs

    # ----------------------------------------------------------- sources

    def ref(self, i: int) -> str:
        return str(self.plan.sources[i])

    def illegal(self, rule: str) -> TileLegalityFault:
        return TileLegalityFault(rule, self.name)

    def source(
        self,
        i: int,
        dtype: DataType | EllipsisType | None = ...,
        shape: Shape | None = None,
        rows: int | None = None,
        layout: Layout | None = Layout.ROW_MAJOR,
        predicate: bool = False,
    ) -> Tile:
        """Source ``i`` after descriptor checks: storage kind, DataType, layout, geometry
        (ValidRow, ValidCol, Col, and physical Rows when given) and valid definedness."""
        t = self.sources[i]
        if (t.dtype is None) != predicate:
            kind = "a predicate" if predicate else "a numeric"
            raise self.illegal(f"{self.ref(i)} must be {kind} tile, not {t.shape_text}")
        if dtype is not ... and t.dtype != dtype:
            want = ElementType(dtype).name
            raise self.illegal(
                f"{self.ref(i)} has DataType {t.type_name}, {self.name} needs {want}"
            )
        if layout is not None and t.layout is not layout:
            raise self.illegal(
                f"{self.ref(i)} has layout {t.layout.value}; {self.name} needs {layout.value}"
            )
        if shape is not None and (
            t.valid_rows != shape.valid_rows
            or t.valid_cols != shape.valid_cols
            or t.cols != shape.cols
        ):
            raise self.illegal(
                f"{self.ref(i)} is {t.valid_rows}x{t.valid_cols} of Col {t.cols}; the bundle "
                f"describes {shape.valid_rows}x{shape.valid_cols} of Col {shape.cols}"
            )
        if rows is not None and t.rows != rows:
            raise self.illegal(
                f"{self.ref(i)} has {t.rows} physical rows; the destination has {rows} "
                "(source and destination physical shapes must match)"
            )
        if t.defined is not None:
            self.require_defined(i)
        return t

    def require_defined(self, i: int) -> None:
        t = self.sources[i]
        if not t.valid_defined(self.pes):
            raise self.illegal(f"{self.ref(i)} has an undefined valid element (D6)")

    def values(self, t: Tile) -> np.ndarray:
        """The valid region of ``t`` on the participating PEs, (P, ValidRow, ValidCol)
        (see :func:`region`)."""
        return region(t, self.pidx, self.pkey)

    def physical(self, t: Tile) -> np.ndarray:
        return t.payload[self.pidx]

    def defined(self, t: Tile) -> np.ndarray:
        return t.definedness()[self.pidx]

    # ----------------------------------------------------------- GPR operands

    def gpr_slot(self, slot: int, default: int | None = 0) -> np.ndarray:
        """RegSrc``slot`` of B.IOR read on each participating PE (uint64 (P,)); the
        omission default when B.IOR is absent (``default`` None: caller derives it)."""
        return gpr_words(self.state, self.plan, slot, default, self.P, self.pidx, self.pkey)

    # ----------------------------------------------------------- destinations

    def reserve(self, dests: Dests) -> tuple[Slot, ...]:
        """Claim precomputed destinations: raises their deferred allocation fault, else
        checks per-PE capacity after eviction (``Fault_TileAllocation``)."""
        if dests.fault is not None:
            raise TileAllocationFault(dests.fault, self.name)
        self.push = self.state.check_push(dests.push)
        self.slots = dests.slots
        self.tiles = [None] * len(dests.slots)
        return dests.slots

    def allocate(self, *specs: tuple[DataType, Shape, Layout]) -> tuple[Slot, ...]:
        """Descriptors of every destination in binding order (computed on the first
        call with these specs, kept on the Spec) plus the allocation checks of
        :meth:`reserve`."""
        key = (self.mask, specs)
        cache = self.spec.dests
        dests = cache.get(key)
        if dests is None:
            dests = make_dests(self.spec, self.mask, specs)
            if len(cache) < 16:  # specs read from a source tile vary with it: bounded
                cache[key] = dests
        return self.reserve(dests)

    def allocate_predicate(self, like: Tile) -> Slot:
        """A predicate destination copying Rows/Col/ValidRow/ValidCol of source ``like``
        (``ResolveBundlePredicateDestination``): storage ceil(Rows*Col/8) bytes."""
        hand, size = self.plan.destinations[0]
        cap = size_code_bytes(size)
        need = (like.rows * like.cols + 7) // 8
        if need > cap:
            raise TileAllocationFault(
                f"a {like.rows}x{like.cols} predicate tile needs {need} bytes, more than the "
                f"{cap}-byte TSize",
                self.name,
            )
        slot = Slot(0, int(hand), None, like.rows, like.cols, like.valid_rows, like.valid_cols,
                    Layout.ROW_MAJOR, self.mask, cap, np.dtype(bool))  # fmt: skip
        return self.reserve(Dests((slot,), ((slot.hand, slot.mask, cap),)))[0]

    def publish(
        self,
        slot: Slot,
        values: np.ndarray,
        pad: int = PAD_NULL,
        *,
        whole: bool = False,
        defined: np.ndarray | None = None,
        pad_defined: bool | None = None,
    ) -> None:
        """Build ``slot``'s tile: ``values`` fill its valid region on the participating
        PEs (``whole``: the full physical tile), padding gets ``pad`` (Null = poison,
        undefined), PEs outside the mask stay poisoned and undefined."""
        self.tiles[slot.k] = build_tile(
            self.state, self.name, slot, values, pad, self.pes, self.pidx,
            whole=whole, defined=defined, pad_defined=pad_defined,
        )  # fmt: skip

    def add_status(self, st: np.ndarray) -> None:
        if st.dtype != np.uint8 or st.shape != (self.P,):
            st = np.asarray(st, np.uint8).reshape(self.P)
        self.status = st if self.status is None else (self.status | st)


def gpr_words(
    state: MachineState,
    plan: BundlePlan,
    slot: int,
    default: int | None,
    P: int,
    pidx: slice | list[int],
    pkey: object,
) -> np.ndarray:
    """:meth:`Ctx.gpr_slot` without a context (the fused runners read their B.IOR words
    with it): RegSrc``slot`` on the PEs ``pidx`` selects, uint64 (P,), a new array."""
    ior = plan.ior
    if ior is None:
        assert default is not None
        return np.full(P, default, np.uint64)
    column = state.gpr[:, ior.sources[slot]]  # uint64 (pes,): a view
    return column.copy() if pkey is None else column[pidx]


def region(t: Tile, pidx: slice | list[int], pkey: object) -> np.ndarray:
    """The valid region of ``t`` on the PEs ``pidx`` selects, (P, ValidRow, ValidCol).

    Read-only, and the same array object every time for the same tile and PEs (a tile
    never changes once published), so semantics-side facts about it, such as "holds no
    NaN or infinity", are computed once per tile; a tile published as finite
    (:attr:`Tile.finite`) hands that fact to the semantics with the view. ``pkey`` is
    None for every PE.
    """
    views = t.views
    if views is None:
        views = t.views = {}
    else:
        v = views.get(pkey)
        if v is not None:
            return v
    if pkey is None:
        v = t.payload[pidx, : t.valid_rows, : t.valid_cols]
    else:
        # consecutive PEs (mask 1000, 1100, 0110, ...) slice the payload: a read-only
        # view; others index it: a private copy, frozen like the payload
        assert isinstance(pkey, tuple)  # the participating PEs
        v = t.payload[_run_index(pkey), : t.valid_rows, : t.valid_cols]
        v.flags.writeable = False
    if t.finite:  # published as finite: the semantics skip their NaN/Inf scan
        remember_finite(v)
    views[pkey] = v
    return v


def build_tile(
    state: MachineState,
    name: str,
    slot: Slot,
    values: np.ndarray,
    pad: int,
    pes: tuple[int, ...],
    pidx: slice | list[int],
    *,
    whole: bool = False,
    defined: np.ndarray | None = None,
    pad_defined: bool | None = None,
    numbered: bool = True,
) -> Tile:
    """The tile a destination becomes (:meth:`Ctx.publish`); mutates nothing but the
    serial counter (``numbered`` False: not even that, the tile's serial is 0 until
    the caller numbers it when it publishes the tile)."""
    npes = state.config.pes
    P = len(pes)
    if defined is None and pad_defined is None and not whole:
        # the usual destination: its pool's builder, bound once per descriptor
        key = (pad, pes, npes)
        builders = slot.builders
        build = builders.get(key, builders)
        if build is builders:
            build = builders[key] = pooled_builder(npes, slot, pad, pes)
        if (
            build is not None
            and values.dtype == slot.carrier
            and values.shape == (P, slot.valid_rows, slot.valid_cols)
        ):
            tile: Tile = build(values)  # type: ignore[operator]
            if numbered:
                tile.serial = state.next_serial()
            return tile
    address = 0
    if values.dtype != slot.carrier:
        raise TypeError(  # a semantics function returned the wrong carrier: a bug
            f"{name}: result dtype {values.dtype} is not the {slot.carrier} carrier"
        )
    rows, cols = slot.rows, slot.cols
    vr, vc = (rows, cols) if whole else (slot.valid_rows, slot.valid_cols)
    if values.shape != (P, vr, vc):
        raise ValueError(f"{name}: result shape {values.shape} is not {(P, vr, vc)}")
    if npes == P and vr == rows and vc == cols:
        payload = values
        flags = values.flags
        # copy a non-contiguous result, or a writable view of someone else's buffer;
        # a read-only contiguous view is published storage and may be shared
        if not flags.c_contiguous:
            payload = np.ascontiguousarray(values)  # (a copy)
        elif values.base is not None and flags.writeable:
            payload = values.copy()
        payload.flags.writeable = False
    else:  # a subset of the PEs, or a valid region smaller than the tile
        fill = pad if not whole else PAD_NULL
        if npes * rows * cols * values.itemsize < POOLED_BYTES:
            payload, address = pooled_payload(slot, values, fill, pes, npes)  # (read-only)
        else:
            if npes != P:
                payload = _subset_payload(slot, values, fill, pes, npes)
            else:
                payload = fresh(slot.dtype, (npes, rows, cols), fill)
                payload[:, :vr, :vc] = values
            payload.flags.writeable = False
    pd = (whole or pad != PAD_NULL) if pad_defined is None else pad_defined
    serial = state.next_serial() if numbered else 0
    if defined is None:  # (every definedness implicit: the descriptor's own maker)
        make = slot.makers.get(pd)
        if make is None:
            make = slot.makers[pd] = tile_maker(
                slot.dtype, rows, cols, slot.valid_rows, slot.valid_cols, slot.layout,
                slot.mask, slot.capacity, pd,
            )  # fmt: skip
        return make(payload, serial, None, address)  # type: ignore[operator]
    if npes != P:
        full = np.zeros((npes, rows, cols), bool)
        full[pidx] = defined
        defined = full
    tile = Tile(
        slot.dtype, rows, cols, slot.valid_rows, slot.valid_cols, slot.layout, slot.mask,
        slot.capacity, payload, defined, pd, serial,
    )  # fmt: skip
    tile.address = address  # (a pool's block: known; else asked when a kernel needs it)
    return tile


#: per thread: pools of payload storage by (DataType, carrier, Rows, Col, valid rows,
#: valid columns, fill, PEs, machine PEs)
_POOLS = threading.local()
#: pools kept per thread (the least recently made go first when there are more)
MAX_POOLS = 256
#: payloads below this size come from pools: writing the template around a valid region
#: is most of their cost (a one-PE 16 KiB tile on four PEs is a 64 KiB payload, three
#: quarters poison: measured 3% of a softmax run; a one-PE 1024x8 FP32 column, 128 KiB:
#: 15% of a gather kernel's run); from this size on a pool holds a single block, and
#: storage that ``malloc`` has just freed (still in cache) costs less
POOLED_BYTES = 1 << 20


def pooled_payload(
    slot: Slot, values: np.ndarray, fill: int, pes: tuple[int, ...], npes: int
) -> tuple[np.ndarray, int]:
    """What :func:`_subset_payload` builds, in recycled storage: a pool's block already
    holds the poison of the other PEs and ``fill`` in the padding of ``pes`` (its
    template), so only the valid region is written (speed only: the same payload); and
    the block's address (:attr:`Tile.address`: the payload is the whole dense block)."""
    vr, vc = values.shape[1], values.shape[2]
    key = (slot.dtype, slot.carrier, slot.rows, slot.cols, vr, vc, fill, pes, npes)
    payload, storage, address = _pool(key, slot, fill, pes, npes).take_writable()
    storage[_run_index(pes), :vr, :vc] = values
    return payload, address


def _pool(
    key: tuple[object, ...], slot: Slot, fill: int, pes: tuple[int, ...], npes: int
) -> PayloadPool:
    """The calling thread's pool of ``key`` (see :func:`pooled_payload`), made when it
    has none."""
    pools = getattr(_POOLS, "pools", None)
    if pools is None:
        pools = _POOLS.pools = {}
    pool = pools.get(key)
    if pool is None:
        if len(pools) >= MAX_POOLS:
            del pools[next(iter(pools))]
        empty = np.empty((len(pes), 0, 0), slot.carrier)  # the template: no valid region
        shell = _subset_payload(slot, empty, fill, pes, npes) if len(pes) < npes else None
        if shell is None:
            shell = fresh(slot.dtype, (npes, slot.rows, slot.cols), fill)
        pool = pools[key] = PayloadPool(shell.shape, shell.dtype, shell, writable=True)
    return pool


def destination_pool(npes: int, slot: Slot, pad: int, pes: tuple[int, ...]) -> PayloadPool:
    """The calling thread's pool of payloads of ``slot``'s tile on ``pes`` of a machine
    of ``npes`` PEs: blocks that start as ``pad`` in the padding of ``pes`` and poison
    on the other PEs (what :func:`build_tile` takes its blocks from), for a fused form
    that writes its results straight into a block (``take_writable``)."""
    key = (slot.dtype, slot.carrier, slot.rows, slot.cols, slot.valid_rows, slot.valid_cols,
           pad, pes, npes)  # fmt: skip
    return _pool(key, slot, pad, pes, npes)


def pooled_builder(
    npes: int, slot: Slot, pad: int, pes: tuple[int, ...]
) -> Callable[[np.ndarray], Tile] | None:
    """For a fused form publishing ``slot``'s tile on ``pes`` of a machine of ``npes``
    PEs: ``build(values)`` returns the tile :func:`build_tile` builds from ``values``
    (the valid region on ``pes``, which the caller guarantees is of the slot's carrier
    and shape; not numbered), in a pool's block with everything bound once; None when
    build_tile takes no pool's block for it (a whole every-PE result, a large one)."""
    rows, cols, vr, vc = slot.rows, slot.cols, slot.valid_rows, slot.valid_cols
    if (len(pes) == npes and vr == rows and vc == cols) or (
        npes * rows * cols * slot.carrier.itemsize >= POOLED_BYTES
    ):
        return None
    key = (slot.dtype, slot.carrier, rows, cols, vr, vc, pad, pes, npes)
    run = _run_index(pes)
    pd = pad != PAD_NULL
    make = slot.makers.get(pd)
    if make is None:
        make = slot.makers[pd] = tile_maker(
            slot.dtype, rows, cols, vr, vc, slot.layout, slot.mask, slot.capacity, pd
        )
    local = _POOLS

    def build(values: np.ndarray) -> Tile:
        pools = getattr(local, "pools", None)
        pool = None if pools is None else pools.get(key)
        if pool is None:
            pool = _pool(key, slot, pad, pes, npes)
        payload, storage, address = pool.take_writable()
        storage[run, :vr, :vc] = values
        return make(payload, 0, None, address)  # type: ignore[operator]

    return build


def _subset_payload(
    slot: Slot, values: np.ndarray, fill: int, pes: tuple[int, ...], npes: int
) -> np.ndarray:
    """The storage of a tile written on the PEs ``pes`` only (fewer than ``npes``):
    ``values`` (P, vr, vc) in their valid region, ``fill`` (Null = poison) in their
    padding, poison on every other PE; each element written once."""
    dt, rows, cols = slot.dtype, slot.rows, slot.cols
    vr, vc = values.shape[1], values.shape[2]
    payload = np.empty((npes, rows, cols), slot.carrier)
    run = _run_index(pes)
    if isinstance(run, slice):  # the PEs around one run of consecutive PEs
        if run.start:
            payload[: run.start] = template(dt, (1, rows, cols), PAD_NULL)
        if run.stop < npes:
            payload[run.stop :] = template(dt, (1, rows, cols), PAD_NULL)
    else:
        others = [pe for pe in range(npes) if pe not in pes]
        payload[others] = template(dt, (1, rows, cols), PAD_NULL)
    if vr == rows and vc == cols:
        payload[run] = values
    else:
        payload[run] = template(dt, (1, rows, cols), fill)
        payload[run, :vr, :vc] = values
    return payload


def or_status(state: MachineState, st: np.ndarray, pidx: slice | list[int], P: int) -> None:
    """OR one bundle's status (P,) into the sticky per-PE status."""
    if st.dtype != np.uint8 or st.shape != (P,):
        st = np.asarray(st, np.uint8).reshape(P)
    if isinstance(pidx, slice):  # every PE: OR in place without an indexing round trip
        np.bitwise_or(state.status, st, out=state.status)
    elif P == 1:  # one PE (a one-PE kernel's every bundle): a byte, when it is not 0
        v = int(st[0])
        if v:
            state.status[pidx[0]] |= v
    else:
        run = _run_index(tuple(pidx))
        if isinstance(run, slice):
            view = state.status[run]
            np.bitwise_or(view, st, out=view)
        else:
            state.status[pidx] |= st


def fused_sources(state: MachineState, plan: BundlePlan, mask: int) -> list[Tile] | None:
    """For a fused form: the source tiles in binding order when each queue position
    holds one whose allocation mask covers ``mask``, else None (the generic path names
    the fault)."""
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


def one_source(
    state: MachineState, plan: BundlePlan, mask: int
) -> tuple[tuple[int, ...], int, slice | list[int], object, Tile] | None:
    """For the fused form of a one-source bundle: the geometry of ``mask`` on this
    machine (:func:`geometry`) and the source tile; None when a PE is missing or the
    bundle does not bind exactly one source that :func:`fused_sources` finds."""
    npes = state.config.pes
    pes, p, pidx, pkey = geometry(mask, npes)
    if pes[-1] >= npes or len(plan.source_pos) != 1:
        return None
    srcs = fused_sources(state, plan, mask)
    return None if srcs is None else (pes, p, pidx, pkey, srcs[0])


def two_sources(
    state: MachineState, plan: BundlePlan, mask: int
) -> tuple[tuple[int, ...], int, slice | list[int], object, Tile, Tile] | None:
    """:func:`one_source` for a two-source bundle: the geometry of ``mask`` and both
    source tiles in binding order, or None."""
    npes = state.config.pes
    pes, p, pidx, pkey = geometry(mask, npes)
    if pes[-1] >= npes or len(plan.source_pos) != 2:
        return None
    srcs = fused_sources(state, plan, mask)
    return None if srcs is None else (pes, p, pidx, pkey, srcs[0], srcs[1])


def push_fused(
    state: MachineState, hand: int, tile: Tile, st: np.ndarray, pidx: slice | list[int], P: int
) -> bool:
    """Publish a fused runner's tile (built with ``numbered=False``: numbered now) and OR
    its status in; False when the queue cannot take it (capacity: nothing changed, the
    generic path raises the fault)."""
    if not state.push_one(hand, tile):
        return False
    tile.serial = state.next_serial()
    or_status(state, st, pidx, P)
    return True


def participation(plan: BundlePlan, npes: int) -> int:
    """The PE_MASK a bundle runs on: its bindings' mask, or for a bundle that binds no
    tile (TPREFETCH) the implicit participation of every PE of the machine."""
    return plan.mask if plan.bindings or plan.shared else first_pes_mask(npes)


def resolve_dims(state: MachineState, plan: BundlePlan, name: str) -> tuple[int | None, ...]:
    """LB values; a register-based B.DIM must give the same value on every participating
    PE (this executor's rule: one bundle describes one geometry)."""
    const = plan.const_dims
    if const is not None:
        return const
    npes = state.config.pes
    pes = list(MASK_PES[participation(plan, npes)])
    if pes and pes[-1] >= npes:  # checked before any GPR of that PE is read
        raise TileLegalityFault(
            f"mask={mask_text(plan.mask)} selects PE{pes[-1]}, but this machine has "
            f"{npes} PE(s)",
            name,
        )
    out: list[int | None] = []
    for k, d in enumerate(plan.dims):
        if d is None:
            out.append(None)
            continue
        vals = (state.gpr[pes, d.reg] + np.uint64(d.imm)) & np.uint64(0xFFFF)
        if np.any(vals != vals[0]):
            raise TileLegalityFault(
                f"B.DIM LB{k} reads a register whose value differs across the participating "
                f"PEs ({', '.join(str(int(v)) for v in vals)})",
                name,
            )
        out.append(int(vals[0]))
    return tuple(out)


def _preparer(executor: Executor) -> Preparer:
    """The static preparation of ``executor`` (``ops.PREPARERS``; the preparers build on
    this module, so it is read when the first bundle runs, not at import)."""
    from .ops import PREPARERS

    return PREPARERS[executor]


def _transport() -> Preparer:
    """The CUBE transport path a B.DATR Layout 21..26 selects (``ops.cube``)."""
    from .ops.cube import transport

    return transport


def _shared_tlsu(plan: BundlePlan) -> bool:
    """A Shared TLSU bundle (``BundleSharedTLSUSelected``) checks its own B.IOT schema,
    `last` included, and rejects it with Fault_TileLegality."""
    return plan.start.family is Family.TLSU and (
        bool(plan.shared) or plan.start.selector in isa_shared.shared_functions()
    )


def _prepare(state: MachineState, plan: BundlePlan) -> tuple[Spec, Runner] | None:
    """Commit-time checks that depend only on the plan (and LB values); None: no-op."""
    plan.raise_fault()
    op = plan.op
    binding_free = op is not None and TABLE[op.mnemonic].binding.binding_free
    if plan.noop and not binding_free:
        return None
    assert op is not None
    name = op.mnemonic
    executor = TABLE[name].executor
    if executor is None:  # a legal operation this executor does not model
        raise unsupported(name, name)
    if plan.catr is not None:
        f = dict(plan.catr.fields)
        if f.get("trap") or f.get("DR"):
            raise unsupported("B.CATR trap/DR control", name)
    if plan.hint is not None and any(k == "B/E" for k, _ in plan.hint.fields):
        raise unsupported("B.HINT TRACE (it opens a new block)", name)
    if binding_free:
        if plan.bindings or plan.shared or plan.zero_seen:
            raise TileLegalityFault(
                f"{name} binds no tile: a B.IOT or B.IOS in its bundle is illegal", name
            )
    elif not plan.bindings and not plan.shared and not _shared_tlsu(plan):
        raise TileLegalityFault(f"{name} needs a B.IOT binding stream", name)
    if plan.bindings and not any(b.last for b in plan.bindings) and not _shared_tlsu(plan):
        raise BundleControlFault("the B.IOT binding stream is never closed by `last`", name)
    handler = _preparer(executor)
    if plan.datr is not None and plan.datr.layout in CUBE_TRANSPORT_CODES:
        handler = _transport()  # any operation: ``ExecuteBundleCubeTransportOperation``
    dims = resolve_dims(state, plan, name)
    cached = plan.cache.get(dims)
    if cached is None:
        spec = Spec(plan, dims)
        try:
            cached = (spec, handler(spec))
        except MachineFault as exc:  # static faults are cached like the plan itself
            cached = (spec, (type(exc), exc.rule, exc.op))
        plan.cache[dims] = cached
    spec, runner = cached
    if isinstance(runner, tuple):
        cls, rule, op_text = runner
        raise cls(rule, op_text)
    if plan.const_dims is not None:
        from .memo import memo_for  # (the memo runs bundles through this module)

        plan.ready = cached  # the next execution of this plan starts at the runner
        plan.fused = getattr(runner, "fused", None)
        plan.memo = memo_for(plan, executor, handler is not _preparer(executor))
    return spec, runner


def execute(state: MachineState, plan: BundlePlan) -> Ctx | None:
    """Run one tile bundle; returns its context (what it read and published) or None for
    a strict no-op. Raises MachineFault."""
    ready = plan.ready
    if ready is None:
        ready = _prepare(state, plan)
        if ready is None:
            return None
    spec, runner = ready
    ctx = Ctx(state, plan, spec)
    try:
        runner(ctx)
    except BundleControlSemanticError as e:
        raise BundleControlFault(e.rule, spec.name) from None
    except SemanticError as e:
        raise TileLegalityFault(e.rule, spec.name) from None
    commit(state, ctx)
    return ctx


#: A fused runner executes a whole bundle (checks, computation, commit) in one call when
#: its common case holds and returns True; False means "not handled, nothing changed"
#: and the bundle takes the generic path, which raises whatever fault applies.
Fused = Callable[[MachineState, BundlePlan], bool]


def execute_untraced(state: MachineState, plan: BundlePlan) -> None:
    """:func:`execute` for callers that need no context back (no trace is recorded):
    the plan's kept constant result (``memo.ConstantMemo``) or its runner's fused form
    (attribute ``fused``) first, the generic path otherwise."""
    memo = plan.memo
    if memo is not None and memo.run(state, plan):
        return
    fused: Fused | None = plan.fused
    if fused is not None and fused(state, plan):
        return
    execute(state, plan)


def commit(state: MachineState, ctx: Ctx) -> None:
    """Publish every effect of a bundle at once (after the last possible fault)."""
    slots = ctx.slots
    if slots:
        push = ctx.push
        assert push is not None
        if len(slots) == 1:
            tile = ctx.tiles[0]
            assert tile is not None, f"{ctx.name}: a destination was never published"
            tiles = [(slots[0].hand, tile)]
        else:
            tiles = []
            for s, t in zip(slots, ctx.tiles, strict=True):
                assert t is not None, f"{ctx.name}: a destination was never published"
                tiles.append((s.hand, t))
        state.apply_push(push, tiles)
        ctx.released = push.released
    sw = ctx.shared_write
    if sw is not None:
        tid, record, used = sw
        state.shared[tid] = record
        state.used = used
    log = state.access_log
    written = state.gm_written
    for w in ctx.gm_writes:
        w.apply(state.gm)
        if written is not None:
            w.record(written)
        if log is not None:  # a grid launch records what each core wrote (D13)
            log.write(w.index)
    st = ctx.status
    if st is not None:
        or_status(state, st, ctx.pidx, ctx.P)


__all__ = [
    "Ctx",
    "Dests",
    "Preparer",
    "Runner",
    "Slot",
    "build_tile",
    "elem_bits",
    "execute",
    "execute_untraced",
    "fused_sources",
    "geometry",
    "gpr_words",
    "make_dests",
    "one_source",
    "or_status",
    "push_fused",
    "region",
    "two_sources",
]


def tile_builder(
    npes: int, name: str, slot: Slot, pad: int, pes: tuple[int, ...]
) -> Callable[[MachineState, np.ndarray], Tile]:
    """For a fused form publishing ``slot``'s tile on ``pes`` of a machine of ``npes``
    PEs: ``make(state, values)`` returns the tile :func:`build_tile` builds from
    ``values`` (the valid region on ``pes``; not numbered), with the same payload,
    definedness and padding: through the descriptor's pool builder
    (:func:`pooled_builder`) when build_tile takes a pool's block for it, else
    :func:`build_tile` itself."""
    carrier, want = slot.carrier, (len(pes), slot.valid_rows, slot.valid_cols)
    pidx: slice | list[int] = slice(None) if len(pes) == npes else list(pes)

    def general(state: MachineState, values: np.ndarray) -> Tile:
        return build_tile(state, name, slot, values, pad, pes, pidx, numbered=False)

    pooled = pooled_builder(npes, slot, pad, pes)
    if pooled is None:
        return general

    def build(state: MachineState, values: np.ndarray) -> Tile:
        if values.dtype != carrier or values.shape != want:
            return general(state, values)  # (raises: a semantics function's bug)
        return pooled(values)

    return build
