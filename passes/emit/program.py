"""``ptoc-emit``: an allocated ``pto`` kernel -> a bundle :class:`Program`.

Every ``pto`` bundle becomes ``BSTART`` + header commands + ``BSTOP``; each run of
``pto.materialize`` becomes one ``BSTART.STD FALL`` scalar block. Alongside the program
the emitter records, per tile bundle, what it *means* (:class:`Intent`: the values its
sources must hold, the values its destinations will hold, the scalars its B.IOR slots
must read), which the allocation validator checks by replay, and the kernel ABI.
The pass form replaces each kernel with a ``pto.program`` op holding the program text
(a comment header naming the machine and the ABI registers, then the canonical commands),
and the ``ptoc-asm`` target of ``xdsl-opt`` writes that text as a ``.s`` file for
``ptoc run``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from functools import cache
from itertools import count
from operator import attrgetter
from typing import IO, Any, cast

from xdsl.context import Context
from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import ArrayAttr, IntegerAttr, ModuleOp, StringAttr
from xdsl.ir import Attribute, Block, BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.target import Target

from ptoc.backend.asm import format_program, parse
from ptoc.backend.encoding import tile_start
from ptoc.backend.isa import DTYPE_NONE
from ptoc.backend.isa import row as optable_row
from ptoc.backend.isa.fields import GPR_BY_NAME, Hand
from ptoc.backend.program import (
    Command,
    Datr,
    Dim,
    Ior,
    Iot,
    Program,
    ScalarStart,
    Stop,
    TileRef,
)
from ptoc.backend.target import ConfigError, MachineConfig
from ptoc.dialects.dtypes import is_pred
from ptoc.dialects.pto import (
    AddrOp,
    ConstOp,
    IndexAddrOp,
    LoadScalarOp,
    MaterializeOp,
    ParamOp,
    ProgramOp,
    PtoOp,
    RegOp,
    ScratchAddrOp,
)
from ptoc.dialects.pto_base import segments
from ptoc.dialects.reference import scalar_args, tensor_args
from ptoc.dialects.scalars import constant_value, is_scalar, is_scalar_op, predicate

from ..allocate import MACHINE_ATTR, SCRATCH_ATTR, TABLE_ATTR
from ..allocate.gprs import TABLE_REG, Binding, Scalar
from ..allocate.tiles import spill_bytes
from ..diagnostics import CompileError, fail, source_position
from ..stages import ABI_ATTR, Stage, expect_stage
from ..walk import block_ops
from .control import SKIP, Scalars, poly_add, poly_scale, reg_of
from .intents import Intent, IntentTable
from .materialize import _s, load_const, materialize


@dataclass(frozen=True)
class AbiBinding:
    """GPR ``gpr`` holds, on PE ``p``, the base of tensor ``tensor`` (None: the spill
    scratch area) plus ``p * pe_step`` bytes; with ``scalar``, the value of the run-time
    scalar parameter ``tensor``."""

    gpr: str
    tensor: str | None
    pe_step: int
    scalar: bool = False
    #: the slot of the argument table (``a7``) the value is passed in and loaded from at
    #: the start, when the kernel has more arguments than ABI registers
    table_slot: int | None = None


@dataclass(frozen=True)
class LoopIntent:
    """What one run-time loop means, by command index (see :mod:`ptoc.passes.validate`).

    ``init``: the FALL block setting the index register ``iv`` to ``lb``; ``guard``: the
    COND block skipping to ``exit`` when ``iv >= ub``; ``header``: the first command of
    the body; ``latch``: the COND block adding ``step`` and branching back while
    ``iv < ub``; ``exit``: the command after it. ``enter`` renames value ids on the way
    in (initial value -> carried argument), ``back`` at the back edge (new value ->
    argument), ``leave`` after the loop (argument -> result); ``live``: the ids a later
    bundle may read at the header (every other entry is compared as dead)."""

    name: str
    iv: int
    lb: Scalar
    ub: Scalar
    step: int
    init: int
    guard: int
    header: int
    latch: int
    exit: int
    enter: tuple[tuple[int, int], ...]
    back: tuple[tuple[int, int], ...]
    leave: tuple[tuple[int, int], ...]
    live: frozenset[int]
    #: the kernel position of the ``pt.range`` (file, line, column)
    where: tuple[str, int, int] | None = None


@dataclass(frozen=True)
class IfIntent:
    """A run-time conditional: the COND block at ``guard`` branches to ``exit`` (command
    index after the body) by ``setter`` on registers holding ``left`` and ``right``; the
    queue state after the body must be the state before it."""

    guard: int
    exit: int
    setter: str
    left: Scalar
    right: Scalar


@dataclass(frozen=True)
class CheckIntent:
    """A bounds check before a bundle whose window a run-time index moves: the COND block
    at ``index`` (command) branches into itself -- which faults -- when register ``reg``,
    holding ``value``, lies outside ``[low, high]``; ``what`` names the access."""

    index: int
    reg: int
    value: Scalar
    low: int
    high: int
    axis: str
    what: str
    #: the (file, line, column) of the kernel op, when known
    where: tuple[str, int, int] | None = None


@dataclass(frozen=True)
class LoadIntent:
    """A scalar load: the AGU instruction at command ``index`` reads GM address
    ``address`` into register ``reg``, whose content the validator then names ``name``."""

    index: int
    reg: int
    address: Scalar
    name: str


@dataclass(frozen=True)
class Emitted:
    """The program, its per-bundle intents (by command index of the BSTART) and ABI."""

    program: Program
    intents: Mapping[int, Intent]
    bindings: tuple[AbiBinding, ...]
    scratch_bytes: int
    kernel: str
    abi: dict[Binding, str]
    #: the run-time loops, outermost first in program order
    loops: tuple[LoopIntent, ...] = ()
    #: the bounds checks of run-time windows, by command index
    checks: dict[int, CheckIntent] = field(default_factory=dict)
    #: the scalar loads, by command index
    loads: dict[int, LoadIntent] = field(default_factory=dict)
    #: the bindings the argument table passes, in slot order
    table: tuple[Binding, ...] = ()
    #: the run-time conditionals, by the command index of their guard
    ifs: dict[int, IfIntent] = field(default_factory=dict)


def _dims(op: PtoOp) -> tuple[Command, ...]:
    out: list[Command] = []
    counted = op.dynamic_lbs
    if not counted:
        return _dims_of(op.lbs)
    for lb, v in enumerate(op.lbs):
        if v is None:
            continue
        if lb in counted:  # a run-time count: B.DIM's register form
            out.append(Dim(lb, _count_reg(counted[lb]), 0))
        else:
            out.append(Dim(lb, 0, v, compressed=True) if v < 256 else Dim(lb, 0, v))
    return tuple(out)


@cache
def _dims_of(lbs: tuple[int | None, ...]) -> tuple[Command, ...]:
    """The B.DIM commands of static LB0..LB2 (cached: commands are immutable, so bundles
    with the same dims share them)."""
    out: list[Command] = []
    for lb, v in enumerate(lbs):
        if v is None:
            continue
        out.append(Dim(lb, 0, v, compressed=True) if v < 256 else Dim(lb, 0, v))
    return tuple(out)


def _count_reg(v: SSAValue) -> int:
    """The register holding run-time count ``v`` (an ``arith`` result: ``min(k, rows)``)."""
    owner = v.owner
    assert isinstance(owner, arith.MinSIOp | arith.ConstantOp), owner
    return reg_of(owner)


@cache
def _iot_records(
    refs: tuple[TileRef, ...], hands: tuple[Hand, ...], sizes: tuple[int, ...], mask: int
) -> tuple[Command, ...]:
    """B.IOT records: sources two per record, the (first) destination on the last source
    record, a second destination on its own record; the last record carries ``last``
    (cached: bundles binding the same references share the immutable records)."""
    recs: list[list] = [list(refs[i : i + 2]) for i in range(0, len(refs), 2)] or [[]]
    out: list[Iot] = []
    for i, srcs in enumerate(recs):
        dst = (hands[0], sizes[0]) if hands and i == len(recs) - 1 else (None, 0)
        out.append(Iot(tuple(srcs), mask, False, dst[0], dst[1]))
    if len(hands) > 1:
        out.append(Iot((), mask, False, hands[1], sizes[1]))
    last = out[-1]
    out[-1] = Iot(last.srcs, last.mask, True, last.dst, last.size)
    return tuple(out)


#: BSTART / BSTOP commands, shared (immutable) by every bundle that has them
_tile_start = cache(tile_start)
_STOP = Stop()


@cache
def _fpatr(fields: tuple[int, ...]) -> Command:
    """The B.FPATR command of nine field values (PreQuantMode .. TransB), built by the
    assembler from its catalog form so that the fixed fields are the form's own."""
    (cmd,) = parse("B.FPATR " + ", ".join(str(v) for v in fields) + "\n").commands
    return cmd


