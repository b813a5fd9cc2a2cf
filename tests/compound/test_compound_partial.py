"""partial_add, partial_mul, partial_max, partial_min."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ptoc.dialects.compound_ref import (
    CompoundError,
    partial_add,
    partial_max,
    partial_min,
    partial_mul,
)

from . import oracle
from .gen import float_tile, int_tile

OPS = {"add": partial_add, "mul": partial_mul, "max": partial_max, "min": partial_min}
FLOATS = [np.float32, np.float16, ml_dtypes.bfloat16]
INTS = [np.int32, np.int16, np.int8, np.uint32, np.uint16, np.uint8]


def default_pad(op, dt):
    if op in ("add", "mul"):
        return 0
    if np.dtype(dt).kind in "iu":
        return np.iinfo(dt).min if op == "max" else np.iinfo(dt).max
    return -np.inf if op == "max" else np.inf


@st.composite
def partial_case(draw):
    dt = draw(st.sampled_from(FLOATS + INTS))
    shape = draw(st.tuples(st.integers(1, 5), st.integers(1, 6)))
    dims = []
    for _ in range(2):
        dims.append((draw(st.integers(0, shape[0])), draw(st.integers(0, shape[1]))))
    make = int_tile if np.dtype(dt).kind in "iu" else float_tile
    a = draw(make(dt, *dims[0]))
    b = draw(make(dt, *dims[1]))
    explicit = draw(st.booleans())
    return dt, a, b, shape, explicit


@given(case=partial_case(), op=st.sampled_from(sorted(OPS)))
def test_partial_matches_oracle(case, op):
    dt, a, b, shape, explicit = case
    got = OPS[op](a, b, shape=shape) if explicit else OPS[op](a, b, shape)
    want = oracle.partial(op, a, b, shape, default_pad(op, dt))
    assert got.shape == shape and got.dtype == dt
    assert oracle.same_bits(got, want)


def test_partial_covered_rules():
    nan_bits = np.array([0x7FC00123], np.uint32).view(np.float32)[0]
    a = np.array([[1.0, 0.0, np.nan, nan_bits]], np.float32)
    b = np.array([[-1.0, -0.0, 5.0]], np.float32)
    mx = partial_max(a, b)
    assert mx[0, :3].tolist() == [1.0, 0.0, 5.0] and not np.signbit(mx[0, 1])
    assert oracle.raw(mx)[0, 3] == 0x7FC00123  # covered by one source only: bits copied
    mn = partial_min(a, b)
    assert np.signbit(mn[0, 1]) and mn[0, 2] == 5.0
    both_nan = partial_max(np.array([[np.nan]], np.float32), np.array([[-np.nan]], np.float32))
    assert oracle.raw(both_nan)[0, 0] == 0x7FC00000
    assert partial_add(np.array([[250]], np.uint8), np.array([[10]], np.uint8))[0, 0] == 4
    assert partial_mul(np.array([[-128]], np.int8), np.array([[-1]], np.int8))[0, 0] == -128
    # empty sources forward the other operand
    assert np.array_equal(partial_max(np.zeros((0, 3), np.float32), b), b)
    assert np.array_equal(partial_add(b, np.zeros((2, 0), np.float32), shape=(1, 3)), b)
    # pad override
    assert partial_add(b, b, shape=(2, 3), pad=9.0)[1].tolist() == [9.0, 9.0, 9.0]


def test_partial_rejects():
    a = np.zeros((2, 2), np.float32)
    with pytest.raises(CompoundError):
        partial_add(a, np.zeros((2, 2), np.float16))
    with pytest.raises(CompoundError, match="fit"):
        partial_add(a, np.zeros((3, 1), np.float32), shape=(2, 2))
    with pytest.raises(CompoundError):
        partial_add(a.astype(np.float64), a.astype(np.float64))
    with pytest.raises(CompoundError):
        partial_max(a.astype(np.int8), a.astype(np.int8), pad=1000)


PTO_TYPES = [
    np.float32,
    np.float16,
    np.int8,
    np.int16,
    np.int32,
    np.uint8,
    np.uint16,
    np.uint32,
]


@pytest.mark.parametrize("dt", PTO_TYPES)
@pytest.mark.parametrize("op", ["max", "min"])
def test_partial_max_min_pto_isa_neither_covers(dt, op):
    """a5/Kirin TPARTMAX/MIN: dst 122x123, sources 104x123 and 122x110 (neither covers)."""
    rng = np.random.default_rng(19)
    if np.dtype(dt).kind in "iu":
        info = np.iinfo(dt)
        a = rng.integers(info.min, info.max, (104, 123), endpoint=True).astype(dt)
        b = rng.integers(info.min, info.max, (122, 110), endpoint=True).astype(dt)
    else:
        a = rng.uniform(-255, 255, (104, 123)).astype(dt)
        b = rng.uniform(-255, 255, (122, 110)).astype(dt)
    got = OPS[op](a, b, shape=(122, 123))
    pad = default_pad(op, dt)
    pa = np.full((122, 123), pad, dt)
    pa[:104, :] = a
    pb = np.full((122, 123), pad, dt)
    pb[:, :110] = b
    golden = (np.maximum if op == "max" else np.minimum)(pa, pb)  # the pto-isa a5 golden
    assert got.shape == (122, 123) and got.dtype == dt
    assert oracle.same_bits(got, golden)
    assert np.all(got[104:, 110:] == np.array(pad, dt))


@pytest.mark.parametrize(
    "op, dt, dst, sa, sb",
    [
        ("add", np.float32, (64, 64), (64, 64), (8, 64)),
        ("add", np.float32, (64, 64), (64, 8), (64, 64)),
        ("add", np.float16, (8, 48), (8, 48), (8, 16)),
        ("add", np.float16, (8, 768), (8, 768), (8, 512)),
        ("add", np.int16, (8, 48), (8, 48), (8, 16)),
        ("add", np.int32, (64, 64), (64, 64), (8, 64)),
        ("mul", np.float32, (64, 64), (8, 64), (64, 64)),
        ("mul", np.int32, (64, 64), (64, 64), (8, 64)),
        ("max", np.float32, (16, 32), (16, 0), (16, 32)),
        ("min", np.float32, (16, 32), (16, 32), (0, 32)),
        ("max", np.float32, (128, 64), (128, 64), (96, 64)),
        ("min", np.float16, (5, 33), (5, 33), (5, 33)),
    ],
)
def test_partial_pto_isa_one_source_covers(op, dt, dst, sa, sb):
    rng = np.random.default_rng(19)
    a = rng.uniform(-100, 100, sa).astype(dt)
    b = rng.uniform(-100, 100, sb).astype(dt)
    got = OPS[op](a, b, shape=dst)
    f = {"add": np.add, "mul": np.multiply, "max": np.maximum, "min": np.minimum}[op]
    big, small = (a, b) if a.shape == dst else (b, a)
    golden = big.copy()
    r, c = small.shape
    with np.errstate(over="ignore"):
        golden[:r, :c] = f(a[:r, :c], b[:r, :c])  # wrap for integers, RNE for floats
    assert oracle.same_bits(got, golden)
