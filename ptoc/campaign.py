"""Verification campaigns in parallel: many random-input runs of one kernel, in local
worker processes (``workers=N``) or on a Dask cluster (``cluster=ADDRESS``).

The seeds ``seed .. seed + runs - 1`` are cut into chunks; each chunk verifies its seeds
in order and stops at its first failure. The campaign aggregates the runs every worker
finished into one progress count, and a failure anywhere cancels every chunk of later
seeds, waits for the chunks of earlier ones, and reports the *first* failing seed -- the
one a serial run would have stopped at -- by running it again locally, so the error is
the same one ``ptoc verify --seed S`` gives. A worker that dies is not fatal: Dask runs
the chunks it held again on the other workers (the scheduler's ``allowed-failures``), the
campaign resubmits a chunk Dask gave up on, and the report names the lost workers and
the retried chunks. Every seed is accounted for: a campaign whose finished runs do not
add up to ``runs`` raises instead of passing.

Why Dask distributed (docs/many-cores.md): a pure-Python install of a few MB with no
native services, a ``LocalCluster`` that starts in about a second inside a test, and
task-level retry when a worker dies, which is exactly a campaign's unit of work.
"""

from __future__ import annotations

import concurrent.futures as cf
import hashlib
import multiprocessing
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .cluster import RESUBMITS, ClusterError, client_for, dask, rerun, worker_set
from .errors import Error, InputError


class CampaignError(ClusterError):
    """A campaign that could not account for every run."""


@dataclass(frozen=True)
class ChunkResult:
    """What one chunk did: seeds [start, stop), how many passed before the first failure
    (``failed``: that seed, or None), and the worker that ran it."""

    start: int
    stop: int
    done: int
    failed: int | None
    worker: str = ""


@dataclass
class CampaignReport:
    """The outcome of a campaign: ``runs`` verified, the ``workers`` it used, workers
    ``lost`` while it ran and the chunks ``retried`` (seed ranges) because of them."""

    runs: int = 0
    workers: int = 0
    lost: list[str] = field(default_factory=list)
    retried: list[tuple[int, int]] = field(default_factory=list)
    first_failure: int | None = None

    def notes(self) -> list[str]:
        out = []
        for w in self.lost:
            out.append(f"worker {w} died during the campaign")
        if self.retried:
            spans = ", ".join(f"seeds {a}..{b - 1}" for a, b in self.retried)
            out.append(
                f"{len(self.retried)} chunk(s) were run again on other workers ({spans})"
            )
        return out


@dataclass(frozen=True)
class Job:
    """What every chunk needs besides its seeds."""

    expected: Any = None
    rtol: float | None = None
    atol: float | None = None
    grid: int | None = None
    check_races: bool = True


def check_seeds(program: Any, job: Job, start: int, stop: int) -> tuple[int, int | None]:
    """Verify seeds [start, stop) in order: (runs that passed, the first failing seed)."""
    from .execute import verify_on

    for s in range(start, stop):
        try:
            verify_on(program, {}, runs=1, seed=s, expected=job.expected, rtol=job.rtol,
                      atol=job.atol, grid=job.grid, check_races=job.check_races)  # fmt: skip
        except Error:
            return s - start, s
    return stop - start, None


