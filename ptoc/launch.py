"""``ptoc.run`` of a grid launch (DECISIONS D13): the kernel on ``grid`` cores.

The tensors are placed once in the shared global memory, every core gets the same ABI
registers (tensor bases per PE) plus its core index and the core count
(:data:`~ptoc.backend.isa.fields.CORE_INDEX_GPR`, ``CORE_COUNT_GPR``), and the outputs
are read back after every core has run. A fault or a race names the core and the kernel
line of each block involved.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from .errors import InputError
from .program import Program


def run_grid(
    program: Program,
    inputs: Mapping[str, np.ndarray],
    config: Any,
    cores: int,
    workers: int,
    check_races: bool,
    trace: bool,
) -> Any:
    """Run ``program`` on ``cores`` cores; :class:`ptoc.execute.Outputs` whose ``status``
    is (cores, pes) and whose counts add up every core's."""
    from ptoc.passes.execute import place, read_outputs
    from ptoc.runtime import MachineFault, RaceDetected
    from ptoc.runtime.grid import Grid

    from .execute import Outputs, locate_fault

    if trace:
        raise InputError("trace=True records one core: run a grid launch without a trace")
    g = Grid(config, cores)
    first = g.core(0)
    placement = place(program, first, inputs)
    for m in g.machines[1:]:
        m.state.gpr[:] = first.state.gpr
    try:
        report = g.run(program.program, check_races=check_races, workers=workers)
    except RaceDetected as f:
        for core, verb, where in f.accesses:
            loc = program.source_of(where.command)
            if loc is not None:
                excerpt = loc.excerpt()
                f.add_note(f"core {core} {verb} from the kernel at {loc}"
                           + (f"\n{excerpt}" if excerpt else ""))  # fmt: skip
        raise f.with_traceback(None) from None
    except MachineFault as f:
        raise locate_fault(program, f).with_traceback(None) from None
    out = Outputs(read_outputs(program, first, placement))
    out.status = report.status
    out.bundles, out.scalar_blocks = report.bundles, report.scalar_blocks
    return out
