"""Elementwise tile-tile operations (TEPL Mode 0): binary, unary, TFMA, TCMP, TSEL, TCVT.

Common schema (seed TADD page, ``tile-schema.asl`` closed schemas): LB0 = ValidCol
(required), LB1 = ValidRow (default 1), LB2 = Col (default ValidCol); every source is a
fully defined row-major tile of the BSTART DataType whose physical and valid shape equal
the destination's; B.IOR and B.IOS are illegal; PadValue is the only B.DATR field
(TCMP adds CMode, TCVT its conversion fields).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType

import numpy as np

from ptoc.backend.isa import DataType, Executor, legality
from ptoc.backend.isa.fields import DZ, NV, OF, PAD_NULL, first_pes_mask
from ptoc.backend.isa.semantics.arith_kernels import arith_applies, compiled_arith
from ptoc.backend.isa.semantics.core import SemanticError, scalar_operand
from ptoc.backend.isa.semantics.fastpath import (
    CleanKernel,
    clean_kernel,
    finite,
    known_finite,
    probe_sample,
)

from ..alloc import Dests, fresh
from ..bundle import BundlePlan
from ..engine import (
    Ctx,
    Fused,
    Preparer,
    Runner,
    fused_sources,
    geometry,
    gpr_words,
    make_dests,
    push_fused,
    region,
    tile_builder,
)
from ..faults import MachineFault
from ..spec import Spec
from ..state import MachineState
from ..tiles import Tile
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
from .integer_fused import int_applies, int_runner
from .native import compiled_runner

#: IEEE operations (``OpRow.arith``) whose every result is finite when their operands
#: are finite and they raised no OF, NV or DZ on any PE (overflow, an invalid operation
#: and a division by zero are the only ways they make an infinity or a NaN): the
#: binary and expansion operations, the unary ones (exp and recip overflow, log, rsqrt
#: and recip of zero divide by zero, sqrt, log and rsqrt of a negative are invalid)
#: and the sum, max and min reductions (a sum overflows)
FINITE_CLOSED = frozenset({
    "add", "sub", "mul", "div", "max", "min",
    "exp", "log", "sqrt", "rsqrt", "recip", "relu", "abs", "neg",
    "sum",
})  # fmt: skip
_FINITE_TYPES = frozenset({DataType.FP64, DataType.FP32, DataType.FP16, DataType.BF16})
_NONFINITE = NV | DZ | OF
#: status byte -> 1 where it holds OF, NV or DZ (a table for ``bytes.translate``)
_NONFINITE_BYTES = bytes(1 if b & _NONFINITE else 0 for b in range(256))
_NONFINITE_BYTE = b"\x01"


def finite_closed(spec: Spec, dt: DataType) -> bool:
    """Does the bundle's operation at ``dt`` keep finite operands finite unless it
    raises OF/NV/DZ?"""
    return spec.row.arith in FINITE_CLOSED and dt in _FINITE_TYPES


def publish_finite(tile: Tile, operands: Sequence[np.ndarray], st: np.ndarray) -> None:
    """Declare ``tile``'s valid region finite when its operation is
    :func:`finite_closed`, every operand was already known finite (the fast path scanned
    or was told so; nothing is scanned here) and the status has no OF/NV/DZ: the next
    bundle reading the tile then skips its NaN/Inf scan."""
    for v in operands:
        if not known_finite(v):
            return
    if _NONFINITE_BYTE not in st.tobytes().translate(_NONFINITE_BYTES):
        tile.finite = True  # handed to the semantics with the tile's views (region)


def fused_runner(
    fn: Callable[..., tuple[np.ndarray, np.ndarray]],
    dt: DataType,
    dests: Dests,
    keys: tuple[tuple[object, ...] | None, ...] | None,
    pad: int,
    name: str,
    closed: bool = False,
    scalar: bool = False,
    words: tuple[int | None, ...] = (),
) -> Fused:
    """The fused form (``engine.execute_untraced``) of a one-destination bundle whose
    sources carry the expected descriptors ``keys`` (one :attr:`Tile.key` per source in
    binding order; a 5-tuple prefix accepts any physical Rows), computing
    ``fn(dt, *valid regions)``; ``closed``: publish finite results as known finite
    (:func:`publish_finite`); ``scalar``: a tile-scalar operation, ``fn`` also gets each
    PE's B.IOR RegSrc0 (0 when omitted), which must be a valid ``dt`` encoding;
    ``words``: ``fn`` also gets each PE's B.IOR RegSrc0, RegSrc1, ... (the omission
    default of each when B.IOR is absent), as raw words.

    It performs what the generic runner and ``engine.commit`` do on that path -- source
    lookup, mask coverage, capacity, computation, publication, status -- without the
    per-bundle context object. Anything unusual (an empty queue position, another
    descriptor, an allocation or semantic fault) returns False before any effect, and
    the generic path then raises the fault in its order.
    """
    if keys is None or None in keys or dests.fault is not None or len(dests.slots) != 1:
        return _never
    slot = dests.slots[0]
    mask, hand = slot.mask, slot.hand
    checks = tuple((k, len(k) == 5) for k in keys if k is not None)
    #: machine PEs -> the bundle's geometry (see :func:`engine.geometry`)
    geometries: dict[int, tuple[tuple[int, ...], int, slice | list[int], object]] = {}
    builders: dict[int, Callable[[MachineState, np.ndarray], Tile]] = {}  # by machine PEs

    def fused(state: MachineState, plan: BundlePlan) -> bool:
        cfg = state.config
        npes = cfg.pes
        g = geometries.get(npes)
        if g is None:
            g = geometries[npes] = geometry(mask, npes)
        pes, p, pidx, pkey = g
        if pes[-1] >= npes:
            return False
        srcs = fused_sources(state, plan, mask)
        if srcs is None:
            return False
        views = []
        for t, (want, part) in zip(srcs, checks, strict=True):
            k = t.key
            if part:
                if k[:5] != want or not k[6]:
                    return False
            elif k != want:
                return False
            known = t.views
            v = None if known is None else known.get(pkey)
            views.append(region(t, pidx, pkey) if v is None else v)
        args = views
        if scalar:  # (an invalid encoding: the generic path raises it in order)
            s = gpr_words(state, plan, 0, 0, p, pidx, pkey)
            if dt in ENCODING_TYPES and invalid_encoding(dt, scalar_operand(dt, s)):
                return False
            args = [*views, s]
        if words:
            args = [*args, *(gpr_words(state, plan, k, d, p, pidx, pkey)
                             for k, d in enumerate(words))]  # fmt: skip
        try:
            res, st = fn(dt, *args)
        except (MachineFault, SemanticError):
            return False  # nothing has changed: the generic path raises it in order
        make = builders.get(npes)
        if make is None:
            make = builders[npes] = tile_builder(npes, name, slot, pad, pes)
        tile = make(state, res)
        if closed:  # the bundle's PEs are the new tile's allocation mask
            publish_finite(tile, views, st)
        return push_fused(state, hand, tile, st, pidx, p)

    return fused


def _never(state: MachineState, plan: BundlePlan) -> bool:
    return False


def _finite_tile(t: Tile, view: np.ndarray) -> bool:
    """Whether ``t`` (every-PE valid region ``view``) holds no NaN and no infinity:
    recorded on the tile, scanned at most once (and then known to the semantics)."""
    f = t.finite
    if f is None:
        f = t.finite = finite(view)
    return f


#: PE count -> the PE_MASK of every PE
_EVERY_PE = {n: first_pes_mask(n) for n in range(1, 5)}
#: the :attr:`Tile.views` key of the lean runner's own view (see :func:`_lean_view`)
_LEAN = "lean"


def _lean_view(t: Tile, whole: bool) -> np.ndarray:
    """The every-PE valid region of ``t`` for the lean runner: the payload itself when
    the valid region is the whole tile, else a view cached on the tile. Unlike
    :func:`region` it hands no facts to the semantics (the runner reads
    :attr:`Tile.finite` itself), which keeps a tile that only lean bundles read free of
    that bookkeeping; :func:`region` still does it for every other reader."""
    if whole:
        return t.payload
    views = t.views
    if views is None:
        views = t.views = {}
    v = views.get(_LEAN)
    if v is None:
        v = views[_LEAN] = t.payload[:, : t.valid_rows, : t.valid_cols]
    return v


def lean_runner(
    kernel: CleanKernel, general: Fused, spec: Spec, dests: Dests, key: tuple[object, ...]
) -> Fused:
    """The fused form of a two-source clean-path bundle (FP32 + - * /, FP64 + -) on
    every PE of the machine: :func:`fused_runner` without its generic steps.

    Both sources must be finite tiles (:attr:`Tile.finite`, scanned once per tile and
    published for every result of this path: a clean operation raised no IEEE
    exception, so its results are finite), of descriptor ``key``. The result is
    computed straight into the new payload and published with its NX status. Anything
    else -- a PE subset, a source not found or not finite, an IEEE exception, a
    capacity fault -- runs ``general`` (the fused runner), which settles it or falls
    back to the generic path with nothing changed.
    """
    slot = dests.slots[0]
    mask, hand = slot.mask, slot.hand
    (h0, i0, _), (h1, i1, _) = spec.plan.source_pos
    dt, rows, cols, vr, vc = slot.dtype, slot.rows, slot.cols, slot.valid_rows, slot.valid_cols
    layout, capacity, pad = slot.layout, slot.capacity, spec.pad
    whole = vr == rows and vc == cols
    pad_defined = pad != PAD_NULL
    # the machine size this runner serves (its mask selects every PE), and the padded
    # storage its results start from (copied per bundle, never handed out itself)
    npes = next((n for n, m in _EVERY_PE.items() if m == mask), 0)
    template = None if whole or not npes else fresh(dt, (npes, rows, cols), pad)

    def fused(state: MachineState, plan: BundlePlan) -> bool:
        cfg = state.config
        queues, depth = state.queues, cfg.depth
        if (
            cfg.pes != npes
            or h0 >= len(queues)
            or h1 >= len(queues)
            or i0 > depth
            or i1 > depth
        ):
            return general(state, plan)
        q0, q1 = queues[h0], queues[h1]
        if i0 > len(q0) or i1 > len(q1):
            return general(state, plan)
        a, b = q0[i0 - 1], q1[i1 - 1]
        if a.key != key or b.key != key or a.mask & mask != mask or b.mask & mask != mask:
            return general(state, plan)
        va, vb = _lean_view(a, whole), _lean_view(b, whole)
        if not (_finite_tile(a, va) and _finite_tile(b, vb)):
            return general(state, plan)
        sa, sb = a.sample, b.sample
        if sa is None:
            sa = a.sample = probe_sample(va)
        if sb is None:
            sb = b.sample = probe_sample(vb)
        if template is None:
            payload = out = None
        else:
            payload = template.copy()
            out = payload[:, :vr, :vc]
        res = kernel(va, vb, sa, sb, out)
        if res is None:  # an IEEE exception: the general path settles it
            return general(state, plan)
        w, st = res
        if payload is None:
            payload = w
        payload.setflags(write=False)
        tile = Tile(dt, rows, cols, vr, vc, layout, mask, capacity, payload, None, pad_defined)
        if not state.push_one(hand, tile):  # capacity: the general path raises the fault
            return general(state, plan)
        tile.serial = state.next_serial()
        tile.finite = True
        np.bitwise_or(state.status, st, out=state.status)
        return True

    return fused


def binary(spec: Spec) -> Runner:
    spec.require_schema()
    dt = spec.dtype()
    shape = spec.std_shape()
    spec.require_row_major_dest()
    fn, pad = spec.semantics, spec.pad
    dests = make_dests(spec, spec.plan.mask, ((dt, shape, RM),))
    key = source_key(dt, shape, dests.slots[0].rows if dests.slots else None)
    enc = dt in ENCODING_TYPES
    closed = finite_closed(spec, dt)

    def run(ctx: Ctx) -> None:
        a, b = ctx.sources
        if a.key != key or b.key != key:  # the slow path names the broken rule
            ctx.source(0, dt, shape)
            ctx.source(1, dt, shape)
        va, vb = ctx.values(a), ctx.values(b)
        if enc:
            require_encodings(ctx, 0, a, va)
            require_encodings(ctx, 1, b, vb)
        (slot,) = ctx.reserve(dests)
        if a.key != key or b.key != key:
            same_rows(ctx, 0, a, slot.rows)
            same_rows(ctx, 1, b, slot.rows)
        res, st = fn(dt, va, vb)
        ctx.publish(slot, res, pad)
        if closed:
            tile = ctx.tiles[slot.k]
            assert tile is not None
            publish_finite(tile, (va, vb), st)
        ctx.add_status(st)

    if not enc:  # TF32/HF32 sources need their encodings checked: generic path only
        fused = fused_runner(fn, dt, dests, (key, key), pad, spec.name, closed)
        op = spec.row.arith or ""
        compiled = compiled_arith() if arith_applies(op, dt) else None
        kernel = clean_kernel(op, dt) if closed else None
        if fused is _never or key is None:
            pass
        elif compiled is not None:
            fused = compiled_runner(compiled, fused, spec, dests, key)
        elif kernel is not None:
            fused = lean_runner(kernel, fused, spec, dests, key)
        elif int_applies(op, spec):
            fused = int_runner(fused, spec, dests, key)
        run.fused = fused  # type: ignore[attr-defined]
    return run


def unary(spec: Spec) -> Runner:
    spec.require_schema()
    dt = spec.dtype()
    shape = spec.std_shape()
    spec.require_row_major_dest()
    fn, pad = spec.semantics, spec.pad
    dests = make_dests(spec, spec.plan.mask, ((dt, shape, RM),))
    key = source_key(dt, shape, dests.slots[0].rows if dests.slots else None)
    enc = dt in ENCODING_TYPES

    def run(ctx: Ctx) -> None:
        (a,) = ctx.sources
        if a.key != key:
            ctx.source(0, dt, shape)
        va = ctx.values(a)
        if enc:
            require_encodings(ctx, 0, a, va)
        (slot,) = ctx.reserve(dests)
        if a.key != key:
            same_rows(ctx, 0, a, slot.rows)
        res, st = fn(dt, va)
        ctx.publish(slot, res, pad)
        ctx.add_status(st)

    if not enc:
        closed = finite_closed(spec, dt)
        run.fused = fused_runner(fn, dt, dests, (key,), pad, spec.name, closed)  # type: ignore[attr-defined]
    return run


def tfma(spec: Spec) -> Runner:
    """``B.IOT L, R`` then ``B.IOT Addend, last, ->Dst``; one fused rounding."""
    spec.require_schema()
    sem = spec.semantics
    dt = spec.dtype()
    shape = spec.std_shape()
    spec.require_row_major_dest()
    pad = spec.pad

    def run(ctx: Ctx) -> None:
        srcs = [ctx.source(i, dt, shape) for i in range(3)]
        vals = [ctx.values(t) for t in srcs]
        for i, (t, v) in enumerate(zip(srcs, vals, strict=True)):
            require_encodings(ctx, i, t, v)
        (slot,) = ctx.allocate((dt, shape, RM))
        for i, t in enumerate(srcs):
            same_rows(ctx, i, t, slot.rows)
        res, st = sem(dt, *vals)
        ctx.publish(slot, res, pad)
        ctx.add_status(st)

    return run


def tcmp(spec: Spec) -> Runner:
    """Two numeric sources -> a predicate tile with the sources' Rows/Col/valid shape."""
    spec.require_schema()
    sem = spec.semantics
    dt = spec.dtype()
    shape = spec.std_shape()
    spec.require_row_major_dest()
    cmode, pad = spec.cmode, spec.pad
    predicates: dict[tuple[int, ...], Dests] = {}

    def run(ctx: Ctx) -> None:
        a = ctx.source(0, dt, shape)
        b = ctx.source(1, dt, shape)
        if b.rows != a.rows:
            raise ctx.illegal(f"{ctx.ref(0)} and {ctx.ref(1)} differ in physical rows")
        va, vb = ctx.values(a), ctx.values(b)
        require_encodings(ctx, 0, a, va)
        require_encodings(ctx, 1, b, vb)
        slot = predicate_slot(ctx, a, predicates)
        res, st = sem(dt, va, vb, cmode)
        ctx.publish(slot, res, pad)
        ctx.add_status(st)

    run.fused = fused_compare(  # type: ignore[attr-defined]
        sem, dt, shape, spec.plan.mask, cmode, pad, spec.name, predicates, scalar=False
    )
    return run


