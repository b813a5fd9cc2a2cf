"""Verification campaigns on a Dask cluster started inside the test (no external
service): the same result and count as serial, the serial first failing seed, and a
worker killed mid-campaign loses no run."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import distributed
import numpy as np
import pytest

import ptoc
from ptoc.cli import main
from ptoc.errors import ToleranceError
from ptoc.execute import verify_on

from .kernels import double, first_failing_seed, twice

HERE = Path(__file__).resolve().parent


def test_a_campaign_on_the_cluster_matches_the_serial_one(client: distributed.Client) -> None:
    serial = ptoc.verify(double, runs=200)
    seen: list[int] = []
    out = verify_on(double, {}, runs=200, cluster=client, progress=seen.append)
    assert out.campaign.runs == 200 and out.campaign.workers == 2
    assert not out.campaign.lost and not out.campaign.retried
    assert out["out"].tobytes() == serial["out"].tobytes()
    assert seen == sorted(seen) and seen[-1] == 200  # one bar over every worker


def test_a_mismatch_on_the_cluster_reports_the_first_failing_seed(
    client: distributed.Client,
) -> None:
    first = first_failing_seed(100)
    with pytest.raises(ToleranceError) as serial:
        ptoc.verify(double, runs=100, expected=twice)
    with pytest.raises(ToleranceError) as cluster:
        ptoc.verify(double, runs=100, expected=twice, cluster=client)
    assert str(cluster.value) == str(serial.value) and f"(seed {first})" in str(serial.value)
    assert f"reproduce it locally with --seed {first}" in cluster.value.__notes__[0]


def test_ptoc_verify_on_a_cluster_address(client: distributed.Client, capsys) -> None:
    address = client.scheduler.address
    spec = f"{HERE / 'kernels.py'}::double"
    assert main(["verify", spec, "--runs", "30", "--cluster", address]) == 0
    out = capsys.readouterr().out
    assert f"bit-exact in 30 runs (seeds 0..29) on 2 cluster {address} worker(s)" in out
    code = main(["verify", spec, "--runs", "100", "--cluster", address, "--expected", "twice"])
    err = capsys.readouterr().err
    first = first_failing_seed(100)
    assert code == 1 and f"(seed {first})" in err and f"--seed {first}" in err
    assert main(["verify", spec, "--seed", str(first), "--expected", "twice"]) == 1


def test_a_worker_killed_mid_campaign_loses_no_run(client: distributed.Client) -> None:
    """SIGKILL one of the two workers after the first chunk reports: the chunks it held
    run again elsewhere, the report names it, and every one of the 200 runs is counted.
    (The cluster's nanny restarts the worker afterwards: ``client`` waits for it.)"""
    pids = client.run(os.getpid)
    killed: list[str] = []

    def progress(done: int) -> None:
        if not killed:  # the worker holding the most chunks right now
            held = client.processing()
            victim = max(sorted(pids), key=lambda w: len(held.get(w, ())))
            os.kill(pids[victim], signal.SIGKILL)
            killed.append(victim)

    out = verify_on(double, {}, runs=200, cluster=client, progress=progress)
    report = out.campaign
    assert killed and report.runs == 200
    victim = killed[0]
    assert report.lost == [victim]
    assert report.retried, report
    assert np.array_equal(out["out"], double.random_inputs(199)["x"] * 2)
    assert f"worker {victim} died during the campaign" in report.notes()
