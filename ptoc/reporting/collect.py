"""What a report shows, gathered while a kernel compiles.

The compiler's front end (:func:`ptoc.driver.compile_kernel`) calls an observer after
every stage while the module is still that stage's IR; :class:`Collector` keeps the text
of each stage and, after ``allocate``, the dataflow graph of the scheduled kernel bundles
(:func:`ptoc.passes.allocate.schedule.build_dataflow`, the graph the allocator schedules)
as a graph of op and tile nodes.
"""

from __future__ import annotations

import functools
import io
from dataclasses import dataclass, field
from typing import Any

from ptoc.backend.isa import OPS
from ptoc.backend.isa import row as optable_row
from ptoc.backend.program import Block, TileStart

from ..program import Program
from ..source import SourceLoc
from .timeline import Timeline, lower_bound, replay

#: a stage's IR is printed whole up to this many ops in the kernel body; beyond, the
#: first this many (printing is the slow part of a report of a large kernel)
STAGE_OPS = 1500


@dataclass(frozen=True)
class StageIR:
    """The IR text after one stage; ``shown``/``total``: kernel-body ops printed / in it."""

    name: str
    text: str
    shown: int
    total: int

    @property
    def truncated(self) -> bool:
        return self.shown < self.total


@dataclass
class ReportData:
    """Everything one report shows.

    ``graph``: op nodes ``("op", k)`` for the ``k``-th scheduled kernel bundle and tile
    nodes ``("tile", j)`` (see :func:`ptoc.report.timeline.lower_bound`); op nodes carry
    ``step`` (their block in the timeline), ``mnemonic``, ``engine``, ``executor`` and
    ``source``; ``order`` lists the op nodes in schedule order. None when the program
    was not compiled from a kernel.
    """

    program: Program
    timeline: Timeline
    #: the program's blocks (``Program.blocks()``), one per timeline step and more
    blocks: list[Block]
    stages: list[StageIR] = field(default_factory=list)
    graph: Any = None
    order: list[Any] = field(default_factory=list)
    #: the liveness lower bound of the peak (without spills)
    bound: int = 0
    title: str = ""
    #: kernel source lines by file (for showing the kernel next to its bundles)
    notes: list[str] = field(default_factory=list)


def ir_text(module: Any, limit: int = STAGE_OPS) -> StageIR:
    """The module's text, or (over ``limit`` kernel-body ops) the first ``limit`` ops of
    the kernel body, printed with one printer so that value names stay consistent."""
    from xdsl.printer import Printer

    from ptoc.dialects.reference import kernel_func

    try:
        f = kernel_func(module)
    except Exception:  # not one kernel: print what is there
        return StageIR("", str(module), 0, 0)
    ops = list(f.body.block.ops)
    if len(ops) <= limit:
        return StageIR("", str(module), len(ops), len(ops))
    out = io.StringIO()
    p = Printer(stream=out)
    out.write(f"// @{f.sym_name.data}: the first {limit} of {len(ops)} ops\n")
    for op in ops[:limit]:
        p.print_op(op)
        out.write("\n")
    return StageIR("", out.getvalue(), limit, len(ops))


class Collector:
    """The observer of one compilation: stage texts and the scheduled dataflow graph."""

    def __init__(self, stage_ops: int = STAGE_OPS) -> None:
        self.stage_ops = stage_ops
        self.stages: list[StageIR] = []
        self.graph: Any = None
        self.order: list[Any] = []

    def __call__(self, stage: str, module: Any, compilation: Any) -> None:
        if stage != "emit":  # emit does not change the module; its result is the program
            ir = ir_text(module, self.stage_ops)
            self.stages.append(StageIR(stage, ir.text, ir.shown, ir.total))
        if stage == "allocate":
            self.graph, self.order = dataflow_graph(compilation.kernel)


def dataflow_graph(f: Any) -> tuple[Any, list[Any]]:
    """The graph of op and tile nodes of an allocated kernel ``f`` (its bundles in schedule
    order; inserted bundles left out), from the allocator's dataflow graph of them
    (:func:`~ptoc.passes.allocate.schedule.value_graph`); op nodes get the ordinal of
    their tile bundle in the program (``bundle``), ``engine`` and ``executor``."""
    from ptoc.dialects.pto import PtoOp
    from ptoc.passes.allocate.schedule import build_dataflow, value_graph

    bundles = [op for op in f.walk() if isinstance(op, PtoOp)]  # loop bodies in place
    ordinal = {op: k for k, op in enumerate(bundles)}  # k-th tile bundle of the program
    df = build_dataflow([op for op in bundles if op.role_name is None])
    g = value_graph(df)
    order = [("op", i) for i in range(len(df.ops))]
    for i, op in enumerate(df.ops):
        d = g.nodes[("op", i)]
        d["bundle"] = ordinal[op]
        d["engine"] = OPS[op.MNEMONIC].engine
        d["executor"] = str(optable_row(op.MNEMONIC).executor or "")
    return g, order


def build(
    program: Program,
    collector: Collector | None = None,
    title: str = "",
) -> ReportData:
    """The report data of a compiled ``program`` (and what ``collector`` saw compiling it)."""
    from ptoc.backend.target import MachineConfig

    config = program.machine or MachineConfig()
    kinds = {i: getattr(intent, "kind", "op") for i, intent in program.intents.items()}
    blocks = program.program.blocks()
    tl = replay(blocks, config.hands, config.depth, config.capacity, config.pes, kinds)
    data = ReportData(program, tl, blocks, title=title or (program.name or "program"))
    if collector is None:
        return data
    data.stages = list(collector.stages)
    data.graph, data.order = collector.graph, collector.order
    if data.graph is None:
        return data
    # the k-th tile bundle of the program is at this step of the timeline
    tile_steps = [
        s
        for s, c in enumerate(tl.commands)
        if isinstance(program.program.commands[c], TileStart)
    ]
    for n in data.order:
        d = data.graph.nodes[n]
        step = tile_steps[d["bundle"]]
        d["step"] = step
        d["source"] = program.sources.get(tl.commands[step])
    data.bound = lower_bound(data.graph, data.order)
    return data


def source_text(loc: SourceLoc | None) -> str:
    """``file:line: code`` of a kernel line ('' for an inserted bundle)."""
    return "" if loc is None else _line(loc.file, loc.line)


@functools.cache
def _line(file: str, line: int) -> str:
    import linecache
    from pathlib import Path

    return f"{Path(file).name}:{line}: {linecache.getline(file, line).strip()}"
