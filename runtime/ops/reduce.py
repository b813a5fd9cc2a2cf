"""Reductions and expansions (TEPL Mode 2, SFU).

* Row/column reductions (``reduction-schema.asl``): LB0/LB1/LB2 describe the SOURCE
  (ValidCol, ValidRow, Col). A row reduction's destination is ValidRow = source
  ValidRow, ValidCol = Col = 1; a column reduction's is ValidRow = 1, ValidCol and Col
  of the source. ARG reductions produce U32 (``ResolveBundleTileDestinationsForOperation``).
* Expansions (``expansion-schema.asl``, seed TROWEXPANDMIN page): LBs describe the
  destination; the full-shape source matches it; a row broadcast tile has ValidRow =
  destination ValidRow, ValidCol 1 and physical Col 1; a column broadcast tile has
  ValidRow 1 and the destination's ValidCol and Col. EXPDIF takes its destination type
  from B.DATR.DataType (DTYPE_NONE or omitted: the source type).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import astuple
from types import MappingProxyType

import numpy as np

from ptoc.backend.isa import Axis, DataType, Executor, OperandKind
from ptoc.backend.isa.semantics import expand as sx
from ptoc.backend.isa.semantics.arith_kernels import (
    arith_applies,
    compiled_arith,
    fold_applies,
)

from ..engine import Ctx, Preparer, Runner, make_dests
from ..spec import Shape, Spec
from .common import ENCODING_TYPES, RM, require_encodings, same_rows, source_key
from .elementwise import _never, finite_closed, fused_runner
from .integer_fused import int_applies, int_expand_runner
from .move_fused import lean_expand_copy
from .native import compiled_reduction_runner, compiled_runner


def reduction(spec: Spec) -> Runner:
    spec.require_schema()
    dt = spec.dtype()
    src_shape = spec.std_shape()
    spec.require_row_major_dest()
    row, fn = spec.row, spec.semantics
    is_arg = row.destinations[0].kind is OperandKind.INDEX
    out_dt = DataType.U32 if is_arg else dt
    if row.axis is Axis.ROW:
        dst_shape = Shape(src_shape.valid_rows, 1, 1)
    else:
        dst_shape = Shape(1, src_shape.valid_cols, src_shape.cols)
    pad = spec.pad
    # destination descriptors depend on the plan only (computed once, as ctx.allocate)
    dests = make_dests(spec, spec.plan.mask, ((out_dt, dst_shape, RM),))

    def run(ctx: Ctx) -> None:
        a = ctx.source(0, dt, src_shape)
        va = ctx.values(a)
        require_encodings(ctx, 0, a, va)
        (slot,) = ctx.reserve(dests)
        res, st = fn(dt, va, out_dt) if is_arg else fn(dt, va)
        ctx.publish(slot, res, pad)
        ctx.add_status(st)

    if not is_arg and dt not in ENCODING_TYPES:
        # any physical Rows (the source check reads the valid shape and Col only)
        key = (dt, RM, *astuple(src_shape))
        closed = finite_closed(spec, dt)
        fused = fused_runner(fn, dt, dests, (key,), pad, spec.name, closed)
        if fused is not _never and fold_applies(row.arith or "", dt) and compiled_arith():
            fused = compiled_reduction_runner(fused, spec, dests, key, row.axis)
        run.fused = fused  # type: ignore[attr-defined]
    return run


def expansion(spec: Spec) -> Runner:
    row, fn = spec.row, spec.semantics
    copy = row.arith is None
    expdif = row.arith == "expdif"
    spec.require_schema()
    src_dt = spec.dtype()
    if expdif:
        dst_dt = spec.datr_dtype(src_dt)
        rule = sx.expdif_types_legal(src_dt, dst_dt)
        if rule is not None:
            raise spec.illegal(rule)
    else:
        dst_dt = src_dt
    shape = spec.std_shape()
    spec.require_row_major_dest()
    if row.axis is Axis.ROW:
        b_shape = Shape(shape.valid_rows, 1, 1)
    else:
        b_shape = Shape(1, shape.valid_cols, shape.cols)
    pad = spec.pad
    b_index = row.source_index("bcast")
    dests = make_dests(spec, spec.plan.mask, ((dst_dt, shape, RM),))

    def run(ctx: Ctx) -> None:
        src = None if copy else ctx.source(0, src_dt, shape)
        b = ctx.source(b_index, src_dt, b_shape)
        vb = ctx.values(b)
        vs = None if src is None else ctx.values(src)
        if src is not None and vs is not None:
            require_encodings(ctx, 0, src, vs)
        if not copy:  # a copy moves raw carriers (TileOperandsLegal_ExecuteTileExpand)
            require_encodings(ctx, b_index, b, vb)
        (slot,) = ctx.reserve(dests)
        if src is not None and not expdif:
            same_rows(ctx, 0, src, slot.rows)
        if expdif:
            res, st = fn(src_dt, dst_dt, vs, vb)
        else:
            res, st = fn(src_dt, vs, vb, (shape.valid_rows, shape.valid_cols))
        ctx.publish(slot, res, pad)
        ctx.add_status(st)

    if not copy and not expdif and b_index == 1 and src_dt not in ENCODING_TYPES:
        vshape = (shape.valid_rows, shape.valid_cols)
        rows = dests.slots[0].rows if dests.slots else None
        # the broadcast source may have any physical Rows: its key prefix is matched
        keys = (source_key(src_dt, shape, rows), (src_dt, RM, *astuple(b_shape)))

        def expand(dt: DataType, vs: np.ndarray, vb: np.ndarray) -> tuple:
            return fn(dt, vs, vb, vshape)

        closed = finite_closed(spec, src_dt)
        fused = fused_runner(expand, src_dt, dests, keys, pad, spec.name, closed)
        kernel = compiled_arith() if arith_applies(row.arith or "", src_dt) else None
        src_key, b_key = keys
        if kernel is not None and fused is not _never and src_key is not None:
            fused = compiled_runner(kernel, fused, spec, dests, src_key, row.axis, b_key)
        elif fused is not _never and src_key is not None and int_applies(row.arith or "", spec):
            b_valid = (b_shape.valid_rows, b_shape.valid_cols)
            fused = int_expand_runner(fused, spec, dests, src_key, b_key, b_valid)
        run.fused = fused  # type: ignore[attr-defined]
    elif copy and b_index == 0:
        # a copy moves raw carriers (no encoding rule): fused at every type; the
        # broadcast source may have any physical Rows (its key prefix is matched)
        cshape = (shape.valid_rows, shape.valid_cols)
        b_key = (src_dt, RM, *astuple(b_shape))

        def broadcast(dt: DataType, vb: np.ndarray) -> tuple:
            return fn(dt, None, vb, cshape)

        fused = fused_runner(broadcast, src_dt, dests, (b_key,), pad, spec.name)
        if fused is not _never:
            b_valid = (b_shape.valid_rows, b_shape.valid_cols)
            fused = lean_expand_copy(fused, spec, dests, b_key, b_valid)
        run.fused = fused  # type: ignore[attr-defined]
    return run


#: the preparers of this family, by the executor kind the operation table names
PREPARERS: Mapping[Executor, Preparer] = MappingProxyType(
    {
        Executor.REDUCTION: reduction,
        Executor.EXPANSION: expansion,
    }
)
