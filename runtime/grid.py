"""Grid launches (DECISIONS D13): one program on ``cores`` machines over one global memory.

Every core is a :class:`~ptoc.runtime.machine.Machine` of its own (four PEs, queues,
capacity, GPRs, status); all of them share one global memory. Before the program starts,
every PE of core ``i`` holds ``i`` in :data:`CORE_INDEX_GPR` and the core count in
:data:`CORE_COUNT_GPR` (the grid ABI, docs/machine.md).

The architecture runs the cores in no defined order. This model runs them one after the
other in core order, which is one of the legal schedules; a program whose result could
depend on the schedule has a *race*: two cores writing overlapping GM bytes, or one core
reading bytes another core writes. In checked mode (``check_races=True``) every core
records, per executed block, the GM byte intervals it read and wrote (interval sets,
not bytes), and the launch raises :class:`RaceDetected` naming both cores, both blocks and
the byte range. Without a race the result is the same under every schedule; that is
what makes the parallel run (``workers=N``: chunks of cores in worker processes, or
tasks of a :data:`ChunkRunner` such as a cluster's, each on its own copy of GM, their
written bytes merged in core order) bit-identical to the serial one. A fault too leaves
the serial run's GM and states: chunks are merged up to the lowest faulting core.
"""

from __future__ import annotations

import copy
import itertools
import multiprocessing
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ptoc.backend.encoding import decode
from ptoc.backend.isa.fields import CORE_COUNT_GPR, CORE_INDEX_GPR
from ptoc.backend.program import Program
from ptoc.backend.target import MachineConfig

from .faults import BundleLocation, MachineFault, RaceDetected
from .gm import Memory, MemoryImage, new_memory
from .machine import Machine, MachineError, RunReport
from .memory import Footprint

#: the largest grid a launch accepts
MAX_GRID = 1 << 16

__all__ = [
    "CORE_COUNT_GPR",
    "CORE_INDEX_GPR",
    "MAX_GRID",
    "AccessLog",
    "ChunkJob",
    "ChunkResult",
    "ChunkRunner",
    "Grid",
    "GridReport",
    "LaunchImage",
    "chunk_ranges",
    "find_race",
    "run_job",
]


# ---------------------------------------------------------------------- access log