def _dtype_code(op: PtoOp) -> int:
    return DTYPE_NONE if is_pred(op.dtype) else int(op.data_type)


class _Emitter:
    def __init__(self, f: func.FuncOp, check_stage: bool = True) -> None:
        self.f = f
        #: every tile value's id, by ``id`` (``f`` keeps the values alive; a value hashes
        #: through a Python method): the next number is given to a value met for the first
        #: time (:meth:`vid`)
        self.ids: dict[int, int] = defaultdict(count().__next__)
        self.cmds: list[Command] = []
        self.intents = IntentTable()
        if check_stage:
            expect_stage(EmitPass.name, f, Stage.ALLOCATED)
        abi = f.attributes.get(ABI_ATTR)
        assert isinstance(abi, ArrayAttr)
        scratch = f.attributes.get(SCRATCH_ATTR)
        self.scratch_bytes = scratch.value.data if isinstance(scratch, IntegerAttr) else 0
        self.abi: dict[Binding, str] = {}
        for entry in abi:
            reg, tensor, step, *scalar = entry.data  # type: ignore[attr-defined]
            self.abi[Binding(tensor.value.data, step.value.data, bool(scalar))] = reg.data
        self.scalars = Scalars(self.abi)
        by_reg = {reg: b for b, reg in self.abi.items()}
        table = f.attributes.get(TABLE_ATTR)
        self.table: list[tuple[Binding, str]] = (
            [(by_reg[r.data], r.data) for r in table] if isinstance(table, ArrayAttr) else []
        )
        self.loops: list[LoopIntent] = []
        #: loop index -> its name in the validator's polynomials
        self.names: dict[SSAValue, str] = {}
        #: COND blocks whose offset is fixed once the addresses are known: (command, label)
        self.fixups: list[tuple[int, int]] = []
        self.labels: list[int] = []
        self.pending: list[Command] = []
        self.check_intents: dict[int, CheckIntent] = {}
        self.load_intents: dict[int, LoadIntent] = {}
        self.if_intents: dict[int, IfIntent] = {}
        #: loads in ``pending``: (position in it, register, address, name)
        self.pending_loads: list[tuple[int, int, Scalar, str]] = []
        #: decoded attributes by ``id``, each with its attribute (kept alive): bundles
        #: share their reference, hand and dims attributes
        self.decoded: dict[int, tuple[Any, Any]] = {}
        #: :meth:`scalar` by value id (``f`` keeps the values alive)
        self.meanings: dict[int, Scalar] = {}
        #: a bundle's B.IOT records by the ids of its reference, hand and mask
        #: attributes and its result sizes, with the attributes (kept alive)
        self.iots: dict[tuple[int, int, tuple[int, ...], int], tuple[Any, Any, Any, Any]] = {}
        #: :meth:`write` by register and scalar (the lists are not to be changed)
        self.writes: dict[tuple[int, Scalar], list[Command]] = {}

    def vid(self, v: SSAValue) -> int:
        return self.ids[id(v)]

    def scalar(self, v: SSAValue) -> Scalar:
        """What scalar ``v`` holds (asked once per value: bundles share their constants
        and addresses)."""
        done = self.meanings.get(id(v))
        if done is not None:
            return done
        s = self._scalar(v)
        if not isinstance(v.owner, IndexAddrOp):  # its terms name loop indices
            self.meanings[id(v)] = s
        return s

    def _scalar(self, v: SSAValue) -> Scalar:
        o = v.owner
        if type(o) is AddrOp:  # (the common case, by class: isinstance is slow)
            addr = cast(AddrOp, o)
            arg = _ITEM(addr._operands, 0)  # its one operand, the tensor, without the accessor
            assert isinstance(arg, BlockArgument)
            return Scalar(addr.byte_offset, Binding(arg.index, addr.step))
        if isinstance(o, IndexAddrOp):
            s = self.scalar(o.base)
            for x, k in o.terms:
                s = poly_add(s, poly_scale(self.scalars.meaning(x, self.names), k))
            return s
        if isinstance(o, ConstOp):
            return Scalar(o.raw)
        if isinstance(o, ScratchAddrOp):
            return Scalar(o.byte_offset, Binding(-1, self.scratch_bytes))
        if isinstance(o, ParamOp):
            return Scalar(0, None, ((f"param{o.index}", 1),))
        if isinstance(o, RegOp):  # a value the program computed (FP32): not a polynomial
            return None  # type: ignore[return-value]  # the validator knows it as unknown
        assert isinstance(o, AddrOp)
        arg = o.tensor
        assert isinstance(arg, BlockArgument)
        return Scalar(o.byte_offset, Binding(arg.index, o.step))

    def write(self, rd: int, s: Scalar) -> list[Command]:
        """:func:`materialize` of ``s`` into ``rd`` (asked once per register and scalar:
        the allocator writes the same scalars into the same registers again and again)."""
        cmds = self.writes.get((rd, s))
        if cmds is None:
            cmds = self.writes[(rd, s)] = materialize(rd, s, self.abi)
        return cmds

    def run(self) -> None:
        for k, (_, reg) in enumerate(self.table):  # the arguments past a0..a6, first
            self.pending.append(
                # LDI scales its offset by the 8 bytes it loads: simm12 is the slot
                _s("LDI", RegDst=GPR_BY_NAME[reg], SrcL=GPR_BY_NAME[TABLE_REG], simm12=k)
            )
        self.walk(self.f.body.block)
        self.flush()
        self.fix_offsets()
        # the per-value and per-attribute memos are done with (the program is built next,
        # at the compile's peak memory)
        self.ids = {}
        self.meanings = {}
        self.decoded = {}
        self.iots = {}
        self.writes = {}

    def walk(self, block: Block) -> None:
        for op in block_ops(block):
            cls = type(op)
            kind = _KIND.get(cls)
            if kind is None:
                kind = _KIND[cls] = _kind(op)
            if kind is _MATERIALIZE:
                # its register and value straight from the op (what the IRDL accessors
                # return, without their generic lookups: a kernel has one per write)
                gpr = op.properties["gpr"].data  # type: ignore[attr-defined]
                value = self.scalar(_ITEM(op._operands, 0))
                self.pending.extend(self.write(GPR_BY_NAME[gpr], value))
            elif kind is _BUNDLE:
                if self.pending:  # (flush, when it has something to do)
                    self.flush()
                self.bundle(op)
            elif kind is _OTHER:  # (an address or a constant: read by its users)
                continue
            elif kind is _SCALAR:
                self.pending.extend(self.scalars.code(op))
            elif kind is _INDEX:
                term = op.attributes["pto.term"]
                assert isinstance(term, StringAttr)
                self.checks(op, GPR_BY_NAME[term.data])
            elif kind is _LOAD:
                self.load(op)
            elif kind is _LOOP:
                self.loop(op)
            elif kind is _IF:
                self.conditional(op)

    def conditional(self, op: scf.IfOp) -> None:
        """The guard (skip the body unless the condition holds), then the body."""
        cmp = op.cond.owner
        assert isinstance(cmp, arith.CmpiOp), "pt.when conditions are comparisons"
        setter, swap = SKIP[predicate(cmp)]
        a, b = cmp.operands[::-1] if swap else cmp.operands
        self.flush()
        exit_ = self.label()
        left, right = self.scalars.reg(a), self.scalars.reg(b)
        guard = self.cond(exit_, [_s(setter, SrcL=left, SrcR=right, SrcRType=3)])
        self.walk(op.true_region.block)
        self.flush()
        self.place(exit_)
        self.if_intents[guard] = IfIntent(
            guard,
            len(self.cmds),
            setter,
            self.scalars.meaning(a, self.names),
            self.scalars.meaning(b, self.names),
        )

    def load(self, op: LoadScalarOp) -> None:
        rd = reg_of(op)
        attr = op.attributes["pto.address_gpr"]
        assert isinstance(attr, StringAttr)
        name = f"load{len(self.scalars.loaded)}"
        self.scalars.loaded[op.result] = name
        address = self.scalar(op.address)
        self.pending_loads.append((len(self.pending), rd, address, name))
        self.pending.append(_s(op.mnemonic, RegDst=rd, SrcL=GPR_BY_NAME[attr.data], simm12=0))

    def checks(self, op: IndexAddrOp, term: int) -> None:
        """The address of ``op`` behind one check block per run-time index: ``t = index -
        low``, then branch into the block itself (no block starts there:
        Fault_InstructionPC) when ``t >= high - low + 1`` unsigned, i.e. when the index is
        outside ``[low, high]``. The last check block computes the address too."""
        self.flush()
        tmp = reg_of(op)
        where = source_position(op)
        for axis, (v, _), (lo, hi) in zip(op.axes, op.terms, op.bounds, strict=True):
            x = self.scalars.reg(v)
            body: list[Command] = []
            if lo:
                body += [*load_const(term, -lo), _s("ADD", RegDst=tmp, SrcL=x, SrcR=term,
                                                     SrcRType=3, shamt=0)]  # fmt: skip
                x = tmp
            body += load_const(term, hi - lo + 1 if hi >= lo else 0)
            body.append(_s("SETC.GEU", SrcL=x, SrcR=term, SrcRType=3))
            if axis == op.axes[-1] and v is op.terms[-1][0]:
                body.extend(self.scalars.index_code(op, term))
            at = len(self.cmds)
            self.cmds.append(ScalarStart("STD", "COND", 2))  # into its own first instruction
            self.cmds.extend(body)
            self.cmds.append(Stop())
            what = op.what.data if op.what is not None else "a load or store"
            self.check_intents[at] = CheckIntent(
                at, x, self.scalars.meaning(v, self.names), lo, hi, axis, what, where
            )

    def flush(self) -> None:
        if not self.pending:
            return
        self.cmds.append(ScalarStart("STD", "FALL"))
        first = len(self.cmds)
        for k, rd, address, name in self.pending_loads:
            self.load_intents[first + k] = LoadIntent(first + k, rd, address, name)
        self.pending_loads = []
        self.cmds.extend(self.pending)
        self.cmds.append(Stop())
        self.pending = []

    def label(self) -> int:
        self.labels.append(-1)
        return len(self.labels) - 1

    def place(self, label: int) -> None:
        self.labels[label] = len(self.cmds)

    def cond(self, label: int, body: list[Command]) -> int:
        """A COND block branching to ``label`` (offset fixed later); its command index."""
        at = len(self.cmds)
        self.fixups.append((at, label))
        self.cmds.append(ScalarStart("STD", "COND", 0))
        self.cmds.extend(body)
        self.cmds.append(Stop())
        return at

    def loop(self, op: scf.ForOp) -> None:
        name = f"i{len(self.names)}"
        self.names[op.body.block.args[0]] = name
        iv = reg_of(op)
        lb, ub = self.scalars.reg(op.lb), self.scalars.reg(op.ub)
        step = constant_value(op.step)
        assert step is not None and step > 0, "pt.range steps are positive constants"
        self.pending.append(_s("ADD", RegDst=iv, SrcL=lb, SrcR=0, SrcRType=3, shamt=0))
        init = len(self.cmds)
        self.flush()
        exit_, header = self.label(), self.label()
        guard = self.cond(exit_, [_s("SETC.GE", SrcL=iv, SrcR=ub, SrcRType=3)])
        self.place(header)
        head = len(self.cmds)
        self.walk(op.body.block)
        self.flush()
        if step >= 4096:
            raise fail(op, f"a pt.range step of {step} is larger than 4095")
        bump = [_s("ADDI", RegDst=iv, SrcL=iv, uimm12=step)]
        latch = self.cond(header, [*bump, _s("SETC.LT", SrcL=iv, SrcR=ub, SrcRType=3)])
        self.place(exit_)
        body = op.body.block
        yielded = body.last_op
        assert yielded is not None
        tiles = [k for k, a in enumerate(body.args[1:]) if not is_scalar(a)]
        args = [body.args[1 + k] for k in tiles]
        self.loops.append(
            LoopIntent(
                name,
                iv,
                self.scalars.meaning(op.lb, self.names),
                self.scalars.meaning(op.ub, self.names),
                step,
                init,
                guard,
                head,
                latch,
                len(self.cmds),
                tuple((self.vid(op.iter_args[k]), self.vid(a)) for k, a in zip(tiles, args)),
                tuple(
                    (self.vid(yielded.operands[k]), self.vid(a)) for k, a in zip(tiles, args)
                ),
                tuple((self.vid(a), self.vid(op.results[k])) for k, a in zip(tiles, args)),
                frozenset(),
                source_position(op),
            )
        )

    def fix_offsets(self) -> None:
        """Set every COND block's offset to its label (halfwords from its BSTART)."""
        if not self.fixups:
            return
        for _ in range(4):  # an offset's size may change an encoding's length
            addrs, size = Program(tuple(self.cmds)).addresses()
            changed = False
            for at, label in self.fixups:
                target = self.labels[label]
                dest = addrs[target] if target < len(addrs) else size
                offset = (dest - addrs[at]) // 2
                old = self.cmds[at]
                assert isinstance(old, ScalarStart)
                if old.offset != offset:
                    self.cmds[at] = ScalarStart(old.block, old.kind, offset)
                    changed = True
            if not changed:
                return

    def bundle(self, op: PtoOp) -> None:
        # the properties read once, straight from the op's dictionary (what the IRDL
        # accessors return), and every attribute decoded once per attribute object
        props = op.properties
        refs_attr, hands_attr = props.get("refs"), props.get("hands")
        role_attr = props.get("role")
        role = (None if role_attr is None else role_attr.data) or "op"  # type: ignore[attr-defined]
        # read once, and released: the kernel's ops outlive the compilation
        _, srcs, scalars, _ = segments(op)
        op._segments = None  # type: ignore[attr-defined]
        dsts = op.results
        bound = () if role == "reload" else srcs
        if (refs_attr is None and bound) or (hands_attr is None and dsts):
            raise fail(op, "the bundle has no allocation (hands and references)")
        memo = self.decoded
        refs = memo.get(id(refs_attr)) if refs_attr is not None else _NONE
        if refs is None:
            refs = memo[id(refs_attr)] = (
                refs_attr,
                tuple(_ref(s.data) for s in refs_attr),  # type: ignore[attr-defined]
            )
        hands = memo.get(id(hands_attr)) if hands_attr is not None else _NONE
        if hands is None:
            hands = memo[id(hands_attr)] = (
                hands_attr,
                tuple(Hand[s.data] for s in hands_attr),  # type: ignore[attr-defined]
            )
        sizes = tuple(map(_SIZE, dsts))
        start = len(self.cmds)
        cmds = self.cmds
        dtype = props["dtype"]
        code = memo.get(id(dtype))
        if code is None:
            code = memo[id(dtype)] = (dtype, _dtype_code(op))
        cmds.append(_tile_start(op.MNEMONIC, code[1]))
        datr = props.get("datr")
        if datr is not None:
            made = memo.get(id(datr))
            if made is None:
                made = memo[id(datr)] = (datr, Datr(**datr.values()))  # type: ignore[attr-defined]
            cmds.append(made[1])
        fpatr = props.get("fpatr")
        if fpatr is not None:
            cmds.append(_fpatr(tuple(int(v) for v in fpatr.get_values())))  # type: ignore[attr-defined]
        dims = props["dims"]
        if props.get("dyn_lbs") is None:
            static = memo.get(id(dims))
            if static is None:
                static = memo[id(dims)] = (dims, _dims_of(op.lbs))
            cmds.extend(static[1])
        else:
            cmds.extend(_dims(op))
        if scalars:
            gprs = props.get("gprs")
            assert gprs is not None
            ior = memo.get(id(gprs))
            if ior is None:
                regs = [GPR_BY_NAME[g.data] for g in gprs] + [0, 0]  # type: ignore[attr-defined]
                ior = memo[id(gprs)] = (
                    gprs,
                    Ior(regs[0], regs[1], regs[2] if len(gprs) > 2 else 0),  # type: ignore[arg-type]
                )
            cmds.append(ior[1])
        if not _binding_free(op.MNEMONIC):
            mask = props["mask"]
            # by the attributes' ids (a reference and a hand hash through Python methods)
            key = (id(refs_attr), id(hands_attr), sizes, id(mask))
            iot = self.iots.get(key)
            if iot is None:
                records = _iot_records(refs[1], hands[1], sizes, _mask(mask))
                iot = self.iots[key] = (refs_attr, hands_attr, mask, records)
            cmds.extend(iot[3])
        cmds.append(_STOP)
        # the value ids (:meth:`vid`, inlined: a bundle has a few operands)
        ids = self.ids
        restores = ids[id(_ITEM(srcs, 0))] if role == "reload" else -1
        srcs_ids = [*map(ids.__getitem__, map(id, bound))]
        if role in ("refresh", "reload"):
            dst_ids: list[int] = [ids[id(_ITEM(srcs, 0))]]
        elif role == "filler":
            dst_ids = [-1]
        else:
            dst_ids = [-1 if d.first_use is None else ids[id(d)] for d in dsts]
        meant = tuple([self.scalar(v) for v in scalars]) if scalars else ()
        gm = spill_bytes(_ITEM(srcs, 0)) if role in ("spill", "reload") else 0
        self.intents.add(start, role, op.MNEMONIC, srcs_ids, dst_ids, meant, restores, gm)


