"""Tile-scalar operations (TEPL Mode 1): TADDS..TMINS, TCMPS, TSELS, TEXPANDS.

The scalar is B.IOR RegSrc0 read on each participating PE and reduced to the low
element-width raw bits (``TileRawElementValue`` via ``semantics.core.scalar_operand``);
omitting B.IOR supplies 0 (``SelectedBundleTileScalarRawValue``). The scalar must be a
valid encoding of the DataType (``tile-scalar-schema.asl``).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

import numpy as np

from ptoc.backend.isa import DataType, Executor
from ptoc.backend.isa.semantics import core
from ptoc.backend.isa.semantics.arith_kernels import arith_applies, compiled_arith

from ..alloc import Dests
from ..bundle import BundlePlan
from ..engine import (
    Ctx,
    Fused,
    Preparer,
    Runner,
    build_tile,
    geometry,
    gpr_words,
    make_dests,
    push_fused,
)
from ..spec import Spec
from ..state import MachineState
from .common import (
    ENCODING_TYPES,
    RM,
    invalid_encoding,
    predicate_slot,
    require_encodings,
    same_rows,
    source_key,
)
from .compare_fused import fused_compare
from .elementwise import check_predicate, fused_runner
from .integer_fused import int_scalar_applies, int_scalar_runner
from .native import compiled_runner


def _scalar(ctx: Ctx, dt: DataType) -> np.ndarray:
    """Each PE's raw RegSrc0 (0 when B.IOR is omitted), whose low element-width bits must
    be a valid encoding of ``dt``."""
    gpr = ctx.gpr_slot(0)
    if invalid_encoding(dt, core.scalar_operand(dt, gpr)):
        raise ctx.illegal(f"the B.IOR scalar is not a valid {dt.name} encoding")
    return gpr


def tile_scalar_binary(spec: Spec) -> Runner:
    spec.require_schema()
    dt = spec.dtype()
    shape = spec.std_shape()
    spec.require_row_major_dest()
    fn, pad = spec.semantics, spec.pad
    dests = make_dests(spec, spec.plan.mask, ((dt, shape, RM),))

    def run(ctx: Ctx) -> None:
        a = ctx.source(0, dt, shape)
        va = ctx.values(a)
        require_encodings(ctx, 0, a, va)
        s = _scalar(ctx, dt)
        (slot,) = ctx.reserve(dests)
        same_rows(ctx, 0, a, slot.rows)
        res, st = fn(dt, va, s)
        ctx.publish(slot, res, pad)
        ctx.add_status(st)

    if dt not in ENCODING_TYPES:  # TF32/HF32 sources need their encodings checked
        key = source_key(dt, shape, dests.slots[0].rows if dests.slots else None)
        fused = fused_runner(fn, dt, dests, (key,), pad, spec.name, scalar=True)
        one = dests.fault is None and len(dests.slots) == 1
        op = spec.row.arith or ""
        compiled = compiled_arith() if arith_applies(op, dt) else None
        if key is not None and one and compiled is not None:
            fused = compiled_runner(compiled, fused, spec, dests, key, scalar=True)
        elif key is not None and one and int_scalar_applies(spec):
            fused = int_scalar_runner(fused, spec, dests, key)
        run.fused = fused  # type: ignore[attr-defined]
    return run


def tcmps(spec: Spec) -> Runner:
    spec.require_schema()
    sem = spec.semantics
    dt = spec.dtype()
    shape = spec.std_shape()
    spec.require_row_major_dest()
    cmode, pad = spec.cmode, spec.pad
    predicates: dict[tuple[int, ...], Dests] = {}

    def run(ctx: Ctx) -> None:
        a = ctx.source(0, dt, shape)
        va = ctx.values(a)
        require_encodings(ctx, 0, a, va)
        s = _scalar(ctx, dt)
        slot = predicate_slot(ctx, a, predicates)
        res, st = sem(dt, va, s, cmode)
        ctx.publish(slot, res, pad)
        ctx.add_status(st)

    run.fused = fused_compare(  # type: ignore[attr-defined]
        sem, dt, shape, spec.plan.mask, cmode, pad, spec.name, predicates, scalar=True
    )
    return run


def tsels(spec: Spec) -> Runner:
    """``B.IOT Predicate, SrcTrue, last, ->Dst``: predicate 1 selects SrcTrue, 0 the scalar."""
    spec.require_schema()
    sem = spec.semantics
    dt = spec.dtype()
    shape = spec.std_shape()
    spec.require_row_major_dest()
    pad = spec.pad
    dests = make_dests(spec, spec.plan.mask, ((dt, shape, RM),))

    def run(ctx: Ctx) -> None:
        t = ctx.source(1, dt, shape)
        vt = ctx.values(t)
        require_encodings(ctx, 1, t, vt)
        check_predicate(ctx, 0, 1)
        s = _scalar(ctx, dt)
        (slot,) = ctx.reserve(dests)
        same_rows(ctx, 1, t, slot.rows)
        res, st = sem(dt, ctx.values(ctx.sources[0]), vt, s)
        ctx.publish(slot, res, pad)
        ctx.add_status(st)

    if dt not in ENCODING_TYPES:  # TF32/HF32 sources need their encodings checked
        key = source_key(dt, shape, dests.slots[0].rows if dests.slots else None)
        pred_key = None if key is None else (None, *key[1:])
        run.fused = fused_runner(  # type: ignore[attr-defined]
            sem, dt, dests, (pred_key, key), pad, spec.name, scalar=True
        )
    return run


def texpands(spec: Spec) -> Runner:
    """No source: the valid region receives the scalar's raw bits."""
    spec.require_schema()
    sem = spec.semantics
    dt = spec.dtype()
    shape = spec.std_shape()
    spec.require_row_major_dest()
    pad = spec.pad
    dests = make_dests(spec, spec.plan.mask, ((dt, shape, RM),))

    def run(ctx: Ctx) -> None:
        s = _scalar(ctx, dt)
        (slot,) = ctx.reserve(dests)
        res, st = sem(dt, (ctx.P, shape.valid_rows, shape.valid_cols), s)
        ctx.publish(slot, res, pad)
        ctx.add_status(st)

    if dests.fault is None and len(dests.slots) == 1:
        run.fused = _fused_texpands(spec, dt, dests)  # type: ignore[attr-defined]
    return run


