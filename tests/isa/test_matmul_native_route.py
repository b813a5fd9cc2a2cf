"""The FP16/BF16 route of the D11 fold (FP32 carriers, one reduction per block of k).

``fold`` widens FP16/BF16 operands straight to FP32 (BF16 by shifting its bits), checks
the operand extremes and folds with float32 additions, several k per ``np.add.reduce``
call when M * N is small. These properties draw raw codes over every binade, subnormals,
NaN payloads, +-0 and +-Inf, shapes on both sides of the transposition (N < M) and of the
reduction threshold, and compare the route directly with the exact engine
(``exact=True``), result bits and status bits, both through the compiled fold kernel
(where it exists) and through numpy.
"""

from __future__ import annotations

import contextlib

import ml_dtypes
import numpy as np
import pytest
from conftest import examples
from hypothesis import given
from hypothesis import strategies as st

from ptoc.backend.isa.datatypes import DataType
from ptoc.backend.isa.semantics import compiled
from ptoc.backend.isa.semantics import matmul as mm

D = DataType
CARRIERS = {D.FP16: np.float16, D.BF16: ml_dtypes.bfloat16}
#: (exponent field shift, exponent bias) of the 16-bit codes
FIELDS = {D.FP16: (10, 15), D.BF16: (7, 127)}
SPECIAL16 = {
    D.FP16: [0x0000, 0x8000, 0x7C00, 0xFC00, 0x7E00, 0x7D00, 0xFE01, 0x0001, 0x03FF, 0x7BFF],
    D.BF16: [0x0000, 0x8000, 0x7F80, 0xFF80, 0x7FC0, 0x7FA0, 0xFFC1, 0x0001, 0x007F, 0x7F7F],
}
SPECIAL32 = [0, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0x7FA00000, 0x00000001]
SPECIAL32 += [0x00800000, 0x7F7FFFFF, 0xFF7FFFFF, 0x3F800000, 0xCB800000, 0x4B800001]


def codes(dt: DataType) -> st.SearchStrategy[int]:
    """Any code, a special, or a code of a binade near 1 (so that many folds stay native)."""
    shift, bias = FIELDS[dt]
    near = st.tuples(st.booleans(), st.integers(bias - 6, bias + 6), st.integers(0, 127))
    window = near.map(lambda t: (t[0] << 15) | (t[1] << shift) | (t[2] & ((1 << shift) - 1)))
    return st.one_of(st.integers(0, 0xFFFF), st.sampled_from(SPECIAL16[dt]), window, window)


def acc_codes() -> st.SearchStrategy[int]:
    near = st.integers(0x3E000000, 0x41000000) | st.integers(0xBE000000, 0xC1000000)
    return st.one_of(st.integers(0, 2**32 - 1), st.sampled_from(SPECIAL32), near, near)


def operand(data, dt: DataType, rows: int, cols: int) -> np.ndarray:
    bits = [[data.draw(codes(dt)) for _ in range(cols)] for _ in range(rows)]
    return np.array(bits, np.uint16).view(CARRIERS[dt])


@given(
    st.sampled_from([D.FP16, D.BF16]),
    st.sampled_from([D.FP16, D.BF16]),
    st.integers(1, 6),
    st.integers(1, 6),
    st.integers(1, 40),
    st.booleans(),
    st.sampled_from(["compiled", "reduce", "calls", "small blocks"]),
    st.data(),
)
@examples(120)
def test_native_route_equals_the_exact_engine(
    a_dt, b_dt, m, n, k, with_acc, mode, data
) -> None:
    a, b = operand(data, a_dt, m, k), operand(data, b_dt, k, n)
    acc = None
    if with_acc:
        acc_bits = [[data.draw(acc_codes()) for _ in range(n)] for _ in range(m)]
        acc = np.array(acc_bits, np.uint32).view(np.float32)
    want, want_status = mm.fold(a, a_dt, b, b_dt, acc=acc, exact=True)
    with contextlib.ExitStack() as stack:
        patch = stack.enter_context(pytest.MonkeyPatch.context())
        if mode != "compiled":  # the numpy fold, whether or not a compiled kernel exists
            stack.enter_context(compiled.suspended())
        if mode == "calls":
            patch.setattr(mm, "_REDUCE_MAX", 0)  # one addition call per k
        if mode == "small blocks":
            patch.setattr(mm, "_PRODUCT_BLOCK", 2 * m * n)  # two k per block
        ops = mm._native_operands(a, a_dt, b, b_dt, acc)
        got, status = mm.fold(a, a_dt, b, b_dt, acc=acc)
        if ops is not None:  # the route itself, not only the fold that may choose it
            direct, direct_status = mm._fold_native(*ops, start_is_zero=acc is None)
            np.testing.assert_array_equal(direct.view(np.uint32), want.view(np.uint32))
            assert direct_status == want_status
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))
    assert status == want_status


