"""``ptoc-legalize``: ``tile`` -> ``pto``, one catalog bundle per op (or per row piece).

For every tile value the pass picks the physical descriptor (Col a power of two, the
smallest SizeCode that holds it, ``geometry.py``); for every op the catalog operation,
BSTART DataType, LB0..LB2, B.DATR fields and scalar operands (``rules.py``).
A tile larger than one allocation is split into row pieces and row-separable ops run
once per piece (``pieces.py``); an op that cannot be split is a diagnostic.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cache
from typing import Any, NamedTuple

from xdsl.context import Context
from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import ModuleOp, NameLoc, NoneAttr, StringAttr, UnknownLoc, i64
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass

from ptoc.backend.isa import info
from ptoc.backend.target import LIMITS, MachineConfig
from ptoc.dialects.compound_ops.view import ViewOp
from ptoc.dialects.pto import IndexAddrOp, LoadScalarOp
from ptoc.dialects.ragged import op_counts, ragged_values_of, result_counts
from ptoc.dialects.scalars import (
    CoreOp,
    FloatOp,
    IntToFloatOp,
    constant,
    constant_value,
    is_scalar,
    is_scalar_op,
    predicate,
)
from ptoc.dialects.scalars import LoadScalarOp as TileLoadScalarOp
from ptoc.dialects.tile_base import CompoundTileOp
from ptoc.dialects.tile_matmul import MatmulOp
from ptoc.dialects.tile_memory import PES_ATTR, LoadOp
from ptoc.dialects.tile_types import TensorType, TileType

from ..diagnostics import CompileError, fail, value_name
from ..geometry import MAX_TILE_BYTES, default_tile_limit, tile_bytes
from ..stages import Stage, expect_stage
from ..walk import walk
from .ctx import LegalizeCtx, Piece
from .rules import class_stays_whole, must_stay_whole, rule_of
from .view import legalize_view


def _kernel_pes(f: func.FuncOp) -> int:
    attr = f.attributes.get(PES_ATTR)
    return attr.value.data if attr is not None else 1  # type: ignore[attr-defined]


def legalize_func(
    f: func.FuncOp,
    target: MachineConfig | None = None,
    max_tile_bytes: int | None = None,
    *,
    in_place: bool = True,
    check_stage: bool = True,
) -> func.FuncOp:
    """Rewrite one kernel's body from ``tile`` to ``pto`` ops for ``target``: tiles above
    ``max_tile_bytes`` per PE (default: :func:`default_tile_limit` of the target, one
    allocation without a target) are split into row pieces. An op with no row-piece form
    keeps its tiles whole, and so does the op producing one of them while that fits the
    target's capacity well (:func:`_keep_whole`; without a target: always).

    Returns the legalized kernel: ``f`` itself, whose body is replaced, or with
    ``in_place=False`` a new ``func.func`` (``f`` unchanged, which needs every op but the
    terminators to carry a location: see :func:`needs_names`). ``check_stage=False``:
    the caller knows ``f`` is tile IR (the pipeline, from the stage before)."""
    if check_stage:
        expect_stage(LegalizePass.name, f, Stage.TILE)
    if max_tile_bytes is not None:
        max_bytes = max_tile_bytes
    else:
        max_bytes = MAX_TILE_BYTES if target is None else default_tile_limit(target)
    whole_budget = None if target is None else target.capacity
    old = f.body.block
    new = Block(arg_types=[a.type for a in old.args])
    for a, b in zip(old.args, new.args, strict=True):
        b.name_hint = a.name_hint
    pes = _kernel_pes(f)
    lo, hi = LIMITS["pes"]
    if not lo <= pes <= hi:
        raise CompileError(f"@{f.sym_name.data}: tile.pes = {pes} is outside {lo}..{hi}")
    ctx = LegalizeCtx(new, pes, max_bytes, top=new)
    ctx.tensors = dict(zip(old.args, new.args, strict=True))
    ctx.scalars = {a: b for a, b in ctx.tensors.items() if is_scalar(a)}
    ops = walk(f)
    next(ops)  # (f itself, which walk yields first)
    flat = list(ops)
    classes = set(map(type, flat))  # (the kernel's few op classes, asked once each)
    ctx.matmuls = any(issubclass(c, MatmulOp) for c in classes)
    ctx.whole = _whole_values(flat, classes, whole_budget, max_bytes)
    ctx.counts = ragged_values_of(flat)  # (f itself is no load)
    if needs_names(flat):
        if not in_place:
            raise ValueError("legalize_func(in_place=False) of a kernel with unlocated ops")
        for i, op in enumerate(flat):
            if type(op.location) is UnknownLoc and not isinstance(op, _TERMINATORS):
                # name the bundles after their tile op, so later diagnostics can point at it
                op.location = NameLoc(
                    StringAttr(f"@{f.sym_name.data} {op.name} #{i}"), NoneAttr()
                )
    _legalize_block(ctx, old)
    if not in_place:
        out = f.clone_without_regions()
        out.body.add_block(new)
        return out
    f.body.insert_block(new, 0)
    f.body.detach_block(old)
    # ``old.erase(safe_erase=False)`` without its ErasedSSAValue for every result: a
    # kernel is isolated from above, so once the old ops have dropped their references
    # (their uses) none of the old values has a use left to replace
    release(old)
    return f


def release(block: Block) -> None:
    """``block.drop_all_references()`` of a detached kernel body (no op outside it uses
    its values; none of its ops has successors): the same state -- the block, its ops
    and the blocks and ops nested in them let go of their parents and uses, every value
    of the body is left without uses -- without unlinking the uses from their values'
    lists one at a time (all go: each list is dropped whole, each use's links cleared,
    so the uses are freed at once rather than left in cycles for the collector).
    ``tests/passes/test_legalize_pieces.py`` compares it with xDSL's."""
    block.parent = None
    block._next_block = None
    block._prev_block = None
    for arg in block.args:
        arg.first_use = None
    op = block._first_op
    while op is not None:
        op.parent = None
        for use in op._operand_uses:
            use._prev_use = use._next_use = None
        op._operand_uses = ()
        assert not op._successors
        for r in op.results:
            r.first_use = None
        for region in op.regions:
            region.parent = None
            for inner in region.blocks:
                release(inner)
        op = op._next_op