class _Kind(Enum):
    """What the emitter does with an op (a fact of its class)."""

    MATERIALIZE = 1
    SCALAR = 2
    INDEX = 3
    LOAD = 4
    BUNDLE = 5
    LOOP = 6
    IF = 7
    OTHER = 8


def _kind(op: Operation) -> _Kind:
    if isinstance(op, MaterializeOp):
        return _Kind.MATERIALIZE
    if is_scalar_op(op):
        return _Kind.SCALAR
    if isinstance(op, IndexAddrOp):
        return _Kind.INDEX
    if isinstance(op, LoadScalarOp):
        return _Kind.LOAD
    if isinstance(op, PtoOp):
        return _Kind.BUNDLE
    if isinstance(op, scf.ForOp):
        return _Kind.LOOP
    if isinstance(op, scf.IfOp):
        return _Kind.IF
    return _Kind.OTHER


#: the kinds as module globals (the walk compares one or more per op; an enum member
#: read through its class costs a descriptor call, about ten times a global's read)
_MATERIALIZE, _SCALAR, _INDEX, _LOAD, _BUNDLE, _LOOP, _IF, _OTHER = _Kind

#: :func:`_kind` by op class
_KIND: dict[type, _Kind] = {}


#: an item of an op's operand values, ``_ITEM(values, k)`` (xDSL's tuple of them
#: indexes through a Python ``__getitem__``; the tuple's own is C)
_ITEM = tuple.__getitem__

