"""ptoc.runtime: the bit-exact executor ("machine model") of the PTO tile ISA.

Imports only the standard library, numpy, ml_dtypes and ``ptoc.backend``.

    m = Machine(MachineConfig(depth=4))
    m.load_gm(0x1000, x)
    m.set_gpr("a0", 0x1000)
    m.run(program)             # a Program or encoded bytes; raises MachineFault
    m.tile("T#1").values       # (pes, ValidRow, ValidCol)
"""

from typing import TYPE_CHECKING

from ptoc.backend.target import MachineConfig

from .faults import (
    BundleControlFault,
    BundleLocation,
    DataAlignmentFault,
    DataPageFault,
    IllegalInstructionFault,
    InstructionPCFault,
    MachineFault,
    RaceDetected,
    StepBoundExceeded,
    TileAllocationFault,
    TileLegalityFault,
    UnsupportedOperation,
)

if TYPE_CHECKING:
    from .grid import Grid, GridReport
    from .machine import Machine, MachineError, RunReport, TileView
    from .memory import GMError
    from .state import MachineSnapshot
    from .tiles import Layout
    from .trace import Trace, TraceRecord

#: names imported on first use (the executor proper: importing the faults, as ``ptoc``
#: does, must not load the machine)
_LAZY = {
    "GMError": ".memory",
    "Grid": ".grid",
    "GridReport": ".grid",
    "Machine": ".machine",
    "MachineError": ".machine",
    "RunReport": ".machine",
    "TileView": ".machine",
    "MachineSnapshot": ".state",
    "Layout": ".tiles",
    "Trace": ".trace",
    "TraceRecord": ".trace",
}


def __getattr__(name: str) -> object:
    where = _LAZY.get(name)
    if where is None:
        raise AttributeError(f"module 'ptoc.runtime' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(where, __name__), name)
    globals()[name] = value
    return value


__all__ = [
    "BundleControlFault",
    "BundleLocation",
    "DataAlignmentFault",
    "DataPageFault",
    "GMError",
    "Grid",
    "GridReport",
    "IllegalInstructionFault",
    "InstructionPCFault",
    "Layout",
    "Machine",
    "MachineConfig",
    "MachineError",
    "MachineFault",
    "MachineSnapshot",
    "RaceDetected",
    "RunReport",
    "StepBoundExceeded",
    "TileAllocationFault",
    "TileLegalityFault",
    "TileView",
    "Trace",
    "TraceRecord",
    "UnsupportedOperation",
]
