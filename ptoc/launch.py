"""``ptoc.run`` of a grid launch (DECISIONS D13): the kernel on ``grid`` cores.

The tensors are placed once in the shared global memory, every core gets the same ABI
registers (tensor bases per PE) plus its core index and the core count
(:data:`~ptoc.backend.isa.fields.CORE_INDEX_GPR`, ``CORE_COUNT_GPR``), and the outputs
are read back after every core has run. A fault or a race names the core and the kernel
line of each block involved. With ``cluster`` the cores run as Dask tasks
(:mod:`ptoc.cluster`), ``workers`` chunks of them (default: one per worker thread).
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
    cluster: Any = None,
) -> Any:
    """Run ``program`` on ``cores`` cores; :class:`ptoc.execute.Outputs` whose ``status``
    is (cores, pes) and whose counts add up every core's (and, on a cluster, whose
    ``cluster`` is the :class:`~ptoc.cluster.ClusterReport`)."""
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
        m.state.writable_gpr()[:] = first.state.gpr
    runner = None
    if cluster is not None:
        from .cluster import DaskRunner, client_for

        client, close = client_for(cluster, "a grid launch on a cluster")
        runner = DaskRunner(client)
    try:
        if runner is not None and workers == 1:
            workers = runner.slots()
        report = g.run(program.program, check_races=check_races, workers=workers,
                       runner=runner)  # fmt: skip
    except RaceDetected as f:
        for core, verb, where in f.accesses:
            loc = program.source_of(where.command)
            if loc is not None:
                excerpt = loc.excerpt()
                f.add_note(f"core {core} {verb} from the kernel at {loc}"
                           + (f"\n{excerpt}" if excerpt else ""))  # fmt: skip
        raise _with_notes(f, runner).with_traceback(None) from None
    except MachineFault as f:
        core = g.core(f.core) if f.core is not None else None  # its state at the fault
        raise _with_notes(locate_fault(program, f, core), runner).with_traceback(None) from None
    finally:
        if runner is not None:
            close()
    out = Outputs(read_outputs(program, first, placement))
    out.cluster = runner.report if runner is not None else None
    out.status = report.status
    out.bundles, out.scalar_blocks = report.bundles, report.scalar_blocks
    return out


def _with_notes(f: Any, runner: Any) -> Any:
    """A launch's error with the cluster's notes (workers lost, chunks run again)."""
    if runner is not None:
        for note in runner.report.notes():
            f.add_note(note)
    return f