def intervals(index: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The maximal runs of consecutive byte addresses in ``index``: (starts, ends)."""
    u = np.asarray(index, np.int64).reshape(-1)
    if not len(u):
        return u, u
    step = np.diff(u)
    if not (step > 0).all():  # not increasing (overlapping rows, a negative stride): sort
        u = np.unique(u)
        step = np.diff(u)
    breaks = np.flatnonzero(step != 1)
    starts = u[np.concatenate(([0], breaks + 1))]
    ends = u[np.concatenate((breaks, [len(u) - 1]))] + 1
    return starts, ends


def _union(starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sorted disjoint intervals covering the same bytes (touching ones merged)."""
    if not len(starts):
        return starts, ends
    order = np.argsort(starts, kind="stable")
    s, e = starts[order], ends[order]
    reach = np.maximum.accumulate(e)
    new = np.concatenate(([True], s[1:] > reach[:-1]))
    first = np.flatnonzero(new)
    last = np.concatenate((first[1:] - 1, [len(s) - 1]))
    return s[first], reach[last]


class AccessLog:
    """The GM byte intervals one core's blocks read and wrote during a launch.

    The machine sets :attr:`block` (scalar?, block index, command index) before each
    block; the executor calls :meth:`write` at a tile bundle's commit and for every scalar
    store, :meth:`read` for TLOAD footprints and scalar loads. Reads are kept only when
    ``reads`` (race checking); writes always (they are what a parallel run merges).
    """

    __slots__ = ("_labels", "_last", "block", "reads", "records")

    def __init__(self, reads: bool = True) -> None:
        self.reads = reads
        self.block: tuple[bool, int, int] = (False, 0, 0)
        self._labels: list[tuple[bool, int, int]] = []
        self._last: tuple[bool, int, int] | None = None
        #: (starts, ends, label id, write?) per access, in program order
        self.records: list[tuple[np.ndarray, np.ndarray, int, bool]] = []

    def _label(self) -> int:
        if self.block != self._last:
            self._labels.append(self.block)
            self._last = self.block
        return len(self._labels) - 1

    def write(self, index: np.ndarray) -> None:
        s, e = intervals(index)
        if len(s):
            self.records.append((s, e, self._label(), True))

    def write_rows(self, base: int, stride: int, rows: int, width: int) -> None:
        """:meth:`write` of ``rows`` runs of ``width`` bytes ``stride`` apart from
        ``base``, rows that do not overlap (``stride >= width``), in closed form: the
        same intervals (touching rows are one)."""
        if rows == 1 or stride == width:
            s = np.array([base], np.int64)
            e = s + rows * width
        else:
            s = base + np.arange(rows, dtype=np.int64) * stride
            e = s + width
        self.records.append((s, e, self._label(), True))

    def read(self, index: np.ndarray) -> None:
        if self.reads:
            s, e = intervals(index)
            if len(s):
                self.records.append((s, e, self._label(), False))

    def read_footprint(self, fp: Footprint) -> None:
        """The bytes of every element a probed tile footprint covers: one interval per
        row and PE (a row's elements are consecutive: ``TileMemoryStridedByteAddress``
        adds ``col * element bytes``, or ``col / 2`` for 4-bit types)."""
        if not self.reads:
            return
        if fp.dense is not None:  # each PE's rows in closed form (addr[..., 0] below)
            r = np.arange(fp.rows, dtype=np.int64)
            starts = np.concatenate([b + r * s for b, s in fp.dense])
            self.records.append((starts, starts + fp.cols * fp.nbytes, self._label(), False))
            return
        if not fp.addr.size:
            return
        addr = fp.addr.astype(np.int64)
        cols = addr.shape[-1]
        span = (addr[..., -1] - addr[..., 0]) + fp.nbytes
        width = (cols + 1) // 2 if fp.high is not None else cols * fp.nbytes
        if not (span == width).all():  # pragma: no cover - footprints are row-contiguous
            self.read(addr[..., None] + np.arange(fp.nbytes, dtype=np.int64))
            return
        starts = addr[..., 0].reshape(-1)
        self.records.append((starts, starts + width, self._label(), False))

    def window(self, addr: np.ndarray, size: int, write: bool) -> None:
        """A scalar access of ``size`` bytes at each PE's address."""
        if write or self.reads:
            s = np.unique(np.asarray(addr, np.int64))
            self.records.append((s, s + size, self._label(), write))

    def forget(self, count: int) -> None:
        """Drop every access after the first ``count`` (a faulting scalar block's, whose
        stores were undone)."""
        del self.records[count:]

    def label(self, k: int) -> tuple[bool, int, int]:
        return self._labels[k]

    def union(self, write: bool) -> tuple[np.ndarray, np.ndarray]:
        """Sorted disjoint intervals of every byte read (or written)."""
        parts = [(s, e) for s, e, _, w in self.records if w == write]
        if not parts:
            empty = np.zeros(0, np.int64)
            return empty, empty
        return _union(
            np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])
        )

    def first(self, write: bool, lo: int, hi: int) -> tuple[int, int, int]:
        """The first access (in program order) of the kind touching [lo, hi): its label id
        and the part of [lo, hi) it covers."""
        for s0, e0, k, w in self.records:
            if w != write:
                continue
            s, e = _union(s0, e0)  # an access's rows, merged where they touch
            hit = np.flatnonzero((s < hi) & (e > lo))
            if len(hit):
                j = int(hit[0])
                return k, max(lo, int(s[j])), min(hi, int(e[j]))
        raise AssertionError("no access covers a range of the union")  # pragma: no cover


@dataclass(frozen=True)
class Race:
    """Two cores' conflicting accesses: ``a`` (core, write?, label id) first in address
    order, ``b`` the other, and the byte range [start, end) both touch."""

    a: tuple[int, bool, int]
    b: tuple[int, bool, int]
    start: int
    end: int


