"""Grid launches whose cores run as tasks on a Dask cluster started inside the test:
the serial run's bytes, states, races and faults (the GM a fault leaves included), the
command line, and a worker killed mid-launch losing no core."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path
from typing import Any

import distributed
import numpy as np
import pytest
from runtime.test_grid import FAULT_CASES, faulting_launch
from runtime.util import prog, tload, tstore

import ptoc
from ptoc.backend.isa import DataType
from ptoc.cli import main
from ptoc.cluster import DaskRunner
from ptoc.runtime import Grid, MachineConfig, RaceDetected

from .kernels import beyond, double4
from .test_block_idx import _x, row_blocks

HERE = Path(__file__).resolve().parent


def test_a_grid_on_the_cluster_gives_the_serial_outputs(client: distributed.Client) -> None:
    x = _x(256, 32)
    program = ptoc.compile(row_blocks)
    serial = ptoc.run(program, x=x)
    for workers, chunks, check in ((1, 2, False), (5, 5, True)):  # default: per thread
        got = ptoc.run(program, x=x, cluster=client, workers=workers, check_races=check)
        assert got["out"].tobytes() == serial["out"].tobytes()
        assert np.array_equal(got.status, serial.status) and got.bundles == serial.bundles
        report = got.cluster
        assert (report.workers, report.chunks) == (2, chunks)
        assert not report.lost and not report.retried
        # what every task carried: the placed tensors' pages, not the 64 MiB memory
        assert 0 < report.shipped <= 4 * 65536


def test_a_race_on_the_cluster_is_the_serial_race(client: distributed.Client) -> None:
    X = np.arange(512, dtype=np.float32).reshape(8, 64)
    with pytest.raises(RaceDetected) as serial:
        ptoc.run(double4, x=X, check_races=True)
    with pytest.raises(RaceDetected) as cluster:
        ptoc.run(double4, x=X, check_races=True, cluster=client, workers=3)
    assert str(cluster.value) == str(serial.value)
    assert cluster.value.__notes__ == serial.value.__notes__


@pytest.mark.parametrize(("text", "config", "regs", "core", "left"), FAULT_CASES)
def test_a_fault_on_the_cluster_leaves_the_serial_memory_and_states(
    client: distributed.Client, text: str, config: MachineConfig, regs: dict[str, int],
    core: int, left: Any,
) -> None:  # fmt: skip
    rule, gm, states = faulting_launch(text, config, regs)
    assert left(gm)
    for workers in (2, 3):  # the faulting core in the first chunk, in a later one
        got = faulting_launch(text, config, regs, workers=workers, runner=DaskRunner(client))
        assert got[0] == rule and np.array_equal(got[1], gm)
        assert got[2] == states


def test_a_kernel_fault_on_the_cluster_names_the_serial_core_and_line(
    client: distributed.Client,
) -> None:
    inputs = beyond.random_inputs(0)
    with pytest.raises(ptoc.MachineFault) as serial:
        ptoc.run(beyond, **inputs)
    with pytest.raises(ptoc.MachineFault) as cluster:
        ptoc.run(beyond, **inputs, cluster=client, workers=3)
    assert str(serial.value).startswith("Fault_InstructionPC at core 4, ")
    assert "the run-time row start 32 moves" in str(serial.value)  # core 4's own state
    assert str(cluster.value) == str(serial.value)
    assert cluster.value.__notes__ == serial.value.__notes__


def test_ptoc_run_on_a_cluster_address(client: distributed.Client, capsys) -> None:
    spec = f"{HERE / 'test_block_idx.py'}::row_blocks"
    assert main(["run", spec, "--grid", "8"]) == 0
    serial = capsys.readouterr().out
    address = client.scheduler.address
    assert main(["run", spec, "--grid", "8", "--cluster", address]) == 0
    out = capsys.readouterr()
    assert out.out == serial and "core 7: PE0:" in serial
    assert f"ran the 8 cores as 2 chunk(s) on 2 worker(s) of cluster {address}" in out.err
    assert main(["run", f"{HERE / 'kernels.py'}::beyond", "--cluster", address]) == 3
    assert "Fault_InstructionPC at core 4, " in capsys.readouterr().err
    assert main(["run", spec, "--cluster", address, "--workers", "0"]) == 2


ROWS, COLS, STEPS = 16, 256, 4000  # enough work that a chunk runs for about a second


def _heavy_launch(runner: DaskRunner | None = None, cores: int = 16) -> Grid:
    """Each core loads its 16x256 block twice, takes the maximum of the last two tiles
    STEPS times and stores the last one."""
    fp, block = DataType.FP32, ROWS * COLS * 4
    step = (
        f"BSTART.VEC TMAX, FP32\nB.DIM zero, {COLS}, ->LB0\nB.DIM zero, {ROWS}, ->LB1\n"
        "B.IOT T#1, T#2, mask=1000, last, ->T<16KB>\nBSTOP\n"
    )
    text = (
        f"BSTART.STD FALL\nlui {block >> 12}, ->s0\nmul x2, s0, ->s1\nadd a0, s1, ->a4\n"
        "add a3, s1, ->a6\nBSTOP\n"
        + tload(fp, ROWS, COLS, base="a4", stride="a1", mask="1000") * 2
        + step * STEPS
        + tstore(fp, base="a6", stride="a1", mask="1000")
    )
    g = Grid(MachineConfig(pes=1, depth=4, gm_size=2 * cores * block + (1 << 20)), cores)
    g.load_gm(0x1000, np.random.default_rng(0).standard_normal((cores * ROWS, COLS),
                                                               np.float32))  # fmt: skip
    for reg, v in (("a0", 0x1000), ("a1", COLS * 4), ("a3", 0x1000 + cores * block)):
        g.set_gpr(reg, v)
    g.run(prog(text), workers=2, runner=runner)
    return g


def test_a_worker_killed_mid_launch_loses_no_core(client: distributed.Client) -> None:
    """SIGKILL the worker of one chunk while it runs: the scheduler runs the chunk again
    on the other worker, the report names the dead worker and the chunk's cores, and the
    memory is the serial run's."""
    serial = np.asarray(_heavy_launch().gm)
    pids = client.run(os.getpid)
    runner = DaskRunner(client)
    result: list[Any] = []
    thread = threading.Thread(target=lambda: result.append(_heavy_launch(runner)))
    thread.start()
    victim = None
    deadline = time.monotonic() + 120
    while victim is None and time.monotonic() < deadline:
        busy = [w for w, tasks in client.processing().items() if tasks and w in pids]
        if busy:
            time.sleep(0.1)  # let the task start on the worker
            victim = sorted(busy)[0]
            os.kill(pids[victim], signal.SIGKILL)
        time.sleep(0.02)
    thread.join(timeout=300)
    assert victim is not None and result, "the launch did not finish"
    assert np.array_equal(np.asarray(result[0].gm), serial)
    report = runner.report
    assert report.lost == [victim] and report.chunks == 2
    assert report.retried and set(report.retried) <= {(0, 8), (8, 16)}
    assert f"worker {victim} died during the launch" in report.notes()
