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

from ..alloc import Dests
from ..engine import Ctx, Preparer, Runner, make_dests
from ..spec import Spec
from .common import RM, invalid_encoding, predicate_slot, require_encodings, same_rows
from .elementwise import check_predicate


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

    return run


#: the preparers of this family, by the executor kind the operation table names
PREPARERS: Mapping[Executor, Preparer] = MappingProxyType(
    {
        Executor.TILE_SCALAR: tile_scalar_binary,
        Executor.CMPS: tcmps,
        Executor.SELS: tsels,
        Executor.EXPANDS: texpands,
    }
)
