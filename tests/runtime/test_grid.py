"""Grid launches (DECISIONS D13): cores over one shared global memory, the grid ABI,
the race detector and parallel runs."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ptoc.backend.isa import DataType
from ptoc.backend.isa.fields import CORE_COUNT_GPR, CORE_INDEX_GPR, GRID_GPRS
from ptoc.runtime import DataPageFault, MachineConfig, MachineFault, RaceDetected
from ptoc.runtime.grid import AccessLog, ChunkJob, ChunkResult, Grid, find_race, run_job
from ptoc.runtime.machine import MachineError
from ptoc.runtime.state import MachineSnapshot

from .util import _const, prog, tload, tstore

ROWS, COLS = 4, 64  # each core's block of rows
BLOCK = ROWS * COLS * 4  # bytes of one FP32 row block
X, Y, OUT = 0x1000, 0x20000, 0x40000
CONFIG = MachineConfig(pes=1, gm_size=1 << 20)


def row_block_program(out_offset: str = "s1", x_base: str = "a0") -> str:
    """A scalar block computes this core's block offset from the core index register,
    then TLOAD x and y blocks, TADD, TSTORE the sum to ``out`` at ``out_offset``."""
    fp = DataType.FP32
    return (
        "BSTART.STD FALL\n"
        + _const("s0", BLOCK)
        + f"mul {CORE_INDEX_GPR}, s0, ->s1\n"
        + "addi s1, 0, ->s2\n"
        + f"add {x_base}, s1, ->a4\nadd a2, s1, ->a5\nadd a3, {out_offset}, ->a6\n"
        + "BSTOP\n"
        + tload(fp, ROWS, COLS, base="a4", stride="a1", mask="1000")
        + tload(fp, ROWS, COLS, base="a5", stride="a1", mask="1000")
        + f"BSTART.VEC TADD, FP32\nB.DIM zero, {COLS}, ->LB0\nB.DIM zero, {ROWS}, ->LB1\n"
        "B.IOT T#1, T#2, mask=1000, last, ->T<1KB>\nBSTOP\n"
        + tstore(fp, base="a6", stride="a1", mask="1000")
    )


def launch(cores: int, text: str, **run: object) -> tuple[Grid, np.ndarray, np.ndarray]:
    g = Grid(CONFIG, cores)
    rng = np.random.default_rng(cores)
    x = rng.standard_normal((cores * ROWS, COLS)).astype(np.float32)
    y = rng.standard_normal((cores * ROWS, COLS)).astype(np.float32)
    g.load_gm(X, x)
    g.load_gm(Y, y)
    for reg, v in (("a0", X), ("a1", COLS * 4), ("a2", Y), ("a3", OUT)):
        g.set_gpr(reg, v)
    g.run(prog(text), **run)  # type: ignore[arg-type]
    return g, x, y


def test_sixteen_cores_add_their_row_blocks_bit_exactly() -> None:
    g, x, y = launch(16, row_block_program(), check_races=True)
    got = g.read_gm(OUT, np.float32, (16 * ROWS, COLS))
    assert np.array_equal(got.view(np.uint32), (x + y).view(np.uint32))


def test_the_grid_abi_registers_hold_core_index_and_count_on_every_pe() -> None:
    g = Grid(MachineConfig(gm_size=1 << 16), 5)
    g.run(prog("BSTART.STD FALL\naddi zero, 0, ->s0\nBSTOP\n"))
    for i in range(5):
        for pe in range(4):
            assert g.core(i).gpr(CORE_INDEX_GPR, pe) == i
            assert g.core(i).gpr(CORE_COUNT_GPR, pe) == 5


def test_the_allocator_never_assigns_the_grid_registers() -> None:
    from ptoc.passes.allocate.gprs import ABI_REGS, SCRATCH_REGS

    assert not set(GRID_GPRS) & (set(SCRATCH_REGS) | set(ABI_REGS))
    assert len(set(GRID_GPRS)) == 2


def test_cores_share_one_memory_but_own_their_state() -> None:
    g, _, _ = launch(3, row_block_program())
    assert g.core(0).state.gm is g.core(2).state.gm
    assert g.core(0).state.queues[0][0] is not g.core(1).state.queues[0][0]
    assert g.core(1).gpr("a4") == X + BLOCK and g.core(2).gpr("a4") == X + 2 * BLOCK


def test_two_workers_give_the_serial_bytes_and_state() -> None:
    serial, _, _ = launch(16, row_block_program(), check_races=True)
    parallel, _, _ = launch(16, row_block_program(), check_races=True, workers=2)
    assert np.array_equal(np.asarray(serial.gm), np.asarray(parallel.gm))
    for a, b in zip(serial.machines, parallel.machines):
        assert a.snapshot() == b.snapshot(), a.snapshot().differences(b.snapshot())
        assert not b.state.queues[0][0].payload.flags.writeable  # still published storage


def test_cores_writing_the_same_bytes_race() -> None:
    """Every core stores its sum to the same out block: a write-write race between
    cores 0 and 1 at the TSTORE (bundle 3), over the whole block."""
    text = row_block_program(out_offset="zero")
    launch(4, text)  # unchecked: runs (the last core's bytes remain)
    with pytest.raises(RaceDetected) as info:
        launch(4, text, check_races=True)
    e = info.value
    assert str(e).startswith(
        f"race: cores 0 and 1 both write GM bytes [0x{OUT:x}, 0x{OUT + BLOCK:x}) "
        f"({BLOCK} byte(s)): core 0 at bundle 3, line "
    )
    assert [(c, v, loc.index) for c, v, loc in e.accesses] == [
        (0, "writes", 3), (1, "writes", 3),
    ]  # fmt: skip
    assert (e.start, e.end) == (OUT, OUT + BLOCK)


def test_a_core_reading_what_another_writes_races() -> None:
    """Out is computed in place (x is out): core i reads block i + 1 and writes block i,
    so core 1 writes the bytes core 0 read."""
    text = row_block_program(x_base="a7").replace(
        "add a7, s1, ->a4", "add a3, s1, ->a4\nadd a4, s0, ->a4"
    )
    g = Grid(CONFIG, 3)
    for reg, v in (("a1", COLS * 4), ("a2", Y), ("a3", OUT)):
        g.set_gpr(reg, v)
    with pytest.raises(RaceDetected, match=r"core 1 writes and core 0 reads GM bytes "
                       rf"\[0x{OUT + BLOCK:x}, 0x{OUT + 2 * BLOCK:x}\)"):  # fmt: skip
        g.run(prog(text), check_races=True)
    # the same with two workers: the merged logs find it too
    g = Grid(CONFIG, 3)
    for reg, v in (("a1", COLS * 4), ("a2", Y), ("a3", OUT)):
        g.set_gpr(reg, v)
    with pytest.raises(RaceDetected, match="core 1 writes and core 0 reads"):
        g.run(prog(text), check_races=True, workers=2)


def test_scalar_stores_race_at_their_scalar_block() -> None:
    g = Grid(MachineConfig(pes=2, gm_size=1 << 16), 3)
    g.set_gpr("a0", 0x100)
    text = (
        "BSTART.STD FALL\naddi zero, 1, ->s0\nBSTOP\nBSTART.STD FALL\nsdi x2, [a0, 0]\nBSTOP\n"
    )
    with pytest.raises(RaceDetected) as info:
        g.run(prog(text), check_races=True)
    assert (
        "cores 0 and 1 both write GM bytes [0x100, 0x108) (8 byte(s)): core 0 at "
        "scalar block 1, line 4, core 1 at scalar block 1, line 4" in str(info.value)
    )
    g.run(prog(text.replace("[a0, 0]", "[a0, 0]\nsdi x2, [a0, 0]")))  # one core: no race


def test_disjoint_per_core_scalar_stores_do_not_race() -> None:
    g = Grid(MachineConfig(pes=1, gm_size=1 << 16), 8)
    g.set_gpr("a0", 0x100)
    text = "BSTART.STD FALL\nslli x2, 3, ->s0\nadd a0, s0, ->s1\nsdi x3, [s1, 0]\nBSTOP\n"
    g.run(prog(text), check_races=True)
    assert list(g.read_gm(0x100, np.uint64, 8)) == [8] * 8


def test_a_fault_names_its_core() -> None:
    """Core 2's block runs past the end of GM; serial and parallel name core 2."""
    small = MachineConfig(pes=1, gm_size=OUT + 3 * BLOCK)
    for workers in (1, 2):
        g = Grid(small, 4)
        for reg, v in (("a0", X), ("a1", COLS * 4), ("a2", Y), ("a3", OUT)):
            g.set_gpr(reg, v)
        # cores 0..2 fit; core 3's store does not
        with pytest.raises(DataPageFault) as info:
            g.run(prog(row_block_program()), workers=workers)
        assert info.value.core == 3
        assert str(info.value).startswith("Fault_DataPage at core 3, bundle 3, line ")


