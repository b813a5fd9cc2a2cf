"""``ptoc report`` on a large kernel: the time to write the report against the compile
time (printed by benchmarks/run_all.py, never asserted).

The kernel is ``blocks`` row softmaxes over consecutive 8-row blocks (seven bundles
each; 1,430 blocks make ~10,000 bundles), written as a ``@ptoc.kernel`` with a Python
loop so that every bundle has its kernel line. Rows:

* ``report write``: collecting, drawing and writing the HTML of an already compiled
  kernel (goal: a few seconds at 10,000 bundles);
* ``report (compile+write)``: ``ptoc.report`` as a whole, which compiles the kernel
  while keeping every stage's IR (printing the IR is the part compile does not do).
"""

import tempfile
import time
from pathlib import Path
from typing import Any

import ptoc
import ptoc.lang as pt
from ptoc.reporting import build, compile_observed, render

from .common import Row


def softmax_blocks(blocks: int) -> Any:
    """A kernel of ``blocks`` row softmaxes (7 bundles each)."""
    rows = 8 * blocks

    @ptoc.kernel
    def softmax_blocks(
        x: ptoc.Tensor[ptoc.fp32, rows, 64], out: ptoc.Tensor[ptoc.fp32, rows, 64]
    ) -> None:
        for i in range(blocks):
            t = pt.load(x, rows=(8 * i, 8))
            t = t - pt.row_max(t)
            e = pt.exp(t)
            pt.store(out, e / pt.row_sum(e), rows=8 * i)

    return softmax_blocks


def rows(blocks: int = 1430) -> list[Row]:
    k = softmax_blocks(blocks)
    t0 = time.perf_counter()
    prog = ptoc.compile(k)
    t_compile = time.perf_counter() - t0
    with tempfile.TemporaryDirectory() as d:
        t0 = time.perf_counter()
        observed, collector = compile_observed(k)
        t_observed = time.perf_counter() - t0
        t0 = time.perf_counter()
        data = build(observed, collector)
        html = render(data)
        (Path(d) / "r.html").write_text(html)
        t_write = time.perf_counter() - t0
    n = prog.stats().bundles
    cols = min(data.timeline.steps, 1200)
    note = (
        f"{n} bundles, {data.timeline.steps} blocks in {cols} columns, "
        f"{len(html) / 1e6:.1f} MB of HTML"
    )
    return [
        Row(f"report write, {n} bundles", t_write, t_compile, "compile", None, note),
        Row(
            f"report (compile+write), {n} bundles",
            t_observed + t_write,
            t_compile,
            "compile",
            None,
            "compile keeping every stage's IR, then write",
        ),
    ]
