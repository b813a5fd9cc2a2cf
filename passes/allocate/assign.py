"""``ptoc-allocate``: schedule the bundles and decide where every value lives.

1. ``schedule``: the dataflow graph, dead-bundle removal, a low-pressure
   topological order;
2. ``tiles``: a hand for every result, the relative reference of every source,
   refresh copies / fillers / spills only where the queues would otherwise lose a live
   value or overflow the per-PE capacity;
3. ``gprs``: ABI registers for tensor bases and scratch, a GPR for every other
   scalar and the ``pto.materialize`` writes that set them.

The result is the same ``pto`` kernel, reordered, with ``refs``/``hands``/``gprs`` on
every bundle, the inserted bundles marked with a ``role``, and the kernel ABI recorded
on the function (``pto.abi``: ``[register, tensor argument (-1 = scratch), PE step]``;
``pto.scratch``: scratch bytes per PE).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import cast

from xdsl.context import Context
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    i64,
)
from xdsl.ir import Block, BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass

from ptoc.backend.isa.fields import Hand
from ptoc.backend.program import TileRef
from ptoc.backend.target import ConfigError, MachineConfig
from ptoc.dialects import pto_ops
from ptoc.dialects.dtypes import element_bits
from ptoc.dialects.pto import (
    AddrOp,
    ConstOp,
    IndexAddrOp,
    LoadScalarOp,
    MaterializeOp,
    ParamOp,
    PtoOp,
    RegOp,
    ScratchAddrOp,
)
from ptoc.dialects.pto_base import mask_attr, release_segments, segments
from ptoc.dialects.pto_types import PtoTileType
from ptoc.dialects.scalars import CoreOp

from ..diagnostics import CAPACITY_HINT, CompileError, fail, value_name
from ..legalize.ctx import dims_attr, std_dims
from ..stages import ABI_ATTR, Stage, expect_stage
from ..walk import block_ops
from .gprs import Binding, GprPlan, Scalar, plan_gprs
from .integers import is_dynamic, sink_constants
from .loops import Loop
from .schedule import build_dataflow, live_ops, schedule
from .structured import (
    GPR_ATTR,
    address_temps,
    body_block,
    build_items,
    count_dynamic,
    distinct_carried,
    dynamic_registers,
    has_loops,
    plan_tiles,
    scalar_params,
)
from .tiles import Action, BundlePlan, TileAllocator

SCRATCH_ATTR = "pto.scratch"
MACHINE_ATTR = "pto.machine"
TABLE_ATTR = "pto.table"


@dataclass
class AllocStats:
    """What the allocator inserted (for benchmarks and tests)."""

    bundles: int = 0
    refresh: int = 0
    spill: int = 0
    reload: int = 0
    filler: int = 0
    scalar_blocks: int = 0
    peak_bytes: int = 0
    dead_bundles: int = 0


def _pto_type(v: SSAValue) -> PtoTileType:
    assert type(v.type) is PtoTileType  # (no class derives from it; isinstance is slow)
    return v.type


def _strs(items: list[str]) -> ArrayAttr[StringAttr]:
    return _str_array(tuple(items))


@lru_cache(maxsize=1 << 12)
def _str_array(items: tuple[str, ...]) -> ArrayAttr[StringAttr]:
    """The array of strings ``items`` (cached: attributes are immutable, and every bundle
    gets two or three: its references, hands and GPRs)."""
    return ArrayAttr(StringAttr(s) for s in items)


@lru_cache(maxsize=1 << 12)
def _refs_attr(refs: tuple[TileRef, ...]) -> ArrayAttr[StringAttr]:
    return _str_array(tuple(str(r) for r in refs))


@cache
def _role_attr(role: str) -> StringAttr:
    """The ``role`` property of an inserted bundle (cached: attributes are immutable)."""
    return StringAttr(role)


@lru_cache(maxsize=1 << 8)
def _hands_attr(hands: tuple[int, ...]) -> ArrayAttr[StringAttr]:
    return _str_array(tuple(Hand(h).name for h in hands))


class _Builder:
    """Creates the inserted bundles (refresh, spill, reload, filler)."""

    def __init__(self, mask: int) -> None:
        self.mask = mask
        #: every inserted bundle's ``mask`` property (attributes are immutable: one for all)
        self._mask = mask_attr(mask)
        self.scratch: dict[int, ScratchAddrOp] = {}
        self.consts: dict[int, ConstOp] = {}
        # the ops' results, by the same keys (the xDSL ``result`` accessor is slow, and a
        # kernel that spills asks for a scratch address and a stride per spill and reload)
        self._values: dict[tuple[bool, int], SSAValue] = {}

    def const(self, value: int) -> SSAValue:
        value &= (1 << 64) - 1
        v = self._values.get((False, value))
        if v is None:
            op = self.consts[value] = ConstOp(value)
            v = self._values[(False, value)] = op.results[0]
        return v

    def scratch_addr(self, offset: int) -> SSAValue:
        v = self._values.get((True, offset))
        if v is None:
            op = self.scratch[offset] = ScratchAddrOp(offset)
            v = self._values[(True, offset)] = op.results[0]
        return v

    def _op(
        self, cls: type[PtoOp], dtype, srcs, scalars, dims, results, role: str, count=None
    ) -> PtoOp:  # type: ignore[no-untyped-def]
        lbs = sorted(count or {})
        if 0 in lbs and dims[2] is None:  # Col stays the storage's, not the count
            dims = (dims[0], dims[1], dims[0])
        props = {
            "dtype": dtype,
            "dims": dims_attr(tuple(dims)),
            "mask": self._mask,
            "role": _role_attr(role),
        }
        if lbs:  # a ragged tile: copied and reloaded over its valid region
            props["dyn_lbs"] = DenseArrayBase.from_list(i64, lbs)
            if results:
                props["dst_lbs"] = props["dyn_lbs"]
        # ``make``: ``build`` without xDSL's generic argument checks (the same op)
        return cls.make(
            srcs, scalars, results, props, [count[lb] for lb in lbs] if count else []
        )

    def _gm(self, v: SSAValue, slot: int) -> list[SSAValue]:
        t = _pto_type(v)
        out = [self.scratch_addr(slot)]
        if t.valid[0] > 1:
            out.append(self.const(t.valid[1] * element_bits(t.dtype) // 8))
        return out

    def action(self, a: Action) -> PtoOp:
        if a.kind == "filler":
            t = PtoTileType("U8", (1, 1), 1, a.size.bit_length() - 7)
            op = self._op(pto_ops.TexpandsOp, t.dtype, [], [], (1, None, None), [t], "filler")
            op.properties["hands"] = _hands_attr((a.hand,))
            return op
        v = a.value
        assert v is not None
        t = _pto_type(v)
        count = _row_count(v)
        if a.kind == "refresh":
            assert a.src is not None and a.hand is not None
            dims = std_dims(t)
            op = self._op(pto_ops.TmovOp, t.dtype, [v], [], dims, [t], "refresh", count)
            # straight into the properties (what the IRDL setters do), as _annotate does
            op.properties["refs"] = _codes_attr((a.src.code,))
            op.properties["hands"] = _hands_attr((a.hand,))
        elif a.kind == "spill":
            assert a.slot is not None and a.src is not None
            op = self._op(
                pto_ops.TstoreOp,
                t.dtype,
                [v],
                self._gm(v, a.slot),
                (None, None, None),
                [],
                "spill",
            )
            op.properties["refs"] = _codes_attr((a.src.code,))
        else:
            assert a.slot is not None
            op = self._op(
                pto_ops.TloadOp,
                t.dtype,
                [v],
                self._gm(v, a.slot),
                std_dims(t),
                [t],
                "reload",
                count,
            )
            op.properties["hands"] = _hands_attr((a.hand,))
        return op


def _row_count(v: SSAValue) -> dict[int, SSAValue]:
    """The run-time counts of ragged tile ``v``'s valid region: LB -> register value (its
    producer's ``dst_lbs``; empty for a static tile)."""
    owner = v.owner
    # (by class, and the property looked up first: most tiles are static)
    if not _is_bundle(type(owner)) or owner.properties.get("dst_lbs") is None:
        return {}
    return cast(PtoOp, owner).result_counts