class _Tracker:
    """The two furthest-reaching intervals seen so far that belong to different cores."""

    __slots__ = ("best", "second")

    def __init__(self) -> None:
        self.best: tuple[int, int] = (-1, -1)  # (end, core)
        self.second: tuple[int, int] = (-1, -1)

    def add(self, end: int, core: int) -> None:
        if core == self.best[1]:
            if end > self.best[0]:
                self.best = (end, core)
        elif end > self.best[0]:
            self.second, self.best = self.best, (end, core)
        elif end > self.second[0]:
            self.second = (end, core)

    def other(self, core: int, start: int) -> int | None:
        """A core other than ``core`` with an interval reaching past ``start``."""
        end, c = self.best if self.best[1] != core else self.second
        return c if c >= 0 and end > start else None


_EMPTY = np.zeros(0, np.int64)


def _unions(
    logs: Sequence[AccessLog | None],
) -> tuple[
    dict[tuple[int, bool], tuple[np.ndarray, np.ndarray]], list[tuple[int, int, int, bool]]
]:
    """:meth:`AccessLog.union` of every core's writes and of its reads, by (core, write?),
    and all their intervals as (start, end, core, write?) -- computed for all cores in one
    pass: one sort of every access, and a running maximum of the ends that restarts at
    each (core, kind) group (each group's ends offset past the previous group's), where
    a launch of many small cores would otherwise pay numpy's per-call cost per core."""
    starts, ends, groups = [], [], []
    for core, log in enumerate(logs):
        if log is None:
            continue
        for s0, e0, _, write in log.records:
            starts.append(s0)
            ends.append(e0)
            groups.append(np.full(len(s0), 2 * core + (not write), np.int64))
    unions: dict[tuple[int, bool], tuple[np.ndarray, np.ndarray]] = {
        (core, write): (_EMPTY, _EMPTY)
        for core, log in enumerate(logs)
        if log is not None
        for write in (True, False)
    }
    if not starts:
        return unions, []
    s_all, e_all, g_all = np.concatenate(starts), np.concatenate(ends), np.concatenate(groups)
    order = np.lexsort((s_all, g_all))
    s, e, g = s_all[order], e_all[order], g_all[order]
    span = int(e.max()) - min(int(s.min()), 0) + 1  # more than any group's ends cover
    if span * (int(g[-1]) + 1) >= 1 << 62:  # (offsets that would overflow: group by group)
        for (core, write), _ in list(unions.items()):
            log = logs[core]
            assert log is not None
            unions[(core, write)] = log.union(write)
    else:
        reach = np.maximum.accumulate(e + g * span) - g * span
        new = np.empty(len(s), bool)
        new[0] = True
        new[1:] = (s[1:] > reach[:-1]) | (g[1:] != g[:-1])
        first = np.flatnonzero(new)
        last = np.append(first[1:] - 1, len(s) - 1)
        us, ue, ug = s[first], reach[last], g[first]
        bounds = np.flatnonzero(np.diff(ug)) + 1
        for a, b in zip([0, *bounds.tolist()], [*bounds.tolist(), len(ug)], strict=True):
            k = int(ug[a])
            unions[(k // 2, not k % 2)] = (us[a:b], ue[a:b])
    events: list[tuple[int, int, int, bool]] = []
    for (core, write), (us_, ue_) in unions.items():
        events.extend(zip(us_.tolist(), ue_.tolist(), [core] * len(us_), [write] * len(us_)))
    return unions, events


def find_race(logs: Sequence[AccessLog | None]) -> Race | None:
    """The conflicting pair of accesses at the lowest address, if any: a write of one
    core overlapping a write or a read of another. O(n log n) in the union intervals."""
    unions, events = _unions(logs)
    events.sort(key=lambda x: (x[0], x[2], not x[3]))
    writes, reads = _Tracker(), _Tracker()
    for start, end, core, write in events:
        other, other_write = writes.other(core, start), True
        if other is None and write:
            other, other_write = reads.other(core, start), False
        if other is not None:
            # the conflicting bytes: this interval against the other core's union
            os_, oe = unions[(other, other_write)]
            hit = np.flatnonzero((os_ < end) & (oe > start))
            lo, hi = max(start, int(os_[hit[0]])), min(end, int(oe[hit[0]]))
            log_a, log_b = logs[other], logs[core]
            assert log_a is not None and log_b is not None
            ka, lo, hi = log_a.first(other_write, lo, hi)
            kb, lo, hi = log_b.first(write, lo, hi)
            return Race((other, other_write, ka), (core, write, kb), lo, hi)
        (writes if write else reads).add(end, core)
    return None


def race_error(race: Race, logs: Sequence[AccessLog | None], program: Program) -> RaceDetected:
    """The error naming both cores, both blocks (with their lines) and the range; the
    writer comes first when only one side writes."""
    sides = []
    for core, write, k in (race.a, race.b):
        log = logs[core]
        assert log is not None
        scalar, index, command = log.label(k)
        lines = program.lines
        line = lines[command] if 0 <= command < len(lines) else 0
        where = BundleLocation(index, command, line, scalar=scalar)
        sides.append((core, "writes" if write else "reads", where))
    if sides[0][1] == "reads":
        sides.reverse()
    (ca, va, la), (cb, vb, lb) = sides
    what = (
        f"cores {ca} and {cb} both write"
        if va == vb
        else f"core {ca} writes and core {cb} reads"
    )
    rule = (
        f"{what} GM bytes [0x{race.start:x}, 0x{race.end:x}) ({race.end - race.start} "
        f"byte(s)): core {ca} at {la.text()}, core {cb} at {lb.text()}; the result would "
        "depend on the order in which the cores run"
    )
    return RaceDetected(rule, (sides[0], sides[1]), race.start, race.end)


# ---------------------------------------------------------------------- the grid


@dataclass
class GridReport:
    """What a launch did: each core's :class:`RunReport`, in core order."""

    cores: list[RunReport] = field(default_factory=list)
    status: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), np.uint8))

    @property
    def bundles(self) -> int:
        return sum(r.bundles for r in self.cores)

    @property
    def scalar_blocks(self) -> int:
        return sum(r.scalar_blocks for r in self.cores)


