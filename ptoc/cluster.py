"""Dask distributed for ptoc (the optional extra ``pip install 'ptoc[distributed]'``):
the client of a cluster, what the scheduler knows about its workers, and grid launches
whose cores run as Dask tasks.

A grid launch on a cluster (``ptoc.run(k, grid=N, cluster=...)``) cuts its cores into
chunks of consecutive cores, as ``workers=N`` does on one host, and submits one task per
chunk: a :class:`~ptoc.runtime.grid.ChunkJob` holding the program, the chunk's core
states (their GPRs) and a :class:`~ptoc.runtime.gm.MemoryImage` of the global memory's
non-zero pages. A task rebuilds the memory, runs its cores and returns what a forked
worker returns (states, access logs, written ranges, the fault that stopped it); the
results are merged exactly as a forked run's are (:meth:`Grid.run
<ptoc.runtime.grid.Grid.run>`). A worker that dies mid-task is not fatal: the scheduler
runs the task again elsewhere (``allowed-failures``), a task it gives up on is
resubmitted (:data:`RESUBMITS` times), and the report names the lost workers and the
chunks that ran again. Every core is accounted for: a chunk that cannot be run is an
error, never a silently missing core.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .errors import Error, InputError

#: how many times a chunk (of seeds or of cores) whose workers kept dying is resubmitted
RESUBMITS = 3

EXTRA = "pip install 'ptoc[distributed]'"


class ClusterError(Error):
    """A cluster ptoc cannot use, or work on it that could not be accounted for."""


def dask(what: str) -> Any:
    """The ``distributed`` module, or ClusterError naming the extra ``what`` needs."""
    try:
        import distributed
    except ImportError:
        raise ClusterError(f"{what} needs Dask distributed: {EXTRA}") from None
    return distributed


def client_for(
    cluster: Any, what: str = "a cluster campaign"
) -> tuple[Any, Callable[[], None]]:
    """A Dask client for ``cluster``: a ``distributed.Client``, a scheduler address
    (``tcp://HOST:PORT``), or ``local`` / ``local:N`` (a local cluster of N worker
    processes, 2 by default, closed with the client); and its closer."""
    distributed = dask(what)
    if isinstance(cluster, distributed.Client):
        return cluster, lambda: None
    if not isinstance(cluster, str) or not cluster:
        raise InputError(f"cluster is a scheduler address or local[:N], not {cluster!r}")
    if cluster == "local" or cluster.startswith("local:"):
        count = cluster.partition(":")[2] or "2"
        if not count.isdigit() or int(count) < 1:
            raise InputError(f"--cluster local:N takes a worker count, not {count!r}")
        lc = distributed.LocalCluster(n_workers=int(count), threads_per_worker=1,
                                      processes=True, dashboard_address=":0")  # fmt: skip
        client = distributed.Client(lc)

        def close() -> None:
            client.close()
            lc.close()

        return client, close
    try:
        client = distributed.Client(cluster, timeout="20s")
    except OSError as e:
        raise ClusterError(f"cannot reach the Dask scheduler at {cluster}: {e}") from None
    return client, client.close


def _workers(dask_scheduler: Any) -> list[str]:
    """On the scheduler: the addresses of the workers it has now."""
    return list(dask_scheduler.workers)


def worker_set(client: Any) -> set[str]:
    """The scheduler's current workers (asked on the scheduler when it has ptoc, else
    the client's last view of it)."""
    try:
        return set(client.run_on_scheduler(_workers))
    except Exception:
        return set(client.scheduler_info()["workers"])


def _suspicious(dask_scheduler: Any, keys: list[str]) -> dict[str, int]:
    """On the scheduler: how often each task was on a worker that died."""
    tasks = dask_scheduler.tasks
    return {k: tasks[k].suspicious for k in keys if k in tasks}


def rerun(client: Any, futures: list[Any]) -> set[Any]:
    """The futures whose tasks the scheduler ran again because a worker holding them
    died (empty when the scheduler cannot run ptoc's query: the lost workers say it)."""
    try:
        counts = client.run_on_scheduler(_suspicious, keys=[f.key for f in futures])
    except Exception:
        return set()
    return {f for f in futures if counts.get(f.key, 0)}


# ---------------------------------------------------------------------- grid launches


@dataclass
class ClusterReport:
    """Where a grid launch on a cluster ran: the ``workers`` it saw, the ``chunks`` of
    cores it submitted, the workers ``lost`` meanwhile, the core ranges ``retried``
    because of them, and the ``shipped`` bytes of GM image every task carried."""

    workers: int = 0
    chunks: int = 0
    lost: list[str] = field(default_factory=list)
    retried: list[tuple[int, int]] = field(default_factory=list)
    shipped: int = 0

    def notes(self) -> list[str]:
        out = [f"worker {w} died during the launch" for w in self.lost]
        if self.retried:
            spans = ", ".join(f"cores {a}..{b - 1}" for a, b in self.retried)
            out.append(f"{len(self.retried)} chunk(s) ran again on other workers ({spans})")
        return out


class DaskRunner:
    """A :data:`~ptoc.runtime.grid.ChunkRunner` on a Dask client: one task per chunk of
    cores, each resubmitted when Dask gives up on it because its workers died; the
    results in job order. :attr:`report` says where the last launch ran."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.report = ClusterReport()

    def slots(self) -> int:
        """The worker threads of the cluster: the default number of chunks."""
        threads = self.client.nthreads()
        return max(1, sum(threads.values()))

    def __call__(self, jobs: list[Any]) -> list[Any]:
        import distributed

        from ptoc.runtime.grid import run_job

        client = self.client
        workers = worker_set(client)
        report = self.report = ClusterReport(workers=len(workers), chunks=len(jobs))
        if jobs:
            report.shipped = jobs[0].launch.gm.nbytes
        submitted: dict[Any, int] = {}

        def submit(k: int) -> Any:
            fut = client.submit(run_job, jobs[k], pure=False)
            submitted[fut] = k
            return fut

        pending = {submit(k): (k, 0) for k in range(len(jobs))}
        results: list[Any] = [None] * len(jobs)
        while pending:
            done = distributed.wait(list(pending), return_when="FIRST_COMPLETED").done
            for fut in done:
                k, tries = pending.pop(fut)
                cores = jobs[k].cores
                try:
                    results[k] = fut.result()
                except distributed.KilledWorker:
                    if tries >= RESUBMITS:
                        raise ClusterError(
                            f"cores {cores.start}..{cores.stop - 1} of the launch were "
                            f"held by workers that kept dying ({tries + 1} submissions); "
                            "no core may be lost"
                        ) from None
                    report.retried.append((cores.start, cores.stop))
                    pending[submit(k)] = (k, tries + 1)
        for fut in rerun(client, list(submitted)):
            cores = jobs[submitted[fut]].cores
            if (cores.start, cores.stop) not in report.retried:
                report.retried.append((cores.start, cores.stop))
        report.retried.sort()
        report.lost = sorted(workers - worker_set(client))
        return results