def _check_fits(op: PtoOp, capacity: int) -> None:
    for v in op.dsts:
        t = _pto_type(v)
        if t.nbytes > capacity:
            raise fail(
                op,
                f"{value_name(v)} ({t}) needs {t.nbytes} bytes per PE, more than the "
                f"machine's capacity of {capacity} bytes per PE",
                CAPACITY_HINT,
            )
    # each source once (by identity: values hash through a Python method)
    need = sum(_pto_type(v).nbytes for v in {id(v): v for v in op.srcs}.values()) + sum(
        _pto_type(v).nbytes for v in op.dsts
    )
    if need > capacity:
        raise fail(
            op,
            f"its sources and results need {need} bytes per PE at once, more than the "
            f"machine's capacity of {capacity} bytes per PE",
            CAPACITY_HINT,
        )


def _scalar_key(v: SSAValue, scratch_step: int) -> Scalar:
    owner = v.owner
    if type(owner) is AddrOp:  # (the common case, by class: isinstance is slow)
        addr = cast(AddrOp, owner)
        arg = addr._operands[0]  # its one operand, the tensor, without the accessor
        assert isinstance(arg, BlockArgument)
        return Scalar(addr.byte_offset, Binding(arg.index, addr.step))
    if isinstance(owner, ConstOp):
        return Scalar(owner.raw)
    if isinstance(owner, ScratchAddrOp):
        return Scalar(owner.byte_offset, Binding(-1, scratch_step))
    if isinstance(owner, ParamOp):  # the parameter's own ABI register
        return Scalar(0, None, ((f"param{owner.index}", 1),))
    if isinstance(owner, RegOp):  # the value's own register (assigned with the integers)
        return Scalar(0)
    assert isinstance(owner, AddrOp), owner
    arg = owner.tensor
    assert isinstance(arg, BlockArgument)
    return Scalar(owner.byte_offset, Binding(arg.index, owner.step))