class Grid:
    """A launch of ``cores`` machines of ``config`` over one global memory.

    ``grid.load_gm``/``read_gm`` reach the shared memory; ``grid.core(i)`` is core ``i``'s
    :class:`Machine` (its GPRs, tiles and status); :meth:`set_gpr` sets a register on one
    core or on all of them; :meth:`run` launches a program on every core.
    """

    def __init__(
        self,
        config: MachineConfig | str | None = None,
        cores: int = 1,
        *,
        gm: Memory | None = None,
    ) -> None:
        if (
            isinstance(cores, bool)
            or not isinstance(cores, (int, np.integer))
            or not (1 <= cores <= MAX_GRID)
        ):
            raise MachineError(f"a grid has 1 to {MAX_GRID} cores, not {cores!r}")
        parsed = MachineConfig.parse(config) if isinstance(config, str) else config
        self.config: MachineConfig = parsed or MachineConfig()
        self.gm: Memory = new_memory(self.config.gm_size) if gm is None else gm
        self.machines = [Machine(self.config, gm=self.gm) for _ in range(int(cores))]

    @property
    def cores(self) -> int:
        return len(self.machines)

    def core(self, i: int) -> Machine:
        if (
            isinstance(i, bool)
            or not isinstance(i, (int, np.integer))
            or not (0 <= i < self.cores)
        ):
            raise MachineError(f"core {i} does not exist (the grid has {self.cores})")
        return self.machines[int(i)]

    def load_gm(self, addr: int, array: np.ndarray | bytes) -> None:
        """:meth:`Machine.load_gm` on the shared memory."""
        self.machines[0].load_gm(addr, array)

    def read_gm(self, addr: int, dtype: Any, shape: int | tuple[int, ...]) -> np.ndarray:
        """:meth:`Machine.read_gm` of the shared memory."""
        return self.machines[0].read_gm(addr, dtype, shape)

    def set_gpr(
        self, reg: str | int, value: int, *, core: int | None = None, pe: int | None = None
    ) -> None:
        """Set a GPR on one core (every core when ``core`` is None), one PE or all."""
        targets = self.machines if core is None else [self.core(core)]
        for m in targets:
            m.set_gpr(reg, value, pe)

    def run(
        self,
        program: Program | bytes,
        *,
        check_races: bool = False,
        workers: int = 1,
        runner: ChunkRunner | None = None,
    ) -> GridReport:
        """Run ``program`` on every core (core order; see the module docstring), after
        setting the grid ABI registers. A fault names its core (``MachineFault.core``)
        and stops the launch; ``check_races`` raises :class:`RaceDetected` for a race.

        ``workers`` > 1 cuts the cores into that many chunks of consecutive cores, run in
        forked worker processes, or by ``runner`` when given (a cluster: it runs each
        :class:`ChunkJob` elsewhere and returns the :class:`ChunkResult` of each, in job
        order). Either way the GM and the core states after the launch -- after a fault
        too -- are those of the serial run (docs/many-cores.md, fault parity)."""
        if isinstance(program, (bytes, bytearray)):
            program = decode(bytes(program))
        if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
            raise MachineError(f"workers is a positive integer, not {workers!r}")
        n = self.cores
        for i, m in enumerate(self.machines):
            m.set_gpr(CORE_INDEX_GPR, i)
            m.set_gpr(CORE_COUNT_GPR, n)
        parts = chunk_ranges(n, workers)
        if runner is not None:
            return self._merge(runner(self.jobs(program, check_races, parts)), program)
        if len(parts) > 1 and "fork" in multiprocessing.get_all_start_methods():
            return self._merge(self._run_forked(program, check_races, parts), program)
        check = check_races and n > 1
        logs: list[AccessLog | None] = []
        report = GridReport()
        for i, m in enumerate(self.machines):
            log = AccessLog() if check else None
            logs.append(log)
            report.cores.append(_run_core(m, i, program, log))
        if check:
            race = find_race(logs)
            if race is not None:
                raise race_error(race, logs, program)
        report.status = np.stack([m.state.status for m in self.machines])
        return report

    def jobs(self, program: Program, check_races: bool, parts: list[range]) -> list[ChunkJob]:
        """The launch as one :class:`ChunkJob` per range of cores, for another process."""
        launch = LaunchImage(program, self.config, check_races, MemoryImage.of(self.gm))
        return [
            ChunkJob(launch, cores.start, tuple(_state(self.machines[i]) for i in cores))
            for cores in parts
        ]

    def _run_forked(
        self, program: Program, check_races: bool, parts: list[range]
    ) -> list[ChunkResult]:
        """The chunks in forked processes, each on a copy-on-write copy of GM."""
        global _FORKED
        _FORKED = (self, program, check_races)
        try:
            ctx = multiprocessing.get_context("fork")
            with ctx.Pool(len(parts)) as pool:
                return pool.map(_run_forked_chunk, parts)
        finally:
            _FORKED = None

    def _merge(self, results: Sequence[ChunkResult], program: Program) -> GridReport:
        """The chunks' results, in core order: each core's state, then the bytes the
        chunk wrote. A chunk that faulted has run its cores only up to the fault (its
        written bytes are theirs): its fault is raised after its writes are merged and
        before any later chunk's, which leaves exactly the serial run's GM and states."""
        logs: list[AccessLog | None] = []
        report = GridReport()
        check = False
        for result in results:
            for i, state, log, run in result.cores:
                _restore(self.machines[i], state)
                logs.append(log)
                check = check or log is not None
                if run is not None:
                    report.cores.append(run)
            for start, data in result.written:
                self.gm[start : start + len(data)] = data
            if result.fault is not None:  # the lowest faulting core, as in a serial run
                raise result.fault.error()
        if check and len(logs) > 1:
            race = find_race(logs)
            if race is not None:
                raise race_error(race, logs, program)
        report.status = np.stack([m.state.status for m in self.machines])
        return report


