"""Reused global memories (``ptoc.runtime.gm_pool``): a machine records every chunk of
its own memory it writes, the memory is zeroed and reused when the machine goes, and
every machine still starts from an all-zero memory."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import ptoc.runtime.state as state_module
from ptoc.passes.execute import place, read_outputs, run_compiled
from ptoc.passes.pipeline import compile_module
from ptoc.runtime import Machine, MachineConfig
from ptoc.runtime.gm_pool import CHUNK, CHUNK_BITS, MAX_CHUNKS, DensePool, Written
from ptoc.runtime.spare import keep_machine
from ptoc.testing import KernelSpec, random_kernel

from ._progs import program, std

SIZE = 16 * CHUNK


def _nonzero_chunks(gm: np.ndarray) -> set[int]:
    whole = len(gm) // CHUNK * CHUNK
    found = set(np.flatnonzero(gm[:whole].reshape(-1, CHUNK).any(axis=1)).tolist())
    if whole < len(gm) and gm[whole:].any():
        found.add(whole >> CHUNK_BITS)
    return found


class CheckingPool(DensePool):
    """A pool that checks, for every memory zeroed for its next machine (given back, or
    a kept machine reset: :meth:`DensePool.clean`), that each chunk holding a nonzero
    byte was recorded and that the zeroed memory is all zero (a finaliser cannot raise:
    what it finds is kept in ``wrong`` for the fixture to report)."""

    def __init__(self) -> None:
        super().__init__()
        self.given = 0
        self.cleaned = 0
        self.wrong: list[str] = []

    def give(self, gm: np.ndarray, written: Written, holders: int) -> None:
        before = self.cleaned
        super().give(gm, written, holders + 1)  # this override's frame holds it too
        if self.cleaned > before:
            self.given += 1

    def clean(self, gm: np.ndarray, written: Written) -> None:
        if written.chunks is not None:
            missed = _nonzero_chunks(gm) - written.chunks
            if missed:
                self.wrong.append(f"written but not recorded: chunks {sorted(missed)}")
        super().clean(gm, written)
        if gm.any():
            self.wrong.append("a zeroed memory is not all zero")
        self.cleaned += 1


@pytest.fixture
def checking_pool(monkeypatch: pytest.MonkeyPatch) -> Iterator[CheckingPool]:
    gc.collect()  # earlier tests' machines go to the pool they came from
    keep_machine(None)  # (and the machine a run kept)
    pool = CheckingPool()
    monkeypatch.setattr(state_module, "POOL", pool)
    yield pool
    keep_machine(None)
    gc.collect()
    assert not pool.wrong, pool.wrong


# ------------------------------------------------------------------ the record itself

spans = st.tuples(st.integers(0, SIZE - 1), st.integers(1, 3 * CHUNK))
strided = st.tuples(
    st.integers(0, SIZE - 1), st.integers(0, 3 * CHUNK), st.integers(1, 40), st.integers(1, 600)
)
indices = st.lists(st.integers(0, SIZE - 1), min_size=1, max_size=40)
writes = st.lists(
    st.one_of(
        st.tuples(st.just("span"), spans),
        st.tuples(st.just("rows"), strided),
        st.tuples(st.just("index"), indices),
    ),
    max_size=12,
)


@given(writes)
def test_every_written_chunk_is_recorded(ops: list) -> None:  # type: ignore[type-arg]
    gm = np.zeros(SIZE, np.uint8)
    w = Written()
    for kind, args in ops:
        if kind == "span":
            lo, n = args
            hi = min(SIZE, lo + n)
            gm[lo:hi] = 1
            w.span(lo, hi)
        elif kind == "rows":
            base, stride, rows, width = args
            for r in range(rows):
                lo = base + r * stride
                gm[lo : min(SIZE, lo + width)] = 1
            w.rows(base, stride, rows, width)
        else:
            index = np.array(args, np.intp)
            gm[index] = 1
            w.index(index)
    if w.chunks is not None:
        assert _nonzero_chunks(gm) <= w.chunks


def test_a_span_records_exactly_its_chunks() -> None:
    w = Written()
    w.span(CHUNK - 1, CHUNK + 1)
    w.span(5 * CHUNK, 5 * CHUNK)  # empty
    assert w.chunks == {0, 1}
    w.rows(8 * CHUNK, 2 * CHUNK, 3, 4)  # rows far apart: only their own chunks
    assert w.chunks == {0, 1, 8, 10, 12}


def test_a_record_too_large_gives_up() -> None:
    w = Written()
    w.span(0, (MAX_CHUNKS + 2) * CHUNK)
    assert w.chunks is None
    w.span(0, 1)  # stays given up
    assert w.chunks is None


# ------------------------------------------------------------------ machines


def test_a_dropped_machine_gives_its_memory_to_the_next(checking_pool: CheckingPool) -> None:
    m = Machine()
    first = id(m.state.gm)
    m.load_gm(0x2000, np.arange(100, dtype=np.uint32))
    del m
    gc.collect()
    assert checking_pool.given == 1
    m2 = Machine()
    assert id(m2.state.gm) == first
    assert not m2.state.gm[:0x10000].any()


def test_a_memory_the_host_still_views_is_not_reused(checking_pool: CheckingPool) -> None:
    m = Machine()
    m.load_gm(0x100, np.full(8, 7, np.uint8))
    view = m.state.gm[0x100:0x108]
    del m
    gc.collect()
    assert checking_pool.given == 0
    assert view.tolist() == [7] * 8  # untouched by any later machine
    m2 = Machine()
    m2.load_gm(0x100, np.zeros(8, np.uint8))
    assert view.tolist() == [7] * 8


def test_shared_and_given_memories_are_not_recorded() -> None:
    gm = np.zeros(MachineConfig().gm_size, np.uint8)
    assert Machine(gm=gm).state.gm_written is None
    big = MachineConfig(gm_size=1 << 30)  # a sparse memory
    assert Machine(big).state.gm_written is None


def test_scalar_stores_are_recorded(checking_pool: CheckingPool) -> None:
    m = Machine()
    for pe in range(4):
        m.set_gpr("a0", 0x30000 + pe * 0x10000, pe=pe)
    m.set_gpr("a1", 0x1234)
    m.run(program(std("sdi a1, [a0, 0]", "swi a1, [a0, 3]")))
    assert m.read_gm(0x30000, np.uint64, 1)[0] == 0x1234
    del m
    gc.collect()
    assert checking_pool.given == 1


SMALL_GM = MachineConfig(gm_size=4 << 20)


@pytest.mark.parametrize("seed", range(12))
def test_random_kernels_record_every_write(checking_pool: CheckingPool, seed: int) -> None:
    """Every op family of the random corpus, run twice: the second run on the machine
    (and memory) the first kept gives the same outputs."""
    module, inputs = random_kernel(seed, KernelSpec(20 + 37 * seed))
    ck = compile_module(module, SMALL_GM, verify_input=False)
    first = run_compiled(ck, inputs, SMALL_GM)
    again = run_compiled(ck, inputs, SMALL_GM)  # on the machine the first run kept
    assert checking_pool.cleaned == 1
    assert first.keys() == again.keys()
    for name in first:
        assert first[name].tobytes() == again[name].tobytes()


def test_example_kernels_record_every_write(checking_pool: CheckingPool) -> None:
    from tests.compiler.kernels import KERNELS

    for build in KERNELS.values():
        module, inputs = build(0)
        ck = compile_module(module, SMALL_GM)
        run_compiled(ck, inputs, SMALL_GM)
        keep_machine(None)  # the kept machine goes: its memory back to the pool
        gc.collect()
    assert checking_pool.given == len(KERNELS)


# ------------------------------------------------------------------ kept machines


def _dirty(m: Machine) -> None:
    """Change every part of ``m``'s state a run can change: GM, GPRs (published as an
    integer block's read-only array too), queues and capacity, status, rounding mode,
    the scalar temporary queues, a Shared register, the serial counter."""
    m.run(program(std("addi zero, 7, ->a0", "addi a0, 1, ->a1")))
    m.load_gm(3 * CHUNK + 5, np.arange(1, 200, dtype=np.uint8))
    s = m.state
    s.status[:] = 0x1F
    s.fp_rounding = 2
    s.squeue[:] = 9
    s.squeue_valid[:] = True
    s.shared[3] = object()  # type: ignore[assignment]
    s.queues[1].append(object())  # type: ignore[arg-type]
    s.used[0] = 4096
    s._serial = 41


@pytest.mark.parametrize("seed", range(4))
def test_a_reset_machine_is_a_new_one(checking_pool: CheckingPool, seed: int) -> None:
    """``MachineState.reset``: after runs that change every part of the state, the
    machine equals a new one of its configuration (snapshot and the rest), and its next
    run gives what a new machine's gives."""
    module, inputs = random_kernel(seed, KernelSpec(30))
    ck = compile_module(module, SMALL_GM, verify_input=False)
    m = Machine(SMALL_GM)
    _dirty(m)
    assert m.state.reset()
    fresh = Machine(SMALL_GM)
    assert m.snapshot() == fresh.snapshot()
    for name in ("gpr_ints", "access_log", "fp_rounding", "_serial"):
        assert getattr(m.state, name) == getattr(fresh.state, name), name
    assert m.state.gpr.flags.writeable and checking_pool.cleaned == 1
    placement = place(ck, m, inputs)
    m.run(ck.program)
    got = read_outputs(ck, m, placement)
    want = run_compiled(ck, inputs, SMALL_GM)
    assert got.keys() == want.keys()
    assert all(got[k].tobytes() == want[k].tobytes() for k in got)


