"""The Shared TLSU forms (``ExecuteBundleSharedTLSUOperation``) other than the Shared TLOAD.

Sources: ``asl/block/model/dispatch/shared-tlsu.asl``, ``asl/tile/model/memory/
shared-movement.asl`` (``TSTOREShared``, ``TMOVLocalToShared``, ``TMOVSharedToLocal``) and
``asl/tile/model/state/shared-registers.asl``. A TLSU bundle takes this path when it binds
a B.IOS or its BSTART word is a Shared encoding variant (``BundleSharedTLSUSelected``):

* TSTORE of a Shared register to GM: Function 1 (``BSTART.TSTORE``) with mask 1111,
  Function 14 (``BSTART.TSTORE.SPART``) with any nonzero mask. The store covers the
  ValidRow x ValidCol rectangle (LB1/LB0, else the register's valid region, else 1x1) of
  Col (LB2, else the register's, else ValidCol); PE ``q`` stores the elements of quarter
  ``q`` from its own B.IOR base and byte row stride (omitted B.IOR: base 0 and the dense
  stride). An unallocated register is read at the smallest capacity that holds the shape.
* TMOV Local -> Shared (Function 9 insert, 10 insert and publish): PE ``q`` writes
  quarter ``q`` of the register from its copy of the Local source, whose capacity is the
  B.IOS SizeCode's; the first write allocates the register with the bundle's mask.
  Function 10 requires that the write completes the register (every allocated quarter
  initialized) and publishes it.
* TMOV Shared -> Local (Function 11 broadcast, 12 extract): every participating PE's new
  Local tile receives the elements of the quarters the mask selects; Function 11 needs
  mask 1111 and a published register allocated on all four PEs.

Reading a quarter that no write initialized, or an unallocated register, is not a fault:
the element reads the ASL's undefined-register word (``UndefinedSharedTileWord``, the
register number XOR the element index), which a TSTORE writes to GM and a TMOV copies as
a value. Every check precedes every effect; the GM bytes, the Shared record and the new
Local tile are installed at commit together, so a rejected bundle changes nothing.
"""

from __future__ import annotations

import numpy as np

from ptoc.backend.isa import DTYPE_NONE, DataType, info, legality
from ptoc.backend.isa import shared as isa_shared
from ptoc.backend.isa.fields import LAYOUT_NAMES, mask_text, size_bytes
from ptoc.backend.program import Ios

from ..engine import Ctx, Runner
from ..faults import BundleControlFault, unsupported
from ..gm import Memory
from ..memory import (
    DenseWrite,
    Footprint,
    GMWrite,
    _last_writer,
    dense_stride,
    footprint,
    scatter_plan,
)
from ..shared import (
    SharedTile,
    compatible,
    min_capacity,
    read_schema_rule,
    read_words,
    selected,
    updated,
)
from ..spec import Shape, Spec
from ..state import MASK_PES
from ..tiles import LAYOUT_TRANSFORMS, Layout, Tile, derived_rows, poisoned
from .layout import check_dest_layout


def shared_tlsu_selected(spec: Spec) -> bool:
    """``BundleSharedTLSUSelected``: a B.IOS, or a Shared encoding variant's Function."""
    return bool(spec.plan.shared) or spec.plan.start.selector in isa_shared.shared_functions()


def prelude(spec: Spec) -> tuple[Ios, DataType]:
    """The checks every Shared TLSU form makes first, in the ASL's order: one effective
    B.IOS (Fault_TileLegality), a concrete BSTART DataType (the ones TSTORE transfers for
    Functions 1 and 14), B.IOR only in the operation's slots (Fault_BundleControl), then
    B.DATR applicability and a zero PadValue (Fault_TileLegality)."""
    plan = spec.plan
    fn = plan.start.selector
    name = spec.name
    if len(plan.shared) != 1:
        raise spec.illegal(
            f"a Shared {name} (TLSU Function {fn}) binds exactly one effective B.IOS, "
            f"not {len(plan.shared)} (ExecuteBundleSharedTLSUOperation)"
        )
    if spec.dtype_code == DTYPE_NONE:
        # the ASL decodes the BSTART DataType of every Shared form (an assertion there)
        raise spec.illegal(f"a Shared {name} names a concrete BSTART DataType, not DTYPE_NONE")
    dt = DataType(spec.dtype_code)
    if fn in (isa_shared.TSTORE_FUNCTION, isa_shared.tstore_partial_function()):
        spec._check(legality.dtype(spec.op, dt))  # TileRegularTLSUDataTypeSupported
    ior = plan.ior
    if ior is not None:
        rule = legality.ior_fields(spec.op, ior.sources, ior.dst)
        if rule is not None:  # the Shared TLSU path raises BundleControl for this rule
            raise BundleControlFault(f"{rule} (BundleOperationScalarBindingSchemaLegal)", name)
    spec.require_datr_applicable()
    if spec.datr is not None and spec.datr.pad:
        raise spec.illegal(f"B.DATR.PadValueOrByteId must be zero for a Shared {name}")
    return plan.shared[0], dt