#: the SizeCode of a tile result (its type's)
_SIZE = attrgetter("type.size.data")

#: the decoding of an absent reference or hand list
_NONE: tuple[None, tuple[()]] = (None, ())


@cache
def _binding_free(mnemonic: str) -> bool:
    """An operation that binds no tile (TPREFETCH): its bundle has no B.IOT."""
    return optable_row(mnemonic).binding.binding_free


def _mask(attr: Attribute) -> int:
    return attr.value.data  # type: ignore[attr-defined]


@cache
def _ref(text: str) -> TileRef:
    hand, k = text.split("#")
    return TileRef(Hand[hand], int(k))


def emit_func(f: func.FuncOp, *, check_stage: bool = True) -> Emitted:
    """The program of one allocated kernel (``check_stage=False``: the caller knows it
    is allocated: the pipeline, from the stage before)."""
    e = _Emitter(f, check_stage)
    e.run()
    names = {a.index: a.name for a in tensor_args(f)}
    names.update({a.index: a.name for a in scalar_args(f)})
    slots = {b: k for k, (b, _) in enumerate(e.table)}
    bindings = tuple(
        AbiBinding(
            reg, None if b.tensor < 0 else names[b.tensor], b.pe_step, b.scalar, slots.get(b)
        )
        for b, reg in sorted(e.abi.items(), key=lambda kv: kv[1])
    )
    return Emitted(
        Program(tuple(e.cmds)),
        e.intents,
        bindings,
        e.scratch_bytes,
        f.sym_name.data,
        dict(e.abi),
        tuple(sorted(e.loops, key=lambda lp: lp.init)),
        e.check_intents,
        e.load_intents,
        tuple(b for b, _ in e.table),
        e.if_intents,
    )