def allocate_func(
    f: func.FuncOp, target: MachineConfig, *, check_stage: bool = True
) -> AllocStats:
    """Schedule and allocate one legalized kernel in place for ``target`` (its hands,
    queue depth and capacity); returns what was inserted. ``check_stage=False``: the
    caller knows ``f`` is legalized (the pipeline, from the stage before)."""
    if check_stage:
        expect_stage(AllocatePass.name, f, Stage.LEGALIZED)
    if has_loops(f):
        return _allocate_structured(f, target)
    hands, depth, capacity = target.hands, target.depth, target.capacity
    block = f.body.block
    # the bundles, the constants and addresses, and the ops that stay where they are
    # (neither laid out anew nor the terminator), in one pass: the block's ops are not
    # visited again before the layout
    bundles: list[PtoOp] = []
    scalar_defs: list[Operation] = []
    stay: list[Operation] = []
    last = block.last_op
    for op in block_ops(block):
        cls = type(op)
        if _is_bundle(cls):
            bundles.append(op)  # type: ignore[arg-type]
        elif _is_scalar_def(cls):
            scalar_defs.append(op)
        elif op is not last:
            stay.append(op)
    df = build_dataflow(bundles)
    keep = live_ops(df)
    order = schedule(df, keep)
    fits = df.most <= capacity  # (else the first kept bundle that does not fit fails)
    # each bundle's sources and results in schedule order, from the graph's lists (the
    # allocator's liveness then visits no op)
    reads = [df.reads[i] for i in order]
    results = [df.results[i] for i in order]
    del df  # (the graph takes as much memory as the allocation that follows)
    ordered = [bundles[i] for i in order]
    for op in () if fits else ordered:
        _check_fits(op, capacity)
    mask = ordered[0].mask.value.data if ordered else 0b1000
    alloc = TileAllocator(hands, depth, capacity)
    b = _Builder(mask)
    final: list[PtoOp] = []
    # each bundle's scalars, from the cut the tile planning made (the cuts stay on the
    # bundles until the emitter has read them: it releases them)
    scalars: list[Sequence[SSAValue]] = []
    # each plan is used as it comes (the planning reads nothing the builder changes)
    for op, plan in zip(ordered, alloc.plans(ordered, reads, results), strict=True):
        if plan.actions:  # (most bundles need none)
            for a in plan.actions:
                inserted = b.action(a)
                final.append(inserted)
                scalars.append(segments(inserted)[2])
        _annotate(op, plan)
        final.append(op)
        scalars.append(segments(op)[2])
    scratch_step = (alloc.scratch_top + 63) // 64 * 64
    counts, peak, kept = alloc.counts, alloc.qs.peak, len(ordered)
    # (the allocator's liveness maps take a third of the IR's memory)
    del alloc, ordered, reads, results
    keys: dict[int, Scalar] = {}  # by value id: bundles share their constants and addresses
    # the first value read for each scalar (a value's key is asked first when it is
    # first read, so this is where every new key is met)
    value_of: dict[Scalar, SSAValue] = {}

    def key(v: SSAValue) -> Scalar:
        k = keys.get(id(v))
        if k is None:
            k = keys[id(v)] = _scalar_key(v, scratch_step)
            value_of.setdefault(k, v)
        return k

    needs = [[key(v) for v in ss] if ss else [] for ss in scalars]
    del scalars
    gp = plan_gprs(needs)
    del needs
    _rebuild(
        f,
        block,
        stay,
        scalar_defs,
        b,
        final,
        gp,
        value_of,
        [bundles[i] for i, k in enumerate(keep) if not k],
    )
    _record_abi(f, gp, scratch_step, target)
    for op, regs in zip(final, gp.regs, strict=True):
        if regs:
            op.properties["gprs"] = _strs(regs)  # (what the IRDL setter does)
    return AllocStats(
        len(final),
        counts["refresh"],
        counts["spill"],
        counts["reload"],
        counts["filler"],
        gp.blocks,
        peak,
        len(bundles) - kept,
    )


