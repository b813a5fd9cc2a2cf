"""Compiler benchmarks (printed by benchmarks/run_all.py, never asserted).

* Every example kernel of ``tests/compiler/kernels.py`` on the architectural machine and
  on the tiny one (depth 4, 16 KiB per PE): the best of three warm compiles (the first,
  untimed compile pays the one-time imports and caches) against the best of three runs
  of the compiled program (``run_compiled``: a new Machine, placement, run); the note
  gives the bundles emitted, the overhead bundles (refresh, spill, reload, filler and
  scalar blocks) as a share of all bundles, and the peak bytes per PE against the lower
  bound (the most bytes the schedule ever keeps live).
* The random corpus (20..500 ops, mixed tile sizes and DataTypes): compile time against
  executor time, both summed over the kernels, and the same two sums over the kernels
  whose live tiles never exceed the queue entries (64 on the architectural machine) and
  fit the capacity (goal: no inserted bundles).
* Compile time at 1,000 and 10,000 ops (goal: the 10,000-op compile takes at most 12x
  the 1,000-op compile): for a kernel of repeated row softmaxes, whose bundles grow
  exactly with its ops, and for random kernels whose operands come from the newest values
  (their kept bundles grow slightly faster than their ops); the note gives the time and
  the peak compile memory (tracemalloc) per emitted bundle, and the time of each stage
  of the 10,000-op compile per emitted bundle (the best of two; ``emit`` includes the
  validation of the program).
* Forty compiles of a 1,000-op kernel in a row, as a test suite compiles, with whatever
  the cyclic garbage collector does meanwhile, against forty times the best lone compile.
"""

from __future__ import annotations

import gc
import time
from dataclasses import dataclass, field

from xdsl.dialects.builtin import ModuleOp

from ptoc.dialects.pto import PtoOp
from ptoc.passes.execute import run_compiled
from ptoc.passes.pipeline import CompiledKernel, compile_module
from ptoc.runtime import MachineConfig
from ptoc.testing import KernelBuilder, KernelSpec, random_kernel

from .common import Row, best_each, best_of

MACHINES = {"default": MachineConfig(), "tiny": MachineConfig(depth=4, capacity=16384)}


@dataclass
class Tally:
    """Bundle counts and live-set facts of compiled kernels."""

    ops: int = 0
    scalar: int = 0
    inserted: dict[str, int] = field(default_factory=dict)
    peak: int = 0
    live_bytes: int = 0
    bundle_bytes: int = 0
    max_live: int = 0

    def add(self, ck: CompiledKernel) -> None:
        r = ck.report
        assert r is not None
        self.ops += r.kinds.get("op", 0)
        self.scalar += r.scalar_blocks
        for k, n in r.kinds.items():
            if k != "op":
                self.inserted[k] = self.inserted.get(k, 0) + n
        self.peak = max(self.peak, r.peak_bytes)
        live, nbytes, one = live_bound(ck)
        self.live_bytes = max(self.live_bytes, nbytes)
        self.bundle_bytes = max(self.bundle_bytes, one)
        self.max_live = max(self.max_live, live)

    @property
    def bundles(self) -> int:
        return self.ops + self.scalar + sum(self.inserted.values())

    @property
    def tile_overhead(self) -> int:
        return sum(self.inserted.values())

    def note(self) -> str:
        n = self.bundles or 1
        parts = ", ".join(f"{k} {v}" for k, v in sorted(self.inserted.items())) or "none"
        return (
            f"{self.bundles} bundles: {self.ops} kernel, {self.scalar} scalar "
            f"({self.scalar / n:.1%}), inserted {parts} ({self.tile_overhead / n:.1%}); peak "
            f"{self.peak} B/PE vs live set {self.live_bytes} B/PE (largest bundle "
            f"{self.bundle_bytes}); <= {self.max_live} tiles live"
        )


