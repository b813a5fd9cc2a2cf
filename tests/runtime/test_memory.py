"""TLOAD/TSTORE/TMOV: strided footprints, dense defaults, per-PE bases, 4-bit, layouts."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ptoc.backend.isa import DataType, info
from ptoc.runtime import DataPageFault, Layout, TileLegalityFault

from .util import GM, machine, prog, same_bits, tload, tstore

WHOLE = [
    DataType.FP32,
    DataType.FP16,
    DataType.BF16,
    DataType.S8,
    DataType.U64,
    DataType.E4M3,
    DataType.S16,
    DataType.FP64,
]


def rand_bytes(rng: np.random.Generator, n: int) -> np.ndarray:
    return rng.integers(0, 256, n, dtype=np.uint8)


def expected_load(gm: np.ndarray, dt: DataType, base: int, stride: int, vr: int, vc: int):  # type: ignore[no-untyped-def]
    """Plain-numpy reference of the strided read (whole-byte types)."""
    eb = info(dt).bits // 8
    rows = [gm[base + r * stride : base + r * stride + vc * eb] for r in range(vr)]
    return np.stack(rows).copy().view(info(dt).carrier)


@given(
    dt=st.sampled_from(WHOLE),
    vr=st.integers(1, 6),
    vc=st.integers(1, 9),
    pad_bytes=st.integers(0, 3),
    seed=st.integers(0, 2**16),
)
def test_strided_load_store_round_trip(dt, vr, vc, pad_bytes, seed) -> None:  # type: ignore[no-untyped-def]
    eb = info(dt).bits // 8
    stride = (vc + pad_bytes) * eb
    rng = np.random.default_rng(seed)
    m = machine()
    src = rand_bytes(rng, 4096)
    m.load_gm(0x1000, src)
    m.set_gpr("a0", 0x1000)
    m.set_gpr("a1", stride)
    col = 1 << (vc - 1).bit_length()
    m.run(prog(tload(dt, vr, vc, col=col)))
    t = m.tile("T#1")
    want = expected_load(m.state.gm, dt, 0x1000, stride, vr, vc)
    for pe in range(4):
        assert same_bits(t.values[pe], want)
    assert t.defined.all()
    # store with another stride; the gaps between rows stay untouched
    out_stride = stride + 2 * eb
    m.set_gpr("a0", 0x8000)
    m.set_gpr("a1", out_stride)
    m.load_gm(0x8000, np.full(4096, 0x5A, np.uint8))
    m.run(prog(tstore(dt)))
    got = m.read_gm(0x8000, np.uint8, 4096)
    ref = np.full(4096, 0x5A, np.uint8)
    for r in range(vr):
        ref[r * out_stride : r * out_stride + vc * eb] = want[r].view(np.uint8)
    assert np.array_equal(got, ref)


def test_omitted_ior_is_base_zero_and_dense_col_stride() -> None:
    m = machine()
    data = np.arange(64, dtype=np.int32)
    m.load_gm(0, data)
    # Col = 8 (LB2) so the dense stride is 32 bytes even though only 3 columns load
    m.run(prog(tload(DataType.S32, 3, 3, col=8, stride=None)))
    assert m.tile("T#1").values[0].tolist() == [[0, 1, 2], [8, 9, 10], [16, 17, 18]]


def test_explicit_zero_stride_reads_zero() -> None:
    m = machine()
    m.load_gm(0x100, np.arange(8, dtype=np.int16))
    m.set_gpr("a0", 0x100)
    m.run(prog(tload(DataType.S16, 4, 8, stride="zero")))  # B.IOR a0, zero
    assert np.all(m.tile("T#1").values[0] == np.arange(8))


def test_per_pe_bases_and_partial_mask() -> None:
    m = machine()
    for pe in range(4):
        m.load_gm(0x1000 * (pe + 1), np.full((2, 4), pe + 1, np.int32))
        m.set_gpr("a0", 0x1000 * (pe + 1), pe=pe)
    m.set_gpr("a1", 16)
    m.run(prog(tload(DataType.S32, 2, 4, mask="1110")))
    v = m.tile("T#1")
    assert [int(v.values[pe, 0, 0]) for pe in range(4)] == [1, 2, 3, 0]
    assert v.defined[:3].all() and not v.defined[3].any()
    # store PE1 and PE2 only, each to its own base (PE0 keeps its GM)
    for pe in range(4):
        m.set_gpr("a0", 0x10000 + 0x100 * pe, pe=pe)
    m.run(prog(tstore(DataType.S32, mask="0100")))
    assert m.read_gm(0x10100, np.int32, (2, 4)).tolist() == [[2] * 4] * 2
    assert not m.read_gm(0x10000, np.int32, 8).any()


def test_four_bit_nibbles() -> None:
    m = machine()
    raw = np.array([0x21, 0x43, 0x65, 0x87, 0xA9, 0xCB], np.uint8)
    m.load_gm(0x40, raw)
    m.set_gpr("a0", 0x40)
    m.set_gpr("a1", 3)  # 3 bytes per row
    m.run(prog(tload(DataType.U4X2, 2, 5, col=8)))
    v = m.tile("T#1").values[0].view(np.uint8)
    # even column -> low nibble, odd column -> high nibble
    assert v.tolist() == [[1, 2, 3, 4, 5], [7, 8, 9, 10, 11]]
    # store back elsewhere: the sixth nibble of each row (odd column 5) is preserved
    m.load_gm(0x80, np.full(6, 0xEE, np.uint8))
    m.set_gpr("a0", 0x80)
    m.run(prog(tstore(DataType.U4X2)))
    assert m.read_gm(0x80, np.uint8, 6).tolist() == [0x21, 0x43, 0xE5, 0x87, 0xA9, 0xEB]


def test_signed_four_bit_carrier() -> None:
    m = machine()
    m.load_gm(0, np.array([0xF8], np.uint8))
    m.run(prog(tload(DataType.S4X2, 1, 2, stride=None)))
    vals = m.tile("T#1").values[0, 0]
    assert vals.dtype == ml_dtypes.int4 and vals.astype(int).tolist() == [-8, -1]


def test_nd2dn_load_and_dn_rules() -> None:
    m = machine()
    a = np.arange(16 * 8, dtype=np.float32).reshape(16, 8)
    m.load_gm(0x400, a)
    m.set_gpr("a0", 0x400)
    m.set_gpr("a1", 32)
    m.run(prog(tload(DataType.FP32, 16, 8, layout="ND2DN")))
    t = m.tile("T#1")
    assert t.layout is Layout.COL_MAJOR and np.array_equal(t.values[0], a)
    # elementwise operations need row-major sources
    with pytest.raises(TileLegalityFault, match="ColumnMajor"):
        m.run(
            prog(
                "BSTART.SFU TEXP, FP32\nB.DIM zero, 8, ->LB0\nB.DIM zero, 16, ->LB1\n"
                "B.IOT T#1, mask=1111, last, ->T<512B>\nBSTOP\n"
            )
        )
    # a DN2ND store writes the same logical matrix; TMOV DN2ND converts the descriptor
    m.set_gpr("a0", 0x2000)
    m.run(prog(tstore(DataType.FP32, extra="B.DATR Layout=DN2ND\n")))
    assert np.array_equal(m.read_gm(0x2000, np.float32, (16, 8)), a)
    m.run(
        prog(
            "BSTART.TMOV FP32\nB.DATR Layout=DN2ND\nB.IOT T#1, mask=1111, last, ->U<512B>\n"
            "BSTOP\n"
        )
    )
    u = m.tile("U#1")
    assert u.layout is Layout.ROW_MAJOR and np.array_equal(u.values[0], a)
    with pytest.raises(TileLegalityFault, match="layout"):
        m.run(prog(tstore(DataType.FP32, "U#1", extra="B.DATR Layout=DN2ND\n")))


def test_tmov_copies_payload_and_definedness() -> None:
    m = machine()
    m.load_gm(0, np.arange(8, dtype=np.int32))
    m.run(prog(tload(DataType.S32, 1, 8, stride=None, size="128B", mask="1100")))
    m.run(prog("BSTART.TMOV DTYPE_NONE\nB.IOT T#1, mask=1100, last, ->N<128B>\nBSTOP\n"))
    a, b = m.tile("T#1"), m.tile("N#1")
    assert same_bits(a.payload, b.payload) and np.array_equal(a.defined, b.defined)
    assert b.dtype is DataType.S32 and b.mask == 0b1100


def test_gm_fault_names_the_address() -> None:
    m = machine()
    m.set_gpr("a0", GM - 8)
    m.set_gpr("a1", 16)
    with pytest.raises(DataPageFault) as info_:
        m.run(prog(tload(DataType.FP32, 2, 4)))
    assert f"0x{GM:x}" in info_.value.rule and "PE0 row 0 col 2" in info_.value.rule


def test_negative_stride_wraps() -> None:
    m = machine()
    m.load_gm(0x100, np.arange(12, dtype=np.int32).reshape(3, 4))
    m.set_gpr("a0", 0x120)
    m.set_gpr("a1", -16)  # 64-bit wrap: rows go backwards
    m.run(prog(tload(DataType.S32, 3, 4)))
    assert m.tile("T#1").values[0].tolist() == [[8, 9, 10, 11], [4, 5, 6, 7], [0, 1, 2, 3]]


def test_fractal_layouts_are_descriptor_state() -> None:
    m = machine()
    a = np.arange(16 * 8, dtype=np.float32).reshape(16, 8)
    m.load_gm(0x400, a)
    m.set_gpr("a0", 0x400)
    m.set_gpr("a1", 32)
    m.run(prog(tload(DataType.FP32, 16, 8, layout="ND2NZ")))  # 16 rows, 8 = 32 B per row
    t = m.tile("T#1")
    assert t.layout is Layout.NZ and np.array_equal(t.values[0], a)
    with pytest.raises(TileLegalityFault, match="fractal"):
        m.run(prog(tload(DataType.FP32, 8, 8, layout="ND2NZ", size="256B")))  # 8 rows
    with pytest.raises(TileLegalityFault, match="DTYPE_NONE"):  # the CUBE transport path
        m.run(prog(tload(DataType.FP32, 8, 8, layout="ND2M16")))


def test_tmov_dtype_none_copies_a_predicate_tile() -> None:
    """TileShapeAndTypeMatch: same storage kind and DataType, so a predicate tile (which
    has no DataType) moves only with BSTART.TMOV DTYPE_NONE, every bit kept."""
    m = machine()
    a = np.array([1.0, -2.0, np.nan, 0.0, 5.0, -0.0, 7.0, 8.0], np.float32)
    b = np.array([1.0, 2.0, 3.0, -0.0, 4.0, 0.0, np.nan, 9.0], np.float32)
    m.push_tile("T", np.broadcast_to(a, (4, 1, 8)), DataType.FP32)
    m.push_tile("T", np.broadcast_to(b, (4, 1, 8)), DataType.FP32)
    m.run(
        prog("""
        BSTART.VEC TCMP, FP32
        B.DATR {NORM, FP64, Zero, GE, Default, 0, 0}
        B.DIM zero, 8, ->LB0
        B.IOT T#2, T#1, mask=1111, last, ->U<128B>
        BSTOP
        BSTART.TMOV DTYPE_NONE
        B.DIM zero, 8, ->LB0
        B.IOT U#1, mask=1111, last, ->M<128B>
        BSTOP
    """)
    )
    p, q = m.tile("U#1"), m.tile("M#1")
    assert q.dtype is None and same_bits(p.payload, q.payload)
    assert np.array_equal(q.values[0][0], a >= b)  # NaN compares false, -0 == +0
    with pytest.raises(TileLegalityFault, match="DTYPE_NONE"):
        m.run(prog("BSTART.TMOV U8\nB.DIM zero, 8, ->LB0\n"
                   "B.IOT M#1, mask=1111, last, ->N<128B>\nBSTOP\n"))  # fmt: skip


@given(
    dt=st.sampled_from(WHOLE),
    vr=st.integers(1, 5),
    vc=st.integers(1, 7),
    bases=st.lists(st.integers(0, 600), min_size=1, max_size=4),
    stride=st.integers(0, 80),
    seed=st.integers(0, 2**16),
)
def test_closed_form_footprint_is_the_element_probe(dt, vr, vc, bases, stride, seed) -> None:  # type: ignore[no-untyped-def]
    """The closed-form bounds and alignment proof (strided views, lazily built
    addresses) reads, writes and faults exactly as the element-by-element probe: same
    values, same bytes in the same order, same first fault."""
    from ptoc.runtime import memory as mem

    size = 768
    p = len(bases)
    base = np.array(bases, np.uint64)
    strides = np.array([stride] * p, np.uint64)
    pes = tuple(range(p))
    rng = np.random.default_rng(seed)
    gm = rand_bytes(rng, size)

    def probe(closed: bool):  # type: ignore[no-untyped-def]
        real = mem.dense_rows
        if not closed:
            mem.dense_rows = lambda *a: None  # type: ignore[assignment]
        try:
            return mem.footprint(dt, base, strides, vr, vc, size, "TLOAD", False, pes)
        except (mem.DataPageFault, mem.DataAlignmentFault) as f:
            return (type(f), f.rule)
        finally:
            mem.dense_rows = real

    fast, slow = probe(True), probe(False)
    if isinstance(slow, tuple):
        assert fast == slow
        return
    assert not isinstance(fast, tuple)
    assert np.array_equal(fast.addr, slow.addr)
    got, want = mem.gather(gm, fast, dt), mem.gather(gm, slow, dt)
    assert same_bits(got, want)
    values = rand_bytes(rng, got.nbytes).view(got.dtype).reshape(got.shape)
    after = {}
    for name, fp in (("fast", fast), ("slow", slow)):
        g = gm.copy()
        writes = mem.scatter_plan(g, fp, values, strides)
        for w in writes:
            w.apply(g)
        after[name] = (g, np.concatenate([np.asarray(w.index) for w in writes]).size)
    assert np.array_equal(after["fast"][0], after["slow"][0])
    assert after["fast"][1] == after["slow"][1]
