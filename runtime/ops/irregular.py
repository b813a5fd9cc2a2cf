"""Irregular and complex operations (TEPL Mode 3): the ADR 0083 selectors (seed S0) and
TCI, TTRI, THISTOGRAM.

Decisions 133-143 fix the schemas: TQUANT/TDEQUANT (mandatory B.DATR destination type,
B.IOR multiplier and zero point with the omission defaults 1.0 and 0), TSORT (LB0 =
sort_width, two destinations), TMRGSORT (no B.DIM, one row of n0+n1 columns and Col the
next power of two), TGATHER/TSCATTER (LB0/LB1/LB2 describe the destination), TPART*
(B.DATR, B.IOR and B.IOS illegal). Padding is Null except TSCATTER, whose whole physical
destination starts as defined zero.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

import numpy as np

from ptoc.backend.isa import DTYPE_NONE, DataType, Executor, IorKind, legality
from ptoc.backend.isa.fields import PAD_NULL
from ptoc.backend.isa.semantics import generate as sg
from ptoc.backend.isa.semantics import indexed as si
from ptoc.backend.isa.semantics import partial as sp
from ptoc.backend.isa.semantics import quant as sq
from ptoc.backend.isa.semantics import sorting as ss
from ptoc.backend.isa.semantics.core import SemanticError

from ..alloc import Dests, Slot
from ..bundle import BundlePlan
from ..engine import (
    Ctx,
    Fused,
    Preparer,
    Runner,
    build_tile,
    fused_sources,
    geometry,
    gpr_words,
    make_dests,
    push_fused,
    region,
    two_sources,
)
from ..faults import TileAllocationFault
from ..spec import Shape, Spec
from ..state import MachineState
from ..tiles import Layout, Tile
from .common import RM, require_encodings, same_rows
from .elementwise import fused_runner
from .layout import check_dest_layout, dest_layout_legal
from .move_fused import fused_tgather
from .sort_fused import lean_tmrgsort


def _quant_types(spec: Spec) -> DataType:
    dtd = spec.datr.dtype if spec.datr is not None else DTYPE_NONE
    dt = None if dtd == DTYPE_NONE else DataType(dtd)
    rule = legality.destination_dtype(spec.op, dt)
    if rule is not None:
        raise spec.illegal(rule)
    assert dt is not None
    return dt


def quantize(spec: Spec) -> Runner:
    spec.require_schema()
    src_dt = spec.dtype()
    dst_dt = _quant_types(spec)
    shape = spec.std_shape()
    spec.require_row_major_dest()
    fn = spec.semantics
    quant = fn is sq.tquant  # else TDEQUANT
    rmode, sat = spec.rmode, spec.sat
    default_mult = spec.row.ior_slot(IorKind.MULTIPLIER).default

    def run(ctx: Ctx) -> None:
        a = ctx.source(0, src_dt, shape)
        va = ctx.values(a)
        require_encodings(ctx, 0, a, va)
        mult, zp = ctx.gpr_slot(0, default_mult), ctx.gpr_slot(1)
        legal = sq.tquant_scalars_legal if quant else sq.tdequant_scalars_legal
        rule = legal(dst_dt if quant else src_dt, mult, zp)
        if rule is not None:
            raise ctx.illegal(rule)
        (slot,) = ctx.allocate((dst_dt, shape, RM))
        if quant:
            res, st = fn(dst_dt, va, mult, zp, rmode, sat)
        else:
            res, st = fn(src_dt, va, mult, zp, rmode)
        ctx.publish(slot, res)
        ctx.add_status(st)

    dests = make_dests(spec, spec.plan.mask, ((dst_dt, shape, RM),))
    if not dests.slots:
        return run

    def compute(
        dt: DataType, va: np.ndarray, mult: np.ndarray, zp: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """The semantics on the fused path (illegal scalars raise ``SemanticError`` there:
        the generic runner then raises the bundle's fault)."""
        if quant:
            return fn(dst_dt, va, mult, zp, rmode, sat)
        return fn(src_dt, va, mult, zp, rmode)

    # the source: any physical Rows (a 5-field descriptor prefix), fully defined
    key = (src_dt, RM, shape.valid_rows, shape.valid_cols, shape.cols)
    run.fused = fused_runner(compute, src_dt, dests, (key,), PAD_NULL, spec.name,  # type: ignore[attr-defined]
                             words=(default_mult, 0))  # fmt: skip
    return run


def _numeric(ctx: Ctx, t: Tile) -> DataType:
    if t.dtype is None:
        raise ctx.illegal(f"{t.shape_text} is a predicate tile; {ctx.name} needs a numeric one")
    return t.dtype


def _flag(ctx: Ctx, slot: int) -> bool | np.ndarray:
    """A flag0 GPR operand, read per PE (each PE its own GPR file, DECISIONS D3): exactly
    0 or 1 on every participating PE (omitted B.IOR: 0). Returns the (P,) flags, or one
    bool when every PE holds the same (the semantics' cheaper scalar direction)."""
    flag = _flag_value(ctx.gpr_slot(slot))
    if flag is None:
        raise ctx.illegal(f"{ctx.name} descending flag (B.IOR RegSrc{slot}) must be 0 or 1")
    return flag


def _flag_value(v: np.ndarray) -> bool | np.ndarray | None:
    """:func:`_flag` of the per-PE words ``v``; None when one is neither 0 nor 1."""
    flags = v.tolist()
    if max(flags) > 1:
        return None
    if min(flags) == max(flags):
        return bool(flags[0])
    return v


def tsort(spec: Spec) -> Runner:
    """One source, two destinations (values, U32 indices) in binding order."""
    spec.require_schema()
    dt = spec.dtype()
    spec.require_dims()
    width = spec.dims[0] or ss.SORT_WIDTH_DEFAULT  # omission and encoded zero select 32
    if not ss.SORT_WIDTH_MIN <= width <= ss.SORT_WIDTH_MAX:
        raise spec.illegal(f"{spec.name} sort_width LB0={width} is outside 1..64")

    def run(ctx: Ctx) -> None:
        a = ctx.source(0, dt)
        if a.valid_rows == 0 or a.valid_cols == 0:
            raise ctx.illegal(f"{ctx.name} needs a nonempty source")
        va = ctx.values(a)
        desc = _flag(ctx, 0)
        shape = Shape(a.valid_rows, a.valid_cols, a.cols)
        v_slot, i_slot = ctx.allocate((dt, shape, RM), (DataType.U32, shape, RM))
        values, indices, st = ss.tsort(dt, va, width, desc)
        ctx.publish(v_slot, values)
        ctx.publish(i_slot, indices)
        ctx.add_status(st)

    return run


def tmrgsort(spec: Spec) -> Runner:
    spec.require_schema()
    dt = spec.dtype()
    spec.require_dims()
    by_width: dict[int, Dests] = {}

    def run(ctx: Ctx) -> None:
        a = ctx.source(0, dt)
        b = ctx.source(1, dt)
        if a.valid_rows != 1 or b.valid_rows != 1 or not a.valid_cols or not b.valid_cols:
            raise ctx.illegal(f"{ctx.name} sources are nonempty single-row streams")
        n = a.valid_cols + b.valid_cols
        if n > 32768:  # the 0.58.3 contract: a combined width above the physical-column
            # range is Fault_TileAllocation (the seed is silent, so D4 keeps the contract)
            raise TileAllocationFault(
                f"{ctx.name} output of {n} columns exceeds the 32768-column range", ctx.name
            )
        desc = _flag(ctx, 0)
        dests = by_width.get(n)
        if dests is None:  # the output width is the plan's only varying geometry
            col = 1 << (n - 1).bit_length()
            dests = make_dests(spec, spec.plan.mask, ((dt, Shape(1, n, col), RM),))
            if len(by_width) < 16:
                by_width[n] = dests
        (slot,) = ctx.reserve(dests)
        res, st = ss.tmrgsort(dt, ctx.values(a), ctx.values(b), desc)
        ctx.publish(slot, res)
        ctx.add_status(st)

    general = _fused_tmrgsort(spec, dt, by_width)
    run.fused = lean_tmrgsort(general, spec, dt, by_width)  # type: ignore[attr-defined]
    return run


def _fused_tmrgsort(spec: Spec, dt: DataType, by_width: dict[int, Dests]) -> Fused:
    """TMRGSORT without the per-bundle context (``engine.execute_untraced``): the
    generic runner's steps for defined row-major single-row sources of ``dt`` whose
    output width the generic runner has met (its destinations are kept per width);
    anything else -- an empty position, a mask a source does not cover, another
    descriptor, a flag other than 0/1, unsorted sources, a push the queue cannot take --
    returns False before any effect (the generic path raises the fault)."""
    name, mask = spec.name, spec.plan.mask

    def fused(state: MachineState, plan: BundlePlan) -> bool:
        npes = state.config.pes
        pes, p, pidx, pkey = geometry(mask, npes)
        if pes[-1] >= npes:
            return False
        srcs = fused_sources(state, plan, mask)
        if srcs is None or len(srcs) != 2:
            return False
        a, b = srcs
        for t in srcs:
            if t.dtype != dt or t.layout is not Layout.ROW_MAJOR or t.defined is not None:
                return False
            if t.valid_rows != 1 or not t.valid_cols:
                return False
        dests = by_width.get(a.valid_cols + b.valid_cols)
        if dests is None or dests.fault is not None or len(dests.slots) != 1:
            return False
        desc = _flag_value(gpr_words(state, plan, 0, 0, p, pidx, pkey))
        if desc is None:
            return False
        try:
            res, st = ss.tmrgsort(dt, region(a, pidx, pkey), region(b, pidx, pkey), desc)
        except SemanticError:
            return False  # (unsorted sources: the generic path raises it in order)
        slot = dests.slots[0]
        tile = build_tile(state, name, slot, res, PAD_NULL, pes, pidx, numbered=False)
        return push_fused(state, slot.hand, tile, st, pidx, p)

    return fused


def tgather(spec: Spec) -> Runner:
    """``B.IOT Values, Index, last, ->Dst``: ``dst[r, c] = values[index[r, c], c]``."""
    spec.require_schema()
    dt = spec.dtype()
    shape = spec.std_shape()
    _, dst_layout = spec.layouts()
    dests = make_dests(spec, spec.plan.mask, ((dt, shape, dst_layout),))

    def run(ctx: Ctx) -> None:
        vals = ctx.sources[0]
        if vals.is_predicate or vals.dtype != dt:
            raise ctx.illegal(
                f"{ctx.ref(0)} has DataType {vals.type_name}, {ctx.name} needs {dt.name}"
            )
        idx = ctx.source(1, ..., layout=None)
        idx_dt = _numeric(ctx, idx)
        rule = si.tgather_types_legal(dt, idx_dt)
        if rule is not None:
            raise ctx.illegal(rule)
        if (idx.valid_rows, idx.valid_cols) != (shape.valid_rows, shape.valid_cols):
            raise ctx.illegal(
                f"the index tile {ctx.ref(1)} must have the destination valid shape"
            )
        if vals.valid_cols < shape.valid_cols:
            raise ctx.illegal(
                f"the value tile {ctx.ref(0)} has fewer columns than the destination"
            )
        (slot,) = ctx.reserve(dests)
        check_dest_layout(ctx, slot)
        vdef = (
            None
            if vals.defined is None
            else ctx.defined(vals)[:, : vals.valid_rows, : vals.valid_cols]
        )
        res, st = si.tgather(dt, idx_dt, ctx.values(vals), ctx.values(idx), vdef)
        ctx.publish(slot, res)
        ctx.add_status(st)

    if dests.fault is None and len(dests.slots) == 1 and dest_layout_legal(dests.slots[0]):
        run.fused = fused_tgather(spec, dt, dests.slots[0])  # type: ignore[attr-defined]
    return run


def _value_and_index(
    state: MachineState, plan: BundlePlan, mask: int, dt: DataType
) -> tuple[tuple[int, ...], int, slice | list[int], object, Tile, Tile, DataType] | None:
    """:func:`two_sources` of a fused TSCATTER, and the index DataType: None
    unless the value tile is a fully defined tile of ``dt`` and the index tile a fully
    defined numeric one (anything else is the generic path's to settle)."""
    got = two_sources(state, plan, mask)
    if got is None:
        return None
    pes, p, pidx, pkey, vals, idx = got
    idx_dt = idx.dtype
    if vals.dtype != dt or vals.defined is not None:
        return None
    if idx_dt is None or idx.defined is not None:
        return None
    return pes, p, pidx, pkey, vals, idx, idx_dt


def tscatter(spec: Spec) -> Runner:
    """``B.IOT Values, Index, last, ->Dst``: ``dst[index[r, c], c] = values[r, c]`` over a
    zero-initialised (defined) destination."""
    spec.require_schema()
    dt = spec.dtype()
    shape = spec.std_shape()
    _, dst_layout = spec.layouts()
    dests = make_dests(spec, spec.plan.mask, ((dt, shape, dst_layout),))

    def run(ctx: Ctx) -> None:
        vals = ctx.source(0, dt, layout=None)
        idx = ctx.source(1, ..., layout=None)
        idx_dt = _numeric(ctx, idx)
        rule = si.tscatter_types_legal(dt, idx_dt)
        if rule is not None:
            raise ctx.illegal(rule)
        if (idx.valid_rows, idx.valid_cols) != (vals.valid_rows, vals.valid_cols):
            raise ctx.illegal(f"{ctx.name} value and index tiles have one valid shape")
        if shape.valid_cols != vals.valid_cols:
            raise ctx.illegal(
                f"{ctx.name} destination ValidCol must equal the sources' ValidCol"
            )
        (slot,) = ctx.reserve(dests)
        check_dest_layout(ctx, slot)
        res, st = si.tscatter(
            dt, idx_dt, ctx.values(vals), ctx.values(idx), shape.valid_rows,
            (slot.rows, slot.cols),
        )  # fmt: skip
        ctx.publish(slot, res, whole=True)
        ctx.add_status(st)

    if dests.fault is None and len(dests.slots) == 1 and dest_layout_legal(dests.slots[0]):
        run.fused = _fused_tscatter(spec, dt, dests.slots[0])  # type: ignore[attr-defined]
    return run


def _fused_tscatter(spec: Spec, dt: DataType, slot: Slot) -> Fused:
    """TSCATTER without the per-bundle context (``engine.execute_untraced``): the
    generic runner's steps for a fully defined value tile of ``dt`` and a fully
    defined numeric index tile of its valid shape, whose ValidCol is the
    destination's; anything else -- an empty position, a mask a source does not
    cover, an illegal index type, an index out of range, a push the queue cannot take
    -- returns False before any effect (the generic path raises the fault)."""
    mask, hand, name = slot.mask, slot.hand, spec.name
    vr, vc, physical = slot.valid_rows, slot.valid_cols, (slot.rows, slot.cols)
    legal: dict[DataType, bool] = {}  # index DataType -> TSCATTER-legal with ``dt``

    def fused(state: MachineState, plan: BundlePlan) -> bool:
        got = _value_and_index(state, plan, mask, dt)
        if got is None:
            return False
        pes, p, pidx, pkey, vals, idx, idx_dt = got
        if (idx.valid_rows, idx.valid_cols) != (
            vals.valid_rows,
            vals.valid_cols,
        ) or vals.valid_cols != vc:
            return False
        ok = legal.get(idx_dt)
        if ok is None:
            ok = legal[idx_dt] = si.tscatter_types_legal(dt, idx_dt) is None
        if not ok:
            return False
        try:
            res, st = si.tscatter(
                dt, idx_dt, region(vals, pidx, pkey), region(idx, pidx, pkey), vr, physical
            )
        except SemanticError:  # an index out of range: the generic path raises it
            return False
        tile = build_tile(state, name, slot, res, PAD_NULL, pes, pidx, whole=True,
                          numbered=False)  # fmt: skip
        return push_fused(state, hand, tile, st, pidx, p)

    return fused


def tpart(spec: Spec) -> Runner:
    spec.require_schema(datr=False)
    if spec.datr is not None:  # stricter than all-zero applicability: no B.DATR at all
        raise spec.illegal(f"B.DATR is illegal for {spec.name}")
    dt = spec.dtype()
    shape = spec.std_shape()
    fn = spec.semantics

    def run(ctx: Ctx) -> None:
        a = ctx.source(0, dt)
        b = ctx.source(1, dt)
        va, vb = ctx.values(a), ctx.values(b)
        rule = sp.tpart_shapes_legal(
            (a.valid_rows, a.valid_cols),
            (b.valid_rows, b.valid_cols),
            (shape.valid_rows, shape.valid_cols),
        )
        if rule is not None:
            raise ctx.illegal(rule)
        require_encodings(ctx, 0, a, va)
        require_encodings(ctx, 1, b, vb)
        (slot,) = ctx.allocate((dt, shape, RM))
        res, st = fn(dt, va, vb, (shape.valid_rows, shape.valid_cols))
        ctx.publish(slot, res)
        ctx.add_status(st)

    return run


def generation(spec: Spec) -> Runner:
    """No source. TCI: B.IOR start, direction; LB1 must be 1. TTRI: diagonal, orientation.
    Col (LB2) is at least ValidCol (``SelectedBundleGenerationDimensionsLegal``)."""
    spec.require_schema()
    dt = spec.dtype()
    shape = spec.std_shape()
    spec.require_row_major_dest()
    fn = spec.semantics
    tci = fn is sg.tci  # else TTRI
    if tci and shape.valid_rows != 1:
        raise spec.illegal(f"{spec.name} LB1 (ValidRow), when present, must be 1")
    if shape.cols < shape.valid_cols:
        raise spec.illegal(f"{spec.name} Col (LB2) must be at least ValidCol (LB0)")
    dests = make_dests(spec, spec.plan.mask, ((dt, shape, RM),))

    def run(ctx: Ctx) -> None:
        s0, s1 = ctx.gpr_slot(0), ctx.gpr_slot(1)
        rule = sg.tci_scalars_legal(s1) if tci else sg.ttri_scalars_legal(s0, s1)
        if rule is not None:
            raise ctx.illegal(rule)
        (slot,) = ctx.reserve(dests)
        res, st = fn(dt, (shape.valid_rows, shape.valid_cols), s0, s1)
        ctx.publish(slot, res)
        ctx.add_status(st)

    return run


def thistogram(spec: Spec) -> Runner:
    """``B.IOT Source, Filter, last, ->Dst``; mandatory B.DATR: DataType U32, ByteId in
    PadValueOrByteId; no B.DIM; destination U32 ValidRow x 256 of Col 256."""
    spec.require_schema()
    src_dt = spec.dtype()
    spec.require_dims()
    assert spec.datr is not None  # datr_required
    if spec.datr.dtype != DataType.U32:
        raise spec.illegal(f"{spec.name} needs B.DATR.DataType U32")
    byte_id = spec.datr.pad

    def run(ctx: Ctx) -> None:
        a = ctx.source(0, src_dt)
        filt = ctx.sources[1]
        rows_needed = 0 if (src_dt, byte_id) in ((DataType.U16, 1), (DataType.U32, 3)) else 1
        fvals = None
        if rows_needed:
            ctx.source(1, DataType.U8, layout=None)
            fvals = ctx.values(filt)
        rule = sg.thistogram_shapes_legal(
            src_dt, (a.valid_rows, a.valid_cols),
            None if fvals is None else (filt.valid_rows, filt.valid_cols), byte_id,
        )  # fmt: skip
        if rule is not None:
            raise ctx.illegal(rule)
        (slot,) = ctx.allocate((DataType.U32, Shape(a.valid_rows, 256, 256), RM))
        res, st = sg.thistogram(src_dt, ctx.values(a), fvals, byte_id)
        ctx.publish(slot, res)
        ctx.add_status(st)

    return run


def timg2col(spec: Spec) -> Runner:
    """TIMG2COL reads the source's feature-map descriptor
    (``TileOperandsLegal_TIMG2COL`` needs ``TileFeatureMapDescriptorStructurallyValid``).
    In the 0.58.3 model those descriptors are invalidated at reset and on every allocation,
    and no instruction configures one (``ConfigureTileFeatureMapDescriptor`` has no
    caller), so every TIMG2COL that passes the schema checks is rejected as illegal."""
    spec.require_schema()
    dt = spec.dtype()

    def run(ctx: Ctx) -> None:
        ctx.source(0, dt)
        raise ctx.illegal(
            f"{ctx.name}: {ctx.ref(0)} carries no valid feature-map descriptor (no instruction "
            "of the ISA configures one, so the image-to-column schema cannot hold)"
        )

    return run


__all__ = ["same_rows"]


#: the preparers of this family, by the executor kind the operation table names
PREPARERS: Mapping[Executor, Preparer] = MappingProxyType(
    {
        Executor.IMG2COL: timg2col,
        Executor.GENERATION: generation,
        Executor.HISTOGRAM: thistogram,
        Executor.QUANTIZE: quantize,
        Executor.SORT: tsort,
        Executor.MRGSORT: tmrgsort,
        Executor.GATHER: tgather,
        Executor.SCATTER: tscatter,
        Executor.PART: tpart,
    }
)