def live_bound(ck: CompiledKernel) -> tuple[int, int, int]:
    """(most values, most bytes per PE) the schedule keeps live at once (sources still
    read later plus the results of each kernel bundle; inserted bundles excluded), and
    the most bytes one bundle's sources and results need -- the peak's lower bound when
    spilling is allowed."""
    f = next(iter(ck.module.ops))
    ops = [op for op in f.walk() if isinstance(op, PtoOp) and op.role is None]
    last: dict[object, int] = {}
    for t, op in enumerate(ops):
        for v in op.srcs:
            last[v] = t
    live: dict[object, int] = {}
    most, most_bytes, one = 0, 0, 0
    for t, op in enumerate(ops):
        for d in op.dsts:
            live[d] = d.type.nbytes  # type: ignore[attr-defined]
        most, most_bytes = max(most, len(live)), max(most_bytes, sum(live.values()))
        mine = {v: v.type.nbytes for v in (*op.srcs, *op.dsts)}  # type: ignore[attr-defined]
        one = max(one, sum(mine.values()))
        for v in list(live):
            if last.get(v, -1) <= t:
                del live[v]
    return most, most_bytes, one


def _examples() -> list[Row]:
    from tests.compiler.kernels import KERNELS

    rows = []
    for name, build in KERNELS.items():
        module, inputs = build(0)
        for mname, machine in MACHINES.items():
            ck = compile_module(module, machine)  # warm: imports, caches
            t_compile = best_of(lambda mod=module, m=machine: compile_module(mod, m), 3)
            run_compiled(ck, inputs, machine)
            t_run = best_of(lambda ck=ck, m=machine, i=inputs: run_compiled(ck, i, m), 3)
            tally = Tally()
            tally.add(ck)
            rows.append(
                Row(
                    f"compile {name} ({mname})",
                    t_compile,
                    t_run,
                    "executor run",
                    None,
                    tally.note(),
                    key=f"compile_{name}_{mname}",
                )
            )
    return rows


def _corpus(kernels: int) -> list[Row]:
    rows = []
    for mname, machine in MACHINES.items():
        total, fitting = Tally(), Tally()
        t_compile = t_run = t_fit = t_fit_run = 0.0
        for seed in range(kernels):
            spec = KernelSpec(20 + (seed * 97) % 481)
            if mname == "tiny":
                spec = KernelSpec(spec.ops, shapes=((4, 32), (8, 16), (1, 64), (2, 8)))
            module, inputs = random_kernel(seed, spec)
            t0 = time.perf_counter()
            ck = compile_module(module, machine, verify_input=False)
            t_one = time.perf_counter() - t0
            t0 = time.perf_counter()
            run_compiled(ck, inputs, machine)
            t_one_run = time.perf_counter() - t0
            t_compile += t_one
            t_run += t_one_run
            total.add(ck)
            live, nbytes, _ = live_bound(ck)
            if live <= machine.hands * machine.depth and nbytes <= machine.capacity:
                fitting.add(ck)
                t_fit += t_one
                t_fit_run += t_one_run
        rows.append(
            Row(
                f"random corpus x{kernels} ({mname})",
                t_compile,
                t_run,
                "executor runs",
                None,
                total.note(),
                key=f"random_corpus_{mname}",
            )
        )
        entries = machine.hands * machine.depth
        rows.append(
            Row(
                f"  <={entries} live & fitting: {fitting.ops} ops ({mname})",
                t_fit,
                t_fit_run,
                "executor runs",
                None,
                "goal: no inserted bundles; " + fitting.note(),
                key=f"random_corpus_fitting_{mname}",
            )
        )
    return rows