def test_memories_a_machine_does_not_own_are_not_reset() -> None:
    shared = Machine(MachineConfig(gm_size=SIZE), gm=np.zeros(SIZE, np.uint8))
    shared.set_gpr("a0", 5)
    assert not shared.state.reset() and shared.gpr("a0") == 5  # nothing changed
    wide = Machine(MachineConfig(gm_size=SIZE))
    wide.state.gm_written.chunks = None  # type: ignore[union-attr]  (a record given up)
    wide.set_gpr("a0", 5)
    assert not wide.state.reset() and wide.gpr("a0") == 5


def test_runs_reuse_the_kept_machine(checking_pool: CheckingPool) -> None:
    """``run_compiled`` and ``ptoc.run`` keep their machine for the thread's next run of
    the same configuration, and a run on it equals a run on a new machine."""
    from ptoc.runtime import spare

    module, inputs = random_kernel(5, KernelSpec(40))
    ck = compile_module(module, SMALL_GM, verify_input=False)
    first = run_compiled(ck, inputs, SMALL_GM)
    kept = spare._KEPT.machine
    assert isinstance(kept, Machine)
    again = run_compiled(ck, inputs, SMALL_GM)
    assert spare._KEPT.machine is kept and checking_pool.cleaned == 1
    assert all(first[k].tobytes() == again[k].tobytes() for k in first)
    # another configuration: a new machine (the kept one goes)
    run_compiled(ck, inputs, MachineConfig(gm_size=8 << 20))
    assert spare._KEPT.machine is not kept


def test_ptoc_run_keeps_its_machine_unless_traced(checking_pool: CheckingPool) -> None:
    import ptoc
    import ptoc.lang as pt
    from ptoc.runtime import spare

    @ptoc.kernel
    def double(x: ptoc.Tensor[ptoc.fp32, 8, 16], y: ptoc.Tensor[ptoc.fp32, 8, 16]) -> None:
        t = pt.load(x)
        pt.store(y, t + t)

    prog = ptoc.compile(double)
    x = np.arange(128, dtype=np.float32).reshape(8, 16)
    first = ptoc.run(prog, x=x)
    kept = spare._KEPT.machine
    assert isinstance(kept, Machine)
    again = ptoc.run(prog, x=-x)
    assert spare._KEPT.machine is kept and checking_pool.cleaned == 1
    assert np.array_equal(first["y"], 2 * x) and np.array_equal(again["y"], -2 * x)
    traced = ptoc.run(prog, trace=True, x=x)
    assert spare._KEPT.machine is None and traced.trace is not None