def read_layout(spec: Spec) -> Layout:
    """``CurrentBundleTileLayout``: the destination layout of the B.DATR transform."""
    code = 0 if spec.datr is None else spec.datr.layout
    return LAYOUT_TRANSFORMS[code][1]


def row_major_only(spec: Spec, layout: Layout) -> None:
    """ptoc keeps Shared registers RowMajor (``ptoc.runtime.shared``): a read of an
    unallocated register in another generic layout is not modelled."""
    if layout is not Layout.ROW_MAJOR:
        code = 0 if spec.datr is None else spec.datr.layout
        raise unsupported(
            f"a Shared tile read in layout {LAYOUT_NAMES.get(code, code)}", spec.name
        )


def claim(ctx: Ctx, tid: int, old: SharedTile | None, cap: int, mask: int) -> list[int]:
    """The per-PE usage after a write to ``S<tid>`` (D2): a first write charges ``cap``
    bytes to every PE of ``mask`` and must leave each within its capacity
    (``SharedTileUpdateCompatible``: Fault_TileLegality); a later one charges nothing."""
    state = ctx.state
    if old is not None:
        return state.used
    used = state.used.copy()
    for pe in MASK_PES[mask]:
        used[pe] += cap
    limit = state.config.capacity
    if max(used) > limit:
        worst = int(np.argmax(used))
        raise ctx.illegal(
            f"allocating S{tid} ({cap} B on each PE of mask={mask_text(mask)}) would leave "
            f"PE{worst} holding {used[worst]} bytes of Local and Shared tiles, more than its "
            f"capacity of {limit} bytes (SharedTileUpdateCompatible)"
        )
    return used


# ----------------------------------------------------------------------------- TSTORE


def tstore_shared(spec: Spec) -> Runner:
    """TSTORE of one source B.IOS (Function 1: mask 1111; Function 14: any nonzero
    mask), no B.IOT (``SharedStorePEMaskLegal``, ``SharedTileReadSchemaLegal``,
    ``MaterializeSharedTileForReadSchema``, ``TSTOREShared``)."""
    ios, dt = prelude(spec)
    fn = spec.plan.start.selector
    name = spec.name
    if not isa_shared.store_mask_legal(fn, ios.mask):
        raise spec.illegal(
            f"a Shared {name} of Function {fn} stores mask=1111 only; a partial "
            f"mask={mask_text(ios.mask)} needs BSTART.TSTORE.SPART, Function "
            f"{isa_shared.tstore_partial_function()} (SharedStorePEMaskLegal)"
        )
    if ios.size or spec.plan.bindings:
        raise spec.illegal(
            f"a Shared {name} binds one source B.IOS (B.IOS S<id>, mask=...) and no B.IOT"
        )
    layout = read_layout(spec)
    lb0, lb1, lb2 = spec.dims
    bits = info(dt).bits
    tid = ios.tid

    def run(ctx: Ctx) -> None:
        state = ctx.state
        reg = state.shared.get(tid)
        vc = lb0 if lb0 is not None else (reg.valid_cols if reg is not None else 1)
        vr = lb1 if lb1 is not None else (reg.valid_rows if reg is not None else 1)
        col = lb2 if lb2 is not None else (reg.cols if reg is not None else vc)
        if min(vc, vr, col) < 1 or vc > col:
            raise ctx.illegal(
                f"a Shared {name} needs ValidCol (LB0), ValidRow (LB1) and Col (LB2) "
                f"nonzero and ValidCol <= Col; got {vc}, {vr}, {col}"
            )
        cap = reg.capacity if reg is not None else min_capacity(col, vr, vc, bits)
        if cap == 0:
            raise ctx.illegal(
                f"no Shared capacity holds a {dt.name} {vr}x{vc} tile of Col {col} "
                "(MinimumTileCapacityBytesForShape)"
            )
        rule = read_schema_rule(reg, vr, vc, col, dt, layout, cap, state.config.capacity)
        if rule is not None:
            raise ctx.illegal(f"S{tid}: {rule} (SharedTileReadSchemaLegal)")
        row_major_only(spec, layout)
        rows = derived_rows(cap, col, bits)
        values, _ = read_words(reg, tid, dt, rows, col)
        quarter = isa_shared.quarters(rows, col, bits, cap)[:vr, :vc]
        pes = ctx.pes
        own = np.stack([quarter == q for q in pes])  # (P, vr, vc): PE q stores quarter q
        base = ctx.gpr_slot(0)
        stride = ctx.gpr_slot(1, dense_stride(col, dt))
        fp = footprint(dt, base, stride, vr, vc, state.config.gm_size, name, True, pes,
                       select=own)  # fmt: skip
        ctx.gm_writes.extend(_store_owned(state.gm, fp, own, values[:vr, :vc]))

    return run