def softmax_blocks(ops: int) -> ModuleOp:
    """``ops / 7`` row softmaxes over consecutive 8-row blocks (seven ops each): a kernel
    whose size grows exactly with ``ops``."""
    blocks = max(1, ops // 7)
    kb = KernelBuilder(f"softmax_blocks{blocks}")
    x = kb.tensor("x", "FP32", (8 * blocks, 64))
    out = kb.tensor("out", "FP32", (8 * blocks, 64))
    for i in range(blocks):
        t = kb.load(x, (8, 64), (8 * i, 0))
        e = kb.exp(kb.sub(t, kb.rowmax(t)))
        kb.store(out, kb.div(e, kb.rowsum(e)), (8 * i, 0))
    return kb.finish()


def compile_bytes(module: ModuleOp) -> int:
    """The peak bytes Python allocates while compiling ``module`` (tracemalloc: the
    compile's own memory, the module it starts from excluded)."""
    import tracemalloc

    gc.collect()
    tracemalloc.start()
    try:
        compile_module(module, verify_input=False)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def stage_split(module: ModuleOp, repeat: int = 2) -> dict[str, float]:
    """Seconds per emitted bundle of each pipeline stage of ``compile_module(module)``
    (the best of ``repeat`` compiles, stage by stage)."""
    from ptoc.passes.pipeline import Compilation

    best: dict[str, float] = {}
    marks: list[tuple[str, float]] = []

    def mark(name: str, c: Compilation) -> None:
        marks.append((name, time.perf_counter()))

    for _ in range(repeat):
        marks.clear()
        t0 = time.perf_counter()
        n = compile_module(module, verify_input=False, on_stage=mark).program.bundle_count()
        for name, t in marks:
            best[name] = min(best.get(name, float("inf")), (t - t0) / n)
            t0 = t
    return best


def _scaling() -> list[Row]:
    out = []
    for label, make in (
        ("softmax blocks", softmax_blocks),
        ("random kernel", lambda n: random_kernel(1, KernelSpec(n, reach_back=False))[0]),
    ):
        modules = {n: make(n) for n in (1_000, 10_000)}
        bundles = {
            n: compile_module(m, verify_input=False).program.bundle_count()
            for n, m in modules.items()
        }
        # the two sizes take turns, so that other load on the host weighs on both
        fns = [lambda m=m: compile_module(m, verify_input=False) for m in modules.values()]
        times = dict(zip(modules, best_each(fns, 2), strict=True))
        module = modules[10_000]
        per = {n: times[n] / bundles[n] * 1e6 for n in times}
        split = ", ".join(f"{k} {v * 1e6:.0f}" for k, v in stage_split(module).items())
        note = (
            f"{bundles[1_000]} -> {bundles[10_000]} bundles; {per[1_000]:.0f} -> "
            f"{per[10_000]:.0f} us/bundle; peak {compile_bytes(module) / bundles[10_000]:.0f}"
            f" B/bundle (goal: 50 us, 2 KB); by stage, us/bundle: {split}"
        )
        out.append(Row(f"compile 10,000 ops ({label})", times[10_000], times[1_000],
                       "compile 1,000 ops", 12.0, note,
                       key="compile_scaling_" + label.replace(" ", "_")))  # fmt: skip
    return out


def _in_a_row(ops: int = 1_000, compiles: int = 40) -> Row:
    """A test suite's compiles: ``compiles`` compiles of one kernel in a row, each result
    dropped, the collector left to its own rules (whatever it collects meanwhile is
    counted), against the same number of times the best lone compile. Tens of compiles:
    an older generation's collection comes once every ten or so."""
    module = softmax_blocks(ops)
    n = compile_module(module, verify_input=False).program.bundle_count()
    lone = best_of(lambda: compile_module(module, verify_input=False), 3)
    gc.collect()
    t0 = time.perf_counter()
    for _ in range(compiles):
        compile_module(module, verify_input=False)
    total = time.perf_counter() - t0
    return Row(
        f"compile {ops:,} ops x{compiles} in a row (softmax blocks)",
        total,
        lone * compiles,
        f"{compiles}x the best lone compile",
        None,
        f"{total / compiles / n * 1e6:.0f} us/bundle with every collection the compiles "
        "cause (goal: 50 us); information",
        key="compile_in_a_row",
    )


def rows(kernels: int = 24) -> list[Row]:
    """All compiler benchmark rows (``kernels`` random kernels per machine)."""
    return [*_examples(), *_corpus(kernels), *_scaling(), _in_a_row()]


if __name__ == "__main__":
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from benchmarks.common import render

    print(render(rows()))
