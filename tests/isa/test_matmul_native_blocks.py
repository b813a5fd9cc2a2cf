"""The native FP16/BF16 fold (einsum product blocks, FP32 additions) is the exact fold.

``fold`` forms the products of a block of k in one call and adds them one k at a time;
einsum builds the products unless the start holds a -0 element (einsum turns -0 products
into +0, which only matters on a -0 running sum). These properties shrink the product
block so that a small fold spans several blocks, and compare every result bit and status
bit with the exact engine (``exact=True``; its own oracle tests are in
``test_semantics_matmul.py``).
"""

from __future__ import annotations

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

#: values across binades, ties of FP32 sums, signed zeros and the normal-range edges of
#: products (FP16 subnormals times small values stay in range only sometimes)
SPECIAL = [0.0, -0.0, 1.0, -1.0, 2.0**-12, -(2.0**-12), 3.0, 1.0 + 2.0**-7, 2.0**-24]
SPECIAL += [65504.0, -65504.0, 2.0**-14, 0.5 - 2.0**-11, 2.0**10 + 1, -(2.0**15)]
ACC_SPECIAL = [0.0, -0.0, 1.0, -(2.0**24), 2.0**24 + 2, 3.4e38, -1e-30, 2.0**-126]


def values(carrier):
    finite = st.floats(-1e4, 1e4, allow_nan=False, width=32)
    return (st.sampled_from(SPECIAL) | finite).map(lambda v: carrier(v))


@pytest.fixture
def small_blocks(monkeypatch):
    """Products of at most two k per einsum call at these shapes."""
    monkeypatch.setattr(mm, "_PRODUCT_BLOCK", 16)
    with compiled.suspended():  # the numpy blocks
        yield


@given(
    st.sampled_from([D.FP16, D.BF16]),
    st.sampled_from([D.FP16, D.BF16]),
    st.integers(1, 3),
    st.integers(1, 3),
    st.integers(1, 24),
    st.booleans(),
    st.data(),
)
@examples(80)
def test_blocked_native_fold_equals_the_exact_engine(
    a_dt, b_dt, m, n, k, with_acc, data
) -> None:
    a = np.array(
        [[data.draw(values(CARRIERS[a_dt])) for _ in range(k)] for _ in range(m)],
        CARRIERS[a_dt],
    )
    b = np.array(
        [[data.draw(values(CARRIERS[b_dt])) for _ in range(n)] for _ in range(k)],
        CARRIERS[b_dt],
    )
    acc = None
    if with_acc:
        accs = st.sampled_from(ACC_SPECIAL) | st.floats(width=32, allow_nan=False)
        acc = np.array([[data.draw(accs) for _ in range(n)] for _ in range(m)], np.float32)
    with pytest.MonkeyPatch.context() as patch, compiled.suspended():
        patch.setattr(mm, "_PRODUCT_BLOCK", 16)  # at most two k per einsum call here
        got, status = mm.fold(a, a_dt, b, b_dt, acc=acc)
    want, want_status = mm.fold(a, a_dt, b, b_dt, acc=acc, exact=True)
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))
    assert status == want_status


def test_minus_zero_start_keeps_the_sign_of_zero_products(small_blocks) -> None:
    # -0 + (-1 * +0) is -0 under IEEE addition; an einsum product would be +0
    a = np.array([[-1.0, 2.0, -0.0]], np.float16)
    b = np.array([[0.0], [-0.0], [5.0]], np.float16)
    acc = np.array([[-0.0]], np.float32)
    got, status = mm.fold(a, D.FP16, b, D.FP16, acc=acc)
    assert got.view(np.uint32)[0, 0] == 0x80000000 and status == 0
    got, _ = mm.fold(a, D.FP16, b, D.FP16)
    assert got.view(np.uint32)[0, 0] == 0  # from +0 the zero products leave +0


def test_the_fast_path_reads_nan_payloads_through_the_decoder() -> None:
    # a signalling NaN (FP16 0x7D00) is seen (NV) even though FP16 widens with a cast
    a = np.array([[0x7D00, 0x3C00]], np.uint16).view(np.float16)
    b = np.array([[0x3C00], [0x3C00]], np.uint16).view(np.float16)
    got, status = mm.fold(a, D.FP16, b, D.FP16)
    assert got.view(np.uint32)[0, 0] == 0x7FC00000 and status & mm.NV