def chunk_ranges(cores: int, parts: int) -> list[range]:
    """``cores`` cut into at most ``parts`` ranges of consecutive cores, sizes within one."""
    bounds = np.linspace(0, cores, min(parts, cores) + 1).astype(int)
    return [range(int(a), int(b)) for a, b in itertools.pairwise(bounds)]


def _run_core(m: Machine, i: int, program: Program, log: AccessLog | None) -> RunReport:
    m.state.access_log = log
    try:
        return m.run(program)
    except MachineFault as f:
        f.core = i
        raise f.with_traceback(None) from None
    finally:
        m.state.access_log = None


#: MachineState attributes that stay with their process (the GM travels as written
#: ranges or as a :class:`MemoryImage`; its written-chunk record never leaves)
_LOCAL = ("gm", "gm_written", "config", "access_log")


def _state(m: Machine) -> dict[str, Any]:
    """What another process needs of a core's state."""
    return {k: v for k, v in vars(m.state).items() if k not in _LOCAL}


def _restore(m: Machine, state: dict[str, Any]) -> None:
    for queue in state["queues"]:
        for tile in queue:  # published storage is read-only; unpickling made it writable
            tile.payload.flags.writeable = False
    vars(m.state).update(state)


@dataclass(frozen=True)
class LaunchImage:
    """What every chunk of a launch run in another process shares: the program, the
    machine, the mode (``check``: record reads for the race detector) and the global
    memory's non-zero pages."""

    program: Program
    config: MachineConfig
    check: bool
    gm: MemoryImage


