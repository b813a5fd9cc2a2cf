"""Row/column reductions against plain-Python folds (D5, ASL reduction.asl)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ptoc.backend.isa import Executor, row, rows
from ptoc.backend.isa.datatypes import DataType, info
from ptoc.backend.isa.semantics.core import NV, binary
from ptoc.backend.isa.semantics.reduce import (
    col_arg,
    col_reduce,
    row_arg,
    row_reduce,
)

D = DataType
INTS = [D.S32, D.S16, D.S8, D.U32, D.U16, D.U8]
FLOATS = [D.FP32, D.FP16, D.BF16]
ONE = {D.FP32: 0x3F800000, D.FP16: 0x3C00, D.BF16: 0x3F80}
SPECIAL = {
    D.FP32: [
        0x0,
        0x80000000,
        0x7F800000,
        0xFF800000,
        0x7FC00000,
        0xFFC00001,
        0x7F800001,
        0x3F800000,
        0xBF800000,
        0x7F7FFFFF,
    ],
    D.FP16: [0x0, 0x8000, 0x7C00, 0xFC00, 0x7E00, 0xFE01, 0x7C01, 0x3C00, 0xBC00, 0x7BFF],
    D.BF16: [0x0, 0x8000, 0x7F80, 0xFF80, 0x7FC0, 0xFFC1, 0x7F81, 0x3F80, 0xBF80, 0x7F7F],
}


def raw(a: np.ndarray) -> np.ndarray:
    return np.asarray(a).view(np.dtype(f"uint{a.dtype.itemsize * 8}"))


def tile(rng: np.random.Generator, dt: DataType, shape, special: float = 0.3) -> np.ndarray:
    ti = info(dt)
    ut = np.dtype(f"uint{ti.bits}")
    if ti.is_int:
        return (
            rng.integers(0, 1 << ti.bits, size=shape, dtype=np.uint64)
            .astype(ut)
            .view(ti.carrier)
        )
    # Small exponents keep sums and products away from constant overflow.
    vals = rng.normal(0, 4, size=shape).astype(np.float64)
    bits = raw(vals.astype(ti.carrier)).astype(np.uint64)
    pick = rng.random(shape) < special
    bits = np.where(pick, rng.choice(np.array(SPECIAL[dt], np.uint64), size=shape), bits)
    return bits.astype(ut).view(ti.carrier)


# ---- integers: Python ints modulo the width ---------------------------------------------


def wrap(v: int, dt: DataType) -> int:
    bits = info(dt).bits
    v %= 1 << bits
    return v - (1 << bits) if info(dt).is_signed and v >> (bits - 1) else v


@pytest.mark.parametrize("dt", INTS)
@given(
    seed=st.integers(0, 2**32 - 1),
    p=st.integers(1, 2),
    r=st.integers(1, 4),
    c=st.integers(1, 40),
)
def test_int_reductions_match_python(dt, seed, p, r, c):
    a = tile(np.random.default_rng(seed), dt, (p, r, c))
    folds = {"sum": lambda xs: wrap(sum(xs), dt), "max": max, "min": min}
    for op, f in folds.items():
        dst, status = row_reduce(op, dt, a)
        assert dst.shape == (p, r, 1) and dst.dtype == a.dtype
        want = [[[f([int(x) for x in a[pe, i]])] for i in range(r)] for pe in range(p)]
        assert dst.tolist() == want and status.tolist() == [0] * p
    dst, _ = row_reduce("prod", dt, a)
    for pe in range(p):
        for i in range(r):
            prod = 1
            for x in a[pe, i]:
                prod = wrap(prod * int(x), dt)
            assert int(dst[pe, i, 0]) == prod
    for op, np_arg in (("argmax", np.argmax), ("argmin", np.argmin)):
        idx, _ = row_arg(op, dt, a, D.S32)
        first = [[int(np_arg([int(x) for x in a[pe, i]])) for i in range(r)] for pe in range(p)]
        assert idx.dtype == np.int32 and idx[:, :, 0].tolist() == first


# ---- floats: the ASL fold, element by element, through core.binary ----------------------


def fold_oracle(op: str, dt: DataType, row: np.ndarray):
    """ASL ExecuteTileReduction for one row: (result bits, index, status)."""
    step = {
        "sum": "add",
        "prod": "mul",
        "max": "max",
        "min": "min",
        "argmax": "max",
        "argmin": "min",
    }[op]
    ti = info(dt)
    ut = np.dtype(f"uint{ti.bits}")
    cell = lambda bits: np.array([[int(bits)]], np.uint64).astype(ut).view(ti.carrier)  # noqa: E731
    rb = raw(row)
    if op == "sum":
        acc, start = cell(0), 0
    elif op == "prod":
        acc, start = cell(ONE[dt]), 0
    else:
        acc, start = cell(rb[0]), 1
    index, status = 0, 0
    for k in range(start, len(row)):
        v = cell(rb[k])
        res, st_ = binary(step, dt, acc, v)
        if int(raw(res)[0, 0]) == int(rb[k]) and int(raw(res)[0, 0]) != int(raw(acc)[0, 0]):
            index = k
        acc, status = res, status | int(st_[0])
    return int(raw(acc)[0, 0]), index, status


@pytest.mark.parametrize("dt", FLOATS)
@given(
    seed=st.integers(0, 2**32 - 1),
    p=st.integers(1, 2),
    r=st.integers(1, 3),
    c=st.integers(1, 24),
    op=st.sampled_from(["sum", "prod", "max", "min"]),
)
def test_float_row_reduce_is_the_asl_left_fold(dt, seed, p, r, c, op):
    a = tile(np.random.default_rng(seed), dt, (p, r, c))
    dst, status = row_reduce(op, dt, a)
    for pe in range(p):
        want_status = 0
        for i in range(r):
            bits, _, s = fold_oracle(op, dt, a[pe, i])
            assert int(raw(dst)[pe, i, 0]) == bits
            want_status |= s
        assert status[pe] == want_status


@pytest.mark.parametrize("dt", FLOATS)
@given(
    seed=st.integers(0, 2**32 - 1),
    r=st.integers(1, 3),
    c=st.integers(1, 24),
    op=st.sampled_from(["argmax", "argmin"]),
    idx_dt=st.sampled_from([D.S32, D.U32]),
)
def test_float_row_arg_is_the_asl_scan(dt, seed, r, c, op, idx_dt):
    a = tile(np.random.default_rng(seed), dt, (1, r, c), special=0.5)
    dst, status = row_arg(op, dt, a, idx_dt)
    assert dst.dtype == info(idx_dt).carrier and dst.shape == (1, r, 1)
    want_status = 0
    for i in range(r):
        _, index, s = fold_oracle(op, dt, a[0, i])
        assert int(dst[0, i, 0]) == index
        want_status |= s
    assert status.tolist() == [want_status]


@given(vals=st.lists(st.floats(-(2.0**100), 2.0**100, width=32), min_size=1, max_size=40))
def test_trowsum_fp32_sequential_float32(vals):
    """Independent of core: numpy float32 scalar additions are correctly rounded RNE."""
    acc = np.float32(0.0)
    for v in vals:
        acc = np.float32(acc + np.float32(v))
    dst, _ = row_reduce("sum", D.FP32, np.array([[vals]], np.float32))
    assert raw(dst)[0, 0, 0] == raw(np.array(acc))


def test_trowsum_order_is_left_to_right():
    a = np.array([[[1e8, 1.0, -1e8, 1.0]]], np.float32)  # pairwise would give 2.0 or 0.0
    assert row_reduce("sum", D.FP32, a)[0].tolist() == [[[1.0]]]
    fp16 = np.array([[[2048, 1, 1, 1, 1]]], np.float16)  # each +1 is lost at 2048
    assert row_reduce("sum", D.FP16, fp16)[0].tolist() == [[[2048.0]]]


def test_trowsum_negative_zeros_fold_from_positive_zero():
    a = np.array([[[-0.0, -0.0]]], np.float32)
    assert raw(row_reduce("sum", D.FP32, a)[0]).tolist() == [[[0]]]


def test_trowmax_single_column_returns_raw_element():
    a = np.array([[[0x7F800001]]], np.uint32).view(np.float32)
    dst, status = row_reduce("max", D.FP32, a)
    assert raw(dst).tolist() == [[[0x7F800001]]] and status.tolist() == [0]


def test_trowmax_snan_sets_nv():
    a = np.array([[[0x7F800001, 0x3F800000]]], np.uint32).view(np.float32)
    dst, status = row_reduce("max", D.FP32, a)
    assert raw(dst).tolist() == [[[0x3F800000]]] and status.tolist() == [NV]


def test_trowargmax_ties_keep_lowest_index():
    a = np.array([[[1.0, 3.0, 3.0, 2.0]]], np.float32)
    assert row_arg("argmax", D.FP32, a, D.U32)[0].tolist() == [[[1]]]
    assert row_arg("argmin", D.FP32, a, D.S32)[0].tolist() == [[[0]]]


def test_trowargmax_signed_zero_and_nan():
    a = np.array([[[0x80000000, 0x00000000, 0x80000000]]], np.uint32).view(np.float32)
    assert row_arg("argmax", D.FP32, a, D.S32)[0].tolist() == [[[1]]]  # +0 beats -0
    assert row_arg("argmin", D.FP32, a, D.S32)[0].tolist() == [[[0]]]  # -0 already min
    n = np.array([[[0x7FC00000, 0xBF800000, 0x7FC00000]]], np.uint32).view(np.float32)
    assert row_arg("argmax", D.FP32, n, D.S32)[0].tolist() == [[[1]]]  # NaN replaced


@pytest.mark.parametrize("dt", [D.FP32, D.S16, D.U8])
@pytest.mark.parametrize("op", ["sum", "max", "min", "prod"])
def test_col_reduce_is_row_reduce_of_transpose(dt, op):
    a = tile(np.random.default_rng(3), dt, (2, 7, 5))
    col, cs = col_reduce(op, dt, a)
    row, rs = row_reduce(op, dt, np.ascontiguousarray(a.transpose(0, 2, 1)))
    assert col.shape == (2, 1, 5)
    assert np.array_equal(raw(col)[:, 0, :], raw(row)[:, :, 0]) and cs.tolist() == rs.tolist()
    for op2 in ("argmax", "argmin"):
        ci, _ = col_arg(op2, dt, a, D.U32)
        ri, _ = row_arg(op2, dt, np.ascontiguousarray(a.transpose(0, 2, 1)), D.U32)
        assert ci.shape == (2, 1, 5) and ci[:, 0, :].tolist() == ri[:, :, 0].tolist()


def test_dispatch_tables():
    reductions = {r.mnemonic for r in rows(executor=Executor.REDUCTION)}
    assert reductions == {
        f"T{axis}{x}"
        for axis in ("ROW", "COL")
        for x in ("SUM", "MAX", "MIN", "PROD", "ARGMAX", "ARGMIN")
    }
    a = np.array([[[1, 2], [3, 4]]], np.int32)
    assert row("TCOLSUM").semantics(D.S32, a)[0].tolist() == [[[4, 6]]]
    assert row("TROWARGMAX").semantics(D.S32, a, D.U32)[0].tolist() == [[[1], [1]]]
