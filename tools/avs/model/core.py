"""The model state a test sees, and the one place where ptoc executes.

:class:`PtocModel` holds the ASL-visible state of the machine as the ASL model names it
(``_Tiles``, ``_LastFault``, the bundle being built, GPRs, the 4096-byte model memory,
the sticky numeric status) and implements the interpreter's
:class:`~tools.avs.interp.Model` protocol. Every *operation* runs on ptoc:
:meth:`PtocModel.run_bundle` builds a fresh :class:`ptoc.runtime.Machine`, places the
test's tiles into its queues, executes one ptoc bundle and reports what ptoc published.

Placement (D1): the ASL names a Local tile by an absolute slot 0..63, ptoc by a
relative queue entry. The adapter places ASL slot ``s`` at ptoc entry
``hand s // 16``, position ``s % 16 + 1`` before the bundle runs, so the 6-bit source
selector ``s`` of a B.IOT word names the same tile in both models (gaps are
zero-capacity placeholders whose every element is undefined). A destination ptoc
pushes as ``H#1`` is stored back into the slot the ASL's own allocation policy would
give it (the lowest free slot of that hand), which is where the test looks for it.

The tiles a test configures model one PE's fragment; they are placed on every PE of the
bundle's mask (so D3's allocation-mask rule never rejects a test that binds ``1111``),
and one PE's result is read back.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ptoc.backend.isa import DataType
from ptoc.backend.isa.fields import Hand
from ptoc.backend.program import Command, Ios, Iot, Program, Stop, TileStart
from ptoc.runtime import Machine, MachineConfig, MachineFault, UnsupportedOperation
from ptoc.runtime.shared import SharedTile
from ptoc.runtime.tiles import Layout, Tile, poisoned

from ..outcome import NotApplicable, Untranslated
from ..values import Array, AslRuntimeError, Bits, Enum, Opaque, Record
from .tiles import TileInfo, from_ptoc, to_ptoc

TILE_SLOTS = 64
MEMORY_BYTES = 4096
BINDING_SLOTS = 16
SCALAR_BINDING_SLOTS = 32
#: ptoc fault class name -> ASL FaultCode member
FAULT_NAMES = {
    "Fault_TileLegality": "Fault_TileLegality",
    "Fault_TileAllocation": "Fault_TileAllocation",
    "Fault_BundleControl": "Fault_BundleControl",
    "Fault_IllegalInstruction": "Fault_IllegalInstruction",
    "Fault_DataPage": "Fault_DataPage",
    "Fault_DataAlignment": "Fault_DataAlignment",
}

#: named constants of the ASL model the tests use (values from ``asl/arch``)
CONSTANTS: dict[str, int] = {
    "PTO_XLEN": 64,
    "PTO_TILE_REGISTER_COUNT": TILE_SLOTS,
    "PTO_MODEL_TILE_ELEMENTS": 32768,
    "PTO_MODEL_MEMORY_BYTES": MEMORY_BYTES,
    "PTO_BUNDLE_TILE_BINDING_COUNT": BINDING_SLOTS,
    "PTO_BUNDLE_SCALAR_BINDING_COUNT": SCALAR_BINDING_SLOTS,
    "PTO_BUNDLE_DIMENSION_COUNT": 3,
    "PTO_TILE_CAPACITY_BYTES": 262144,
    "PTO_MODEL_MAX_TILE_CAPACITY_BYTES": 262144,
    "PTO_TILE_MAX_ALLOCATION_BYTES": 65536,
    "PTO_SHARED_TILE_COUNT": 256,
    "PTO_ABSOLUTE_GPR_COUNT": 24,
    "PTO_MODEL_MEMORY_AGENTS": 4,
}
#: named bit-vector constants
BIT_CONSTANTS: dict[str, Bits] = {"DTYPE_NONE": Bits(5, 31)}


def binding_record() -> Record:
    """An empty ``BundleTileBinding``."""
    return Record(
        "BundleTileBinding",
        {
            "valid": False,
            "destination_valid": False,
            "destination": 0,
            "destination_hand": Bits(2, 0),
            "destination_allocated_by_bundle": False,
            "destination_size": 0,
            "pe_mask": Bits(4, 0),
            "source0_valid": False,
            "source1_valid": False,
            "source0": 0,
            "source1": 0,
            "last": False,
        },
    )


def data_attributes_record() -> Record:
    """``BundleDataAttributes`` at reset."""
    return Record(
        "BundleDataAttributes",
        {
            "data_type_present": False,
            "data_type": Bits(5, 0),
            "data_layout": Bits(5, 0),
            "pad_value": Bits(2, 0),
            "comparison_mode": Bits(3, 0),
            "rounding_mode": Bits(3, 0),
            "saturating": False,
            "canonicalize": False,
        },
    )


def operation_record() -> Record:
    """``BundleOperationDescriptor`` at reset (no operation selected)."""
    return Record(
        "BundleOperationDescriptor",
        {
            "valid": False,
            "form_identity": Bits(7, 0),
            "operation_class": Enum("BundleOperation_None"),
            "selector_valid": False,
            "selector": Bits(10, 0),
            "data_type_valid": False,
            "data_type": Bits(5, 0),
            "mode_valid": False,
            "mode": Bits(2, 0),
            "branch_type_valid": False,
            "branch_type": Bits(3, 0),
        },
    )


@dataclass
class RunResult:
    """What one ptoc bundle did: the fault (None on success), the destinations ptoc
    published in binding order, the participating PEs' numeric status, the bundle
    text."""

    fault: MachineFault | None
    destinations: list[Tile] = field(default_factory=list)
    status: int = 0
    text: str = ""
    program: Program | None = None
    #: a direct call whose destination descriptor ptoc's bundle does not produce
    mismatch: str = ""

    @property
    def fault_name(self) -> str:
        assert self.fault is not None
        return FAULT_NAMES.get(self.fault.fault.value, self.fault.fault.value)


class TilesArray:
    """``_Tiles``: element reads return the live record (the interpreter copies on
    binding), element writes store a copy."""

    def __init__(self, tiles: list[TileInfo]) -> None:
        self.tiles = tiles

    def asl_index(self, i: int) -> TileInfo:
        if not 0 <= i < len(self.tiles):
            raise AslRuntimeError(f"tile index {i} outside 0..{len(self.tiles) - 1}")
        return self.tiles[i]

    def asl_setindex(self, i: int, value: Any) -> None:
        if not isinstance(value, TileInfo):
            raise AslRuntimeError("_Tiles element assigned a value that is not a TileInfo")
        self.tiles[i] = value.asl_copy()


class MemoryArray:
    """``_Memory``: the model's byte-addressed memory as ``bits(8)`` elements."""

    def __init__(self, mem: np.ndarray) -> None:
        self.mem = mem

    def asl_index(self, i: int) -> Bits:
        if not 0 <= i < len(self.mem):
            raise AslRuntimeError(f"memory address {i} outside the model memory")
        return Bits(8, int(self.mem[i]))

    def asl_setindex(self, i: int, value: Any) -> None:
        if not 0 <= i < len(self.mem):
            raise AslRuntimeError(f"memory address {i} outside the model memory")
        self.mem[i] = (value.value if isinstance(value, Bits) else int(value)) & 0xFF


