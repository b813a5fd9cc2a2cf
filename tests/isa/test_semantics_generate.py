"""TCI / TTRI / THISTOGRAM against plain-Python oracles (ASL generation.asl, complex.asl)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ptoc.backend.isa.datatypes import DataType, info
from ptoc.backend.isa.semantics.core import SemanticError
from ptoc.backend.isa.semantics.generate import (
    tci,
    tci_scalars_legal,
    thistogram,
    thistogram_shapes_legal,
    ttri,
    ttri_scalars_legal,
)

D = DataType
u64 = st.integers(0, 2**64 - 1)


def as_signed(v: int, bits: int) -> int:
    v &= (1 << bits) - 1
    return v - (1 << bits) if v >> (bits - 1) else v


@pytest.mark.parametrize("dt", [D.S32, D.S16, D.U32, D.U16])
@given(starts=st.lists(u64, min_size=1, max_size=4), data=st.data(), cols=st.integers(1, 70))
def test_tci_sequence_wraps(dt, starts, data, cols):
    dirs = [data.draw(st.integers(0, 1)) for _ in starts]
    out, status = tci(dt, (1, cols), np.array(starts, np.uint64), np.array(dirs, np.uint64))
    bits = info(dt).bits
    assert out.shape == (len(starts), 1, cols) and out.dtype == info(dt).carrier
    for pe, (s, d) in enumerate(zip(starts, dirs)):
        for k in range(cols):
            v = ((s - k) if d else (s + k)) % (1 << bits)
            want = as_signed(v, bits) if info(dt).is_signed else v
            assert int(out[pe, 0, k]) == want
    assert status.tolist() == [0] * len(starts)


def test_tci_direction_must_be_zero_or_one():
    assert tci_scalars_legal(np.array([0, 1], np.uint64)) is None
    assert tci_scalars_legal(np.array([0, 2], np.uint64)) is not None
    with pytest.raises(SemanticError):
        tci(D.S32, (1, 4), np.zeros(1, np.uint64), np.array([2**64 - 1], np.uint64))


def test_tci_signed_start_uses_low_bits():
    out, _ = tci(D.S16, (1, 3), np.array([2**64 - 1], np.uint64), np.array([1], np.uint64))
    assert out.tolist() == [[[-1, -2, -3]]]
    out, _ = tci(D.U16, (1, 3), np.array([0x1_0001], np.uint64), np.array([1], np.uint64))
    assert out.tolist() == [[[1, 0, 0xFFFF]]]


ONE = {D.FP32: 0x3F800000, D.FP16: 0x3C00}


@pytest.mark.parametrize("dt", [D.FP32, D.FP16, D.S32, D.S16, D.U32, D.U16])
@given(
    vr=st.integers(1, 9),
    vc=st.integers(1, 40),
    diag=st.integers(-65535, 65535),
    small=st.integers(-12, 12),
    use_small=st.booleans(),
    upper=st.integers(0, 1),
)
def test_ttri_mask(dt, vr, vc, diag, small, use_small, upper):
    d = small if use_small else diag
    gpr = np.array([d], np.int64).view(np.uint64)
    out, status = ttri(dt, (vr, vc), gpr, np.array([upper], np.uint64))
    one = ONE.get(dt, 1)
    raw = out.view(np.dtype(f"uint{info(dt).bits}"))
    for r in range(vr):
        for c in range(vc):
            sel = c >= r + d if upper else c <= r + d
            assert int(raw[0, r, c]) == (one if sel else 0)
    assert status.tolist() == [0]


def test_ttri_scalar_rules():
    neg = np.array([-65535, -65536], np.int64).view(np.uint64)
    assert ttri_scalars_legal(neg[:1], np.zeros(1, np.uint64)) is None
    assert ttri_scalars_legal(neg[1:], np.zeros(1, np.uint64)) is not None
    assert ttri_scalars_legal(np.array([2**63], np.uint64), np.zeros(1, np.uint64)) is not None
    assert ttri_scalars_legal(np.zeros(1, np.uint64), np.array([2], np.uint64)) is not None
    with pytest.raises(SemanticError):
        ttri(D.S32, (2, 2), np.array([65536], np.uint64), np.zeros(1, np.uint64))


def oracle_histogram(src_dt, src, filt, byte_id):
    p, r, c = src.shape
    out = np.zeros((p, r, 256), np.uint32)
    for pe in range(p):
        for row in range(r):
            counts = [0] * 256
            for col in range(c):
                v = int(src[pe, row, col])
                b = [(v >> (8 * k)) & 0xFF for k in range(4)]
                ok = True
                if src_dt == D.U16 and byte_id == 0:
                    ok = b[1] == int(filt[pe, row, 0])
                elif src_dt == D.U32:
                    if byte_id <= 2:
                        ok = b[3] == int(filt[pe, 0, 0])
                    if ok and byte_id <= 1:
                        ok = b[2] == int(filt[pe, 1, 0])
                    if ok and byte_id == 0:
                        ok = b[1] == int(filt[pe, 2, 0])
                if ok:
                    counts[b[byte_id]] += 1
            total = 0
            for k in range(256):
                total += counts[k]
                out[pe, row, k] = total
    return out


@pytest.mark.parametrize(
    ("src_dt", "byte_id"),
    [(D.U16, 0), (D.U16, 1), (D.U32, 0), (D.U32, 1), (D.U32, 2), (D.U32, 3)],
)
@given(
    seed=st.integers(0, 2**32 - 1),
    p=st.integers(1, 2),
    r=st.integers(1, 4),
    c=st.integers(1, 50),
)
def test_thistogram_matches_loop(src_dt, byte_id, seed, p, r, c):
    rng = np.random.default_rng(seed)
    # A small alphabet per byte so filters actually match.
    alphabet = np.array([0, 1, 0x7F, 0xFF], np.uint32)
    nbytes = 2 if src_dt == D.U16 else 4
    src = np.zeros((p, r, c), np.uint32)
    for k in range(nbytes):
        src |= rng.choice(alphabet, size=(p, r, c)) << np.uint32(8 * k)
    src = src.astype(info(src_dt).carrier)
    filt = rng.choice(alphabet, size=(p, max(r, 3), 2)).astype(np.uint8)
    out, status = thistogram(src_dt, src, filt, byte_id)
    assert out.dtype == np.uint32 and out.shape == (p, r, 256)
    assert np.array_equal(out, oracle_histogram(src_dt, src, filt, byte_id))
    assert status.tolist() == [0] * p


def test_thistogram_unfiltered_needs_no_filter_and_rules():
    src = np.array([[[0x0102, 0x0203, 0xFF02]]], np.uint16)
    out, _ = thistogram(D.U16, src, None, 1)
    assert (
        out[0, 0, 1] == 1 and out[0, 0, 2] == 2 and out[0, 0, 254] == 2 and out[0, 0, 255] == 3
    )
    assert thistogram_shapes_legal(D.U16, (1, 3), None, 2) is not None
    assert thistogram_shapes_legal(D.U16, (4, 3), (3, 1), 0) is not None
    assert thistogram_shapes_legal(D.U32, (9, 3), (2, 1), 0) is not None
    assert thistogram_shapes_legal(D.U32, (9, 3), (3, 1), 0) is None
    assert thistogram_shapes_legal(D.S32, (9, 3), None, 3) is not None
    with pytest.raises(SemanticError):
        thistogram(D.U32, np.zeros((1, 1, 1), np.uint32), None, 2)