@given(st.sampled_from([D.FP16, D.BF16]), st.integers(1, 24), st.data())
@examples(30)
def test_native_route_is_taken_for_normal_range_operands(dt, k, data) -> None:
    # the window codes of these shapes (transposed: N < M) stay in FP32's normal range
    shift, bias = FIELDS[dt]
    near = st.tuples(st.booleans(), st.integers(bias - 4, bias + 4), st.integers(0, 127))
    code = near.map(lambda t: (t[0] << 15) | (t[1] << shift) | (t[2] & ((1 << shift) - 1)))
    a = np.array([[data.draw(code) for _ in range(k)] for _ in range(5)], np.uint16)
    b = np.array([[data.draw(code) for _ in range(2)] for _ in range(k)], np.uint16)
    a, b = a.view(CARRIERS[dt]), b.view(CARRIERS[dt])
    assert mm._native_operands(a, dt, b, dt, None) is not None
    got, status = mm.fold(a, dt, b, dt)
    want, want_status = mm.fold(a, dt, b, dt, exact=True)
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))
    assert status == want_status


def test_bf16_widens_by_its_bits_nan_payloads_included() -> None:
    bits = np.array([[0x7FA1, 0xFFC3, 0x8000, 0x0001, 0x3F80]], np.uint16)
    wide = mm._fp32_carrier(bits.view(ml_dtypes.bfloat16), D.BF16)
    assert wide is not None
    assert wide.view(np.uint32).tolist() == [[b << 16 for b in bits[0].tolist()]]


def test_the_reduction_adds_row_by_row_on_this_numpy() -> None:
    # the route relies on it (and falls back to one call per k if the probe fails)
    assert mm._reduce_is_sequential()


def test_ties_of_long_folds_round_at_every_step() -> None:
    # 1 + 2**-24 ties to 1 at each step: a regrouped sum of the small products gets above 1
    k = 64
    a = np.ones((3, k), ml_dtypes.bfloat16)
    b = np.full((k, 4), 2.0**-24, ml_dtypes.bfloat16)
    b[0] = 1.0
    got, status = mm.fold(a, D.BF16, b, D.BF16)
    assert (got == 1.0).all() and status == mm.NX
    b[0], b[-1] = 2.0**-24, 1.0  # small products first: their sum survives
    got, _ = mm.fold(a, D.BF16, b, D.BF16)
    want, _ = mm.fold(a, D.BF16, b, D.BF16, exact=True)
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))
    assert (got > 1.0).all()


def test_non_finite_and_out_of_range_operands_leave_the_route() -> None:
    one = np.ones((2, 2), np.float16)
    inf = one.copy()
    inf[0, 0] = np.inf
    tiny = np.full((2, 2), 2.0**-70, ml_dtypes.bfloat16)  # squared below FP32's range
    huge = np.full((2, 2), 2.0**70, ml_dtypes.bfloat16)  # squared beyond it
    assert mm._native_operands(inf, D.FP16, one, D.FP16, None) is None
    assert mm._native_operands(tiny, D.BF16, tiny, D.BF16, None) is None
    assert mm._native_operands(huge, D.BF16, huge, D.BF16, None) is None
    assert mm._native_operands(tiny, D.BF16, huge, D.BF16, None) is not None
    nan_acc = np.full((2, 2), np.nan, np.float32)
    assert mm._native_operands(one, D.FP16, one, D.FP16, nan_acc) is None
    assert mm._native_operands(one, D.FP16, one, D.FP16, None) is not None


@given(st.sampled_from([D.FP16, D.BF16]), st.integers(1, 12), st.data())
@examples(60)
def test_extremes_from_the_16_bit_codes_are_those_of_the_fp32_values(dt, n, data) -> None:
    x = operand(data, dt, 1, n)
    lo, hi = mm._half_extremes(x, dt)
    wlo, whi = mm._extremes(x.astype(np.float32))
    if not whi <= 3.4028234663852886e38:  # an Inf or a NaN: the route is left either way
        assert not hi <= 3.4028234663852886e38
    else:
        assert (lo, hi) == (wlo, whi)