#: ops legalize never copies (it builds new terminators), whose location is never read
_TERMINATORS = (func.ReturnOp, scf.YieldOp)


def needs_names(ops: Iterable[Operation]) -> bool:
    """Whether legalize names some of ``ops`` (the ops under a kernel) after their
    position: those without a location, which it gives a ``NameLoc`` in place."""
    # (the location's exact class: no class derives from UnknownLoc, and isinstance on
    # xDSL's attribute classes is slow)
    for op in ops:  # (a loop: no generator to resume per op)
        if type(op.location) is UnknownLoc and not isinstance(op, _TERMINATORS):
            return True
    return False


def _legalize_block(ctx: LegalizeCtx, block: Block) -> None:
    """Legalize ``block``'s ops into ``ctx.block`` (loops recursively)."""
    direct = not ctx.counts
    op = block._first_op  # (block_ops, inlined: the top block holds most of the ops)
    while op is not None:
        nxt = op._next_op
        how = _BY_CLASS.get(type(op)) or _how(op)
        # (:func:`_legalize_op` inlined, likewise)
        if direct and how.rule is not None:
            how.rule(ctx, op)
        elif how.returns:
            ctx.block.add_op(func.ReturnOp())
            return
        else:
            how.legalize(ctx, op)
        op = nxt


def _legalize_op(ctx: LegalizeCtx, op: Operation) -> None:
    """One op of a kernel body: a loop, a conditional, a run-time integer or a tile op."""
    how = _BY_CLASS.get(type(op)) or _how(op)
    if how.rule is not None and not ctx.counts:
        how.rule(ctx, op)
    else:
        how.legalize(ctx, op)


class _How(NamedTuple):
    """How :func:`_legalize_op` legalizes the ops of a class (facts of the class, asked
    for every op)."""

    #: the op's legalization: a loop, a conditional, a run-time integer or a tile op
    legalize: Callable[[LegalizeCtx, Any], None]
    #: the rule :func:`_legalize_one` calls straight away in a kernel without ragged
    #: tiles (a tile op's; a load's too: a load reading a run-time count of rows or
    #: columns makes its tile ragged, ``ragged_values_of``), else None
    rule: Callable[[LegalizeCtx, Any], None] | None
    #: a ``func.return`` (which ends the kernel's top block)
    returns: bool