def check_predicate(ctx: Ctx, i: int, like_index: int) -> None:
    """``TilePredicateValuesLegal`` + ``TileLogicalShapeMatch``: source ``i`` is a fully
    defined predicate tile with the Rows/Col/ValidRow/ValidCol/layout of ``like_index``."""
    p = ctx.source(i, None, predicate=True)
    t = ctx.sources[like_index]
    if (p.rows, p.cols, p.valid_rows, p.valid_cols, p.layout) != (
        t.rows, t.cols, t.valid_rows, t.valid_cols, t.layout,
    ):  # fmt: skip
        raise ctx.illegal(
            f"predicate {ctx.ref(i)} ({p.shape_text}) does not match the shape of "
            f"{ctx.ref(like_index)} ({t.shape_text})"
        )


def tsel(spec: Spec) -> Runner:
    """``B.IOT Predicate, SrcTrue`` then ``B.IOT SrcFalse, last, ->Dst``: a raw bit copy."""
    spec.require_schema()
    sem = spec.semantics
    dt = spec.dtype()
    shape = spec.std_shape()
    spec.require_row_major_dest()
    pad = spec.pad
    dests = make_dests(spec, spec.plan.mask, ((dt, shape, RM),))

    def run(ctx: Ctx) -> None:
        t = ctx.source(1, dt, shape)
        f = ctx.source(2, dt, shape)
        if f.rows != t.rows:
            raise ctx.illegal(f"{ctx.ref(1)} and {ctx.ref(2)} differ in physical rows")
        check_predicate(ctx, 0, 1)
        (slot,) = ctx.reserve(dests)
        same_rows(ctx, 1, t, slot.rows)
        pred = ctx.values(ctx.sources[0])
        res, st = sem(dt, pred, ctx.values(t), ctx.values(f))
        ctx.publish(slot, res, pad)
        ctx.add_status(st)

    # a raw bit copy (no encoding rule): fused at every type; the predicate has the
    # sources' descriptor without a DataType
    key = source_key(dt, shape, dests.slots[0].rows if dests.slots else None)
    pred_key = None if key is None else (None, *key[1:])
    run.fused = fused_runner(sem, dt, dests, (pred_key, key, key), pad, spec.name)  # type: ignore[attr-defined]
    return run