def in_process(jobs: list[ChunkJob]) -> list[ChunkResult]:
    """A runner that runs the shipped jobs here: the path of a cluster launch (a job's
    states and GM image, not the grid's machines), without the cluster."""
    return [run_job(job) for job in jobs]


def faulting_launch(
    text: str, config: MachineConfig, regs: dict[str, int], **run: object
) -> tuple[str, np.ndarray, list[MachineSnapshot]]:
    g = Grid(config, 6)
    rng = np.random.default_rng(6)
    g.load_gm(X, rng.standard_normal((6 * ROWS, COLS)).astype(np.float32))
    for reg, v in regs.items():
        g.set_gpr(reg, v)
    with pytest.raises(MachineFault) as info:
        g.run(prog(text), **run)  # type: ignore[arg-type]
    return str(info.value), np.asarray(g.gm).copy(), [m.snapshot() for m in g.machines]


#: every core stores its row block, then a second copy at a7 (OUT2), which leaves global
#: memory from core 4 on: core 4 faults after its first store, core 5 too
OUT2 = OUT + 0x8000
_TWO_STORES = row_block_program() + tstore(DataType.FP32, base="a7", stride="a1", mask="1000")
_TWO_STORES = _TWO_STORES.replace("->a6\n", "->a6\nadd a7, s1, ->a7\n", 1)
#: every core stores its index + 1 to a0 + 8 * (index & 1) -- cores 0 and 2 share the
#: bytes -- then, from core 2 on, loads beyond global memory in the same scalar block,
#: which undoes the block's store
_UNDONE_STORE = (
    "BSTART.STD FALL\naddi x2, 1, ->s0\nandi x2, 1, ->s1\nslli s1, 3, ->s1\n"
    "add a0, s1, ->s2\nsdi s0, [s2, 0]\nslli x2, 12, ->s3\nadd a5, s3, ->s3\n"
    "ldi [s3, 0], ->s4\nBSTOP\n"
)