def program_header(em: Emitted, machine: str | None = None) -> list[str]:
    """Comment lines that say how to run an emitted program with ``ptoc run``: the
    machine it was allocated for and the ABI registers to set on every PE."""
    out = [f"# @{em.kernel}" + (f", allocated for {machine}" if machine else "")]
    if em.table:
        out.append(f"# {TABLE_REG} = the argument table: 8-byte slots, loaded at the start")
    for b in em.bindings:
        via = f" (argument table slot {b.table_slot})" if b.table_slot is not None else ""
        if b.scalar:
            out.append(f"# {b.gpr} = scalar {b.tensor}{via}")
            continue
        what = "the spill scratch area" if b.tensor is None else f"tensor {b.tensor}"
        what += via
        step = f" + {b.pe_step} bytes per PE" if b.pe_step else ""
        out.append(f"# {b.gpr} = base of {what}{step}")
    return out


def allocated_machine(f: func.FuncOp) -> MachineConfig | None:
    """The machine an allocated kernel was allocated for (its ``pto.machine``), None
    when the attribute is absent (hand-written IR that names no machine)."""
    attr = f.attributes.get(MACHINE_ATTR)
    if not isinstance(attr, StringAttr):
        return None
    try:
        return MachineConfig.parse(attr.data)
    except ConfigError as e:
        raise CompileError(f"@{f.sym_name.data} has a malformed {MACHINE_ATTR}: {e}") from None