Binding = Callable[..., Any]
#: ASL function name -> binding taking (model, *arguments); filled by the binding modules
BINDINGS: dict[str, Binding] = {}
#: bindings that only read or write the test's own state (they never consult ptoc)
HARNESS: set[str] = set()
#: ASL function name -> (not-applicable category, reason)
NOT_APPLICABLE: dict[str, tuple[str, str]] = {}
#: ASL function name -> the group of what ptoc lacks (the binding is knowingly missing)
UNBOUND: dict[str, str] = {}


def binding(*names: str, harness: bool = False) -> Callable[[Binding], Binding]:
    """Register a function as the binding of the ASL functions ``names``; ``harness``
    marks a test-state helper that does not consult ptoc."""

    def deco(fn: Binding) -> Binding:
        for n in names:
            BINDINGS[n] = fn
            if harness:
                HARNESS.add(n)
        return fn

    return deco


def not_applicable(category: str, reason: str, *names: str) -> None:
    for n in names:
        NOT_APPLICABLE[n] = (category, reason)


#: ASL function name -> why its value is ASL-internal (it evaluates to an Opaque)
OPAQUE: dict[str, str] = {}


def opaque(reason: str, *names: str) -> None:
    """ASL helpers with no ptoc counterpart: their result is opaque, assertions on it are
    skipped and reported, and any other use of it makes the test not applicable."""
    for n in names:
        OPAQUE[n] = reason


def unbound(group: str, *names: str) -> None:
    """ASL functions of machine behaviour ptoc does not model (``group`` of
    :data:`~tools.avs.outcome.UNTRANSLATED_GROUPS`)."""
    for n in names:
        UNBOUND[n] = group


