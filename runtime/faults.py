"""Machine faults: one Python exception class per architectural fault kind.

Every fault leaves the machine exactly as it was before the faulting block. A fault is
raised by the executor with ``rule`` (one sentence naming the broken rule); the machine
then fills in where it happened (``bundle``) and which operation it was (``op``).
"""

from __future__ import annotations

from dataclasses import dataclass

from ptoc.backend.errors import Error
from ptoc.backend.isa import Fault


@dataclass(frozen=True)
class BundleLocation:
    """Where a block sits: ``index`` is the 0-based count of the tile bundles executed
    before it (so the first bundle is bundle 0), or of the scalar blocks when ``scalar``
    (docs/formats.md: what counts as a bundle); ``command`` the index of its first
    command in the program; ``line`` its source line (0 when unknown) and ``offset`` its
    byte offset in a binary (-1 when unknown)."""

    index: int
    command: int = -1
    line: int = 0
    offset: int = -1
    scalar: bool = False

    def text(self) -> str:
        where = [f"{'scalar block' if self.scalar else 'bundle'} {self.index}"]
        if self.line:
            where.append(f"line {self.line}")
        if self.offset >= 0:
            where.append(f"offset 0x{self.offset:x}")
        elif self.command >= 0 and not self.line:
            where.append(f"command {self.command}")
        return ", ".join(where)


class MachineFault(Error):
    """Root of the machine faults. ``fault`` is the architectural Fault class, ``rule``
    the broken rule, ``op`` the operation (mnemonic or command), ``bundle`` where."""

    fault: Fault = Fault.TILE_LEGALITY

    def __init__(self, rule: str, op: str = "", bundle: BundleLocation | None = None):
        super().__init__(rule)
        self.rule = rule
        self.op = op
        self.bundle = bundle
        #: in a scalar block: the index of the faulting instruction among its steps
        self.step: int | None = None
        #: in a grid launch: the index of the core that faulted (D13)
        self.core: int | None = None

    def locate(self, bundle: BundleLocation, op: str) -> MachineFault:
        """Fill in the location (and the operation when the raiser did not know it)."""
        self.bundle = bundle
        if not self.op:
            self.op = op
        return self

    def where(self) -> str:
        """``core N, bundle M, line L`` (the core only in a grid launch)."""
        where = self.bundle.text() if self.bundle is not None else "outside any bundle"
        return where if self.core is None else f"core {self.core}, {where}"

    def __str__(self) -> str:
        op = f" {self.op}" if self.op else ""
        return f"{self.fault.value} at {self.where()}{op}: {self.rule}"


class TileLegalityFault(MachineFault):
    """``Fault_TileLegality``: schema, type, shape, layout, definedness or data rule."""

    fault = Fault.TILE_LEGALITY


class TileAllocationFault(MachineFault):
    """``Fault_TileAllocation``: unrepresentable destination shape or exhausted capacity."""

    fault = Fault.TILE_ALLOCATION


class BundleControlFault(MachineFault):
    """``Fault_BundleControl``: misplaced, duplicated or unterminated header commands."""

    fault = Fault.BUNDLE_CONTROL


class IllegalInstructionFault(MachineFault):
    """``Fault_IllegalInstruction``: a reserved encoding."""

    fault = Fault.ILLEGAL_INSTRUCTION


class DataPageFault(MachineFault):
    """``Fault_DataPage``: a global-memory access outside the modelled memory."""

    fault = Fault.DATA_PAGE


class DataAlignmentFault(MachineFault):
    """``Fault_DataAlignment``: an element access not aligned to its element size."""

    fault = Fault.DATA_ALIGNMENT


class InstructionPCFault(MachineFault):
    """``Fault_InstructionPC``: a block continuation that is odd or names no block."""

    fault = Fault.INSTRUCTION_PC


class StepBoundExceeded(MachineFault):
    """A run that executed ``MachineConfig.max_steps`` blocks without ending (D12: the
    executor stops a program that loops too long, it never hangs). Not an
    architectural fault; reported like one (exit status 3 on the command line)."""

    fault = Fault.BUNDLE_CONTROL

    def __str__(self) -> str:
        return f"step bound exceeded at {self.where()}: {self.rule}"


class RaceDetected(MachineFault):
    """Checked mode of a grid launch (D13): two cores wrote overlapping GM bytes, or one
    core read bytes another wrote. Not an architectural fault (the cores run in no
    defined order, so the result would depend on scheduling); reported like one (exit
    status 3). ``accesses`` names both sides: (core, "reads"/"writes", location);
    ``start``/``end`` the byte range [start, end) both touch."""

    fault = Fault.BUNDLE_CONTROL

    def __init__(
        self,
        rule: str,
        accesses: tuple[tuple[int, str, BundleLocation], tuple[int, str, BundleLocation]],
        start: int,
        end: int,
    ) -> None:
        super().__init__(rule)
        self.accesses = accesses
        self.start, self.end = start, end
        self.core = accesses[0][0]
        self.bundle = accesses[0][2]

    def __str__(self) -> str:
        return f"race: {self.rule}"


class UnsupportedOperation(MachineFault):
    """A legal operation this executor does not model (CUBE matrix ops, Shared tiles,
    indexed GM ops, ...). Reported like ``Fault_IllegalInstruction`` and rejected before
    any effect."""

    fault = Fault.ILLEGAL_INSTRUCTION


FAULT_CLASSES: dict[Fault, type[MachineFault]] = {
    Fault.TILE_LEGALITY: TileLegalityFault,
    Fault.TILE_ALLOCATION: TileAllocationFault,
    Fault.BUNDLE_CONTROL: BundleControlFault,
    Fault.ILLEGAL_INSTRUCTION: IllegalInstructionFault,
    Fault.DATA_PAGE: DataPageFault,
    Fault.DATA_ALIGNMENT: DataAlignmentFault,
    Fault.INSTRUCTION_PC: InstructionPCFault,
}


def unsupported(what: str, op: str = "") -> UnsupportedOperation:
    """``<what> is not supported by this executor``."""
    return UnsupportedOperation(f"{what} is not supported by this executor", op)