def _record_abi(f: func.FuncOp, gp: GprPlan, scratch_step: int, target: MachineConfig) -> None:
    """The kernel ABI on the function: ``pto.abi`` (register, tensor argument, PE step and,
    for a scalar argument, 1), ``pto.table`` (the registers the argument table's slots are
    loaded into, in slot order), ``pto.scratch`` and ``pto.machine``."""
    abi = gp.abi
    if gp.table:
        f.attributes[TABLE_ATTR] = _strs([reg for _, reg in gp.table])
    f.attributes[ABI_ATTR] = ArrayAttr(
        ArrayAttr(
            [StringAttr(reg), IntegerAttr(bd.tensor, i64), IntegerAttr(bd.pe_step, i64)]
            + ([IntegerAttr(1, i64)] if bd.scalar else [])
        )
        for bd, reg in abi.items()
    )
    f.attributes[SCRATCH_ATTR] = IntegerAttr(scratch_step, i64)
    f.attributes[MACHINE_ATTR] = StringAttr(target.text())  # the emitter validates for it


def _allocate_structured(f: func.FuncOp, target: MachineConfig) -> AllocStats:
    """:func:`allocate_func` for a kernel with run-time loops (``structured``)."""
    block = f.body.block
    distinct_carried(f)
    dead: list[PtoOp] = []
    items = build_items(block, dead)
    for op in f.walk():
        if isinstance(op, PtoOp) and op not in dead:
            _check_fits(op, target.capacity)
    events, plans, alloc = plan_tiles(items, target)
    at = {id(e.op): t for t, e in enumerate(events) if e.op is not None}
    b = _Builder(_mask_of(f))
    final: list[PtoOp] = []

    def lay(blk: Block, its: list, loop: Loop | None) -> None:  # type: ignore[type-arg]
        term = blk.last_op
        assert term is not None
        index_ops: dict[Operation, list[Operation]] = {}
        for op in blk.ops:
            if isinstance(op, IndexAddrOp):
                (use,) = op.result.uses
                index_ops.setdefault(use.operation, []).append(op)
        # run-time integers first (pure; a scalar load's address right before it)
        scalar_ops = [
            x
            for op in blk.ops
            if is_dynamic(op) or isinstance(op, (arith.CmpiOp, CoreOp, RegOp))
            for x in (*index_ops.get(op, ()), op)
        ]
        keep_top = [
            op for op in blk.ops if isinstance(op, (ConstOp, AddrOp, ScratchAddrOp, ParamOp))
        ]
        for op in list(blk.ops):
            if op is not term:
                op.detach()
        ins: list[Operation] = [*keep_top, *scalar_ops]
        for it in its:
            if isinstance(it, Loop):
                for a in plans[it.enter].actions:
                    new = b.action(a)
                    ins.append(new)
                    final.append(new)
                blk.insert_ops_before(ins, term)
                ins = []
                blk.insert_op_before(it.op, term)
                lay(body_block(it.op), it.body, it)
                continue
            plan = plans[at[id(it)]]
            for a in plan.actions:
                new = b.action(a)
                ins.append(new)
                final.append(new)
            _annotate(it, plan)
            ins.extend(index_ops.get(it, []))
            ins.append(it)
            final.append(it)
        if loop is not None:
            for a in plans[loop.back].actions:
                new = b.action(a)
                ins.append(new)
                final.append(new)
        blk.insert_ops_before(ins, term)

    lay(block, items, None)
    for op in dead:
        if op.parent is not None:
            op.detach()
        op.erase(safe_erase=False)
    scratch_step = (alloc.scratch_top + 63) // 64 * 64
    readers: list[Operation] = [*final]
    readers += [op for op in f.walk() if isinstance(op, LoadScalarOp)]
    needs: list[list[Scalar]] = []
    for op in readers:
        keys = []
        for v in _scalar_operands(op):
            owner = v.owner
            if isinstance(owner, IndexAddrOp):
                keys.append(_scalar_key(owner.base, scratch_step))
            else:
                keys.append(_scalar_key(v, scratch_step))
        needs.append(keys)
    value_of: dict[Scalar, SSAValue] = {}
    for op, keys in zip(readers, needs, strict=True):
        for v, k in zip(_scalar_operands(op), keys, strict=True):
            owner = v.owner
            value_of.setdefault(k, owner.base if isinstance(owner, IndexAddrOp) else v)
    extra = [Binding(a.index, 0, True) for a in scalar_params(f)]
    sink_constants(f)
    gp = plan_gprs(needs, extra, reserve=count_dynamic(f), hoist=True)
    addr_reg, term_reg = address_temps(gp.reserved)
    dynamic_registers(f, gp.reserved)
    for op, regs in zip(readers, gp.regs, strict=True):
        slots = []
        for v, reg in zip(_scalar_operands(op), regs, strict=True):
            owner = v.owner
            if isinstance(owner, IndexAddrOp):
                owner.attributes[GPR_ATTR] = StringAttr(addr_reg)
                owner.attributes["pto.base"] = StringAttr(reg)
                owner.attributes["pto.term"] = StringAttr(term_reg)
                slots.append(addr_reg)
            elif isinstance(owner, RegOp):
                held = owner.value.owner
                assert isinstance(held, Operation)
                attr = held.attributes[GPR_ATTR]
                assert isinstance(attr, StringAttr)
                slots.append(attr.data)
            else:
                slots.append(reg)
        if isinstance(op, LoadScalarOp):
            op.attributes[GPR_ADDR_ATTR] = StringAttr(slots[0])
        elif slots:
            op.gprs = _strs(slots)
    # every constant and address is written once, before the first bundle
    first = next(
        (op for op in block.ops if not isinstance(op, (ConstOp, AddrOp, ScratchAddrOp))), None
    )
    assert first is not None
    heads: list[Operation] = [*b.consts.values(), *b.scratch.values()]
    heads.extend(MaterializeOp(value_of[s], reg) for reg, s in (gp.writes[0] if final else []))
    block.insert_ops_before(heads, first)
    # scalars that do not fit a register of their own: written right before each reader
    for op, writes in zip(readers, gp.per_use, strict=False):
        if not writes:
            continue
        at = op
        while at.prev_op is not None and isinstance(at.prev_op, IndexAddrOp):
            at = at.prev_op  # in front of its address computation, which reads the base
        parent = at.parent_block()
        assert parent is not None
        parent.insert_ops_before([MaterializeOp(value_of[s], reg) for reg, s in writes], at)
    _record_abi(f, gp, scratch_step, target)
    release_segments(f.walk())
    c = alloc.counts
    return AllocStats(
        len(final),
        c["refresh"],
        c["spill"],
        c["reload"],
        c["filler"],
        1 if gp.writes and gp.writes[0] else 0,
        alloc.qs.peak,
        len(dead),
    )


