"""TPARTADD/MUL/MAX/MIN against an element-by-element oracle (seed ADR 0083 D140-143)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ptoc.backend.isa import row
from ptoc.backend.isa.datatypes import DataType, info
from ptoc.backend.isa.semantics.core import NV, SemanticError, binary
from ptoc.backend.isa.semantics.partial import tpart, tpart_shapes_legal

D = DataType
TYPES = [D.FP32, D.FP16, D.BF16, D.S32, D.S16, D.S8, D.U32, D.U16, D.U8]
OPS = ["add", "mul", "max", "min"]

SPECIAL = {
    D.FP32: [
        0x0,
        0x80000000,
        0x7F800000,
        0xFF800000,
        0x7FC00000,
        0x7F800001,
        0x3F800000,
        0x7F7FFFFF,
        0x00000001,
    ],
    D.FP16: [0x0, 0x8000, 0x7C00, 0xFC00, 0x7E00, 0x7C01, 0x3C00, 0x7BFF, 0x0001],
    D.BF16: [0x0, 0x8000, 0x7F80, 0xFF80, 0x7FC0, 0x7F81, 0x3F80, 0x7F7F, 0x0001],
}


def raw(a: np.ndarray) -> np.ndarray:
    return np.asarray(a).view(np.dtype(f"uint{a.dtype.itemsize * 8}"))


def tile(rng: np.random.Generator, dt: DataType, shape) -> np.ndarray:
    ti = info(dt)
    ut = np.dtype(f"uint{ti.bits}")
    bits = rng.integers(0, 1 << ti.bits, size=shape, dtype=np.uint64)
    if dt in SPECIAL:
        pick = rng.random(shape) < 0.4
        bits = np.where(pick, rng.choice(np.array(SPECIAL[dt], np.uint64), size=shape), bits)
    return bits.astype(ut).view(ti.carrier)


def oracle(op, dt, a, b, vr, vc):
    """Per element: both cover -> core.binary on that single pair; one covers -> copy."""
    p = a.shape[0]
    out = np.zeros((p, vr, vc), np.uint64)
    status = np.zeros(p, np.uint8)
    for pe in range(p):
        for r in range(vr):
            for c in range(vc):
                in_a = r < a.shape[1] and c < a.shape[2]
                in_b = r < b.shape[1] and c < b.shape[2]
                if in_a and in_b:
                    res, st_ = binary(
                        op,
                        dt,
                        a[pe : pe + 1, r : r + 1, c : c + 1],
                        b[pe : pe + 1, r : r + 1, c : c + 1],
                    )
                    out[pe, r, c] = raw(res)[0, 0, 0]
                    status[pe] |= st_[0]
                else:
                    out[pe, r, c] = raw(a if in_a else b)[pe, r, c]
    return out, status


@pytest.mark.parametrize("dt", TYPES)
@given(
    seed=st.integers(0, 2**32 - 1),
    op=st.sampled_from(OPS),
    p=st.integers(1, 2),
    vr=st.integers(1, 5),
    vc=st.integers(1, 9),
    data=st.data(),
)
def test_tpart_matches_elementwise_oracle(dt, seed, op, p, vr, vc, data):
    rng = np.random.default_rng(seed)
    other = (data.draw(st.integers(1, vr)), data.draw(st.integers(1, vc)))
    a_full = data.draw(st.booleans())
    a_shape, b_shape = ((vr, vc), other) if a_full else (other, (vr, vc))
    a, b = tile(rng, dt, (p, *a_shape)), tile(rng, dt, (p, *b_shape))
    dst, status = tpart(op, dt, a, b, (vr, vc))
    want, want_status = oracle(op, dt, a, b, vr, vc)
    assert dst.dtype == info(dt).carrier and dst.shape == (p, vr, vc)
    assert np.array_equal(raw(dst).astype(np.uint64), want)
    assert status.tolist() == want_status.tolist()


def pair(dt, a_bits, b_bits):
    ut = np.dtype(f"uint{info(dt).bits}")
    mk = lambda v: np.array(v, np.uint64).astype(ut).view(info(dt).carrier)  # noqa: E731
    return mk(a_bits), mk(b_bits)


@pytest.mark.parametrize("dt", [D.FP32, D.FP16, D.BF16])
def test_tpartmax_mixed_sign_zero_positive(dt):
    neg = 1 << (info(dt).bits - 1)
    a, b = pair(dt, [[[neg, 0]]], [[[0, neg]]])
    dst, status = tpart("max", dt, a, b, (1, 2))
    assert raw(dst).tolist() == [[[0, 0]]] and status.tolist() == [0]


@pytest.mark.parametrize("dt", [D.FP32, D.FP16, D.BF16])
def test_tpartmin_mixed_sign_zero_negative(dt):
    neg = 1 << (info(dt).bits - 1)
    a, b = pair(dt, [[[neg, 0]]], [[[0, neg]]])
    dst, _ = tpart("min", dt, a, b, (1, 2))
    assert raw(dst).tolist() == [[[neg, neg]]]


def test_tpartmax_nan_rules_follow_tmax():
    # one NaN selects the number; an sNaN sets NV; two NaNs give the canonical NaN
    a, b = pair(
        D.FP32,
        [[[0x7FC00001, 0x7F800001, 0x7FC00005]]],
        [[[0x3F800000, 0x40000000, 0xFFC00007]]],
    )
    dst, status = tpart("max", D.FP32, a, b, (1, 3))
    assert raw(dst).tolist() == [[[0x3F800000, 0x40000000, 0x7FC00000]]]
    assert status.tolist() == [NV]


def test_tpart_signed_and_unsigned_ordering():
    a = np.array([[[-1, 5]]], np.int8)
    b = np.array([[[1, -7]]], np.int8)
    assert tpart("max", D.S8, a, b, (1, 2))[0].tolist() == [[[1, 5]]]
    assert tpart("max", D.U8, a.view(np.uint8), b.view(np.uint8), (1, 2))[0].tolist() == [
        [[255, 249]]
    ]


def test_tpartadd_integer_wraps_and_copies_uncovered():
    a = np.array([[[0x7FFFFFFF, 1, 2], [3, 4, 5]]], np.int32)
    b = np.array([[[1]]], np.int32)
    dst, _ = tpart("add", D.S32, a, b, (2, 3))
    assert dst.tolist() == [[[-(2**31), 1, 2], [3, 4, 5]]]
    dst, _ = row("TPARTMUL").semantics(D.S32, b, a, (2, 3))  # the covering source may be right
    assert dst.tolist() == [[[0x7FFFFFFF, 1, 2], [3, 4, 5]]]


def test_tpart_copy_is_bit_exact_without_status():
    a, b = pair(D.FP16, [[[0x3C00, 0x7C01]]], [[[0x3C00]]])  # sNaN only in a's own part
    dst, status = tpart("add", D.FP16, a, b, (1, 2))
    assert raw(dst).tolist() == [[[0x4000, 0x7C01]]] and status.tolist() == [0]


def test_tpart_shapes_legal():
    assert tpart_shapes_legal((4, 8), (2, 3), (4, 8)) is None
    assert tpart_shapes_legal((2, 3), (4, 8), (4, 8)) is None
    assert tpart_shapes_legal((4, 3), (2, 8), (4, 8)) is not None  # corner uncovered
    assert tpart_shapes_legal((5, 8), (4, 8), (4, 8)) is not None  # does not fit
    assert tpart_shapes_legal((4, 8), (0, 8), (4, 8)) is not None  # empty source
    with pytest.raises(SemanticError):
        tpart(
            "add", D.S32, np.zeros((1, 4, 3), np.int32), np.zeros((1, 2, 8), np.int32), (4, 8)
        )