def _fused_texpands(spec: Spec, dt: DataType, dests: Dests) -> Fused:
    """TEXPANDS without the per-bundle context (``engine.execute_untraced``): the
    generic runner's steps for one destination; an invalid scalar encoding or a push
    the queue cannot take returns False before any effect (the generic path raises)."""
    sem, pad, name = spec.semantics, spec.pad, spec.name
    slot = dests.slots[0]
    mask, hand, vr, vc = slot.mask, slot.hand, slot.valid_rows, slot.valid_cols

    def fused(state: MachineState, plan: BundlePlan) -> bool:
        npes = state.config.pes
        pes, p, pidx, pkey = geometry(mask, npes)
        if pes[-1] >= npes:
            return False
        gpr = gpr_words(state, plan, 0, 0, p, pidx, pkey)
        if invalid_encoding(dt, core.scalar_operand(dt, gpr)):
            return False
        res, st = sem(dt, (p, vr, vc), gpr)
        tile = build_tile(state, name, slot, res, pad, pes, pidx, numbered=False)
        return push_fused(state, hand, tile, st, pidx, p)

    return fused


#: the preparers of this family, by the executor kind the operation table names
PREPARERS: Mapping[Executor, Preparer] = MappingProxyType(
    {
        Executor.TILE_SCALAR: tile_scalar_binary,
        Executor.CMPS: tcmps,
        Executor.SELS: tsels,
        Executor.EXPANDS: texpands,
    }
)