#: the register a scalar load reads its address from
GPR_ADDR_ATTR = "pto.address_gpr"


def _scalar_operands(op: Operation) -> list[SSAValue]:
    """The GPR operands of a bundle (its B.IOR slots) or of a scalar load (its address)."""
    if isinstance(op, LoadScalarOp):
        return [op.address]
    assert isinstance(op, PtoOp)
    return list(op.scalars)


def _mask_of(f: func.FuncOp) -> int:
    for op in f.walk():
        if isinstance(op, PtoOp):
            return op.mask.value.data
    return 0b1000


def _annotate(op: PtoOp, plan: BundlePlan) -> None:
    # straight into the op's properties (what the IRDL setters do for a value that is
    # not None)
    if plan.refs:
        # by the codes: a reference hashes through a Python method, a code does not
        op.properties["refs"] = _codes_attr(tuple([r.code for r in plan.refs]))
    if plan.hands:
        op.properties["hands"] = _hands_attr(tuple(plan.hands))


@lru_cache(maxsize=1 << 12)
def _codes_attr(codes: tuple[int, ...]) -> ArrayAttr[StringAttr]:
    """:func:`_refs_attr` of the references with these 6-bit codes."""
    return _refs_attr(tuple(TileRef.from_code(c) for c in codes))


def _rebuild(  # type: ignore[no-untyped-def]
    f, block: Block, stay, scalar_defs, b: _Builder, final, gp, value_of, dead
) -> None:
    """Lay the kernel out in allocation order: the ops that ``stay`` (neither bundles,
    constants, addresses nor the terminator), scalar definitions, then per bundle its
    register writes and the bundle itself."""
    ret = block.last_op
    for op in reversed(dead):
        if op.parent is not None:
            op.detach()
        op.erase(safe_erase=False)
    assert ret is not None
    ins: list[Operation] = [*scalar_defs, *b.consts.values(), *b.scratch.values()]
    for op, writes in zip(final, gp.writes, strict=True):
        ins.extend(MaterializeOp(value_of[s], reg) for reg, s in writes)
        ins.append(op)
    # the ops laid out anew (every bundle, constant and address: ``ins``) go before the
    # terminator, after the ops that stay (the block relinked in one pass: detaching and
    # inserting them one by one checks every link)
    ins.append(ret)
    _relink(block, stay + ins)