@dataclass(frozen=True)
class ChunkJob:
    """Cores ``first ..`` of a launch, one pre-launch state (GPRs, queues, status) each;
    :func:`run_job` runs it in any process."""

    launch: LaunchImage
    first: int
    states: tuple[dict[str, Any], ...]

    @property
    def cores(self) -> range:
        return range(self.first, self.first + len(self.states))


@dataclass
class ChunkResult:
    """A chunk's result: per core (index, state, access log if checked, run report --
    None for the core that faulted), the byte ranges its cores wrote with their final
    contents, and the fault that stopped it (its later cores did not run)."""

    cores: list[tuple[int, dict[str, Any], AccessLog | None, RunReport | None]]
    written: list[tuple[int, np.ndarray]]
    fault: _Fault | None = None


#: runs every job of a launch somewhere and returns their results in job order
ChunkRunner = Callable[[list[ChunkJob]], list[ChunkResult]]


@dataclass
class _Fault:
    """A fault in a worker, in a form that survives pickling."""

    cls: type[MachineFault]
    rule: str
    op: str
    bundle: BundleLocation | None
    core: int

    def error(self) -> MachineFault:
        f = self.cls(self.rule, self.op, self.bundle)
        f.core = self.core
        return f


def run_chunk(
    machines: Sequence[Machine], first: int, program: Program, check: bool
) -> ChunkResult:
    """Run cores ``first ..`` (``machines``, over one GM of this process) in order, up
    to the first fault; every chunk of a parallel launch runs here."""
    out = ChunkResult([], [])
    logs = []
    for i, m in enumerate(machines, first):
        log = AccessLog(reads=check)
        logs.append(log)
        run: RunReport | None = None
        try:
            run = _run_core(m, i, program, log)
        except MachineFault as f:
            out.fault = _Fault(type(f), f.rule, f.op, f.bundle, i)
        out.cores.append((i, _state(m), log if check else None, run))
        if out.fault is not None:
            break
    parts = [log.union(True) for log in logs]
    starts, ends = _union(
        np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])
    )
    gm = machines[0].state.gm
    out.written = [(int(s), gm[int(s) : int(e)]) for s, e in zip(starts, ends)]
    return out


def run_job(job: ChunkJob) -> ChunkResult:
    """A :class:`ChunkJob` in this process: its cores over a memory rebuilt from the
    launch's image (the job's states are copied, so running it again starts afresh)."""
    launch = job.launch
    gm = launch.gm.memory()
    machines = []
    for state in job.states:
        m = Machine(launch.config, gm=gm)
        vars(m.state).update(copy.deepcopy(state))
        machines.append(m)
    return run_chunk(machines, job.first, launch.program, launch.check)


#: the grid, program and mode a forked worker runs (set only around a parallel run)
_FORKED: tuple[Grid, Program, bool] | None = None


def _run_forked_chunk(cores: range) -> ChunkResult:
    assert _FORKED is not None
    grid, program, check = _FORKED
    return run_chunk(grid.machines[cores.start : cores.stop], cores.start, program, check)
