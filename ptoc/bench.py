"""Timing of the workflow for ``ptoc bench`` and ``benchmarks/bench_workflow.py``.

For one kernel: trace, trace + compile, the executor alone (``Machine.run`` of the
compiled bundles, inputs already placed), the reference, and a whole ``ptoc.verify``
(trace, compile, run, reference, compare). Each figure is the best of ``repeat`` runs.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .errors import Error
from .kernel import Kernel


@dataclass(frozen=True)
class Timing:
    """Seconds per step for one kernel (``error`` set when it could not be compiled)."""

    kernel: str
    trace: float = 0.0
    compile: float = 0.0  # trace + compile
    run: float = 0.0  # the executor alone
    reference: float = 0.0
    verify: float = 0.0  # trace + compile + run + reference + compare
    bundles: int = 0  # tile bundles (docs/formats.md, "Counting")
    overhead: int = 0  # of them inserted by the allocator
    peak_bytes: int = 0
    scalar_blocks: int = 0
    error: str | None = None


def _best(fn: Callable[[], Any], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def fresh(k: Kernel) -> Kernel:
    """The same kernel without its cached trace (so timing includes tracing)."""
    copy = Kernel(k.fn, k.pes, k.name, k.scope)
    copy._inputs = k._inputs
    return copy


def measure(k: Kernel, machine: Any = None, seed: int = 0, repeat: int = 3) -> Timing:
    """Time every step of the workflow for ``k`` on ``machine``."""
    from ptoc.passes.execute import place
    from ptoc.runtime import Machine

    from .driver import compile_kernel
    from .execute import check_inputs, reference_of, verify_on

    inputs = k.random_inputs(seed)
    t_trace = _best(lambda: fresh(k).trace(), repeat)
    t_ref = _best(lambda: reference_of(k, inputs), repeat)
    try:
        prog = compile_kernel(k, machine)
    except Error as e:
        first = str(e).splitlines()[0]
        return Timing(k.name, t_trace, reference=t_ref, error=first)
    t_compile = _best(lambda: compile_kernel(fresh(k), machine), repeat)
    checked = check_inputs(k, inputs)

    def executor() -> float:
        m = Machine(prog.machine)
        place(prog, m, checked)
        t0 = time.perf_counter()
        m.run(prog.program)
        return time.perf_counter() - t0

    t_run = min(executor() for _ in range(repeat))
    t_verify = _best(lambda: verify_on(fresh(k), inputs, machine), repeat)
    s = prog.stats()
    return Timing(
        k.name,
        t_trace,
        t_compile,
        t_run,
        t_ref,
        t_verify,
        s.bundles,
        s.overhead_bundles,
        s.peak_bytes,
        s.scalar_blocks,
    )


def table(rows: list[Timing]) -> str:
    """The timings as a text table (milliseconds)."""
    head = (
        f"{'kernel':<22} {'trace':>8} {'compile':>8} {'run':>8} {'ref':>8} {'verify':>8} "
        f"{'bundles':>8} {'inserted':>8} {'scalar':>7} {'peak B/PE':>10}"
    )
    out = [head, "-" * len(head)]
    for r in rows:
        if r.error:
            out.append(f"{r.kernel:<22} {r.trace * 1e3:>8.1f}  (not compiled: {r.error})")
            continue
        out.append(
            f"{r.kernel:<22} {r.trace * 1e3:>8.1f} {r.compile * 1e3:>8.1f} {r.run * 1e3:>8.1f} "
            f"{r.reference * 1e3:>8.1f} {r.verify * 1e3:>8.1f} {r.bundles:>8} {r.overhead:>8} "
            f"{r.scalar_blocks:>7} {r.peak_bytes:>10}"
        )
    out.append(
        "times in ms (best of the repeats); compile includes trace; run is the executor "
        "alone; bundles are tile bundles (inserted: by the allocator), scalar: scalar blocks"
    )
    return "\n".join(out)