def _two_stores_left(gm: np.ndarray) -> bool:
    """Core 4's first store is there, core 5's is not; the second copies of cores 0..3."""
    block = [gm[OUT + i * BLOCK : OUT + (i + 1) * BLOCK].any() for i in range(6)]
    copy = [gm[OUT2 + i * BLOCK : OUT2 + (i + 1) * BLOCK].any() for i in range(4)]
    return block == [True] * 5 + [False] and all(copy)


def _undone_store_left(gm: np.ndarray) -> bool:
    """Core 0's 1 (core 2's 3 was undone) and core 1's 2."""
    return gm[0x100:0x110].view(np.uint64).tolist() == [1, 2]


#: (program, machine, registers, faulting core, what the serial run leaves)
FAULT_CASES = [
    pytest.param(_TWO_STORES, MachineConfig(pes=1, gm_size=OUT2 + 4 * BLOCK),
                 {"a0": X, "a1": COLS * 4, "a2": Y, "a3": OUT, "a7": OUT2}, 4,
                 _two_stores_left, id="partial-tile-stores"),
    pytest.param(_UNDONE_STORE, MachineConfig(pes=1, gm_size=1 << 14),
                 {"a0": 0x100, "a5": 0x2008}, 2, _undone_store_left, id="undone-scalar-store"),
]  # fmt: skip


