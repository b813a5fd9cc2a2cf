"""TGATHER / TSCATTER reference semantics against plain-Python loops (seed D138/D139)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ptoc.backend.isa.datatypes import DataType, info
from ptoc.backend.isa.semantics.core import SemanticError
from ptoc.backend.isa.semantics.indexed import (
    tgather,
    tgather_types_legal,
    tscatter,
    tscatter_types_legal,
)

D = DataType
GATHER_VALUES = [D.FP32, D.FP16, D.S32, D.S16, D.U32, D.U16]
SCATTER_PAIRS = [(v, i) for v in (D.FP32, D.S32, D.U32) for i in (D.S32, D.U32)] + [
    (v, i) for v in (D.FP16, D.BF16, D.S16, D.U16, D.S8, D.U8) for i in (D.S16, D.U16)
]


def random_bits(rng: np.random.Generator, dt: DataType, shape) -> np.ndarray:
    """Arbitrary raw encodings (NaNs with payloads included) in dt's carrier."""
    ti = info(dt)
    ut = np.dtype(f"uint{ti.bits}")
    raw = rng.integers(0, 1 << ti.bits, size=shape, dtype=np.uint64).astype(ut)
    return raw.view(ti.carrier)


def raw(a: np.ndarray) -> np.ndarray:
    return a.view(np.dtype(f"uint{a.dtype.itemsize * 8}"))


@pytest.mark.parametrize("dt", GATHER_VALUES)
@pytest.mark.parametrize("idx_dt", [D.S32, D.U32])
@given(
    seed=st.integers(0, 2**32 - 1),
    p=st.integers(1, 3),
    rv=st.integers(1, 9),
    r=st.integers(1, 5),
    c=st.integers(1, 37),
    extra=st.integers(0, 3),
)
def test_tgather_matches_loop(dt, idx_dt, seed, p, rv, r, c, extra):
    rng = np.random.default_rng(seed)
    # a valid-region view of a wider payload (not contiguous) every other example
    wide = random_bits(rng, dt, (p, rv, c + extra + (seed & 1) * 3))
    values = wide[:, :, : c + extra]
    index = rng.integers(0, rv, size=(p, r, c)).astype(info(idx_dt).carrier)
    dst, status = tgather(dt, idx_dt, values, index)
    assert dst.shape == (p, r, c) and dst.dtype == info(dt).carrier
    for pe in range(p):
        for i in range(r):
            for j in range(c):
                assert raw(dst)[pe, i, j] == raw(values)[pe, int(index[pe, i, j]), j]
    assert status.tolist() == [0] * p


def test_tgather_negative_index_illegal():
    values = np.zeros((1, 4, 2), np.float32)
    with pytest.raises(SemanticError):
        tgather(D.FP32, D.S32, values, np.array([[[0, -1]]], np.int32))
    # The same bits read as U32 are simply too large.
    with pytest.raises(SemanticError):
        tgather(D.FP32, D.U32, values, np.array([[[0, 0xFFFFFFFF]]], np.uint32))


def test_tgather_index_equal_to_valid_rows_illegal():
    values = np.zeros((2, 4, 2), np.int16)
    index = np.array([[[3, 0]], [[4, 0]]], np.uint32)  # PE1 is out of range
    with pytest.raises(SemanticError):
        tgather(D.S16, D.U32, values, index)


def test_tgather_selected_element_must_be_defined():
    values = np.arange(6, dtype=np.int32).reshape(1, 3, 2)
    defined = np.ones((1, 3, 2), bool)
    defined[0, 2, 1] = False
    out, _ = tgather(D.S32, D.S32, values, np.array([[[2, 1]]], np.int32), defined)
    assert out.tolist() == [[[4, 3]]]
    with pytest.raises(SemanticError):
        tgather(D.S32, D.S32, values, np.array([[[2, 2]]], np.int32), defined)


def test_tgather_type_rules():
    for v in GATHER_VALUES:
        for i in (D.S32, D.U32):
            assert tgather_types_legal(v, i) is None
    assert tgather_types_legal(D.FP32, D.S16) is not None
    assert tgather_types_legal(D.BF16, D.S32) is not None
    assert tgather_types_legal(D.S8, D.S32) is not None


