"""Memory and movement (TLSU): TLOAD, TSTORE, TMOV, TPREFETCH.

Sources: ``asl/block/execution/BSTART.{TLOAD,TSTORE,TMOV,TPREFETCH}.asl`` contracts and
``asl/tile/model/memory/load-store.asl``. B.IOR RegSrc0 is the per-PE GM base and
RegSrc1 the per-PE byte row stride; omitting B.IOR supplies base 0 and the dense stride
ceil(Col * bits / 8), while an explicit ``zero`` selector reads a real 0. Only valid
elements move. B.DATR.Layout selects the tile-side layout: for TLOAD the destination
layout of the transform (``ND2DN`` loads a column-major tile), for TSTORE and TMOV the
source must be in the transform's source layout. The GM side is addressed by logical
(row, col) exactly as the ASL does for every generic layout. The CUBE transport
conversions (B.DATR Layout 21..26) are ``ops/cube.py``. A TLOAD with one destination
B.IOS writes a Shared register (:func:`tload_shared`); TSTORE of a Shared register and
TMOV between Local and Shared tiles are ``ops/shared_tlsu.py``. PadValue must be zero
outside the CUBE forms; TLOAD padding is Null.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

import numpy as np

from ptoc.backend.isa import DTYPE_NONE, DataType, Executor, info, legality
from ptoc.backend.isa import shared as isa_shared
from ptoc.backend.isa.fields import LAYOUT_NAMES, MODEL_TILE_ELEMENTS, size_bytes

from ..engine import Ctx, Preparer, Runner, make_dests
from ..faults import BundleControlFault, unsupported
from ..memory import Footprint, dense_stride, footprint, gather, gather_view, scatter_plan
from ..shared import SharedTile, compatible, updated
from ..spec import Shape, Spec
from ..state import MASK_PES
from ..tiles import LAYOUT_TRANSFORMS, Layout, derived_rows, poisoned
from .layout import check_dest_layout, generic_shape, require_optional_dims
from .memory_fused import fused_tload, fused_tmov, fused_tstore
from .shared_tlsu import claim, shared_tlsu_selected, tmov_shared, tstore_shared

#: footprints a TLOAD/TSTORE plan keeps (per distinct base and stride registers), and
#: the largest address array kept (bytes): the cache stays small however long the run
FOOTPRINTS_PER_PLAN = 8
FOOTPRINT_BYTES = 1 << 18


class _Footprints:
    """The probed footprints of one TLOAD/TSTORE plan, by the registers that determine
    them: a bundle run again with the same base and stride on the same memory size and
    PEs (a loop body, a repeated run, a new Machine) reuses its address array and its
    bounds and alignment proof. Only successful probes are kept, so a faulting footprint
    is probed (and raises) again every time."""

    __slots__ = ("cols", "dt", "entries", "rows", "write")

    def __init__(self, dt: DataType, rows: int, cols: int, write: bool) -> None:
        self.dt, self.rows, self.cols, self.write = dt, rows, cols, write
        self.entries: dict[tuple[object, ...], Footprint] = {}

    def get(self, ctx: Ctx, base: np.ndarray, stride: np.ndarray) -> Footprint:
        gm_size = ctx.state.config.gm_size
        key = (base.tobytes(), stride.tobytes(), gm_size, ctx.pes)
        fp = self.entries.get(key)
        if fp is None:
            fp = footprint(self.dt, base, stride, self.rows, self.cols, gm_size, ctx.name,
                           self.write, ctx.pes)  # fmt: skip
            if fp.addr_bytes <= FOOTPRINT_BYTES:
                if len(self.entries) >= FOOTPRINTS_PER_PLAN:
                    self.entries.pop(next(iter(self.entries)))
                self.entries[key] = fp
        return fp


def _tlsu_schema(spec: Spec) -> None:
    spec.require_no_shared()  # Shared tiles are not modelled: say so before the stream
    spec.require_schema()
    spec.layouts()  # CUBE layouts are unsupported
    if spec.datr is not None and spec.datr.pad:
        raise spec.illegal(
            f"B.DATR.PadValueOrByteId must be zero for an ordinary {spec.name} (PadValue "
            "applies to the CUBE conversion forms only)"
        )


def tload(spec: Spec) -> Runner:
    if spec.plan.shared:
        return tload_shared(spec)
    _tlsu_schema(spec)
    dt = spec.dtype()
    shape = spec.std_shape()
    _, dst_layout = spec.layouts()
    footprints = _Footprints(dt, shape.valid_rows, shape.valid_cols, False)
    dests = make_dests(spec, spec.plan.mask, ((dt, shape, dst_layout),))
    dense = dense_stride(shape.cols, dt)

    def run(ctx: Ctx) -> None:
        (slot,) = ctx.reserve(dests)
        check_dest_layout(ctx, slot)
        base = ctx.gpr_slot(0)
        stride = ctx.gpr_slot(1, dense)
        fp = footprints.get(ctx, base, stride)
        if ctx.state.access_log is not None:  # a grid launch records what it read (D13)
            ctx.state.access_log.read_footprint(fp)
        ctx.publish(slot, gather_view(ctx.state.gm, fp, dt))  # copied by publish

    run.fused = fused_tload(spec, dt, dests)  # type: ignore[attr-defined]
    return run


def tload_shared(spec: Spec) -> Runner:
    """TLOAD into a Shared register (``ExecuteBundleSharedTLSUOperation`` Function 0,
    ``TLOADShared``): one destination B.IOS and no B.IOT; LB0 = ValidCol, LB1 =
    ValidRow and LB2 = Col all present (the dispatcher reads the three LB registers);
    each PE of the mask loads the valid elements of its own quarter from its own base
    and row stride, and the selected quarters are installed as one atomic update."""
    plan = spec.plan
    name = spec.name
    if len(plan.shared) != 1:
        raise spec.illegal(f"a Shared {name} binds exactly one B.IOS, not {len(plan.shared)}")
    ios = plan.shared[0]
    dt = None if spec.dtype_code == DTYPE_NONE else DataType(spec.dtype_code)
    spec._check(legality.dtype(spec.op, dt))
    assert dt is not None
    ior = plan.ior
    if ior is not None:
        rule = legality.ior_slots(spec.op, True, ior.sources, ior.dst)
        if rule is not None:  # the Shared TLSU path raises BundleControl for this rule
            raise BundleControlFault(f"{rule} (BundleOperationScalarBindingSchemaLegal)", name)
    spec.require_datr_applicable()
    if spec.datr is not None and spec.datr.pad:
        raise spec.illegal(f"B.DATR.PadValueOrByteId must be zero for a Shared {name}")
    if ios.size == 0 or plan.bindings:
        raise spec.illegal(
            f"a Shared {name} binds one destination B.IOS (->S<id><size>) and no B.IOT"
        )
    code = 0 if spec.datr is None else spec.datr.layout
    layout = LAYOUT_TRANSFORMS[code][1]
    if layout is not Layout.ROW_MAJOR:
        raise unsupported(f"a Shared tile in layout {LAYOUT_NAMES.get(code, code)}", name)
    vc, vr, col = spec.dims
    if vc is None or vr is None or col is None or 0 in (vc, vr, col) or vc > col:
        raise spec.illegal(
            f"a Shared {name} needs LB0 = ValidCol, LB1 = ValidRow and LB2 = Col, all "
            f"present and nonzero, ValidCol <= Col; got LB0={vc}, LB1={vr}, LB2={col}"
        )
    bits = info(dt).bits
    cap = size_bytes(ios.size)
    rows = derived_rows(cap, col, bits)
    logical = cap * 8 // bits
    if rows == 0 or vr > rows or rows * col > logical:
        raise spec.illegal(
            f"a {cap}-byte Shared TSize holds no {dt.name} {vr}x{vc} tile of Col {col} "
            "(TileDescriptorShapeLegal: Rows = capacity_bits / (Col * bits) >= ValidRow)"
        )
    quarter = isa_shared.quarters(rows, col, bits, cap)[:vr, :vc]
    pes = MASK_PES[ios.mask]
    # (P, vr, vc): the valid elements of each participating PE's own quarter
    own = np.stack([quarter == q for q in pes])
    sel = own.any(axis=0)
    pick = np.searchsorted(np.array(pes), np.where(sel, quarter, pes[0]))[None]
    carrier = info(dt).carrier

    def run(ctx: Ctx) -> None:
        state = ctx.state
        if cap > state.config.capacity:  # SharedTileCapacityIsLegal
            raise ctx.illegal(
                f"a {cap}-byte Shared TSize exceeds the machine's capacity of "
                f"{state.config.capacity} bytes per PE (SharedTileCapacityIsLegal)"
            )
        old = state.shared.get(ios.tid)
        probe = SharedTile(dt, rows, col, vr, vc, layout, cap, ios.mask, ios.mask, True,
                           _EMPTY, _EMPTY)  # fmt: skip
        rule = compatible(old, probe, ios.mask)
        if rule is not None:
            raise ctx.illegal(f"S{ios.tid}: {rule} (SharedTileUpdateCompatible)")
        used = claim(ctx, ios.tid, old, cap, ios.mask)
        base = ctx.gpr_slot(0)
        stride = ctx.gpr_slot(1, dense_stride(col, dt))
        fp = footprint(dt, base, stride, vr, vc, state.config.gm_size, name, False,
                       ctx.pes, select=own)  # fmt: skip
        # unselected addresses are never probed: read a safe byte there, then drop it
        safe = Footprint(np.where(own, fp.addr, np.uint64(0)), fp.nbytes, fp.high)
        if state.access_log is not None:  # a grid launch records what it read (D13)
            idx = fp.addr[own].astype(np.int64)
            state.access_log.read(idx[:, None] + np.arange(fp.nbytes, dtype=np.int64))
        vals = gather(state.gm, safe, dt)  # (P, vr, vc)
        got = np.take_along_axis(vals, pick, axis=0)[0]  # each element from its owner
        payload = poisoned(dt, (rows, col))
        payload[:vr, :vc] = np.where(sel, got, payload[:vr, :vc]).astype(carrier)
        written = np.zeros((rows, col), bool)
        written[:vr, :vc] = sel
        payload.flags.writeable = False
        written.flags.writeable = False
        new = SharedTile(dt, rows, col, vr, vc, layout, cap, ios.mask, ios.mask, True,
                         payload, written)  # fmt: skip
        ctx.shared_write = (ios.tid, updated(old, new, ios.mask, True), used)

    return run


_EMPTY = np.zeros((0, 0), bool)


def tstore(spec: Spec) -> Runner:
    """Stores the LB1 x LB0 valid rectangle (default: the source's valid region); a
    Shared source is :func:`~.shared_tlsu.tstore_shared`."""
    if shared_tlsu_selected(spec):
        return tstore_shared(spec)
    _tlsu_schema(spec)
    dt = spec.dtype()
    require_optional_dims(spec)
    src_layout, _ = spec.layouts()
    by_shape: dict[tuple[int, int], _Footprints] = {}  # the shape may come from the tile

    def run(ctx: Ctx) -> None:
        t = ctx.source(0, dt, layout=src_layout)
        shape = generic_shape(spec, t)
        if shape.valid_rows > t.valid_rows or shape.valid_cols > t.valid_cols:
            raise ctx.illegal(
                f"{ctx.name} of {shape.valid_rows}x{shape.valid_cols} exceeds the "
                f"{t.valid_rows}x{t.valid_cols} valid region of {ctx.ref(0)}"
            )
        if shape.valid_cols > shape.cols:
            raise ctx.illegal(f"{ctx.name} ValidCol (LB0) exceeds Col (LB2)")
        base = ctx.gpr_slot(0)
        stride = ctx.gpr_slot(1, dense_stride(shape.cols, dt))
        footprints = by_shape.get((shape.valid_rows, shape.valid_cols))
        if footprints is None:
            footprints = _Footprints(dt, shape.valid_rows, shape.valid_cols, True)
            if len(by_shape) >= FOOTPRINTS_PER_PLAN:
                by_shape.pop(next(iter(by_shape)))
            by_shape[(shape.valid_rows, shape.valid_cols)] = footprints
        fp = footprints.get(ctx, base, stride)
        vals = t.payload[ctx.pidx, : shape.valid_rows, : shape.valid_cols]
        ctx.gm_writes.extend(scatter_plan(ctx.state.gm, fp, vals, stride))

    run.fused = fused_tstore(spec, dt, src_layout)  # type: ignore[attr-defined]
    return run


def tmov(spec: Spec) -> Runner:
    """A renamed copy of one Local tile: payload and definedness, padding included. The
    BSTART DataType (DTYPE_NONE: the source's) and the shape must match the source. A
    move to or from a Shared register is :func:`~.shared_tlsu.tmov_shared`."""
    if shared_tlsu_selected(spec):
        return tmov_shared(spec)
    spec.require_schema()
    require_optional_dims(spec)
    src_layout, dst_layout = spec.layouts()
    code = spec.dtype_code
    dt = None if code == DTYPE_NONE else spec.dtype()

    def run(ctx: Ctx) -> None:
        if ctx.sources[0].dtype is None:
            _tmov_predicate(ctx, spec, dt, src_layout)
            return
        t = ctx.source(0, ... if dt is None else dt, layout=src_layout)
        assert t.dtype is not None
        shape = generic_shape(spec, t)
        if (shape.valid_rows, shape.valid_cols, shape.cols) != (
            t.valid_rows, t.valid_cols, t.cols,
        ):  # fmt: skip
            raise ctx.illegal(f"the {ctx.name} destination shape differs from {ctx.ref(0)}")
        (slot,) = ctx.allocate((t.dtype, shape, dst_layout))
        check_dest_layout(ctx, slot)
        if slot.rows != t.rows:
            raise ctx.illegal(
                f"the {ctx.name} destination has {slot.rows} rows, {ctx.ref(0)} has {t.rows} "
                "(source and destination descriptors must match)"
            )
        defined = None if t.defined is None else ctx.defined(t)
        ctx.publish(slot, ctx.physical(t), whole=True, defined=defined,
                    pad_defined=t.pad_defined)  # fmt: skip

    run.fused = fused_tmov(spec, dt, src_layout, dst_layout)  # type: ignore[attr-defined]
    return run


def tprefetch(spec: Spec) -> Runner:
    """``ExecuteBundleTPREFETCHOperation``: probe the TLOAD-equivalent footprint of every
    PE (base RegSrc0, row stride RegSrc1 in *elements*; omitted B.IOR: base 0 and stride
    Col) and change nothing else. Cache placement is not architectural, so a successful
    prefetch has no effect a program can observe; a footprint outside the memory is the
    same fault TLOAD raises, before any PE's request."""
    _tlsu_schema(spec)
    dt = spec.dtype()
    require_optional_dims(spec)
    vc = spec.dims[0] if spec.dims[0] is not None else 1
    vr = spec.dims[1] if spec.dims[1] is not None else 1
    col = spec.dims[2] if spec.dims[2] is not None else vc
    if col & (col - 1) or vc > col:  # BundleTPREFETCHDimensionsLegal
        raise spec.illegal(
            f"{spec.name} Col (LB2) must be a power of two at least ValidCol (LB0); "
            f"got Col {col}, ValidCol {vc}"
        )
    if vr * vc > MODEL_TILE_ELEMENTS:
        raise spec.illegal(
            f"{spec.name} of {vr}x{vc} elements exceeds the {MODEL_TILE_ELEMENTS}-element "
            "footprint of one tile"
        )

    def run(ctx: Ctx) -> None:
        base = ctx.gpr_slot(0)
        stride = ctx.gpr_slot(1, col)
        footprint(dt, base, stride, vr, vc, ctx.state.config.gm_size, ctx.name, False,
                  ctx.pes, stride_elements=True)  # fmt: skip

    return run


def _tmov_predicate(ctx: Ctx, spec: Spec, dt: DataType | None, layout: object) -> None:
    """TMOV of a predicate tile: ``TileShapeAndTypeMatch`` asks for the same storage kind
    and DataType, and a predicate has none, so only ``BSTART.TMOV DTYPE_NONE`` moves one;
    the copy keeps the predicate geometry and every bit, padding included."""
    if dt is not None:
        raise ctx.illegal(
            f"{ctx.ref(0)} is a predicate tile: move it with BSTART.TMOV DTYPE_NONE, "
            f"not {dt.name}"
        )
    t = ctx.source(0, None, layout=None, predicate=True)
    shape = generic_shape(spec, t)
    if (shape.valid_rows, shape.valid_cols, shape.cols) != (t.valid_rows, t.valid_cols, t.cols):
        raise ctx.illegal(f"the {ctx.name} destination shape differs from {ctx.ref(0)}")
    slot = ctx.allocate_predicate(t)
    defined = None if t.defined is None else ctx.defined(t)
    ctx.publish(slot, ctx.physical(t), whole=True, defined=defined, pad_defined=t.pad_defined)


__all__ = ["DataType", "Shape"]


#: the preparers of this family, by the executor kind the operation table names
PREPARERS: Mapping[Executor, Preparer] = MappingProxyType(
    {
        Executor.LOAD: tload,
        Executor.STORE: tstore,
        Executor.MOV: tmov,
        Executor.PREFETCH: tprefetch,
    }
)
