"""``ptoc report`` (this package): one self-contained HTML picture of a compiled kernel.

    ptoc.report(softmax, "softmax.html")      # compile and write the report
    ptoc.compile(softmax).report("s.html")    # the same, from a Program

The page shows a timeline over the program's blocks (entries of every hand, Local bytes
of every PE, the overhead blocks, the peak against the lower bound from liveness), the
dataflow graph of the scheduled kernel bundles, the bundles with their kernel lines
(linked both ways with the pictures) and every pipeline stage's IR with a diff against
the stage before. ``ptoc verify --report`` adds the differing elements of a mismatch.

Modules: ``collect`` (what compiling the kernel showed), ``timeline`` (occupancy replay,
lower bound, binning, drawing), ``graph`` (layered layout and drawing), ``mismatch``
(the verify failure) and ``page`` (the HTML).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .collect import Collector, ReportData, build
from .mismatch import Mismatch, from_error
from .page import render

__all__ = [
    "Collector",
    "Mismatch",
    "ReportData",
    "build",
    "compile_observed",
    "from_error",
    "render",
    "report",
    "report_program",
    "write",
]


def compile_observed(kernel: Any, machine: Any = None) -> tuple[Any, Collector]:
    """Compile ``kernel`` (a :class:`ptoc.Kernel`) for ``machine`` while collecting what
    the report shows; the :class:`ptoc.Program` and the collector."""
    from ..driver import compile_kernel

    collector = Collector()
    return compile_kernel(kernel, machine, observe=collector), collector


def write(
    path: str | Path,
    program: Any,
    collector: Collector | None = None,
    mismatches: list[Mismatch] | None = None,
    option: str = "report path",
) -> Path:
    """Write the report of a compiled ``program`` to ``path`` (an OutputError naming
    ``option`` if it cannot be written); returns the path."""
    from ..cli_kernel import write_output
    from ..passes.gc_pause import full_collections_paused

    # many small objects: no full collections meanwhile, as in the compiler
    with full_collections_paused():
        text = render(build(program, collector), mismatches)
    write_output(str(path), text, option)
    return Path(path)


def report(kernel: Any, path: str | Path, machine: Any = None) -> Path:
    """``ptoc.report``: compile ``kernel`` for ``machine`` and write its HTML report."""
    from ..kernel import Kernel

    if not isinstance(kernel, Kernel):
        raise TypeError(f"ptoc.report takes a @ptoc.kernel function, not {kernel!r}")
    program, collector = compile_observed(kernel, machine)
    return write(path, program, collector)


def report_program(program: Any, path: str | Path) -> Path:
    """``Program.report``: the report of a compiled program. A program compiled from a
    kernel is compiled again with the same machine to collect its stages and graph (the
    compiler is deterministic); a parsed or decoded one shows its timeline and bundles."""
    if program.kernel is None:
        return write(path, program)
    again, collector = compile_observed(program.kernel, program.machine)
    if again.program.commands != program.program.commands:
        collector = None  # type: ignore[assignment]  # not this program's compilation
    return write(path, program, collector)
