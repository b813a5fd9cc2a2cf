"""Bundle headers: encoding checks, header-command rules and the cached bundle plan.

A tile bundle is processed like the ASL processes its commands one by one
(``asl/block/model/dispatch/commands.asl``), so faults that the ASL raises *at a header
command* are raised here in command order, before the commit-time no-op test:

* reserved encodings (``CommandFormOperandsLegal``, reserved BSTART selector or
  DataType) -> ``Fault_IllegalInstruction``;
* a second B.DATR, B.IOR, B.CATR, B.HINT or B.FPATR, a second write to LB0..LB2 (B.DIM
  and C.B.DIMI share the write-once bit), a B.IOT after the binding carrying ``last``,
  a fifth effective B.IOT, a B.FPATR outside a CUBE bundle, a scalar instruction inside
  a tile bundle -> ``Fault_BundleControl``;
* a B.IOS naming a register an earlier B.IOS of the bundle names, or a fifth effective
  B.IOS -> ``Fault_BundleControl``;
* a B.IOT whose decoded mask differs from the bundle's earlier bindings, a B.IOS
  whose mask differs from any earlier binding's, or a B.IOT with a destination in a
  TMOV Local -> Shared (Functions 9/10) -> ``Fault_TileLegality``
  (``BundleTileMaskCanAppend``, ``BundleSharedMaskCanAppend`` in ``commands.asl`` and the
  B.IOT contract: "A mismatched effective decoded PE mask ... raises
  Fault_TileLegality").

A B.IOT or B.IOS with PEMode 000 is skipped entirely, before placement checks; when no
effective binding remains the whole bundle is a strict no-op at commit
(``SelectedBundleTileMaskIsZero``). Plans are cached by the block's command tuple, so
re-executing an identical bundle skips all of this.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from ptoc.backend.encoding import command_name, field_violation
from ptoc.backend.isa import Family, OpDef
from ptoc.backend.isa import shared as isa_shared
from ptoc.backend.isa.fields import Hand, mask_text
from ptoc.backend.program import (
    Command,
    Datr,
    Dim,
    Generic,
    Ior,
    Ios,
    Iot,
    Scalar,
    ScalarStart,
    Stop,
    TileRef,
    TileStart,
)

from .faults import (
    BundleControlFault,
    IllegalInstructionFault,
    MachineFault,
    TileLegalityFault,
)

#: effective Local bindings a bundle may carry (B.IOT contract, DECISIONS / REFERENCE 2.2)
MAX_BINDINGS = 4


@dataclass(frozen=True)
class DimSpec:
    """One written LB register: ``value = (GPR[reg] + imm)[15:0]`` (``reg`` 0 = constant)."""

    reg: int
    imm: int
    command: str


@dataclass
class BundlePlan:
    """Everything a tile bundle's header says, resolved once per distinct command tuple.

    ``fault`` is a header-time fault (re-raised on every execution). ``noop`` marks a
    bundle whose every binding had PE_MASK 0000. ``cache`` memoises the operation's
    static preparation per concrete LB tuple.
    """

    start: TileStart
    op: OpDef | None
    name: str
    fault: tuple[type[MachineFault], str, str] | None = None
    datr: Datr | None = None
    dims: tuple[DimSpec | None, DimSpec | None, DimSpec | None] = (None, None, None)
    ior: Ior | None = None
    bindings: tuple[Iot, ...] = ()
    shared: tuple[Ios, ...] = ()
    catr: Generic | None = None
    hint: Generic | None = None
    fpatr: Generic | None = None
    zero_seen: bool = False
    mask: int = 0
    #: index (within the block body) of the command that raised ``fault``; -1: BSTART
    fault_at: int = -1
    cache: dict[Any, Any] = field(default_factory=dict)

    #: flattened source selectors and (hand, SizeCode) destinations in binding order
    sources: tuple[TileRef, ...] = ()
    #: (hand number, queue index, selector) of every source, for the executor's lookup
    source_pos: tuple[tuple[int, int, TileRef], ...] = ()
    destinations: tuple[tuple[Hand, int], ...] = ()
    #: the LB values when no B.DIM reads a register, else None
    const_dims: tuple[int | None, ...] | None = (None, None, None)
    #: (spec, runner) once the commit-time static checks passed for ``const_dims``
    ready: Any = None
    #: the runner's fused form once ``ready`` is set (``engine.Fused``; None: none)
    fused: Any = None
    #: its kept constant result once ``ready`` is set (``memo.ConstantMemo``; None: none)
    memo: Any = None

    @property
    def noop(self) -> bool:
        return self.zero_seen and not self.bindings and not self.shared

    def raise_fault(self) -> None:
        if self.fault is not None:
            cls, rule, op = self.fault
            raise cls(rule, op)


def op_name(start: TileStart) -> str:
    o = start.op
    if o is not None:
        return o.mnemonic
    return f"{start.family.value} selector 0x{start.selector:03X}"


@lru_cache(maxsize=4096)
def encoding_rule(c: Command) -> str | None:
    """The reserved-encoding rule ``c`` breaks, or None (``CommandFormOperandsLegal``:
    the catalog's field constraints, read by :func:`field_violation`)."""
    return field_violation(c)


def command_text(c: Command) -> str:
    """A short name of a command for fault messages (``B.DIM``, ``C.B.DIMI``, ``addi``)."""
    if isinstance(c, (TileStart, ScalarStart, Stop)):
        return type(c).__name__
    return command_name(c)


def generic_kind(c: Generic) -> str:
    """``B.CATR``, ``B.HINT`` or ``B.FPATR``: the mnemonic of a generic command's form."""
    return command_name(c)


def _bind_shared(c: Ios, bindings: list[Iot], shared: list[Ios], name: str) -> None:
    """``BindBundleSharedIO``: one PE_MASK across every effective binding
    (``BundleSharedMaskCanAppend``: Fault_TileLegality), each register named once and at
    most four B.IOS (Fault_BundleControl)."""
    earlier = [b.mask for b in bindings] + [s.mask for s in shared]
    if any(m != c.mask for m in earlier):
        raise TileLegalityFault(
            f"B.IOS mask={mask_text(c.mask)} differs from the bundle's mask="
            f"{mask_text(earlier[0])}; every effective binding uses one PE_MASK",
            name,
        )
    if any(s.tid == c.tid for s in shared):
        raise BundleControlFault(f"B.IOS binds S{c.tid} twice in one bundle", name)
    if len(shared) == isa_shared.MAX_BINDINGS:
        raise BundleControlFault(
            f"a bundle accepts at most {isa_shared.MAX_BINDINGS} effective B.IOS bindings",
            name,
        )


@lru_cache(maxsize=2048)
def build_plan(start: TileStart, commands: tuple[Command, ...]) -> BundlePlan:
    """Process a tile bundle's header in order (see the module docstring)."""
    plan = BundlePlan(start, start.op, op_name(start))
    try:
        _collect(plan, commands)
    except MachineFault as f:
        # name the operation and, for a header command, the command too ("TADD B.DATR")
        where = plan.name if f.op in ("", "BSTART", plan.name) else f"{plan.name} {f.op}"
        plan.fault = (type(f), f.rule, where)
    return plan


def _collect(plan: BundlePlan, commands: tuple[Command, ...]) -> None:
    plan.fault_at = -1
    rule = encoding_rule(plan.start)
    if rule is not None:
        raise IllegalInstructionFault(rule, "BSTART")
    cube = plan.op is not None and plan.op.family is Family.CUBE
    insert = (
        plan.start.family is Family.TLSU
        and plan.start.selector in isa_shared.tmov_insert_functions()
    )
    dims: list[DimSpec | None] = [None, None, None]
    bindings: list[Iot] = []
    shared: list[Ios] = []
    closed = False
    for i, c in enumerate(commands):
        plan.fault_at = i
        name = command_text(c)
        if isinstance(c, (Scalar, ScalarStart)):
            raise BundleControlFault(
                f"scalar instruction {name} inside a tile bundle (tile bundles hold only "
                "header commands)",
                name,
            )
        rule = encoding_rule(c)
        if rule is not None:
            raise IllegalInstructionFault(rule, name)
        if isinstance(c, Datr):
            if plan.datr is not None:
                raise BundleControlFault("a bundle accepts at most one B.DATR", name)
            plan.datr = c
        elif isinstance(c, Dim):
            earlier = dims[c.lb]
            if earlier is not None:
                raise BundleControlFault(
                    f"LB{c.lb} is write-once per bundle ({earlier.command} already wrote it)",
                    name,
                )
            dims[c.lb] = DimSpec(c.reg, c.imm, name)
        elif isinstance(c, Ior):
            if plan.ior is not None:
                raise BundleControlFault("a bundle accepts at most one B.IOR", name)
            plan.ior = c
        elif isinstance(c, Iot):
            if c.mask == 0:
                plan.zero_seen = True  # PEMode 000: skipped before every placement check
                continue
            if closed:
                raise BundleControlFault(
                    "a B.IOT follows the binding that carried `last`", name
                )
            if len(bindings) == MAX_BINDINGS:
                raise BundleControlFault(
                    f"a bundle accepts at most {MAX_BINDINGS} effective B.IOT bindings", name
                )
            if bindings and c.mask != bindings[0].mask:
                raise TileLegalityFault(
                    f"B.IOT mask={mask_text(c.mask)} differs from the bundle's mask="
                    f"{mask_text(bindings[0].mask)}; every effective binding uses one PE_MASK",
                    name,
                )
            if insert and c.dst is not None:
                raise TileLegalityFault(
                    "a TMOV Local -> Shared binds a source-only B.IOT: the capacity and the "
                    "destination are the B.IOS's (BindBundleTileIO)",
                    name,
                )
            bindings.append(c)
            closed = c.last
        elif isinstance(c, Ios):
            if c.mask == 0:
                plan.zero_seen = True
                continue
            _bind_shared(c, bindings, shared, name)
            shared.append(c)
        elif isinstance(c, Generic):
            kind = generic_kind(c)
            slot = {"B.CATR": "catr", "B.HINT": "hint", "B.FPATR": "fpatr"}.get(kind)
            if slot is None:
                raise BundleControlFault(f"{kind} cannot appear in a tile bundle", kind)
            if kind == "B.FPATR" and not cube:
                raise BundleControlFault(
                    "B.FPATR is accepted only in CUBE matrix bundles", kind
                )
            if getattr(plan, slot) is not None:
                raise BundleControlFault(f"a bundle accepts at most one {kind}", kind)
            setattr(plan, slot, c)
        else:  # pragma: no cover - Program.blocks never puts these inside a block
            raise BundleControlFault(f"{name} cannot appear in a bundle header", name)
    plan.fault_at = -1
    plan.dims = (dims[0], dims[1], dims[2])
    plan.bindings = tuple(bindings)
    plan.shared = tuple(shared)
    plan.sources = tuple(s for b in bindings for s in b.srcs)
    plan.source_pos = tuple((int(s.hand), s.index, s) for s in plan.sources)
    plan.destinations = tuple((b.dst, b.size) for b in bindings if b.dst is not None)
    if any(d is not None and d.reg for d in dims):
        plan.const_dims = None
    else:
        plan.const_dims = tuple(None if d is None else d.imm & 0xFFFF for d in dims)
    if bindings:
        plan.mask = bindings[0].mask
    elif shared:
        plan.mask = shared[0].mask