def _how(op: Operation) -> _How:
    cls = type(op)
    rule = None
    if issubclass(cls, scf.ForOp):
        legalize: Callable[[LegalizeCtx, Any], None] = _legalize_loop
    elif issubclass(cls, scf.IfOp):
        legalize = _legalize_if
    elif is_scalar_op(op):
        legalize = _legalize_scalar
    else:
        legalize = _legalize_one
        rule = _handler(cls, op)[0]
    how = _BY_CLASS[cls] = _How(legalize, rule, issubclass(cls, func.ReturnOp))
    return how


#: how :func:`_legalize_op` legalizes an op, by op class
_BY_CLASS: dict[type, _How] = {}


def _legalize_scalar(ctx: LegalizeCtx, op: Operation) -> None:
    """A run-time integer op: the same op on the new body's values."""
    if isinstance(op, TileLoadScalarOp):
        _load_scalar(ctx, op)
        return
    c = constant_value(op.results[0])
    if isinstance(op, arith.CmpiOp):
        a, b = (ctx.scalar(v) for v in op.operands)
        new: Operation = arith.CmpiOp(a, b, predicate(op))
    elif isinstance(op, CoreOp):
        new = CoreOp(op.kind.value.data)
    elif isinstance(op, FloatOp):
        new = FloatOp(op.op_kind, ctx.scalar(op.lhs), ctx.scalar(op.rhs))
    elif isinstance(op, IntToFloatOp):
        new = IntToFloatOp(ctx.scalar(op.source))
    elif c is not None:
        new = constant(c)
    else:
        new = type(op)(*(ctx.scalar(v) for v in op.operands))
    new.location = op.location
    ctx.block.add_op(new)
    ctx.scalars[op.results[0]] = new.results[0]


