"""Many cores (DECISIONS D13): parallel grid runs, cluster campaigns, sparse GM.

Rows (printed by benchmarks/run_all.py side by side, never asserted; wall time, since
the parallel rows spend their time in other processes):

* a 64-core grid launch with the race detector on against the same launch without it
  (the cost of recording every core's access intervals and checking them; CPU time, the
  two launches taking turns);
* the launch run by 2 worker processes against the same launch in 1 (each core adds
  its 16x256 row block with a chain of ``adds`` TADDs, tens of milliseconds a core, so
  that forking and merging do not dominate); on a host with two free cores the ratio
  approaches 0.5x, on a loaded one it shows the fork and merge overhead;
* the same launch with its cores as tasks on a 2-worker local Dask cluster (started
  and warmed up outside the timed region) against 1 worker; the note says how many
  bytes of GM image every task carried and what building that image cost;
* a verification campaign of ``runs`` random inputs of the softmax example on the
  2-worker local cluster against the same runs serially;
* the executor on a sparse 4 GiB global memory (tensors beyond 1 GiB) against the dense
  64 MiB default (the dense memory is the plain numpy array it always was: this row
  shows what paging costs, the goal keeps it small).
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from ptoc.backend.asm import parse
from ptoc.runtime import Grid, Machine, MachineConfig

from .common import Row, best_each, best_of

ROWS, COLS, ADDS = 16, 256, 120
BLOCK = ROWS * COLS * 4


def _grid_program(adds: int = ADDS) -> str:
    load = (
        f"BSTART.TLOAD FP32\nB.DIM zero, {COLS}, ->LB0\nB.DIM zero, {ROWS}, ->LB1\n"
        "B.IOR {base}, a1\nB.IOT mask=1000, last, ->T<16KB>\nBSTOP\n"
    )
    add = (
        f"BSTART.VEC TADD, FP32\nB.DIM zero, {COLS}, ->LB0\nB.DIM zero, {ROWS}, ->LB1\n"
        "B.IOT T#1, T#2, mask=1000, last, ->T<16KB>\nBSTOP\n"
    )
    return (
        "BSTART.STD FALL\nlui 4, ->s0\nmul x2, s0, ->s1\nadd a0, s1, ->a4\n"
        "add a3, s1, ->a6\nBSTOP\n"
        + load.format(base="a4")
        + load.format(base="a4")
        + add * adds
        + "BSTART.TSTORE FP32\nB.IOR a6, a1\nB.IOT T#1, mask=1000, last\nBSTOP\n"
    )


def _grid(cores: int) -> Grid:
    g = Grid(MachineConfig(pes=1, depth=4, gm_size=2 * cores * BLOCK + (1 << 20)), cores)
    x = np.random.default_rng(0).standard_normal((cores * ROWS, COLS)).astype(np.float32)
    g.load_gm(0x1000, x)
    for reg, v in (("a0", 0x1000), ("a1", COLS * 4), ("a3", 0x1000 + cores * BLOCK)):
        g.set_gpr(reg, v)
    return g


def _launch(
    cores: int, workers: int, adds: int, check: bool = False, runner: Any = None
) -> Grid:
    g = _grid(cores)
    g.run(parse(_grid_program(adds)), workers=workers, check_races=check, runner=runner)
    return g


def _host_load() -> str:
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return f"host load {load:.1f}"


def _same(a: Grid, b: Grid) -> str:
    same = np.array_equal(np.asarray(a.gm), np.asarray(b.gm))
    return "bit-identical" if same else "DIFFERENT BYTES"


def grid_rows(cores: int = 64, adds: int = ADDS) -> list[Row]:
    assert BLOCK == 4 << 12  # lui 4 materialises the block size
    serial = best_of(lambda: _launch(cores, 1, adds), 3)
    parallel = best_of(lambda: _launch(cores, 2, adds), 3)
    note = f"{_same(_launch(cores, 1, adds), _launch(cores, 2, adds))}, {_host_load()}"
    # (one process: CPU time, the two launches taking turns, so that other load on the
    # host weighs on both)
    checked, unchecked = best_each(
        (lambda: _launch(cores, 1, adds, True), lambda: _launch(cores, 1, adds)),
        5,
        time.process_time,
    )
    return [
        Row(f"grid {cores} cores, race detector on", checked, unchecked, "off", goal=2.0),
        Row(
            f"grid {cores} cores x {adds + 3} bundles, 2 workers",
            parallel,
            serial,
            "1 worker",
            note=note,
        ),
    ]


def _local_cluster() -> Any:
    import distributed

    return distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                    dashboard_address=":0")  # fmt: skip


def cluster_rows(cores: int = 64, adds: int = ADDS, runs: int = 1000) -> list[Row]:
    """The grid launch and a campaign on a 2-worker local Dask cluster, against 1
    worker and serial (the cluster starts and warms up outside the timed regions)."""
    try:
        import distributed
    except ImportError:
        print("skipping the cluster rows: pip install 'ptoc[distributed]'", file=sys.stderr)
        return []
    import ptoc
    from ptoc.cluster import DaskRunner
    from ptoc.loader import import_file
    from ptoc.runtime.gm import MemoryImage

    softmax = import_file(Path(__file__).resolve().parents[1] / "examples" / "softmax.py")
    kernel = softmax.softmax
    serial_grid = best_of(lambda: _launch(cores, 1, adds), 3)
    serial_runs = best_of(lambda: ptoc.verify(kernel, runs=runs), 1)
    gm = _grid(cores).gm
    image = best_of(lambda: MemoryImage.of(gm), 3)
    with _local_cluster() as cluster, distributed.Client(cluster) as client:
        client.wait_for_workers(2)
        runner = DaskRunner(client)
        _launch(cores, 2, 1, runner=runner)  # workers import ptoc once
        on_cluster = best_of(lambda: _launch(cores, 2, adds, runner=runner), 3)
        same = _same(_launch(cores, 1, adds), _launch(cores, 2, adds, runner=runner))
        shipped = runner.report.shipped
        ptoc.verify(kernel, runs=20, cluster=client)  # workers compile the kernel once
        t0 = time.perf_counter()
        out = ptoc.verify(kernel, runs=runs, cluster=client)
        campaign = time.perf_counter() - t0
    return [
        Row(
            f"grid {cores} cores x {adds + 3} bundles, 2-worker local cluster",
            on_cluster,
            serial_grid,
            "1 worker",
            note=f"{same}, {shipped >> 10} KiB of GM pages a task (imaged in "
            f"{image * 1e3:.1f} ms), {_host_load()}",
        ),
        Row(
            f"campaign {runs} runs of softmax, 2-worker local cluster",
            campaign,
            serial_runs,
            "serial",
            note=f"{out.campaign.runs} runs counted, {_host_load()}",
        ),
    ]


def sparse_rows(bundles: int = 200) -> list[Row]:
    text = (
        "BSTART.TLOAD FP32\nB.DIM zero, 64, ->LB0\nB.DIM zero, 8, ->LB1\nB.IOR a0, a1\n"
        "B.IOT mask=1111, last, ->T<2KB>\nBSTOP\n"
        "BSTART.TSTORE FP32\nB.IOR a2, a1\nB.IOT T#1, mask=1111, last\nBSTOP\n"
    ) * bundles
    program = parse(text)

    def machine(size: int, base: int) -> Machine:
        m = Machine(MachineConfig(depth=4, gm_size=size))
        m.load_gm(base, np.ones((8, 64), np.float32))
        for reg, v in (("a0", base), ("a1", 256), ("a2", base + 0x8000)):
            m.set_gpr(reg, v)
        m.run(program)  # warm the plan cache
        return m

    dense, sparse = machine(64 << 20, 0x1000), machine(4 << 30, (1 << 30) + 0x1000)
    t_dense = best_of(lambda: dense.run(program), 5)
    t_sparse = best_of(lambda: sparse.run(program), 5)
    return [
        Row(
            f"TLOAD+TSTORE x{bundles}, sparse 4 GiB GM",
            t_sparse,
            t_dense,
            "dense 64 MiB GM",
            goal=1.5,
        )
    ]


def rows(cores: int = 64, runs: int = 1000, adds: int = ADDS, bundles: int = 200) -> list[Row]:
    return grid_rows(cores, adds) + cluster_rows(cores, adds, runs) + sparse_rows(bundles)
