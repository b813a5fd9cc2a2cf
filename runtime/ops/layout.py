"""Layout and rearrangement (TEPL Mode 3): TTRANS, TCONCAT, TEXTRACT, TINSERT, TFILLPAD.

TTRANS follows seed decision 137: LB0 = destination ValidCol (required), LB1 =
destination ValidRow (default 1), LB2 = destination Col (default ValidCol), and they must
equal the transposed source. The other four use the generic destination-shape path of
``asl/block/model/dispatch/destination-shape.asl``: a present LB gives the destination
ValidCol/ValidRow/Col, an omitted one inherits the first source's; an explicitly
encoded zero LB is illegal. Sources may use any generic layout (row-major, column-major,
ZN, NZ); B.DATR.Layout selects the destination layout, which must suit its shape
(``TileLayoutShapeLegal``). Padding is Null.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from ptoc.backend.isa import DataType, Executor, info
from ptoc.backend.isa.fields import PAD_NULL
from ptoc.backend.isa.semantics import layout as sl

from ..alloc import Dests
from ..bundle import BundlePlan
from ..engine import (
    Ctx,
    Fused,
    Preparer,
    Runner,
    Slot,
    build_tile,
    make_dests,
    one_source,
    push_fused,
    region,
    two_sources,
)
from ..spec import Shape, Spec
from ..state import MachineState
from ..tiles import CUBE_LAYOUTS, Layout, Tile, layout_shape_legal
from .move_fused import fused_ttrans


def dest_layout_legal(slot: Slot) -> bool:
    """Whether the destination descriptor is legal for its layout (``TileDescriptorLegal``)."""
    assert slot.dtype is not None
    return slot.layout in _ANY_SHAPE or layout_shape_legal(
        slot.layout, slot.rows, slot.cols, info(slot.dtype).bits
    )


def check_dest_layout(ctx: Ctx, slot: Slot) -> None:
    """The destination descriptor is legal for its layout (``TileDescriptorLegal``)."""
    assert slot.dtype is not None
    if not dest_layout_legal(slot):
        raise ctx.illegal(
            f"a {slot.rows}x{slot.cols} {slot.dtype.name} tile cannot use layout "
            f"{slot.layout.value} (fractal layouts need Rows % 16 == 0 and whole 32-byte rows)"
        )


#: layouts legal for every shape (``TileLayoutShapeLegal``)
_ANY_SHAPE = frozenset({Layout.ROW_MAJOR, Layout.COL_MAJOR})


def static_dests(spec: Spec, dt: DataType, layout: Layout) -> tuple[Shape, Dests] | None:
    """The destination shape and descriptors of a bundle whose three LBs are all
    present: they do not depend on the source then, so they are computed once (as
    ``Ctx.allocate`` would on every run). None when a dimension comes from the source."""
    vc, vr, col = spec.dims
    if vc is None or vr is None or col is None:
        return None
    shape = Shape(vr, vc, col)
    return shape, make_dests(spec, spec.plan.mask, ((dt, shape, layout),))


def require_optional_dims(spec: Spec) -> None:
    for k, v in enumerate(spec.dims):
        if v == 0:
            raise spec.illegal(f"an explicitly encoded zero LB{k} is illegal for {spec.name}")


def generic_shape(spec: Spec, like: Tile) -> Shape:
    """``BundleDestinationValidRows/ValidColumns/PhysicalColumns`` with a shape source."""
    vc, vr, col = spec.dims
    return Shape(
        vr if vr is not None else like.valid_rows,
        vc if vc is not None else like.valid_cols,
        col if col is not None else like.cols,
    )


def ttrans(spec: Spec) -> Runner:
    spec.require_schema()
    dt = spec.dtype()
    shape = spec.std_shape()
    _, dst_layout = spec.layouts()
    dests = make_dests(spec, spec.plan.mask, ((dt, shape, dst_layout),))

    def run(ctx: Ctx) -> None:
        a = ctx.source(0, dt, layout=None)
        rule = sl.ttrans_shape_legal(
            (a.valid_rows, a.valid_cols), (shape.valid_rows, shape.valid_cols)
        )
        if rule is not None:
            raise ctx.illegal(rule)
        (slot,) = ctx.reserve(dests)
        check_dest_layout(ctx, slot)
        res, st = sl.ttrans(dt, ctx.values(a))
        ctx.publish(slot, res)
        ctx.add_status(st)

    if dests.fault is None and len(dests.slots) == 1 and dest_layout_legal(dests.slots[0]):
        run.fused = fused_ttrans(spec, dt, dests.slots[0])  # type: ignore[attr-defined]
    return run


def _plain_source(
    state: MachineState, plan: BundlePlan, mask: int, dt: DataType
) -> tuple[tuple[int, ...], int, slice | list[int], object, Tile] | None:
    """For a fused layout form: :func:`~..engine.one_source`, when the source is a
    defined, non-CUBE tile of ``dt`` (the generic path checks and raises the rest)."""
    got = one_source(state, plan, mask)
    if got is None:
        return None
    a = got[4]
    if a.dtype != dt or a.defined is not None or a.layout in CUBE_LAYOUTS:
        return None
    return got


def tconcat(spec: Spec) -> Runner:
    spec.require_schema()
    dt = spec.dtype()
    require_optional_dims(spec)
    _, dst_layout = spec.layouts()
    static = static_dests(spec, dt, dst_layout)

    def run(ctx: Ctx) -> None:
        a = ctx.source(0, dt, layout=None)
        b = ctx.source(1, dt, layout=None)
        shape = generic_shape(spec, a) if static is None else static[0]
        rule = sl.tconcat_shapes_legal(
            (a.valid_rows, a.valid_cols),
            (b.valid_rows, b.valid_cols),
            (shape.valid_rows, shape.valid_cols),
        )
        if rule is not None:
            raise ctx.illegal(rule)
        if static is None:
            (slot,) = ctx.allocate((dt, shape, dst_layout))
        else:
            (slot,) = ctx.reserve(static[1])
        check_dest_layout(ctx, slot)
        res, st = sl.tconcat(dt, ctx.values(a), ctx.values(b))
        ctx.publish(slot, res)
        ctx.add_status(st)

    if static is not None and static[1].fault is None and len(static[1].slots) == 1:
        slot = static[1].slots[0]
        if dest_layout_legal(slot):
            run.fused = _fused_tconcat(spec, dt, slot)  # type: ignore[attr-defined]
    return run


def _fused_tconcat(spec: Spec, dt: DataType, slot: Slot) -> Fused:
    """TCONCAT with a static destination, without the per-bundle context
    (``engine.execute_untraced``): the generic runner's steps for two defined, non-CUBE
    sources of ``dt`` whose valid shapes concatenate to the destination's (kept per
    pair of source shapes); anything else -- an empty position, a mask a source does
    not cover, an illegal shape, a push the queue cannot take -- returns False before
    any effect (the generic path raises the fault)."""
    mask, hand, name = slot.mask, slot.hand, spec.name
    want = (slot.valid_rows, slot.valid_cols)
    legal: dict[tuple[int, int, int, int], bool] = {}  # source valid shapes -> legal

    def fused(state: MachineState, plan: BundlePlan) -> bool:
        got = two_sources(state, plan, mask)
        if got is None:
            return False
        pes, p, pidx, pkey, a, b = got
        for t in (a, b):
            if t.dtype != dt or t.defined is not None or t.layout in CUBE_LAYOUTS:
                return False
        shapes = (a.valid_rows, a.valid_cols, b.valid_rows, b.valid_cols)
        ok = legal.get(shapes)
        if ok is None:
            ok = sl.tconcat_shapes_legal(shapes[:2], shapes[2:], want) is None
            if len(legal) < 16:  # (sources of other shapes: bounded)
                legal[shapes] = ok
        if not ok:
            return False
        res, st = sl.tconcat(dt, region(a, pidx, pkey), region(b, pidx, pkey))
        tile = build_tile(state, name, slot, res, PAD_NULL, pes, pidx, numbered=False)
        return push_fused(state, hand, tile, st, pidx, p)

    return fused


def textract(spec: Spec) -> Runner:
    """B.IOR RegSrc0 = row offset, RegSrc1 = column offset (omitted: 0, 0)."""
    spec.require_schema()
    dt = spec.dtype()
    require_optional_dims(spec)
    _, dst_layout = spec.layouts()

    static = static_dests(spec, dt, dst_layout)

    def run(ctx: Ctx) -> None:
        a = ctx.source(0, dt, layout=None)
        shape = generic_shape(spec, a) if static is None else static[0]
        # the per-PE offsets as Python ints, read once for the rule and the window
        ro, co = ctx.gpr_slot(0).tolist(), ctx.gpr_slot(1).tolist()
        rule = sl.textract_shape_legal(
            (a.valid_rows, a.valid_cols), (shape.valid_rows, shape.valid_cols), ro, co
        )
        if rule is not None:
            raise ctx.illegal(rule)
        if static is None:
            (slot,) = ctx.allocate((dt, shape, dst_layout))
        else:
            (slot,) = ctx.reserve(static[1])
        check_dest_layout(ctx, slot)
        res, st = sl.textract(dt, ctx.values(a), ro, co, (shape.valid_rows, shape.valid_cols))
        ctx.publish(slot, res)
        ctx.add_status(st)

    if static is not None and static[1].fault is None and len(static[1].slots) == 1:
        slot = static[1].slots[0]
        if dest_layout_legal(slot):
            run.fused = _fused_textract(spec, dt, slot)  # type: ignore[attr-defined]
    return run


def _fused_textract(spec: Spec, dt: DataType, slot: Slot) -> Fused:
    """TEXTRACT with a static destination, without the per-bundle context
    (``engine.execute_untraced``): the generic runner's steps for a defined, non-CUBE
    source of ``dt``; anything else -- an empty position, a mask the source does not
    cover, a window past the source, a push the queue cannot take -- returns False
    before any effect (the generic path raises the fault)."""
    mask, hand, name = slot.mask, slot.hand, spec.name
    want = (slot.valid_rows, slot.valid_cols)

    def fused(state: MachineState, plan: BundlePlan) -> bool:
        got = _plain_source(state, plan, mask, dt)
        if got is None:
            return False
        pes, p, pidx, pkey, a = got
        ior = plan.ior  # (RegSrc0/1, as integers; 0 when B.IOR is omitted)
        if ior is None:
            ro, co = [0] * p, [0] * p
        else:
            ro, co = state.gpr_column(ior.src0, pes), state.gpr_column(ior.src1, pes)
        if sl.textract_shape_legal((a.valid_rows, a.valid_cols), want, ro, co) is not None:
            return False
        values = region(a, pidx, pkey)
        r0, c0 = ro[0], co[0]
        if ro.count(r0) == p and co.count(c0) == p:  # one window: a view, copied once
            res = values[:, r0 : r0 + want[0], c0 : c0 + want[1]]
            tile = build_tile(state, name, slot, res, PAD_NULL, pes, pidx, numbered=False)
            if not state.push_one(hand, tile):
                return False
            tile.serial = state.next_serial()  # (moved bits: no status)
            return True
        res, st = sl.textract(dt, values, ro, co, want)
        tile = build_tile(state, name, slot, res, PAD_NULL, pes, pidx, numbered=False)
        return push_fused(state, hand, tile, st, pidx, p)

    return fused


def tinsert(spec: Spec) -> Runner:
    """``B.IOT OldDst, Src, last, ->Dst``: a copy of OldDst (descriptor, payload and
    definedness, padding included) with Src written at (RegSrc0, RegSrc1)."""
    spec.require_schema()
    dt = spec.dtype()
    require_optional_dims(spec)
    _, dst_layout = spec.layouts()

    def run(ctx: Ctx) -> None:
        old = ctx.source(0, dt, layout=None)
        src = ctx.source(1, dt, layout=None)
        shape = generic_shape(spec, old)
        if (shape.valid_rows, shape.valid_cols, shape.cols, dst_layout) != (
            old.valid_rows, old.valid_cols, old.cols, old.layout,
        ):  # fmt: skip
            raise ctx.illegal(
                f"the {ctx.name} destination must have the shape and layout of {ctx.ref(0)}"
            )
        ro, co = ctx.gpr_slot(0), ctx.gpr_slot(1)
        rule = sl.tinsert_shape_legal(
            (old.valid_rows, old.valid_cols), (src.valid_rows, src.valid_cols), ro, co
        )
        if rule is not None:
            raise ctx.illegal(rule)
        (slot,) = ctx.allocate((dt, shape, dst_layout))
        if slot.rows != old.rows:
            raise ctx.illegal(
                f"the {ctx.name} destination has {slot.rows} rows, {ctx.ref(0)} has {old.rows}"
            )
        res, st = sl.tinsert(
            dt, ctx.physical(old), ctx.values(src), ro, co, (old.valid_rows, old.valid_cols)
        )
        if old.defined is None:  # valid region defined, padding as in the old tile
            ctx.publish(slot, res, whole=True, pad_defined=old.pad_defined)
        else:
            defined = ctx.defined(old).copy()
            defined[:, : old.valid_rows, : old.valid_cols] = True
            ctx.publish(slot, res, whole=True, defined=defined)
        ctx.add_status(st)

    return run


def tfillpad(spec: Spec) -> Runner:
    """The whole physical destination is defined: the source valid rectangle, and the
    B.IOR RegSrc0 scalar (omitted: 0) everywhere else."""
    spec.require_schema()
    dt = spec.dtype()
    require_optional_dims(spec)
    _, dst_layout = spec.layouts()

    def run(ctx: Ctx) -> None:
        a = ctx.source(0, dt, layout=None)
        shape = generic_shape(spec, a)
        (slot,) = ctx.allocate((dt, shape, dst_layout))
        check_dest_layout(ctx, slot)
        rule = sl.tfillpad_shapes_legal(
            (a.rows, a.cols),
            (a.valid_rows, a.valid_cols),
            (slot.rows, slot.cols),
            (slot.valid_rows, slot.valid_cols),
        )
        if rule is not None:
            raise ctx.illegal(rule)
        res, st = sl.tfillpad(dt, ctx.values(a), ctx.gpr_slot(0), (slot.rows, slot.cols))
        ctx.publish(slot, res, whole=True)
        ctx.add_status(st)

    return run


#: the preparers of this family, by the executor kind the operation table names
PREPARERS: Mapping[Executor, Preparer] = MappingProxyType(
    {
        Executor.CONCAT: tconcat,
        Executor.EXTRACT: textract,
        Executor.INSERT: tinsert,
        Executor.FILLPAD: tfillpad,
        Executor.TRANS: ttrans,
    }
)