def _load_scalar(ctx: LegalizeCtx, op: TileLoadScalarOp) -> None:
    """An AGU load of one element (its address moved by the run-time indices behind a
    bounds check, like a window's)."""
    tt = op.source.type
    assert isinstance(tt, TensorType)
    eb = tt.row_stride_bytes // tt.stride
    r, c = (int(v) for v in op.offsets.get_values())
    addr = ctx.addr(op.source, r * tt.row_stride_bytes + c * eb, 0)
    if op.dynamic_axes:
        rows, cols = tt.dims
        scale = {0: tt.row_stride_bytes, 1: eb}
        span = {0: (-r, rows - 1 - r), 1: (-c, cols - 1 - c)}
        terms = [(ctx.scalar(v), scale[a]) for a, v in zip(op.dynamic_axes, op.indices)]
        name = op.source.name_hint or "?"
        what = f"the element pt.load_scalar reads in the {rows}x{cols} tensor '{name}'"
        moved = IndexAddrOp(
            addr, terms, [span[a] for a in op.dynamic_axes], op.dynamic_axes, what
        )
        moved.location = op.location
        ctx.block.add_op(moved)
        addr = moved.result
    ti = info(op.dtype)
    new = LoadScalarOp(addr, ti.bits // 8, ti.is_signed)
    new.location = op.location
    ctx.block.add_op(new)
    ctx.scalars[op.results[0]] = new.results[0]


def _flatten(ctx: LegalizeCtx, op: Operation, v: SSAValue) -> list[SSAValue]:
    """A carried value's new values: a run-time integer, or a tile's row pieces."""
    if is_scalar(v):
        return [ctx.scalar(v)]
    if v not in ctx.pieces:
        raise fail(op, f"a loop-carried tile {v.name_hint or ''} has no legalized value")
    return [p.value for p in ctx.pieces[v]]


def _bind(ctx: LegalizeCtx, like: SSAValue, old: SSAValue, new: list[SSAValue]) -> None:
    """Map ``old`` to ``new`` (values laid out like the init value ``like``)."""
    if is_scalar(old):
        ctx.scalars[old] = new[0]
        return
    ctx.pieces[old] = [
        Piece(n, p.row0, p.rows, p.extent) for n, p in zip(new, ctx.pieces[like], strict=True)
    ]


def _legalize_loop(ctx: LegalizeCtx, op: scf.ForOp) -> None:
    """A run-time loop: an ``scf.for`` over the legalized body, a tile carried as its
    row pieces (each piece one carried value)."""
    inits = [_flatten(ctx, op, v) for v in op.iter_args]
    flat = [v for group in inits for v in group]
    body = Block(arg_types=[i64, *(v.type for v in flat)])
    loop = scf.ForOp(
        ctx.scalar(op.lb), ctx.scalar(op.ub), ctx.scalar(op.step), flat, Region(body)
    )
    loop.location = op.location
    ctx.block.add_op(loop)
    old = op.body.block
    ctx.scalars[old.args[0]] = body.args[0]
    k = 1
    for init, arg, group in zip(op.iter_args, old.args[1:], inits, strict=True):
        _bind(ctx, init, arg, list(body.args[k : k + len(group)]))
        k += len(group)
    saved, anchor = ctx.block, ctx.loop_anchor
    ctx.block = body
    ctx.loop_anchor = anchor or loop
    for inner in old.ops:
        if not isinstance(inner, scf.YieldOp):
            _legalize_op(ctx, inner)
    yielded = old.last_op
    assert isinstance(yielded, scf.YieldOp)
    outs = []
    for init, v in zip(op.iter_args, yielded.operands, strict=True):
        group = _flatten(ctx, op, v)
        if not is_scalar(v) and [(p.row0, p.rows) for p in ctx.pieces[v]] != [
            (p.row0, p.rows) for p in ctx.pieces[init]
        ]:
            raise fail(op, "internal: a carried tile is split differently in the body")
        outs.extend(group)
    body.add_op(scf.YieldOp(*outs))
    ctx.block, ctx.loop_anchor = saved, anchor
    k = 0
    for init, r, group in zip(op.iter_args, op.results, inits, strict=True):
        _bind(ctx, init, r, list(loop.results[k : k + len(group)]))
        k += len(group)


def _legalize_if(ctx: LegalizeCtx, op: scf.IfOp) -> None:
    """A run-time conditional (no results): an ``scf.if`` over the legalized body."""
    body = Block()
    new = scf.IfOp(ctx.scalar(op.cond), [], Region(body))
    new.location = op.location
    ctx.block.add_op(new)
    saved, anchor = ctx.block, ctx.loop_anchor
    ctx.block = body
    ctx.loop_anchor = anchor or new
    for inner in op.true_region.block.ops:
        if not isinstance(inner, scf.YieldOp):
            _legalize_op(ctx, inner)
    body.add_op(scf.YieldOp())
    ctx.block, ctx.loop_anchor = saved, anchor


def _legalize_one(ctx: LegalizeCtx, op: Operation) -> None:
    handler, load = _handler(type(op), op)
    if handler is None:
        if isinstance(op, CompoundTileOp):
            raise fail(op, "compound op: run lower-compound before legalize")
        raise fail(op, "no legalization rule (not a tile op)")
    if not ctx.counts and not load:
        handler(ctx, op)  # no ragged tile in the kernel: the op's bundles count nothing
        return
    rows, cols = op_counts(op, ctx.counts)
    if rows is None and cols is None:
        handler(ctx, op)
        return
    # a ragged tile: every bundle of the op runs with its counts from registers (LB1 the
    # valid rows, LB0 the valid columns), and says which describe its results
    ctx.lb_counts = {lb: ctx.scalar(c) for lb, c in ((1, rows), (0, cols)) if c is not None}
    out_rows, out_cols = result_counts(op, ctx.counts)
    ctx.result_lbs = [lb for lb, c in ((0, out_cols), (1, out_rows)) if c is not None]
    try:
        handler(ctx, op)
    finally:
        ctx.lb_counts, ctx.result_lbs = {}, []
    for v in (*op.operands, *op.results):
        if v in ctx.counts and len(ctx.pieces.get(v, ())) > 1:
            raise fail(
                op,
                f"{value_name(v)} has a run-time number of valid rows or columns and is "
                f"larger than one tile allocation ({ctx.max_bytes} bytes per PE): it would be "
                "split into row pieces, whose valid rows the machine cannot count at run time",
                "load the ragged tile in blocks that fit one allocation",
            )


def _handler(
    cls: type, op: Operation
) -> tuple[Callable[[LegalizeCtx, Operation], None] | None, bool]:
    """The legalize rule of ``op`` (None: none) and whether it loads a tile: facts of its
    class ``cls`` (its MNEMONIC is a class constant)."""
    known = _HANDLERS.get(cls)
    if known is None:
        handler = legalize_view if issubclass(cls, ViewOp) else rule_of(op)
        known = _HANDLERS[cls] = (handler, issubclass(cls, LoadOp))
    return known


#: the legalize rule of every op class met (None: none), and whether it loads a tile
#: (an op of a class that isinstance would test slowly, for every op)
_HANDLERS: dict[type, tuple[Callable[[LegalizeCtx, Operation], None] | None, bool]] = {}


def _whole_values(
    ops: list[Operation], classes: set[type], budget: int | None, max_bytes: int
) -> set[SSAValue]:
    """Tiles to keep in one allocation: those of ops with no row-piece form, and
    (backwards) the tiles of the ops that produce one of them -- unless that would not fit
    ``budget`` (the capacity) well: then the producer runs in row pieces and its result is
    assembled for the whole op (``pieces.assemble``; a row sum of a tile as large
    as a small machine's capacity). ``classes``: the classes of ``ops``."""
    whole: set[SSAValue] = set()
    # (the rule only grows the set from the tiles of ops with no row-piece form: a
    # kernel without one asks about its few op classes rather than each op)
    if not any(class_stays_whole(c) for c in classes if not _loop_part(c)):
        return whole
    # the ops the rule looks at (not a loop or its yield; by class: isinstance on xDSL's
    # op classes is slow), and the tiles of those with no row-piece form
    ruled = [op for op in ops if not _loop_part(type(op))]
    for op in ruled:
        if must_stay_whole(op):
            whole.update(v for v in (*op.operands, *op.results) if type(v.type) is TileType)
    if not whole:
        return whole  # (the rule only grows the set from tiles already in it)
    loops = [op for op in ops if isinstance(op, scf.ForOp)]
    # every other producer's tiles and results, read once (the fixpoint visits every op
    # each round)
    producers: list[tuple[list[SSAValue], tuple[SSAValue, ...]]] = []
    for op in reversed(ruled):
        if op.results and not must_stay_whole(op):
            tiles = [v for v in (*op.operands, *op.results) if type(v.type) is TileType]
            producers.append((tiles, tuple(op.results)))
    # the rule only grows the set as it grows, so the order of the rounds does not matter
    while True:
        before = len(whole)
        for tiles, results in producers:
            needed = [r for r in results if r in whole]
            if needed and _keep_whole(tiles, needed, budget, max_bytes):
                whole.update(tiles)
        # a carried tile is one value to the loop: its init, body argument, yielded value
        # and result are split alike
        for loop in loops:
            yielded = loop.body.block.last_op
            assert yielded is not None
            for group in zip(
                loop.iter_args, loop.body.block.args[1:], yielded.operands, loop.results
            ):
                if any(v in whole for v in group):
                    whole.update(group)
        if len(whole) == before:
            return whole


@cache
def _loop_part(cls: type) -> bool:
    """Whether the ops of class ``cls`` are a loop or its yield (which
    :func:`_whole_values` handles as the groups of carried values)."""
    return issubclass(cls, (scf.ForOp, scf.YieldOp))


def _keep_whole(
    tiles: list[SSAValue], needed: list[SSAValue], budget: int | None, max_bytes: int
) -> bool:
    """Run a producer of tiles an op needs whole on whole tiles? Yes when its tiles
    together take at most half the budget; else when they fit it and take less than an
    assembly of its needed results would: the assembled tile twice (each TINSERT reads
    and writes one) plus a piece."""
    if budget is None:
        return True
    total = sum(tile_bytes(_tile(v)) for v in set(tiles))
    if total <= budget // 2:
        return True
    assembly = 2 * sum(tile_bytes(_tile(v)) for v in needed) + max_bytes
    return total <= budget and total < assembly


def _tile(v: SSAValue) -> TileType:
    assert type(v.type) is TileType
    return v.type


@dataclass(frozen=True)
class LegalizePass(ModulePass):
    """Lower every ``tile`` kernel in the module to ``pto`` bundles.

    Options: ``max-tile-bytes`` -- per-PE bytes above which a tile is split into row
    pieces (default and maximum 65536, one Local allocation).
    """

    name = "ptoc-legalize"

    max_tile_bytes: int = MAX_TILE_BYTES
    """Split tiles larger than this many bytes per PE (at most 65536)."""
    whole_budget: int = 0
    """Bytes per PE (the capacity) against which a producer of a whole op's tile is kept
    whole or run in pieces and assembled (0: always whole)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        limit = min(self.max_tile_bytes, MAX_TILE_BYTES)
        # the whole budget is the capacity of the machine compiled for (0: no machine)
        target = MachineConfig(capacity=self.whole_budget) if self.whole_budget else None
        from ..pipeline import Options, run_pass

        run_pass("legalize", op, target, Options(max_tile_bytes=limit))