def _store_owned(
    gm: Memory, fp: Footprint, own: np.ndarray, values: np.ndarray
) -> list[GMWrite | DenseWrite]:
    """The byte writes of a store in which element (r, c) is written by the one PE that
    owns it (``own[k, r, c]``) at that PE's address: in (row, col) order, the ASL's
    element loop, so a later element wins where addresses overlap."""
    r, c, k = np.nonzero(own.transpose(1, 2, 0))  # row-major over (r, c): one owner each
    addr = fp.addr[k, r, c]
    vals = values[r, c]
    if fp.high is not None:  # 4-bit: a nibble store keeps its sibling nibble
        flat = Footprint(addr.reshape(1, 1, -1), 1, fp.high[k, r, c].reshape(1, 1, -1))
        return scatter_plan(gm, flat, vals.reshape(1, 1, -1), np.zeros(1, np.uint64))
    eb = fp.nbytes
    idx = (addr.astype(np.intp)[:, None] + np.arange(eb, dtype=np.intp)).reshape(-1)
    raw = np.ascontiguousarray(vals).view(np.uint8).reshape(-1)
    i, v = _last_writer(idx, raw)
    return [GMWrite(i, v)]


# ----------------------------------------------------------------------------- TMOV


def tmov_shared(spec: Spec) -> Runner:
    """TMOV between a Local tile and a Shared register (Functions 9..12); any other
    Function with a B.IOS is illegal (the ASL's closing ``else``)."""
    ios, dt = prelude(spec)
    fn = spec.plan.start.selector
    if fn in isa_shared.tmov_insert_functions():
        return _insert(spec, ios, fn == isa_shared.tmov_publish_function())
    if fn in isa_shared.tmov_extract_functions():
        return _extract(spec, ios, dt, fn == isa_shared.tmov_broadcast_function())
    raise spec.illegal(
        f"{spec.name} Function {fn} has no Shared form: a B.IOS moves through "
        "BSTART.TMOV.L2S.INSERT/PUBLISH or BSTART.TMOV.S2L.BROADCAST/EXTRACT"
    )


def _insert(spec: Spec, ios: Ios, publish: bool) -> Runner:
    """TMOV Local -> Shared (``BundleSharedTMOVLocalSchemaLegal``,
    ``TMOVLocalToShared``)."""
    b = spec.plan.bindings
    if (
        len(b) != 1
        or b[0].dst is not None
        or len(b[0].srcs) != 1
        or not b[0].last
        or ios.size == 0
    ):
        raise spec.illegal(
            "a TMOV Local -> Shared binds one destination B.IOS (->S<id><size>) and one "
            "B.IOT with one source, no destination and `last` "
            "(BundleSharedTMOVLocalSchemaLegal)"
        )
    cap = size_bytes(ios.size)
    tid, mask = ios.tid, ios.mask

    def run(ctx: Ctx) -> None:
        t = ctx.sources[0]
        ref = ctx.ref(0)
        if t.dtype is None:
            raise ctx.illegal(f"{ref} is a predicate tile; a Shared register holds numbers")
        if not t.valid_defined(ctx.pes):
            raise ctx.illegal(
                f"{ref} has an undefined valid element (TileSourceContentsDefined, D6)"
            )
        if t.capacity != cap:
            raise ctx.illegal(
                f"{ref} has {t.capacity} B per PE; the B.IOS SizeCode names {cap} B "
                "(the Local source and the Shared register have one capacity)"
            )
        if t.layout.cube is not None:
            raise ctx.illegal(f"{ref} is a CUBE tile; a Shared register is never one")
        if t.layout is not Layout.ROW_MAJOR:
            raise unsupported(f"a Shared tile in layout {t.layout.value}", spec.name)
        state = ctx.state
        if not isa_shared.capacity_legal(cap, state.config.capacity):
            raise ctx.illegal(
                f"a {cap}-byte Shared TSize exceeds the machine's capacity of "
                f"{state.config.capacity} bytes per PE (SharedTileCapacityIsLegal)"
            )
        old = state.shared.get(tid)
        new = _from_local(t, ctx.pes, mask, publish)
        rule = compatible(old, new, mask)
        if rule is not None:
            raise ctx.illegal(f"S{tid}: {rule} (SharedTileUpdateCompatible)")
        used = claim(ctx, tid, old, cap, mask)
        if publish and old is not None and (old.init_mask | mask) != old.alloc_mask:
            raise ctx.illegal(
                f"TMOV.L2S.PUBLISH of mask={mask_text(mask)} leaves S{tid} incomplete: "
                f"initialized mask={mask_text(old.init_mask | mask)}, allocated "
                f"mask={mask_text(old.alloc_mask)} (SharedTileProspectiveFullyInitialized)"
            )
        ctx.shared_write = (tid, updated(old, new, mask, publish), used)

    return run