@pytest.mark.parametrize(("dt", "idx_dt"), SCATTER_PAIRS)
@given(
    seed=st.integers(0, 2**32 - 1),
    p=st.integers(1, 3),
    r=st.integers(1, 6),
    c=st.integers(1, 33),
    spare=st.integers(0, 4),
    phys=st.integers(0, 3),
)
def test_tscatter_matches_loop(dt, idx_dt, seed, p, r, c, spare, phys):
    rng = np.random.default_rng(seed)
    dst_rows = r + spare
    values = random_bits(rng, dt, (p, r, c))
    # Distinct target rows per column: a random permutation prefix of each column.
    index = np.argsort(rng.random((p, dst_rows, c)), axis=1)[:, :r, :]
    index = index.astype(info(idx_dt).carrier)
    shape = (dst_rows + phys, c + 2 * phys)
    dst, status = tscatter(dt, idx_dt, values, index, dst_rows, shape)
    expect = np.zeros((p, *shape), dtype=np.uint64)
    for pe in range(p):
        for i in range(r):
            for j in range(c):
                expect[pe, int(index[pe, i, j]), j] = raw(values)[pe, i, j]
    assert dst.shape == (p, *shape) and dst.dtype == info(dt).carrier
    assert np.array_equal(raw(dst).astype(np.uint64), expect)
    assert status.tolist() == [0] * p


def test_tscatter_zero_initialised_padding():
    values = np.array([[[-1.5, 2.0]]], dtype=np.float32)
    dst, _ = tscatter(D.FP32, D.S32, values, np.array([[[2, 0]]], np.int32), 3, (4, 4))
    expect = np.zeros((1, 4, 4), np.float32)
    expect[0, 2, 0], expect[0, 0, 1] = -1.5, 2.0
    assert np.array_equal(raw(dst), raw(expect))  # +0.0 everywhere else (no -0.0)
    assert not np.any(raw(dst) == 0x80000000)


def test_tscatter_duplicate_destination_illegal():
    values = np.ones((1, 3, 2), np.int8)
    index = np.array([[[0, 1], [2, 2], [1, 2]]], np.int16)  # column 1 targets row 2 twice
    with pytest.raises(SemanticError):
        tscatter(D.S8, D.S16, values, index, 3, (4, 2))
    # The same row in different columns is fine.
    ok = np.array([[[0, 0], [1, 1], [2, 2]]], np.int16)
    dst, _ = tscatter(D.S8, D.S16, values, ok, 3, (4, 2))
    assert dst[0, :3].tolist() == [[1, 1]] * 3 and dst[0, 3].tolist() == [0, 0]


@given(
    seed=st.integers(0, 2**32 - 1),
    p=st.integers(1, 3),
    r=st.integers(2, 6),
    c=st.integers(1, 5),
    dst_rows=st.integers(1, 8),
)
def test_tscatter_duplicates_are_found_exactly(seed, p, r, c, dst_rows):
    """Random target rows (duplicates likely): the block is illegal exactly when some
    PE's column selects one row twice; equal rows on other PEs or columns are fine."""
    rng = np.random.default_rng(seed)
    index = rng.integers(0, dst_rows, (p, r, c)).astype(np.int32)
    dup = any(len(set(index[pe, :, j].tolist())) < r for pe in range(p) for j in range(c))
    values = random_bits(rng, D.S32, (p, r, c))
    if dup:
        with pytest.raises(SemanticError, match="select one destination"):
            tscatter(D.S32, D.S32, values, index, dst_rows, (dst_rows, c))
    else:
        dst, _ = tscatter(D.S32, D.S32, values, index, dst_rows, (dst_rows, c))
        for pe in range(p):
            for i in range(r):
                for j in range(c):
                    assert dst[pe, index[pe, i, j], j] == values[pe, i, j]


def test_tscatter_index_range_illegal():
    values = np.ones((1, 1, 2), np.uint16)
    with pytest.raises(SemanticError):
        tscatter(D.U16, D.S16, values, np.array([[[0, -2]]], np.int16), 4, (4, 2))
    with pytest.raises(SemanticError):
        tscatter(D.U16, D.U16, values, np.array([[[0, 4]]], np.uint16), 4, (8, 2))


def test_tscatter_width_pairing():
    for v, i in SCATTER_PAIRS:
        assert tscatter_types_legal(v, i) is None
    assert tscatter_types_legal(D.FP32, D.S16) is not None
    assert tscatter_types_legal(D.FP16, D.U32) is not None
    assert tscatter_types_legal(D.S8, D.S32) is not None
    assert tscatter_types_legal(D.FP64, D.S32) is not None