@cache
def _is_bundle(cls: type) -> bool:
    """Whether the ops of class ``cls`` are bundles (by class: isinstance on xDSL's op
    classes is slow)."""
    return issubclass(cls, PtoOp)


@cache
def _is_scalar_def(cls: type) -> bool:
    """Whether the ops of class ``cls`` define a constant or an address."""
    return issubclass(cls, (ConstOp, AddrOp))


def _relink(block: Block, ops: list[Operation]) -> None:
    """Make ``ops`` -- some of them ``block``'s, the others in no block -- the ops of
    ``block``, in this order: what detaching ``block``'s and inserting them all in order
    leaves (xDSL's links: ``parent``, ``_prev_op``, ``_next_op``, the block's first and
    last op)."""
    prev: Operation | None = None
    for op in ops:
        assert op.parent is None or op.parent is block, op
        op.parent = block
        op._prev_op = prev
        if prev is not None:
            prev._next_op = op
        prev = op
    if prev is not None:
        prev._next_op = None
    block._first_op = ops[0] if ops else None
    block._last_op = prev


@dataclass(frozen=True)
class AllocatePass(ModulePass):
    """Schedule and allocate every legalized kernel for a machine.

    Options (the machine, DECISIONS D1/D2): ``hands`` (1..4), ``depth`` (queue depth,
    1..16), ``capacity`` (Local bytes per PE).
    """

    name = "ptoc-allocate"

    hands: int = MachineConfig.hands
    """Hands (queues) the program may use."""
    depth: int = MachineConfig.depth
    """Entries reachable in each hand (``hand#1``..``hand#depth``)."""
    capacity: int = MachineConfig.capacity
    """Local tile bytes per PE."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        try:
            target = MachineConfig(hands=self.hands, depth=self.depth, capacity=self.capacity)
        except ConfigError as e:
            raise CompileError(f"{self.name}: {e}") from None
        from ..pipeline import run_pass

        run_pass("allocate", op, target)
