"""One local Dask cluster (two worker processes) for every cluster test of this folder:
a cluster start costs seconds, so the modules share it; ``client`` waits until both
workers are up again (a test that kills one leaves the nanny restarting it)."""

from __future__ import annotations

from collections.abc import Iterator

import distributed
import pytest


@pytest.fixture(scope="package")
def dask_client() -> Iterator[distributed.Client]:
    with (
        distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                 dashboard_address=":0") as cluster,
        distributed.Client(cluster) as c,
    ):  # fmt: skip
        yield c


@pytest.fixture
def client(dask_client: distributed.Client) -> distributed.Client:
    dask_client.wait_for_workers(2, timeout=120)  # a loaded host starts them slowly
    return dask_client
