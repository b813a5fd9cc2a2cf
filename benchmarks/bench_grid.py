"""Many cores (DECISIONS D13): parallel grid runs, cluster campaigns, sparse GM.

Rows (printed by benchmarks/run_all.py side by side, never asserted; wall time, since
the parallel rows spend their time in other processes):

* a 64-core grid launch with the race detector on against the same launch without it
  (the cost of recording every core's access intervals and checking them);
* the launch run by 2 worker processes against the same launch in 1 (each core adds
  its row block with a chain of TADDs); on a host with two free cores the ratio
  approaches 0.5x, on a loaded one it shows the fork and merge overhead;
* a verification campaign of ``runs`` random inputs on a 2-worker local Dask cluster
  (started and warmed up outside the timed region) against the same runs serially;
* the executor on a sparse 4 GiB global memory (tensors beyond 1 GiB) against the dense
  64 MiB default (the dense memory is the plain numpy array it always was: this row
  shows what paging costs, the goal keeps it small).
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import numpy as np

from ptoc.backend.asm import parse
from ptoc.runtime import Grid, Machine, MachineConfig

from .common import Row, best_of

ROWS, COLS, ADDS = 16, 256, 24
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


def _launch(cores: int, workers: int, adds: int, check: bool = False) -> Grid:
    g = Grid(MachineConfig(pes=1, depth=4, gm_size=2 * cores * BLOCK + (1 << 20)), cores)
    x = np.random.default_rng(0).standard_normal((cores * ROWS, COLS)).astype(np.float32)
    g.load_gm(0x1000, x)
    for reg, v in (("a0", 0x1000), ("a1", COLS * 4), ("a3", 0x1000 + cores * BLOCK)):
        g.set_gpr(reg, v)
    g.run(parse(_grid_program(adds)), workers=workers, check_races=check)
    return g


def grid_rows(cores: int = 64, adds: int = ADDS) -> list[Row]:
    assert BLOCK == 4 << 12  # lui 4 materialises the block size
    serial = best_of(lambda: _launch(cores, 1, adds), 3)
    parallel = best_of(lambda: _launch(cores, 2, adds), 3)
    a, b = _launch(cores, 1, adds), _launch(cores, 2, adds)
    same = np.array_equal(np.asarray(a.gm), np.asarray(b.gm))
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    note = f"{'bit-identical' if same else 'DIFFERENT BYTES'}, host load {load:.1f}"
    checked = best_of(lambda: _launch(cores, 1, adds, True), 3)
    return [
        Row(f"grid {cores} cores, race detector on", checked, serial, "off", goal=2.0),
        Row(
            f"grid {cores} cores x {adds + 3} bundles, 2 workers",
            parallel,
            serial,
            "1 worker",
            note=note,
        ),
    ]


def campaign_rows(runs: int = 1000) -> list[Row]:
    try:
        import distributed
    except ImportError:
        print("skipping the cluster campaign row: pip install 'ptoc[distributed]'",
              file=sys.stderr)  # fmt: skip
        return []
    import ptoc
    from ptoc.loader import import_file

    here = Path(__file__).resolve().parents[1] / "tests" / "many_cores" / "kernels.py"
    kernel = import_file(here).double
    serial = best_of(lambda: ptoc.verify(kernel, runs=runs), 1)
    with (
        distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                 dashboard_address=":0") as cluster,
        distributed.Client(cluster) as client,
    ):  # fmt: skip
        ptoc.verify(kernel, runs=20, cluster=client)  # workers import and compile once
        t0 = time.perf_counter()
        out = ptoc.verify(kernel, runs=runs, cluster=client)
        cluster_time = time.perf_counter() - t0
    return [
        Row(
            f"campaign {runs} runs, 2-worker local cluster",
            cluster_time,
            serial,
            "serial",
            note=f"{out.campaign.runs} runs counted",
        )
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
    return grid_rows(cores, adds) + campaign_rows(runs) + sparse_rows(bundles)