@dataclass(frozen=True)
class EmitPass(ModulePass):
    """Replace every allocated kernel with a ``pto.program`` op holding its bundle text:
    a comment header naming the machine and the ABI registers, then the canonical
    commands -- the text ``ptoc run`` runs (``xdsl-opt ... -t ptoc-asm`` prints it as a
    ``.s`` file). ``compile_module`` calls :func:`emit_func` directly and keeps the
    ``Program``."""

    name = "ptoc-emit"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        from ..pipeline import Options, run_pass
        from ..validate import ValidationError, validate

        for c in run_pass("emit", op, None, Options(validate=False)):
            f, em = c.kernel, c.emitted
            assert em is not None
            attr = f.attributes.get(MACHINE_ATTR)
            machine = allocated_machine(f)
            if machine is not None:  # the machine ptoc-allocate allocated for
                try:
                    validate(em, machine)
                except ValidationError as e:
                    raise CompileError(
                        f"@{em.kernel}: the program does not validate on the machine it was "
                        f"allocated for ({machine.text()}): {e}"
                    ) from None
            header = program_header(em, attr.data if isinstance(attr, StringAttr) else None)
            lines = header + format_program(em.program).splitlines()
            prog = ProgramOp(em.kernel, lines)
            op.body.block.insert_op_before(prog, f)
            f.detach()
            f.erase()


@dataclass(frozen=True)
class AsmTarget(Target):
    """``xdsl-opt ... -p ptoc-legalize,ptoc-allocate,ptoc-emit -t ptoc-asm -o k.s``:
    print the emitted program as assembly text for ``ptoc run k.s`` (one kernel per
    module, or per ``--split-input-file`` chunk)."""

    name = "ptoc-asm"

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        programs = [op for op in module.ops if isinstance(op, ProgramOp)]
        if any(isinstance(op, func.FuncOp) for op in module.ops):
            raise CompileError(
                f"{self.name}: the module holds a kernel that is not emitted: run ptoc-emit "
                "(after ptoc-legalize and ptoc-allocate) first"
            )
        if len(programs) != 1:
            raise CompileError(
                f"{self.name} prints one program; the module holds {len(programs)} "
                "(give one kernel per --split-input-file chunk)"
            )
        output.write("".join(f"{line.data}\n" for line in programs[0].lines))