@pytest.mark.parametrize(("text", "config", "regs", "core", "left"), FAULT_CASES)
def test_a_fault_leaves_the_serial_memory_and_states_on_every_schedule(
    text: str, config: MachineConfig, regs: dict[str, int], core: int, left: Any
) -> None:
    """Fault parity: cores before the faulting one have run, the faulting core's writes
    up to the fault remain, later cores never ran -- in forked workers and in shipped
    jobs alike, however the cores are cut into chunks (a later chunk's own fault and an
    undone store to bytes an earlier chunk wrote included)."""
    rule, gm, states = faulting_launch(text, config, regs)
    assert rule.startswith(f"Fault_DataPage at core {core}, ")
    assert left(gm)
    for workers in (2, 3, 6):
        for runner in (None, in_process):
            got = faulting_launch(text, config, regs, workers=workers, runner=runner)
            assert got[0] == rule, (workers, runner)
            assert np.array_equal(got[1], gm), (workers, runner)
            for a, b in zip(states, got[2], strict=True):
                assert a == b, a.differences(b)


def test_shipped_jobs_give_the_serial_bytes_and_find_races() -> None:
    serial, _, _ = launch(16, row_block_program(), check_races=True)
    shipped, _, _ = launch(16, row_block_program(), check_races=True, workers=3,
                           runner=in_process)  # fmt: skip
    assert np.array_equal(np.asarray(serial.gm), np.asarray(shipped.gm))
    for a, b in zip(serial.machines, shipped.machines):
        assert a.snapshot() == b.snapshot(), a.snapshot().differences(b.snapshot())
    with pytest.raises(RaceDetected, match="cores 0 and 1 both write"):
        launch(4, row_block_program(out_offset="zero"), check_races=True, workers=2,
               runner=in_process)  # fmt: skip


def test_grid_sizes_are_checked() -> None:
    with pytest.raises(MachineError, match="a grid has 1 to 65536 cores, not 0"):
        Grid(CONFIG, 0)
    with pytest.raises(MachineError, match="workers is a positive integer"):
        Grid(CONFIG, 2).run(prog(""), workers=0)
    with pytest.raises(MachineError, match="core 2 does not exist"):
        Grid(CONFIG, 2).core(2)


# ---------------------------------------------------------------------- the detector


def _brute(accesses: list[list[tuple[int, int, bool]]]) -> set[tuple[int, int]]:
    """Every byte that two different cores touch with at least one write, per pair."""
    owners: dict[int, list[tuple[int, bool]]] = {}
    for core, acc in enumerate(accesses):
        for lo, n, write in acc:
            for a in range(lo, lo + n):
                owners.setdefault(a, []).append((core, write))
    bad = set()
    for a, who in owners.items():
        for c1, w1 in who:
            for c2, w2 in who:
                if c1 != c2 and (w1 or w2):
                    bad.add((a, min(c1, c2)))
    return bad


access = st.tuples(st.integers(0, 60), st.integers(1, 6), st.booleans())


@given(st.lists(st.lists(access, max_size=4), min_size=1, max_size=5))
def test_the_detector_finds_exactly_the_races_a_byte_by_byte_check_finds(accesses) -> None:
    logs = []
    for acc in accesses:
        log = AccessLog()
        for k, (lo, n, write) in enumerate(acc):
            log.block = (False, k, k)
            idx = np.arange(lo, lo + n)
            (log.write if write else log.read)(idx)
        logs.append(log)
    bad = _brute(accesses)
    race = find_race(logs)
    assert (race is None) == (not bad)
    if race is not None:
        (ca, wa, _), (cb, wb, _) = race.a, race.b
        assert ca != cb and (wa or wb) and race.start < race.end
        assert race.start == min(a for a, _ in bad)  # the lowest conflicting address
        for core, write, k in (race.a, race.b):  # both named accesses cover the range
            lo, n, w = accesses[core][logs[core].label(k)[1]]
            assert w == write and lo <= race.start and race.end <= lo + n


@given(
    st.lists(st.one_of(st.none(), st.lists(access, max_size=5)), min_size=1, max_size=6),
    st.sampled_from([0, 1 << 20, (1 << 61) - 4096]),
)
def test_all_cores_unions_at_once_are_each_logs_own(accesses, base) -> None:  # type: ignore[no-untyped-def]
    """The detector's one-pass unions of every core's reads and writes equal each log's
    own :meth:`AccessLog.union` (cores without a log among them; addresses near 2**61
    take the group-by-group path, whose offsets would overflow), and its intervals are
    exactly theirs."""
    from ptoc.runtime.grid import _unions

    logs: list[AccessLog | None] = []
    for acc in accesses:
        if acc is None:
            logs.append(None)
            continue
        log = AccessLog()
        for k, (lo, n, write) in enumerate(acc):
            log.block = (False, k, k)
            (log.write if write else log.read)(base + np.arange(lo, lo + n))
        logs.append(log)
    unions, events = _unions(logs)
    want = {
        (core, write): log.union(write)
        for core, log in enumerate(logs)
        if log is not None
        for write in (True, False)
    }
    assert unions.keys() == want.keys()
    for key, (s, e) in want.items():
        assert unions[key][0].tolist() == s.tolist() and unions[key][1].tolist() == e.tolist()
    assert sorted(events) == sorted(
        (a, b, core, write)
        for (core, write), (s, e) in want.items()
        for a, b in zip(s.tolist(), e.tolist(), strict=True)
    )