class PtocModel:
    """The ptoc-backed model of one test run (see the module docstring)."""

    def __init__(self, subject: str | None = None) -> None:
        #: the operation the test belongs to (from its ``source``), e.g. ``TADD``
        self.subject = subject
        #: the interpreter running the test (for the current line in failure reports)
        self.interp: Any = None
        #: the last bundle ptoc ran (for -v reports)
        self.last_run: RunResult | None = None
        #: every bundle text ptoc ran in this test
        self.runs: list[str] = []
        #: how many bundles ptoc committed (a rejected bundle has no effect at all)
        self.commits = 0
        #: why the last legality predicate was false (for failure reports)
        self.last_rejection = ""
        #: legality predicates ptoc answered FALSE only because of its DataType set:
        #: (line, mnemonic, rule)
        self.type_masked: list[tuple[int, str, str]] = []
        #: (AType, BType) of the last committed floating matrix bundle, whose values are
        #: D11's, not the ASL reference profile's raw-carrier arithmetic
        self.floating_matrix: tuple[str, str] | None = None
        #: whether any binding consulted ptoc (a test that only exercises the ASL's own
        #: state helpers has no ptoc subject)
        self.consulted = False
        self.globals: dict[str, Any] = {}
        self.reset()

    @property
    def line(self) -> int:
        return self.interp.line if self.interp is not None else 0

    def reset(self) -> None:
        """``ResetProfileState`` (payload words of the tile records are kept, as the ASL
        reset clears only descriptors and definedness)."""
        old = getattr(self, "tiles", None)
        self.tiles: list[TileInfo] = [TileInfo() for _ in range(TILE_SLOTS)]
        if old is not None:
            for t, o in zip(self.tiles, old):
                t._payload = o._payload
        self.alloc_masks: list[Bits] = [Bits(4, 0) for _ in range(TILE_SLOTS)]
        self.gprs = Array([Array([Bits(64, 0) for _ in range(24)]) for _ in range(4)])
        self.agent = 0
        self.memory = np.zeros(MEMORY_BYTES, np.uint8)
        #: the scalar temporary queues (``_TQueue``, ``_UQueue``) as ptoc's scalar
        #: context holds them: values (1 PE, T/U, entry) and validity (T/U, entry)
        self.squeue = np.zeros((1, 2, 4), np.uint64)
        self.squeue_valid = np.zeros((2, 4), bool)
        self.status = 0
        self.last_fault = Enum("Fault_None")
        self.fault_address = Bits(64, 0)
        self.tile_capacity = 262144
        #: the Shared register file S0..S255 as ptoc's executor keeps it (installed by the
        #: test or written by a committed bundle; every bundle's machine starts from it)
        self.shared_tiles: dict[int, SharedTile] = {}
        self.reset_bundle()

    # ------------------------------------------------------------------ bundle state

    def reset_bundle(self) -> None:
        """``ResetBundleControlState``: no bundle open, no header state."""
        self.bundle_active = False
        self.start: TileStart | None = None
        #: header commands in the order the test issued them
        self.pending: list[Command] = []
        #: whether the bundle committed (its B.IOS sources are then consumed)
        self.shared_consumed = False
        self.bindings = Array([binding_record() for _ in range(BINDING_SLOTS)])
        self.dimensions = Array([Bits(64, 0) for _ in range(3)])
        self.dimension_present = Array([False] * 3)
        self.scalar_bindings = Array(
            [
                Record(
                    "BundleScalarBinding",
                    {
                        "valid": False,
                        "destination": Bits(5, 0),
                        "source0": Bits(5, 0),
                        "source1": Bits(5, 0),
                        "source2": Bits(5, 0),
                        "source_count": 0,
                    },
                )
                for _ in range(SCALAR_BINDING_SLOTS)
            ]
        )
        self.data_attributes = data_attributes_record()
        self.data_attributes_present = False
        self.operation = operation_record()
        self.zero_seen = False

    # ------------------------------------------------------------------ Model protocol

    def lookup(self, name: str) -> Any:
        if name in CONSTANTS:
            return CONSTANTS[name]
        if name in BIT_CONSTANTS:
            return BIT_CONSTANTS[name]
        getter = _GLOBALS.get(name)
        if getter is not None:
            return getter[0](self)
        if name in self.globals:
            return self.globals[name]
        raise KeyError(name)

    def assign(self, name: str, value: Any) -> None:
        entry = _GLOBALS.get(name)
        if entry is None or entry[1] is None:
            raise KeyError(name)
        entry[1](self, value)

    def function(self, name: str) -> Callable[..., Any] | None:
        fn = BINDINGS.get(name)
        if fn is not None:
            if name in HARNESS:
                return lambda *args: fn(self, *args)

            def consult(*args: Any) -> Any:
                self.consulted = True
                return fn(self, *args)

            return consult
        why = OPAQUE.get(name)
        if why is not None:
            note = f"{name}: {why}"
            return lambda *args: Opaque(note)
        na = NOT_APPLICABLE.get(name)
        if na is not None:

            def raise_na(*_: Any) -> Any:
                raise NotApplicable(na[0], f"{name}: {na[1]}")

            return raise_na
        group = UNBOUND.get(name)
        if group is not None:

            def raise_unbound(*_: Any) -> Any:
                raise Untranslated(name, group=group)

            return raise_unbound
        return None

    # ------------------------------------------------------------------ faults

    def set_fault(self, name: str) -> None:
        self.last_fault = Enum(name)

    def clear_fault(self) -> None:
        self.last_fault = Enum("Fault_None")
        self.fault_address = Bits(64, 0)

    # ------------------------------------------------------------------ tiles

    def tile(self, index: Any) -> TileInfo:
        i = index.value if isinstance(index, Bits) else index
        if not isinstance(i, int) or not 0 <= i < TILE_SLOTS:
            raise AslRuntimeError(f"tile index {index} outside 0..{TILE_SLOTS - 1}")
        return self.tiles[i]

    def capacity_in_use(self, except_slot: int | None = None) -> int:
        """``TileCapacityInUseExcept``: core-wide bytes of allocated Local tiles."""
        total = 0
        for i, t in enumerate(self.tiles):
            if t.allocated and i != except_slot:
                total += bin(self.alloc_masks[i].value).count("1") * t.capacity_bytes
        return total

    # ------------------------------------------------------------------ running ptoc

    def run_bundle(
        self,
        start: TileStart,
        headers: Sequence[Command],
        *,
        hide: frozenset[int] = frozenset(),
        mask: int | None = None,
    ) -> RunResult:
        """Execute one bundle on a fresh ptoc machine holding the test's tiles (placed as
        the module docstring says; slots in ``hide`` become placeholders)."""
        if mask is None:
            mask = next(
                (c.mask for c in headers if isinstance(c, (Iot, Ios)) and c.mask), 0b1000
            )
        machine = Machine(MachineConfig(gm_size=MEMORY_BYTES, capacity=self.tile_capacity))
        state = machine.state
        pes = machine.config.pes
        for hand in range(4):
            slots = [
                s
                for s in range(hand * 16, hand * 16 + 16)
                if self.tiles[s].allocated and s not in hide
            ]
            top = max(slots, default=hand * 16 - 1) - hand * 16 + 1
            queue: list[Tile] = []
            for s in range(hand * 16, hand * 16 + top):
                t = self.tiles[s]
                serial = state.next_serial()
                if t.allocated and s not in hide:
                    queue.append(to_ptoc(t, mask, pes, serial))
                else:
                    queue.append(placeholder(mask, pes, serial))
            state.queues[hand] = queue
        used = [0] * pes
        for q in state.queues:
            for t in q:
                for pe in range(pes):
                    if t.mask >> (3 - pe) & 1:
                        used[pe] += t.capacity
        for reg in self.shared_tiles.values():
            for pe in range(pes):
                if reg.alloc_mask >> (3 - pe) & 1:
                    used[pe] += reg.capacity
        state.used = used
        state.shared = dict(self.shared_tiles)
        # a bundle with a B.IOS reads every PE's own GPR file (the Shared TLSU forms'
        # ``ReadPEAbsoluteGPROperand(agent, ...)``); the others model one PE's fragment,
        # the current agent's, on every PE
        per_pe = any(isinstance(c, Ios) and c.mask for c in headers)
        for reg in range(1, 24):
            for pe in range(pes):
                agent = pe if per_pe else self.agent
                state.gpr[pe, reg] = np.uint64(self.gprs.items[agent].items[reg].value)
        machine.load_gm(0, self.memory)
        before = [list(q) for q in state.queues]
        program = Program((start, *headers, Stop()))
        text = program.asm()
        self.runs.append(text)
        try:
            machine.run(program)
        except UnsupportedOperation as f:
            group = "Shared tiles" if "Shared" in f.rule else "indexed GM transfers"
            if "CUBE" in f.rule:
                group = "CUBE engine"
            raise Untranslated(f"ptoc executor: {f.op or start}", f.rule, group) from None
        except MachineFault as f:
            result = RunResult(f, text=text, program=program)
            self.last_run = result
            return result
        pe_list = [pe for pe in range(pes) if mask >> (3 - pe) & 1]
        status = 0
        for pe in pe_list:
            status |= int(machine.status[pe])
        dests = new_destinations(program, before, state.queues)
        self.commits += 1
        self.memory[:] = state.gm[:MEMORY_BYTES]
        self.shared_tiles = dict(state.shared)
        result = RunResult(None, dests, status, text, program)
        self.last_run = result
        return result

    def accepted_with_any_type(self, attempt: Callable[[], bool]) -> bool:
        """Whether ``attempt`` (a dry run returning acceptance) succeeds while ptoc's
        executor accepts every BSTART DataType; the model's reports are left as they
        were, and a semantics error at an unsupported type counts as not accepted."""
        from ..runner import lifted_type_check

        saved = (self.last_run, list(self.runs), self.memory.copy(), self.commits)
        shared = dict(self.shared_tiles)
        try:
            with lifted_type_check():
                return attempt()
        except (MachineFault, ValueError, TypeError, KeyError, ArithmeticError):
            return False
        finally:
            self.last_run, self.runs, self.commits = saved[0], saved[1], saved[3]
            self.shared_tiles = shared
            self.memory[:] = saved[2]

    def read_back(self, tile: Tile, mask: int, into: TileInfo | None = None) -> TileInfo:
        """The record of a destination ptoc published, as the first PE of ``mask`` holds it."""
        pe = next(pe for pe in range(4) if mask >> (3 - pe) & 1)
        return from_ptoc(tile, pe, into)


