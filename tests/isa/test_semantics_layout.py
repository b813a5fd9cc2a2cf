"""TTRANS / TCONCAT / TEXTRACT / TINSERT / TFILLPAD against plain-Python loops."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ptoc.backend.isa.datatypes import DataType, info
from ptoc.backend.isa.semantics.core import SemanticError
from ptoc.backend.isa.semantics.layout import (
    tconcat,
    tconcat_shapes_legal,
    textract,
    textract_shape_legal,
    tfillpad,
    tfillpad_shapes_legal,
    tinsert,
    tinsert_shape_legal,
    ttrans,
    ttrans_shape_legal,
)

D = DataType
# Byte-or-wider carriers, floats included so NaN payloads and -0 must survive bit-exactly.
TYPES = [
    D.FP64,
    D.FP32,
    D.TF32,
    D.FP16,
    D.BF16,
    D.E4M3,
    D.E5M2,
    D.HiF8,
    D.S64,
    D.S32,
    D.S16,
    D.S8,
    D.U64,
    D.U32,
    D.U16,
    D.U8,
]


def random_tile(rng: np.random.Generator, dt: DataType, shape) -> np.ndarray:
    ti = info(dt)
    ut = np.dtype(f"uint{ti.bits}")
    raw = rng.integers(0, 1 << ti.bits, size=shape, dtype=np.uint64).astype(ut)
    return raw.view(ti.carrier)


def raw(a: np.ndarray) -> np.ndarray:
    return np.asarray(a).view(np.dtype(f"uint{a.dtype.itemsize * 8}"))


dims = st.integers(1, 11)


@pytest.mark.parametrize("dt", TYPES)
@given(seed=st.integers(0, 2**32 - 1), p=st.integers(1, 3), r=dims, c=dims)
def test_ttrans_bit_exact(dt, seed, p, r, c):
    src = random_tile(np.random.default_rng(seed), dt, (p, r, c))
    dst, status = ttrans(dt, src)
    assert dst.shape == (p, c, r) and dst.dtype == src.dtype
    for pe in range(p):
        for i in range(r):
            for j in range(c):
                assert raw(dst)[pe, j, i] == raw(src)[pe, i, j]
    assert status.tolist() == [0] * p
    assert ttrans_shape_legal((r, c), (c, r)) is None
    if r != c:
        assert ttrans_shape_legal((r, c), (r, c)) is not None


@given(seed=st.integers(0, 2**32 - 1), r=dims, ca=dims, cb=dims, dt=st.sampled_from(TYPES))
def test_tconcat_columns(seed, r, ca, cb, dt):
    rng = np.random.default_rng(seed)
    a, b = random_tile(rng, dt, (2, r, ca)), random_tile(rng, dt, (2, r, cb))
    dst, _ = tconcat(dt, a, b)
    for i in range(r):
        for j in range(ca + cb):
            want = raw(a)[:, i, j] if j < ca else raw(b)[:, i, j - ca]
            assert np.array_equal(raw(dst)[:, i, j], want)
    assert tconcat_shapes_legal((r, ca), (r, cb), (r, ca + cb)) is None
    assert tconcat_shapes_legal((r, ca), (r + 1, cb), (r, ca + cb)) is not None
    assert tconcat_shapes_legal((r, ca), (r, cb), (r, ca + cb + 1)) is not None


@given(seed=st.integers(0, 2**32 - 1), sr=dims, sc=dims, data=st.data())
def test_textract_per_pe_offsets(seed, sr, sc, data):
    rng = np.random.default_rng(seed)
    vr, vc = data.draw(st.integers(1, sr)), data.draw(st.integers(1, sc))
    ro = np.array([data.draw(st.integers(0, sr - vr)) for _ in range(3)], np.uint64)
    co = np.array([data.draw(st.integers(0, sc - vc)) for _ in range(3)], np.uint64)
    src = random_tile(rng, D.BF16, (3, sr, sc))
    dst, status = textract(D.BF16, src, ro, co, (vr, vc))
    for pe in range(3):
        for i in range(vr):
            for j in range(vc):
                assert raw(dst)[pe, i, j] == raw(src)[pe, i + int(ro[pe]), j + int(co[pe])]
    assert status.tolist() == [0, 0, 0]


def test_textract_out_of_range_illegal():
    src = np.zeros((2, 4, 4), np.int32)
    assert textract_shape_legal((4, 4), (2, 2), 2, 2) is None
    assert textract_shape_legal((4, 4), (2, 2), 3, 0) is not None
    with pytest.raises(SemanticError):
        textract(D.S32, src, np.array([0, 3], np.uint64), 0, (2, 2))
    with pytest.raises(SemanticError):
        textract(D.S32, src, 0, np.array([2**63, 0], np.uint64), (1, 1))


@given(seed=st.integers(0, 2**32 - 1), dr=dims, dc=dims, data=st.data())
def test_tinsert_per_pe_offsets(seed, dr, dc, data):
    rng = np.random.default_rng(seed)
    sr, sc = data.draw(st.integers(1, dr)), data.draw(st.integers(1, dc))
    ro = np.array([data.draw(st.integers(0, dr - sr)) for _ in range(2)], np.uint64)
    co = np.array([data.draw(st.integers(0, dc - sc)) for _ in range(2)], np.uint64)
    old = random_tile(rng, D.FP32, (2, dr, dc))
    src = random_tile(rng, D.FP32, (2, sr, sc))
    dst, _ = tinsert(D.FP32, old, src, ro, co)
    expect = raw(old).copy()
    for pe in range(2):
        for i in range(sr):
            for j in range(sc):
                expect[pe, i + int(ro[pe]), j + int(co[pe])] = raw(src)[pe, i, j]
    assert np.array_equal(raw(dst), expect)
    assert np.array_equal(raw(old), raw(old.copy()))  # old untouched


def test_tinsert_bounds_and_physical_old():
    old = np.arange(32, dtype=np.int16).reshape(1, 4, 8)  # physical 4x8, valid 4x6
    src = np.full((1, 2, 2), -1, np.int16)
    dst, _ = tinsert(D.S16, old, src, 1, 4, old_valid=(4, 6))
    assert dst[0, 1, 4:6].tolist() == [-1, -1] and dst[0, 3, 7] == 31
    assert tinsert_shape_legal((4, 6), (2, 2), 1, 5) is not None
    with pytest.raises(SemanticError):
        tinsert(D.S16, old, src, 1, 5, old_valid=(4, 6))
    with pytest.raises(SemanticError):
        tinsert(D.S16, old, src, np.array([3], np.uint64), 0)


@pytest.mark.parametrize("dt", [D.FP32, D.FP16, D.BF16, D.S8, D.U16, D.S64])
def test_tfillpad_fills_every_physical_element(dt):
    rng = np.random.default_rng(7)
    src = random_tile(rng, dt, (2, 2, 3))
    gpr = np.array([0xDEADBEEF_7FC01234, 0xFFFFFFFF_FFFFFFFF], np.uint64)
    dst, status = tfillpad(dt, src, gpr, (4, 8))
    bits = info(dt).bits
    mask = (1 << bits) - 1
    for pe in range(2):
        pad = int(gpr[pe]) & mask
        for i in range(4):
            for j in range(8):
                want = raw(src)[pe, i, j] if i < 2 and j < 3 else pad
                assert int(raw(dst)[pe, i, j]) == int(want)
    assert status.tolist() == [0, 0]


def test_tfillpad_shape_rules():
    assert tfillpad_shapes_legal((4, 8), (3, 5), (4, 8), (3, 5)) is None
    assert tfillpad_shapes_legal((4, 8), (3, 5), (4, 4), (3, 4)) is not None
    assert tfillpad_shapes_legal((4, 8), (3, 5), (8, 8), (2, 8)) is not None
