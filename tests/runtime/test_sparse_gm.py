"""Sparse global memory (DECISIONS D13): a GM sized in GiB costs only the pages touched,
with the dense memory's bytes, faults and no-effect semantics."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ptoc.backend.isa import DataType, info
from ptoc.runtime import DataAlignmentFault, DataPageFault, Machine, MachineConfig
from ptoc.runtime.gm import DENSE_LIMIT, PAGE, SparseMemory, new_memory

from .util import prog, rejected_without_effect, tload, tstore

SIZE = 8 * PAGE  # a small sparse memory: eight pages

#: (start, length) of a window that may straddle pages, with a value seed
windows = st.tuples(st.integers(0, SIZE - 1), st.integers(1, 3 * PAGE), st.integers(0, 255))


@given(st.lists(windows, min_size=1, max_size=8), st.lists(windows, min_size=1, max_size=4))
def test_sparse_memory_holds_the_bytes_a_dense_array_holds(writes, reads) -> None:
    """Slices, gathers and scatters (page-straddling, repeated indices: the last value
    wins) agree byte for byte with a numpy array; untouched pages read as zero."""
    dense = np.zeros(SIZE, np.uint8)
    sparse = SparseMemory(SIZE)
    rng = np.random.default_rng(0)
    for k, (start, n, seed) in enumerate(writes):
        stop = min(SIZE, start + n)
        data = np.random.default_rng(seed).integers(0, 256, stop - start, dtype=np.uint8)
        if k % 2:
            dense[start:stop] = data
            sparse[start:stop] = data
        else:  # a scattered write with duplicates, in a shape
            idx = rng.integers(start, stop, size=(3, max(1, (stop - start) // 3)))
            vals = rng.integers(0, 256, idx.shape, dtype=np.uint8)
            dense[idx] = vals
            sparse[idx] = vals
    for start, n, _ in reads:
        stop = min(SIZE, start + n)
        assert np.array_equal(sparse[start:stop], dense[start:stop])
        idx = rng.integers(0, SIZE, size=(2, 5, 3))
        assert np.array_equal(sparse[idx], dense[idx])
    assert np.array_equal(np.asarray(sparse), dense)
    copy = sparse.copy()
    assert copy.equals(sparse)
    copy[0] = np.uint8(sparse[0:1][0] ^ 1)
    assert not copy.equals(sparse) and copy.differing(sparse) == (1, 0)


def test_writing_zeros_to_an_untouched_range_allocates_nothing() -> None:
    m = SparseMemory(SIZE)
    m[PAGE : 3 * PAGE] = np.zeros(2 * PAGE, np.uint8)
    assert m.resident_bytes == 0
    m[PAGE + 5] = 7
    assert m.resident_bytes == PAGE and int(m[PAGE + 5 : PAGE + 6][0]) == 7


def test_large_memories_are_sparse_and_small_ones_dense() -> None:
    assert isinstance(new_memory(DENSE_LIMIT), np.ndarray)
    assert isinstance(new_memory(DENSE_LIMIT + 1), SparseMemory)
    assert isinstance(Machine(MachineConfig(gm_size=4 << 30)).state.gm, SparseMemory)


HIGH = (1 << 30) + 0x12340  # beyond 1 GiB, 64-byte aligned


def _add_program(dt: DataType = DataType.FP32) -> str:
    return (
        tload(dt, 8, 64, base="a0", stride="a1")
        + tload(dt, 8, 64, base="a2", stride="a1")
        + f"BSTART.VEC TADD, {dt.name}\nB.DIM zero, 64, ->LB0\nB.DIM zero, 8, ->LB1\n"
        "B.IOT T#1, T#2, mask=1111, last, ->T<2KB>\nBSTOP\n"
        + tstore(dt, base="a3", stride="a1")
    )


def test_a_kernel_beyond_one_gib_is_bit_exact() -> None:
    """TLOAD, TADD and TSTORE at addresses past 1 GiB of a 4 GiB memory; the output and
    a page-straddling row are the numpy results, and only a few pages are resident."""
    m = Machine(MachineConfig(gm_size=4 << 30))
    rng = np.random.default_rng(3)
    x = rng.standard_normal((8, 64)).astype(np.float32)
    y = rng.standard_normal((8, 64)).astype(np.float32)
    xa, ya, oa = HIGH, (2 << 30) + PAGE - 512, (3 << 30) + 0x400  # ya straddles a page
    m.load_gm(xa, x)
    m.load_gm(ya, y)
    for pe in range(4):
        m.set_gpr("a0", xa, pe=pe)
        m.set_gpr("a2", ya, pe=pe)
        m.set_gpr("a3", oa, pe=pe)
    m.set_gpr("a1", 256)
    m.run(prog(_add_program()))
    got = m.read_gm(oa, np.float32, (8, 64))
    assert np.array_equal(got.view(np.uint32), (x + y).view(np.uint32))
    gm = m.state.gm
    assert isinstance(gm, SparseMemory) and gm.resident_bytes <= 6 * PAGE


def test_faults_of_a_sparse_memory_are_the_dense_ones_and_leave_no_trace() -> None:
    """A row past the end of a 2 GiB memory: Fault_DataPage; a misaligned base:
    Fault_DataAlignment; both leave the (sparse) memory and the machine as they were."""
    m = Machine(MachineConfig(gm_size=2 << 30))
    m.load_gm((2 << 30) - 256, np.ones(64, np.float32))
    m.set_gpr("a1", 256)
    m.set_gpr("a0", (2 << 30) - 256)
    text = tload(DataType.FP32, 2, 64) + tstore(DataType.FP32, base="a2")
    e = rejected_without_effect(m, text, DataPageFault)
    assert "beyond the 0x80000000-byte global memory" in str(e)
    m.set_gpr("a0", HIGH + 2)
    rejected_without_effect(m, tload(DataType.FP32, 1, 64), DataAlignmentFault)
    m.set_gpr("a0", HIGH)
    m.run(prog(tload(DataType.FP32, 1, 64)))
    m.set_gpr("a2", (2 << 30) - 128)  # a store whose row runs past the end
    rejected_without_effect(m, tstore(DataType.FP32, base="a2"), DataPageFault)


def test_scalar_stores_beyond_one_gib_and_their_rollback() -> None:
    """AGU stores into a sparse memory; a block that faults after a store undoes it."""
    m = Machine(MachineConfig(gm_size=2 << 30, pes=1))
    m.set_gpr("a0", HIGH)
    m.set_gpr("a1", 0x1122334455667788)
    m.run(prog("BSTART.STD FALL\nsdi a1, [a0, 0]\nBSTOP\n"))
    assert m.read_gm(HIGH, np.uint64, 1)[0] == 0x1122334455667788
    m.set_gpr("a2", 0x7FFFFFF8 + 8)  # one past the end
    text = "BSTART.STD FALL\nsdi zero, [a0, 0]\nsdi a1, [a2, 0]\nBSTOP\n"
    rejected_without_effect(m, text, DataPageFault)


def test_peak_memory_of_a_kernel_beyond_one_gib_is_modest() -> None:
    """In a fresh process, a 16 GiB machine running the kernel at addresses past 1 GiB
    (and a snapshot of it) peaks far below the memory size."""
    code = textwrap.dedent(
        """
        import resource, numpy as np
        from ptoc.runtime import Machine, MachineConfig
        from tests.runtime.test_sparse_gm import HIGH, _add_program
        from tests.runtime.util import prog
        m = Machine(MachineConfig(gm_size=16 << 30))
        x = np.arange(512, dtype=np.float32).reshape(8, 64)
        m.load_gm(HIGH, x); m.load_gm(HIGH + (5 << 30), x)
        m.set_gpr("a0", HIGH); m.set_gpr("a2", HIGH + (5 << 30))
        m.set_gpr("a3", HIGH + (10 << 30)); m.set_gpr("a1", 256)
        m.run(prog(_add_program()))
        assert m.snapshot() == m.snapshot()
        assert (m.read_gm(HIGH + (10 << 30), np.float32, (8, 64)) == 2 * x).all()
        # the peak of this process's own memory: VmHWM (ru_maxrss also counts what
        # the parent held when it forked this process, on Linux)
        try:
            status = open("/proc/self/status").read().split("VmHWM:")[1]
            print(int(status.split()[0]))
        except (OSError, IndexError):
            print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
        """
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       cwd=_root())  # fmt: skip
    assert r.returncode == 0, r.stderr
    peak_kib = int(r.stdout.split()[-1])
    assert peak_kib < 600 * 1024, f"peak RSS {peak_kib} KiB"


def _root() -> str:
    from pathlib import Path

    return str(Path(__file__).resolve().parents[2])


@pytest.mark.parametrize("size", [1 << 20, 2 << 30])
def test_snapshots_compare_bits_of_either_memory(size: int) -> None:
    m = Machine(MachineConfig(gm_size=size, pes=1))
    a = m.snapshot()
    m.load_gm(size - 8, np.ones(8, np.uint8))
    b = m.snapshot()
    assert a != b and b.differences(a) == [f"GM differs at 8 byte(s), first 0x{size - 8:x}"]
    m.load_gm(size - 8, np.zeros(8, np.uint8))
    assert m.snapshot() == a


@given(
    st.booleans(),
    st.integers(0, 3),
    st.lists(st.tuples(st.integers(0, 4 * PAGE + 99), st.integers(0, 255)), max_size=12),
)
def test_a_memory_image_rebuilds_the_memory_from_its_non_zero_pages(
    sparse: bool, zeros: int, bytes_: list[tuple[int, int]]
) -> None:
    """What a cluster launch ships: only non-zero pages (a page written with zeros is
    left out), the short last page of an odd size, and the memory's kind."""
    from ptoc.runtime.gm import MemoryImage, memory_equal

    size = 4 * PAGE + 100
    gm = new_memory(size, sparse)
    for k in range(zeros):  # pages written with zeros hold nothing worth shipping
        gm[k * PAGE : k * PAGE + 10] = np.zeros(10, np.uint8)
    for addr, value in bytes_:
        gm[np.array([addr])] = value
    image = MemoryImage.of(gm)
    written = {}
    for a, v in bytes_:
        written[a] = v  # the last write of an address wins
    pages = {a // PAGE for a, v in written.items() if v}
    assert set(image.pages) == pages
    assert image.nbytes == sum(100 if n == 4 else PAGE for n in pages)
    again = image.memory()
    assert isinstance(again, SparseMemory) == sparse and len(again) == size
    assert memory_equal(again, gm)
    again[np.array([0])] = 1  # a fresh memory: the image and the original are untouched
    assert memory_equal(image.memory(), gm)


_TYPES = (DataType.FP32, DataType.FP16, DataType.U8, DataType.FP64)


@given(
    dt=st.sampled_from(_TYPES),
    shape=st.tuples(st.integers(1, 9), st.sampled_from([1, 3, 8, 64])),
    src=st.tuples(st.integers(0, SIZE // 2), st.integers(0, 2)),  # base, extra row gap
    dst=st.integers(SIZE // 2, SIZE - 3 * PAGE),
    pages=st.sets(st.integers(0, 7), max_size=5),
    zeros=st.booleans(),
)
def test_strided_tload_tstore_of_a_sparse_memory_match_the_dense_one(
    dt, shape, src, dst, pages, zeros
) -> None:
    """The page-window paths of TLOAD and TSTORE (rows inside one page, across pages,
    from an absent page, zeros stored into an absent page) against the same bundles on
    a dense memory of the same size: the same tiles and bytes, and a zero store
    allocates no page."""
    eb = max(1, info(dt).bits // 8)
    rows, cols = shape
    stride = cols * eb + src[1] * eb * 4
    base, dst = src[0] // eb * eb, dst // eb * eb
    rng = np.random.default_rng(rows * 131 + cols)
    content = {
        n: np.zeros(PAGE, np.uint8) if zeros else rng.integers(0, 256, PAGE, np.uint8)
        for n in sorted(pages)
    }
    dense = Machine(MachineConfig(gm_size=SIZE))
    sparse = Machine(MachineConfig(gm_size=SIZE), gm=SparseMemory(SIZE))
    for m in (dense, sparse):
        for n, page in content.items():
            m.load_gm(n * PAGE, page)
        for pe in range(4):
            m.set_gpr("a0", base, pe=pe)
            m.set_gpr("a2", dst + pe * rows * stride, pe=pe)
        m.set_gpr("a1", stride)
        m.run(prog(tload(dt, rows, cols) + tstore(dt, base="a2")))
    got, want = sparse.tile("T#1").values, dense.tile("T#1").values
    assert np.array_equal(np.asarray(got).view(np.uint8), np.asarray(want).view(np.uint8))
    assert np.array_equal(np.asarray(dense.state.gm), np.asarray(sparse.state.gm))
    gm = sparse.state.gm
    assert isinstance(gm, SparseMemory)
    for n, page in gm.pages.items():
        assert n in content or page.any(), f"page {n} allocated for zeros only"
