"""``ptoc-legalize``: ``tile`` -> ``pto``, one catalog bundle per op (or per row piece).

For every tile value the pass picks the physical descriptor (Col a power of two, the
smallest SizeCode that holds it, ``geometry.py``); for every op the catalog operation,
BSTART DataType, LB0..LB2, B.DATR fields and scalar operands (``rules.py``).
A tile larger than one allocation is split into row pieces and row-separable ops run
once per piece (``pieces.py``); an op that cannot be split is a diagnostic.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, NameLoc, NoneAttr, StringAttr, UnknownLoc
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass

from ptoc.backend.target import LIMITS, MachineConfig
from ptoc.dialects.compound_ops.view import ViewOp
from ptoc.dialects.tile_base import CompoundTileOp
from ptoc.dialects.tile_memory import PES_ATTR
from ptoc.dialects.tile_types import TileType

from ..diagnostics import CompileError, fail
from ..geometry import MAX_TILE_BYTES, default_tile_limit, tile_bytes
from ..stages import Stage, expect_stage
from .ctx import LegalizeCtx
from .rules import must_stay_whole, rule_of
from .view import legalize_view


def _kernel_pes(f: func.FuncOp) -> int:
    attr = f.attributes.get(PES_ATTR)
    return attr.value.data if attr is not None else 1  # type: ignore[attr-defined]


def legalize_func(
    f: func.FuncOp, target: MachineConfig | None = None, max_tile_bytes: int | None = None
) -> None:
    """Rewrite one kernel's body from ``tile`` to ``pto`` ops in place for ``target``:
    tiles above ``max_tile_bytes`` per PE (default: :func:`default_tile_limit` of the
    target, one allocation without a target) are split into row pieces. An op with no
    row-piece form keeps its tiles whole, and so does the op producing one of them while
    that fits the target's capacity well (:func:`_keep_whole`; without a target:
    always)."""
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
    ctx = LegalizeCtx(new, pes, max_bytes)
    ctx.tensors = dict(zip(old.args, new.args, strict=True))
    ctx.whole = _whole_values(list(old.ops), whole_budget, max_bytes)
    for i, op in enumerate(old.ops):
        if isinstance(op.location, UnknownLoc):
            # name the bundles after their tile op, so later diagnostics can point at it
            op.location = NameLoc(StringAttr(f"@{f.sym_name.data} {op.name} #{i}"), NoneAttr())
        if isinstance(op, func.ReturnOp):
            new.add_op(func.ReturnOp())
            break
        handler = legalize_view if isinstance(op, ViewOp) else rule_of(op)
        if handler is None:
            if isinstance(op, CompoundTileOp):
                raise fail(op, "compound op: run lower-compound before legalize")
            raise fail(op, "no legalization rule (not a tile op)")
        handler(ctx, op)
    f.body.insert_block(new, 0)
    f.body.detach_block(old)
    old.erase(safe_erase=False)


def _whole_values(ops: list[Operation], budget: int | None, max_bytes: int) -> set[SSAValue]:
    """Tiles to keep in one allocation: those of ops with no row-piece form, and
    (backwards) the tiles of the ops that produce one of them -- unless that would not fit
    ``budget`` (the capacity) well: then the producer runs in row pieces and its result is
    assembled for the whole op (``pieces.assemble``; a row sum of a tile as large
    as a small machine's capacity)."""
    whole: set[SSAValue] = set()
    for op in reversed(ops):
        tiles = [v for v in (*op.operands, *op.results) if isinstance(v.type, TileType)]
        needed = [r for r in op.results if r in whole]
        if must_stay_whole(op) or (needed and _keep_whole(tiles, needed, budget, max_bytes)):
            whole.update(tiles)
    return whole


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
    assert isinstance(v.type, TileType)
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