def test_an_access_log_keeps_intervals_not_bytes() -> None:
    log = AccessLog()
    log.write(np.arange(0x1000, 0x1000 + (1 << 20)))
    assert len(log.records) == 1 and log.records[0][0].tolist() == [0x1000]
    assert log.union(True)[1].tolist() == [0x1000 + (1 << 20)]


def test_a_fault_without_a_grid_names_no_core() -> None:
    from ptoc.runtime import Machine

    m = Machine(MachineConfig(pes=1, gm_size=4096))
    m.set_gpr("a0", 8192)
    with pytest.raises(MachineFault) as info:
        m.run(prog(tload(DataType.FP32, 1, 8, stride=None, mask="1000").replace(
            "B.IOT", "B.IOR a0\nB.IOT")))  # fmt: skip
    assert info.value.core is None and "core" not in str(info.value)


def _reversed_launch(cores: int, text: str) -> np.ndarray:
    """The launch of :func:`launch` with the cores run last to first (another legal
    schedule), by hand."""
    g = Grid(CONFIG, cores)
    rng = np.random.default_rng(cores)
    g.load_gm(X, rng.standard_normal((cores * ROWS, COLS)).astype(np.float32))
    g.load_gm(Y, rng.standard_normal((cores * ROWS, COLS)).astype(np.float32))
    for reg, v in (("a0", X), ("a1", COLS * 4), ("a2", Y), ("a3", OUT)):
        g.set_gpr(reg, v)
    for i in reversed(range(cores)):
        g.core(i).set_gpr(CORE_INDEX_GPR, i)
        g.core(i).set_gpr(CORE_COUNT_GPR, cores)
        g.core(i).run(prog(text))
    return np.asarray(g.gm).copy()


def test_the_detector_is_what_makes_the_core_order_irrelevant() -> None:
    """Without a race, running the cores in the opposite order gives the same bytes; the
    racy launch gives different bytes under the other order, and checked mode says so."""
    clean = row_block_program()
    assert np.array_equal(_reversed_launch(6, clean), np.asarray(launch(6, clean)[0].gm))
    racy = row_block_program(out_offset="zero")
    forward = np.asarray(launch(6, racy)[0].gm)
    assert not np.array_equal(_reversed_launch(6, racy), forward)
    with pytest.raises(RaceDetected):
        launch(6, racy, check_races=True)


@pytest.mark.parametrize(("dt", "cols", "width"), [
    (DataType.FP32, 5, 20), (DataType.FP16, 3, 6), (DataType.S4X2, 5, 3), (DataType.S4X2, 4, 2),
])  # fmt: skip
def test_a_tile_read_is_one_interval_per_row_and_pe(
    dt: DataType, cols: int, width: int
) -> None:
    """The recorded read of a footprint covers exactly its elements' bytes (4-bit
    elements share bytes: ceil(cols / 2) per row)."""
    from ptoc.runtime.memory import footprint

    base, stride = np.array([0x100, 0x900], np.uint64), np.array([64, 64], np.uint64)
    fp = footprint(dt, base, stride, 3, cols, 1 << 16, "TLOAD", False, (0, 1))
    log = AccessLog()
    log.read_footprint(fp)
    byte = fp.addr.astype(np.int64)[..., None] + np.arange(fp.nbytes)
    want = np.unique(byte)
    s, e = log.union(False)
    got = np.concatenate([np.arange(a, b) for a, b in zip(s, e)])
    assert np.array_equal(got, want) and len(log.records[0][0]) == 6
    assert all(b - a == width for a, b in zip(log.records[0][0], log.records[0][1]))