def chunks(seed: int, runs: int, workers: int) -> list[tuple[int, int]]:
    """Seed ranges: about eight chunks per worker (load balance, little overhead)."""
    size = max(1, min(64, runs // max(1, 8 * workers)))
    return [(a, min(a + size, seed + runs)) for a in range(seed, seed + runs, size)]


# ---------------------------------------------------------------------- the driver


def drive(
    spans: list[tuple[int, int]],
    submit: Callable[[int, int], Any],
    wait_first: Callable[[set[Any]], set[Any]],
    lost: Callable[[BaseException], bool],
    progress: Callable[[int], None] | None,
    report: CampaignReport,
) -> None:
    """Run the chunks to the end or to the first failing seed (``report.first_failure``)."""
    pending: dict[Any, tuple[int, int, int]] = {}
    for a, b in spans:
        pending[submit(a, b)] = (a, b, 0)
    done = 0
    total = sum(b - a for a, b in spans)
    first: int | None = None
    passed: set[tuple[int, int]] = set()
    while pending:
        for fut in wait_first(set(pending)):
            if fut not in pending:  # dropped by an earlier failure of this same batch
                continue
            a, b, tries = pending.pop(fut)
            if fut.cancelled():
                continue
            try:
                r: ChunkResult = fut.result()
            except BaseException as e:
                if not lost(e) or tries >= RESUBMITS:
                    raise
                report.retried.append((a, b))
                pending[submit(a, b)] = (a, b, tries + 1)
                continue
            done += r.done
            if r.failed is None:
                passed.add((a, b))
            elif first is None or r.failed < first:
                first = r.failed
                for other, (oa, _, _) in list(pending.items()):
                    if oa > first:  # only later seeds: the first failure stays first
                        other.cancel()
                        del pending[other]  # its seeds no longer matter
            if progress is not None:
                progress(done)
    report.first_failure = first
    report.runs = done
    if first is None and (done != total or len(passed) != len(spans)):
        raise CampaignError(
            f"the campaign accounted for {done} of {total} runs; no run may be lost"
        )


def run_campaign(
    program: Any,
    job: Job,
    seed: int,
    runs: int,
    *,
    workers: int = 1,
    cluster: Any = None,
    progress: Callable[[int], None] | None = None,
) -> CampaignReport:
    """Verify seeds ``seed .. seed + runs - 1`` of a compiled kernel in parallel; the
    report's ``first_failure`` is the first failing seed (None: every run passed)."""
    if cluster is not None:
        return _on_cluster(program, job, seed, runs, cluster, progress)
    report = CampaignReport(workers=workers)
    if "fork" not in multiprocessing.get_all_start_methods():  # pragma: no cover
        n, failed = check_seeds(program, job, seed, seed + runs)
        report.runs, report.first_failure = n, failed
        return report
    global _FORKED
    _FORKED = (program, job)
    try:
        ctx = multiprocessing.get_context("fork")
        with cf.ProcessPoolExecutor(workers, mp_context=ctx) as pool:

            def submit(a: int, b: int) -> Any:
                return pool.submit(_local_chunk, a, b)

            def wait_first(fs: set[Any]) -> set[Any]:
                return cf.wait(fs, return_when=cf.FIRST_COMPLETED)[0]

            def lost(e: BaseException) -> bool:
                return False  # a local worker that dies breaks the pool: report it

            drive(chunks(seed, runs, workers), submit, wait_first, lost, progress, report)
    finally:
        _FORKED = None
    return report


#: the program and job a forked local worker verifies
_FORKED: tuple[Any, Job] | None = None


def _local_chunk(start: int, stop: int) -> ChunkResult:
    assert _FORKED is not None
    program, job = _FORKED
    n, failed = check_seeds(program, job, start, stop)
    return ChunkResult(start, stop, n, failed, f"pid {os.getpid()}")


# ---------------------------------------------------------------------- Dask


@dataclass(frozen=True)
class KernelRef:
    """A kernel as a worker on another machine can load it: its file's text (written
    to a temporary file there unless the same file exists), the module attribute that
    holds it, and the machine to compile for."""

    path: str
    text: str
    attr: str
    machine: str

    @classmethod
    def of(cls, program: Any) -> KernelRef:
        k = program.kernel
        attr = next((n for n, v in k.fn.__globals__.items() if v is k), None)
        if attr is None or not Path(k.file).is_file():
            raise InputError(
                f"a cluster campaign loads {k.name} from its file on every worker: define "
                "the kernel at the top level of a Python file"
            )
        return cls(k.file, Path(k.file).read_text(), attr, program.machine.text())


@dataclass(frozen=True)
class ExpectedRef:
    """``expected=`` of a cluster campaign: a function of the kernel's file, by name."""

    attr: str

    @classmethod
    def of(cls, program: Any, fn: Any) -> ExpectedRef:
        scope = program.kernel.fn.__globals__
        attr = next((n for n, v in scope.items() if v is fn), None)
        if attr is None:
            raise InputError(
                "a cluster campaign loads the expected function from the kernel's file on "
                "every worker: define it at the top level of that file"
            )
        return cls(attr)


_LOADED: dict[tuple[str, str, str, str], tuple[Any, Any]] = {}


def _load(ref: KernelRef) -> tuple[Any, Any]:
    """The compiled kernel and its module on a worker (compiled once per process)."""
    digest = hashlib.sha256(ref.text.encode()).hexdigest()
    key = (ref.path, digest, ref.attr, ref.machine)
    hit = _LOADED.get(key)
    if hit is not None:
        return hit
    from ptoc.backend.target import MachineConfig

    from .driver import compile_kernel
    from .loader import import_file

    path = Path(ref.path)
    if not (path.is_file() and path.read_text() == ref.text):
        folder = Path(tempfile.mkdtemp(prefix="ptoc-campaign-"))
        path = folder / Path(ref.path).name
        path.write_text(ref.text)
    module = import_file(path)
    program = compile_kernel(getattr(module, ref.attr), MachineConfig.parse(ref.machine))
    _LOADED[key] = (program, module)
    return program, module


def _cluster_chunk(ref: KernelRef, job: Job, start: int, stop: int) -> ChunkResult:
    """A Dask task: verify seeds [start, stop) on whichever worker runs it."""
    from distributed import get_worker

    program, module = _load(ref)
    if isinstance(job.expected, ExpectedRef):
        job = replace(job, expected=getattr(module, job.expected.attr))
    n, failed = check_seeds(program, job, start, stop)
    try:
        worker = get_worker().address
    except ValueError:  # pragma: no cover - run outside a worker
        worker = ""
    return ChunkResult(start, stop, n, failed, worker)


def _on_cluster(
    program: Any,
    job: Job,
    seed: int,
    runs: int,
    cluster: Any,
    progress: Callable[[int], None] | None,
) -> CampaignReport:
    distributed = dask("a cluster campaign")  # the extra's name when it is missing
    ref = KernelRef.of(program)
    if job.expected is not None:
        job = replace(job, expected=ExpectedRef.of(program, job.expected))
    client, close = client_for(cluster)
    try:
        workers = worker_set(client)
        report = CampaignReport(workers=len(workers))
        submitted: dict[Any, tuple[int, int]] = {}

        def submit(a: int, b: int) -> Any:
            fut = client.submit(_cluster_chunk, ref, job, a, b, pure=False)
            submitted[fut] = (a, b)
            return fut

        def wait_first(fs: set[Any]) -> set[Any]:
            return set(distributed.wait(list(fs), return_when="FIRST_COMPLETED").done)

        def lost(e: BaseException) -> bool:
            return isinstance(e, distributed.KilledWorker)

        drive(chunks(seed, runs, len(workers)), submit, wait_first, lost, progress, report)
        for f in rerun(client, list(submitted)):
            if submitted[f] not in report.retried:
                report.retried.append(submitted[f])
        report.retried.sort()
        report.lost = sorted(workers - worker_set(client))
        return report
    finally:
        close()


def verify_campaign(
    program: Any,
    seed: int,
    runs: int,
    workers: int,
    cluster: Any,
    progress: Callable[[int], None] | None,
    **job: Any,
) -> Any:
    """``verify(workers=N)`` / ``verify(cluster=...)``: the campaign, then the first
    failing seed again locally (raising its error, with the campaign's notes), or the
    last seed's outputs with ``outputs.campaign`` the report."""
    from .execute import verify_on

    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise InputError(f"workers is a positive integer, not {workers!r}")
    spec = Job(**job)
    report = run_campaign(program, spec, seed, runs, workers=workers, cluster=cluster,
                          progress=progress)  # fmt: skip
    again = report.first_failure if report.first_failure is not None else seed + runs - 1
    try:
        out = verify_on(program, {}, runs=1, seed=again, **job)
    except Error as e:
        e.add_note(
            f"the first failing seed of the campaign is {again}; reproduce it locally "
            f"with --seed {again}"
        )
        for note in report.notes():
            e.add_note(note)
        raise
    if report.first_failure is not None:
        raise CampaignError(
            f"seed {again} failed on a worker of the campaign but passes locally: the "
            "workers and this host disagree (different ptoc or numpy versions?)"
        )
    out.campaign = report
    return out