def _from_local(t: Tile, pes: tuple[int, ...], mask: int, publish: bool) -> SharedTile:
    """The register value a Local source writes: quarter ``q`` (payload and definedness)
    from PE ``q``'s copy of the tile, for the PEs of the mask."""
    assert t.dtype is not None
    quarter = isa_shared.quarters(t.rows, t.cols, info(t.dtype).bits, t.capacity)
    defined = t.definedness()
    payload = poisoned(t.dtype, (t.rows, t.cols))
    written = np.zeros((t.rows, t.cols), bool)
    for q in pes:
        own = quarter == q
        payload[own] = t.payload[q][own]
        written[own] = defined[q][own]
    written &= selected(quarter, mask)
    payload.flags.writeable = False
    written.flags.writeable = False
    return SharedTile(t.dtype, t.rows, t.cols, t.valid_rows, t.valid_cols, t.layout,
                      t.capacity, mask, mask, publish, payload, written)  # fmt: skip


def _extract(spec: Spec, ios: Ios, dt: DataType, broadcast: bool) -> Runner:
    """TMOV Shared -> Local (``BundleSharedTMOVDestinationSchemaLegal``,
    ``MaterializeSharedTileForReadSchemaAtCapacity``, ``TMOVSharedToLocal``): the new
    Local tile is ``dt`` ValidRow x ValidCol of Col (LB1/LB0/LB2, a zero or absent LB
    defaulting to the register's descriptor, else 1, 1, ValidCol) at its SizeCode's
    capacity, in the B.DATR destination layout."""
    b = spec.plan.bindings
    if len(b) != 1 or b[0].dst is None or b[0].srcs or not b[0].last or ios.size:
        raise spec.illegal(
            "a TMOV Shared -> Local binds one source B.IOS (B.IOS S<id>, mask=...) and one "
            "B.IOT with a destination, no source and `last` "
            "(BundleSharedTMOVDestinationSchemaLegal)"
        )
    cap = size_bytes(b[0].size)
    layout = read_layout(spec)
    lb0, lb1, lb2 = spec.dims
    bits = info(dt).bits
    tid, mask = ios.tid, ios.mask
    name = spec.name

    def run(ctx: Ctx) -> None:
        state = ctx.state
        reg = state.shared.get(tid)
        vr = lb1 or (reg.valid_rows if reg is not None else 1)
        vc = lb0 or (reg.valid_cols if reg is not None else 1)
        col = lb2 or (reg.cols if reg is not None else vc)
        if vc > col:
            raise ctx.illegal(f"{name} ValidCol (LB0) {vc} exceeds Col (LB2) {col}")
        rule = read_schema_rule(reg, vr, vc, col, dt, layout, cap, state.config.capacity)
        if rule is not None:
            raise ctx.illegal(f"S{tid}: {rule} (SharedTileReadSchemaLegalAtCapacity)")
        if broadcast and not (
            mask == isa_shared.COOPERATIVE_MASK
            and reg is not None
            and reg.alloc_mask == isa_shared.COOPERATIVE_MASK
            and reg.fully_initialized
            and reg.published
        ):
            state_text = "unallocated" if reg is None else reg.shape_text
            raise ctx.illegal(
                f"TMOV.S2L.BROADCAST needs mask=1111 and a published S{tid} allocated on "
                f"all four PEs; the bundle has mask={mask_text(mask)}, S{tid} is "
                f"{state_text} (BundleSharedTMOVDestinationSchemaLegal)"
            )
        row_major_only(spec, layout)
        (slot,) = ctx.allocate((dt, Shape(vr, vc, col), layout))
        check_dest_layout(ctx, slot)
        rows = derived_rows(cap, col, bits)
        assert (slot.rows, slot.cols) == (rows, col)
        values, defined = read_words(reg, tid, dt, rows, col)
        sel = selected(isa_shared.quarters(rows, col, bits, cap), mask)
        payload = np.where(sel, values, poisoned(dt, (rows, col)))
        dfn = sel & defined
        P = ctx.P
        pad = dfn.copy()
        pad[:vr, :vc] = True
        ctx.publish(
            slot,
            np.broadcast_to(payload, (P, rows, col)),
            whole=True,
            defined=None if dfn.all() else np.broadcast_to(dfn, (P, rows, col)).copy(),
            pad_defined=bool(pad.all()),
        )

    return run


__all__ = ["claim", "prelude", "shared_tlsu_selected", "tmov_shared", "tstore_shared"]