def tcvt(spec: Spec) -> Runner:
    """Source type = BSTART DataType; destination type = B.DATR DataType (DTYPE_NONE or
    omitted inherits); equal Rows/Col/valid shape; Layout transforms the placement."""
    spec.require_schema()
    sem = spec.semantics
    src_dt = spec.dtype()
    dst_dt = spec.datr_dtype(src_dt)
    shape = spec.std_shape()
    src_layout, dst_layout = spec.layouts()
    if spec.datr is not None and spec.datr.canonicalize:
        raise spec.illegal(
            f"{spec.name} Canonicalize=1 needs a private CUBE source, which this executor "
            "does not model (an ordinary source requires Canonicalize=0)"
        )
    rule = legality.source_dtype_for(spec.op, src_dt, dst_dt)
    if rule is not None:
        raise spec.illegal(rule)
    rmode, sat, pad = spec.rmode, spec.sat, spec.pad
    dests = make_dests(spec, spec.plan.mask, ((dst_dt, shape, dst_layout),))

    def run(ctx: Ctx) -> None:
        a = ctx.source(0, src_dt, shape, layout=src_layout)
        va = ctx.values(a)
        require_encodings(ctx, 0, a, va)
        (slot,) = ctx.reserve(dests)
        same_rows(ctx, 0, a, slot.rows)
        res, st = sem(src_dt, va, dst_dt, rmode, sat, 0)
        ctx.publish(slot, res, pad)
        ctx.add_status(st)

    if src_dt not in ENCODING_TYPES and src_layout == RM and dst_layout == RM and dests.slots:
        # (TF32/HF32 sources need their encodings checked, other layouts their own
        # placement: the generic path)
        def convert(dt: DataType, va: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            return sem(src_dt, va, dst_dt, rmode, sat, 0)

        key = source_key(src_dt, shape, dests.slots[0].rows)
        run.fused = fused_runner(convert, src_dt, dests, (key,), pad, spec.name)  # type: ignore[attr-defined]
    return run


__all__ = ["check_predicate"]


#: the preparers of this family, by the executor kind the operation table names
PREPARERS: Mapping[Executor, Preparer] = MappingProxyType(
    {
        Executor.BINARY: binary,
        Executor.UNARY: unary,
        Executor.FMA: tfma,
        Executor.CMP: tcmp,
        Executor.SEL: tsel,
        Executor.CVT: tcvt,
    }
)