def placeholder(mask: int, pes: int, serial: int) -> Tile:
    """A zero-capacity queue entry standing for an empty ASL slot (every element
    undefined)."""
    payload = poisoned(DataType.U8, (pes, 1, 1))
    payload.flags.writeable = False
    return Tile(
        DataType.U8,
        1,
        1,
        1,
        1,
        Layout.ROW_MAJOR,
        mask,
        0,
        payload,
        np.zeros((pes, 1, 1), bool),
        serial=serial,
    )


def new_destinations(
    program: Program, before: list[list[Tile]], after: list[list[Tile]]
) -> list[Tile]:
    """The tiles a committed bundle published, in binding order."""
    dests: list[Hand] = []
    for c in program.commands:
        if isinstance(c, Iot) and c.mask and c.dst is not None:
            dests.append(c.dst)
    old = {id(t) for q in before for t in q}
    fresh = {h: [t for t in after[h] if id(t) not in old] for h in range(len(after))}
    out: list[Tile] = []
    taken = {h: 0 for h in fresh}
    for h in dests:
        hh = int(h)
        lst = fresh.get(hh, [])
        k = taken[hh]
        taken[hh] = k + 1
        # the last destination of a hand is #1: binding order is the reverse queue order
        j = len(lst) - 1 - k
        if 0 <= j < len(lst):
            out.append(lst[j])
    return out


