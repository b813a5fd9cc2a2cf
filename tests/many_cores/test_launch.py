"""Grid launches of compiled kernels (``@ptoc.kernel(grid=N)``, ``ptoc.run(grid=,
workers=, check_races=)``) and parallel verification runs (``verify(workers=N)``)."""

from __future__ import annotations

import numpy as np
import pytest

import ptoc
from ptoc.errors import InputError, KernelError, ToleranceError
from ptoc.runtime import RaceDetected

from .kernels import double, double4, first_failing_seed, twice

X = np.arange(512, dtype=np.float32).reshape(8, 64) / 7


def test_identical_cores_writing_the_same_bytes_are_a_race_in_verify() -> None:
    """verify checks races: four cores store the same rows; the error names cores 0 and
    1, the store bundle, the output's bytes and (in notes) the kernel line of both."""
    with pytest.raises(RaceDetected) as info:
        ptoc.verify(double4)
    e = info.value
    assert str(e).startswith("race: cores 0 and 1 both write GM bytes [0x")
    assert "(2048 byte(s)): core 0 at bundle 2" in str(e)
    notes = e.__notes__
    assert len(notes) == 2 and notes[0].startswith("core 0 writes from the kernel at ")
    assert "kernels.py:9:5" in notes[0] and "pt.store(out" in notes[0]
    assert notes[1].startswith("core 1 writes from the kernel at ")


def test_the_kernel_grid_is_the_default_and_run_overrides_it() -> None:
    out = ptoc.run(double4, x=X)  # unchecked: every core writes the same values
    assert np.array_equal(out["out"], X * 2)
    assert out.status.shape == (4, 4) and out.bundles == 4 * 3
    one = ptoc.run(double4, x=X, grid=1)
    assert one.status.shape == (4,) and one.bundles == 3
    ptoc.verify(double4, grid=1)  # one core: nothing to race with
    ptoc.verify(double4, check_races=False)  # unchecked: the outputs agree
    assert repr(double4).endswith("pes=1 grid=4>")


def test_two_workers_give_the_serial_outputs() -> None:
    serial = ptoc.run(double4, x=X, grid=8)
    parallel = ptoc.run(double4, x=X, grid=8, workers=2)
    assert serial["out"].tobytes() == parallel["out"].tobytes()
    assert np.array_equal(serial.status, parallel.status)
    with pytest.raises(RaceDetected, match="cores 0 and 1 both write"):
        ptoc.run(double4, x=X, workers=2, check_races=True)


def test_grid_arguments_are_checked() -> None:
    with pytest.raises(KernelError, match="a kernel runs on 1 to 65536 cores, not grid=0"):
        ptoc.kernel(grid=0)
    with pytest.raises(InputError, match="grid is the number of cores, 1 to 65536, not -1"):
        ptoc.run(double, x=X, grid=-1)
    with pytest.raises(InputError, match="workers is a positive integer, not 0"):
        ptoc.run(double, x=X, workers=0)
    with pytest.raises(InputError, match="trace=True records one core"):
        ptoc.run(double4, x=X, trace=True)


def test_a_parallel_campaign_counts_every_run() -> None:
    out = ptoc.verify(double, runs=40, workers=2)
    assert out.campaign.runs == 40 and out.campaign.first_failure is None
    assert np.array_equal(out["out"], double.random_inputs(39)["x"] * 2)  # the last seed


def test_a_parallel_campaign_reports_the_serial_first_failing_seed() -> None:
    first = first_failing_seed(60)
    assert first is not None and first > 0
    with pytest.raises(ToleranceError) as serial:
        ptoc.verify(double, runs=60, expected=twice)
    with pytest.raises(ToleranceError) as parallel:
        ptoc.verify(double, runs=60, expected=twice, workers=2)
    assert f"(seed {first})" in str(serial.value)
    assert str(parallel.value) == str(serial.value)
    assert f"the first failing seed of the campaign is {first}" in parallel.value.__notes__[0]


SPEC = f"{__file__.rsplit('/', 1)[0]}/kernels.py"


def test_ptoc_verify_grid_and_workers_on_the_command_line(capsys) -> None:
    from ptoc.cli import main

    assert main(["verify", f"{SPEC}::double4"]) == 3  # the kernel's grid=4 races
    err = capsys.readouterr().err
    assert err.startswith("race: cores 0 and 1 both write GM bytes") and "kernels.py:9:5" in err
    assert main(["verify", f"{SPEC}::double4", "--grid", "1"]) == 0
    assert "x 4 cores" not in capsys.readouterr().out
    assert main(["verify", f"{SPEC}::double", "--runs", "20", "--workers", "2"]) == 0
    assert "bit-exact in 20 runs (seeds 0..19) on 2 local worker(s)" in capsys.readouterr().out
    first = first_failing_seed(60)
    argv = [
        "verify",
        f"{SPEC}::double",
        "--runs",
        "60",
        "--workers",
        "2",
        "--expected",
        "twice",
    ]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert f"(seed {first})" in err and f"reproduce it locally with --seed {first}" in err
    assert main(["verify", f"{SPEC}::double", "--workers", "0"]) == 2
    assert "--workers must be at least 1" in capsys.readouterr().err


def test_ptoc_run_a_grid_on_the_command_line(capsys) -> None:
    from ptoc.cli import main

    assert main(["run", f"{SPEC}::double4", "--workers", "2"]) == 0
    out = capsys.readouterr().out
    assert "ran 12 bundles" in out and "core 3: PE0:" in out
    assert main(["run", f"{SPEC}::double4", "--check-races"]) == 3


def test_a_cluster_launch_without_dask_names_the_extra(monkeypatch) -> None:
    import sys

    from ptoc.cli import main
    from ptoc.cluster import ClusterError

    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed fails
    with pytest.raises(ClusterError) as info:
        ptoc.run(double4, x=X, cluster="local")
    assert str(info.value) == (
        "a grid launch on a cluster needs Dask distributed: pip install 'ptoc[distributed]'"
    )
    assert main(["run", f"{SPEC}::double4", "--cluster", "local"]) == 2
    with pytest.raises(ClusterError, match="a cluster campaign needs Dask distributed"):
        ptoc.verify(double, runs=4, cluster="local")
