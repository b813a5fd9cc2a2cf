"""gather_pattern, gather_flat, gather_blocks, scatter_flat, transpose."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ptoc.dialects.compound_ref import (
    CompoundError,
    gather_blocks,
    gather_flat,
    gather_pattern,
    pack_records,
    scatter_flat,
    sort32,
    transpose,
    unpack_records,
)

from . import oracle
from .gen import float_tile, int_tile

KEEP = {
    "P0101": lambda c: c % 2 == 0,
    "P1010": lambda c: c % 2 == 1,
    "P0001": lambda c: c % 4 == 0,
    "P0010": lambda c: c % 4 == 1,
    "P0100": lambda c: c % 4 == 2,
    "P1000": lambda c: c % 4 == 3,
    "P1111": lambda c: True,
}
DTYPES = [
    np.float32,
    np.float16,
    ml_dtypes.bfloat16,
    np.int32,
    np.uint32,
    np.int16,
    np.uint16,
    np.int8,
    np.uint8,
]


SMALL_ROWS, SMALL_COLS = st.integers(1, 4), st.integers(1, 40)


@st.composite
def any_tile(draw, rows=SMALL_ROWS, cols=SMALL_COLS):
    dt = draw(st.sampled_from(DTYPES))
    if np.dtype(dt).kind in "iu":
        return draw(int_tile(dt, rows, cols))
    return draw(float_tile(dt, rows, cols))


@given(t=any_tile(), pattern=st.sampled_from(sorted(KEEP)))
def test_gather_pattern_matches_oracle(t, pattern):
    off = {"P0101": 0, "P1010": 1, "P0001": 0, "P0010": 1, "P0100": 2, "P1000": 3, "P1111": 0}
    if t.shape[1] <= off[pattern]:
        with pytest.raises(CompoundError):
            gather_pattern(t, pattern)
        return
    got = gather_pattern(t, pattern)
    assert oracle.same_bits(got, oracle.gather_pattern(t, KEEP[pattern]))


@pytest.mark.parametrize(
    "pattern, shape",
    [
        ("P0101", (4, 64)),
        ("P1010", (7, 1024)),
        ("P0001", (3, 1056)),
        ("P0010", (4, 128)),
        ("P0100", (5, 256)),
        ("P1000", (6, 288)),
        ("P1111", (7, 320)),
        ("P0101", (5, 128)),
    ],
)
@pytest.mark.parametrize(
    "dt", [np.float32, np.float16, np.int16, np.uint16, np.int32, np.uint32, np.int8, np.uint8]
)
def test_gather_pattern_pto_isa_cases(pattern, shape, dt):
    rng = np.random.default_rng(19)
    t = rng.integers(0, 256, shape).astype(dt)
    got = gather_pattern(t, pattern)
    period = {"P1111": 1, "P0101": 2, "P1010": 2}.get(pattern, 4)
    assert got.shape == (shape[0], shape[1] // period) and got.dtype == dt
    # pto-isa golden: the kept columns, all rows packed contiguously
    flat = np.concatenate(
        [[t[r, c] for c in range(shape[1]) if KEEP[pattern](c)] for r in range(shape[0])]
    )
    assert np.array_equal(got.reshape(-1), flat)


def test_gather_pattern_codes_reinterpret_and_records():
    t = np.arange(8, dtype=np.float32).reshape(1, 8)
    assert np.array_equal(gather_pattern(t, 2), gather_pattern(t, "p1010"))
    as_int = gather_pattern(t, "P1010", dtype=np.int32)  # case1_float_int_P1010
    assert as_int.dtype == np.int32 and np.array_equal(as_int.view(np.float32), t[:, 1::2])
    # de-interleaving packed records recovers the SoA form
    r = sort32(np.array([[3.0, -1.0, 7.0]], np.float32))
    packed = pack_records(r)
    assert oracle.same_bits(gather_pattern(packed, "P0101", dtype=np.float32), r.values)
    assert np.array_equal(gather_pattern(packed, "P1010"), r.payload)
    r16 = sort32(
        np.array([[3.0, -1.0, 7.0]], np.float16),
        np.array([[0x10002, 5, 0xFFFF0000]], np.uint32),
    )
    p16 = pack_records(r16)
    assert oracle.same_bits(gather_pattern(p16, "P0001", dtype=np.float16), r16.values)
    lo, hi = gather_pattern(p16, "P0100"), gather_pattern(p16, "P1000")
    assert np.array_equal(lo.astype(np.uint32) | (hi.astype(np.uint32) << 16), r16.payload)
    assert np.all(gather_pattern(p16, "P0010") == 0)
    assert oracle.same_bits(unpack_records(p16, np.float16).values, r16.values)
    with pytest.raises(CompoundError):
        gather_pattern(t, "P0110")
    with pytest.raises(CompoundError):
        gather_pattern(t, "P0101", dtype=np.int16)


@given(t=any_tile(), data=st.data())
def test_gather_flat_matches_oracle(t, data):
    shape = data.draw(st.tuples(st.integers(1, 4), st.integers(1, 20)))
    n = shape[0] * shape[1]
    idx = np.array(data.draw(st.lists(st.integers(0, t.size - 1), min_size=n, max_size=n)))
    idx = idx.astype(
        data.draw(
            st.sampled_from([np.int32, np.uint32, np.int16 if t.size < 2**15 else np.int32])
        )
    )
    idx = idx.reshape(shape)
    assert oracle.same_bits(gather_flat(t, idx), oracle.gather_flat(t, idx))


def test_gather_flat_rejects_out_of_range():
    t = np.zeros((2, 3), np.float32)
    with pytest.raises(CompoundError, match="outside"):
        gather_flat(t, np.array([[0, 6]], np.int32))
    with pytest.raises(CompoundError, match="outside"):
        gather_flat(t, np.array([[-1]], np.int32))
    with pytest.raises(CompoundError):
        gather_flat(t, np.array([[0.0]], np.float32))


@pytest.mark.parametrize(
    "dt, src, dst, idx_dt",
    [
        (np.float32, (32, 1024), (16, 64), np.int32),
        (np.int32, (32, 512), (16, 256), np.int32),
        (np.float16, (16, 1024), (16, 128), np.int32),
        (np.int16, (32, 256), (32, 64), np.int32),
        (np.float16, (16, 1024), (16, 128), np.int16),
    ],
)
def test_gather_flat_pto_isa_cases(dt, src, dst, idx_dt):
    rng = np.random.default_rng(19)
    t = rng.integers(-1000, 1000, src).astype(dt)
    idx = rng.integers(0, min(t.size, np.iinfo(idx_dt).max), dst).astype(idx_dt)
    got = gather_flat(t, idx)
    assert got.shape == dst and got.dtype == dt
    assert np.array_equal(got, t.reshape(-1)[idx])


@given(
    t=any_tile(rows=st.integers(1, 3), cols=st.sampled_from([8, 16, 32, 48, 64])),
    data=st.data(),
)
def test_gather_blocks_matches_oracle(t, data):
    nblocks = t.nbytes // 32
    if nblocks == 0:
        with pytest.raises(CompoundError):
            gather_blocks(t, np.zeros((1, 1), np.uint32))
        return
    shape = data.draw(st.tuples(st.integers(1, 3), st.integers(1, 4)))
    offs = (
        np.array(
            data.draw(
                st.lists(
                    st.integers(0, nblocks - 1),
                    min_size=shape[0] * shape[1],
                    max_size=shape[0] * shape[1],
                )
            )
        ).reshape(shape)
        * 32
    )
    offs = offs.astype(np.uint32)
    got = gather_blocks(t, offs)
    assert got.shape == (shape[0], shape[1] * 32 // t.dtype.itemsize)
    assert oracle.same_bits(got, oracle.gather_blocks(t, offs))


@pytest.mark.parametrize(
    "dt, src, offs",
    [
        (np.float32, (2, 128), (2, 16)),
        (np.int32, (2, 128), (2, 16)),
        (np.uint32, (2, 128), (2, 16)),
        (np.int16, (1, 32768), (1, 2048)),
        (np.float16, (1, 32768), (1, 2048)),
        (np.uint16, (257, 128), (257, 8)),
        (np.int8, (2, 256), (2, 8)),
        (np.int8, (2, 32768), (2, 1024)),
        (np.uint8, (2, 32768), (2, 1024)),
    ],
)
def test_gather_blocks_pto_isa_cases(dt, src, offs):
    """pto-isa TGATHERB: offsets i*32, an identity copy; plus a reversed-block variant."""
    rng = np.random.default_rng(19)
    t = rng.integers(0, 100, src).astype(dt)
    off = (np.arange(offs[0] * offs[1], dtype=np.uint32) * 32).reshape(offs)
    assert np.array_equal(gather_blocks(t, off), t)
    rev = gather_blocks(t, off[:, ::-1].copy())
    per = 32 // t.dtype.itemsize
    want = t.reshape(offs[0], offs[1], per)[:, ::-1, :].reshape(src)
    assert np.array_equal(rev, want)


def test_gather_blocks_rejects():
    t = np.zeros((2, 16), np.float32)  # 128 bytes = 4 blocks
    with pytest.raises(CompoundError, match="multiple of 32"):
        gather_blocks(t, np.array([[4]], np.uint32))
    with pytest.raises(CompoundError, match="leaves the"):
        gather_blocks(t, np.array([[128]], np.uint32))


@st.composite
def scatter_case(draw):
    t = draw(any_tile(rows=st.integers(1, 4), cols=st.integers(1, 12)))
    shape = draw(st.tuples(st.integers(1, 4), st.integers(1, 12)))
    n = shape[0] * shape[1]
    idx = np.array(
        draw(
            st.lists(
                st.integers(0, min(n - 1, 5)) | st.integers(0, n - 1),
                min_size=t.size,
                max_size=t.size,
            )
        )
    )  # many duplicates
    into = None
    if draw(st.booleans()):
        into = (
            np.full(shape, 7, t.dtype)
            if t.dtype.kind in "iu"
            else np.full(shape, -0.0, t.dtype)
        )
    return t, idx.reshape(t.shape).astype(np.int32), shape, into


@given(case=scatter_case())
def test_scatter_flat_matches_oracle(case):
    t, idx, shape, into = case
    keep = None if into is None else into.copy()
    got = scatter_flat(t, idx, shape, into)
    assert got.shape == shape and got.dtype == t.dtype
    assert oracle.same_bits(got, oracle.scatter_flat(t, idx, shape, into))
    if into is not None:
        assert oracle.same_bits(into, keep)  # not modified
    else:
        written = np.zeros(shape[0] * shape[1], bool)
        written[idx.reshape(-1)] = True
        assert np.all(oracle.raw(got).reshape(-1)[~written] == 0)  # +0, all zero bits


@pytest.mark.parametrize(
    "dt, shape, idx_dt",
    [
        (np.int16, (2, 32), np.uint16),
        (np.float16, (63, 64), np.uint16),
        (np.int32, (31, 128), np.uint32),
        (np.int16, (15, 192), np.int16),
        (np.float32, (7, 448), np.int32),
        (np.int8, (256, 32), np.uint16),
        (np.float32, (32, 64), np.uint32),
        (ml_dtypes.bfloat16, (32, 64), np.int16),
    ],
)
def test_scatter_flat_pto_isa_cases(dt, shape, idx_dt):
    """pto-isa NPU TSCATTER: flat indices with heavy duplicates, last writer wins."""
    rng = np.random.default_rng(19)
    t = rng.integers(-100, 100, shape).astype(dt)
    idx = rng.integers(0, min(shape[0] * shape[1], 64), shape).astype(idx_dt)
    got = scatter_flat(t, idx, shape)
    want = np.zeros(shape[0] * shape[1], dt)
    for k, i in enumerate(idx.reshape(-1)):  # the pto-isa golden loop
        want[i] = t.reshape(-1)[k]
    assert oracle.same_bits(got, want.reshape(shape))
    base = rng.integers(-5, 5, shape).astype(dt)
    merged = scatter_flat(t, idx, shape, into=base)
    written = np.zeros(shape[0] * shape[1], bool)
    written[idx.reshape(-1).astype(np.int64)] = True
    assert np.array_equal(merged.reshape(-1)[~written], base.reshape(-1)[~written])
    assert np.array_equal(merged.reshape(-1)[written], got.reshape(-1)[written])


def test_scatter_flat_rejects():
    t = np.zeros((1, 2), np.float32)
    with pytest.raises(CompoundError, match="outside"):
        scatter_flat(t, np.array([[0, 4]]), (2, 2))
    with pytest.raises(CompoundError):
        scatter_flat(t, np.array([[0]]), (2, 2))
    with pytest.raises(CompoundError):
        scatter_flat(t, np.array([[0, 1]]), (2, 2), into=np.zeros((2, 2), np.float16))


@given(t=any_tile(rows=st.integers(1, 9), cols=st.integers(1, 70)))
def test_transpose_is_a_bit_copy(t):
    got = transpose(t, scratch=np.empty((64, 64), t.dtype))
    assert got.shape == t.shape[::-1]
    assert oracle.same_bits(got, np.ascontiguousarray(t.T))
    assert oracle.same_bits(transpose(t), got)


@pytest.mark.parametrize(
    "dt, shape",
    [
        (np.float32, (1, 8)),
        (np.float16, (9, 512)),
        (np.int8, (512, 2)),
        (np.uint8, (27, 77)),
        (np.float32, (31, 15)),
        (np.float16, (22, 63)),
    ],
)
def test_transpose_pto_isa_cases(dt, shape):
    t = np.random.default_rng(19).integers(0, 100, shape).astype(dt)
    got = transpose(t, np.zeros((16, 16), dt))
    assert got.shape == shape[::-1] and np.array_equal(got, t.T)
    if np.dtype(dt).itemsize == 4:
        assert np.array_equal(transpose(t, dtype=np.uint32), t.T.view(np.uint32))