# ---------------------------------------------------------------------- model variables

_Getter = Callable[[PtocModel], Any]
_Setter = Callable[[PtocModel, Any], None] | None
_GLOBALS: dict[str, tuple[_Getter, _Setter]] = {}


def model_variable(name: str, getter: _Getter, setter: _Setter = None) -> None:
    """Expose an ASL model variable (``_Tiles``, ``_LastFault``, ...)."""
    _GLOBALS[name] = (getter, setter)


def _set_last_fault(m: PtocModel, v: Any) -> None:
    m.last_fault = v


def _set_zero_seen(m: PtocModel, v: Any) -> None:
    m.zero_seen = bool(v)


model_variable("_Tiles", lambda m: TilesArray(m.tiles))
model_variable("_TileAllocationMasks", lambda m: Array(m.alloc_masks))
model_variable("_LastFault", lambda m: m.last_fault, _set_last_fault)


def _fault_address(m: PtocModel) -> Any:
    raise Untranslated("_FaultAddress", group="fault address")


model_variable("_FaultAddress", _fault_address)
model_variable("_BundleTileBindings", lambda m: m.bindings)
model_variable("_BundleDimensions", lambda m: m.dimensions)
model_variable("_BundleDimensionPresent", lambda m: m.dimension_present)
model_variable("_BundleScalarBindings", lambda m: m.scalar_bindings)
model_variable("_BundleDataAttributes", lambda m: m.data_attributes)
model_variable("_BundleOperation", lambda m: m.operation)
model_variable("_BundleZeroParticipationSeen", lambda m: m.zero_seen, _set_zero_seen)
model_variable("_Memory", lambda m: MemoryArray(m.memory))
model_variable("_PEGPRs", lambda m: m.gprs)
model_variable("_CurrentMemoryAgent", lambda m: m.agent)
