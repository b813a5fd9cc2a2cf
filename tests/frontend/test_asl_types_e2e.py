"""Kernels at the DataTypes the executable ASL admits (DECISIONS D9) trace, compile, run
and verify bit for bit; a few results are also checked against plain numpy."""

from __future__ import annotations

import math

import numpy as np
import pytest

import ptoc

from .helpers import write_kernels

SRC = """
F64 = ptoc.Tensor[ptoc.fp64, 8, 16]
U16 = ptoc.Tensor[ptoc.u16, 8, 32]
S8 = ptoc.Tensor[ptoc.s8, 8, 32]
U8 = ptoc.Tensor[ptoc.u8, 8, 32]
S64 = ptoc.Tensor[ptoc.s64, 4, 16]

@ptoc.kernel
def max_fp64(x: F64, y: F64, out: F64):
    pt.store(out, pt.maximum(pt.load(x), pt.load(y)))

@ptoc.kernel
def neg_u16(x: U16, out: U16):
    pt.store(out, pt.neg(pt.load(x)))

@ptoc.kernel
def exp_fp64(x: F64, out: F64):
    pt.store(out, pt.exp(pt.load(x)))

@ptoc.kernel
def abs_s8(x: S8, out: S8):
    pt.store(out, pt.abs(pt.load(x)))

@ptoc.kernel
def mul_u8(x: U8, y: U8, out: U8):
    pt.store(out, pt.load(x) * pt.load(y))

@ptoc.kernel
def col_prod_u8(x: U8, out: ptoc.Tensor[ptoc.u8, 1, 32]):
    pt.store(out, pt.col_prod(pt.load(x)))

@ptoc.kernel
def divrem_s64(x: S64, y: S64, out: S64):
    a = pt.load(x)
    b = pt.load(y)
    pt.store(out, a / b + a % b)

@ptoc.kernel
def select_fp64(x: F64, y: F64, out: F64):
    a = pt.load(x)
    b = pt.load(y)
    pt.store(out, pt.where(a < b, a * 2.0, pt.fma(a, b, a)))

@ptoc.kernel
def row_sum_fp64(x: F64, out: ptoc.Tensor[ptoc.fp64, 8, 1]):
    pt.store(out, pt.row_sum(pt.sqrt(pt.abs(pt.load(x)))))

@ptoc.kernel
def relu_log_fp64(x: F64, out: F64):
    pt.store(out, pt.relu(pt.log(pt.abs(pt.load(x)) + 1.0)))

@ptoc.kernel
def sqrt_tf32(x: ptoc.Tensor[ptoc.tf32, 8, 32], out: ptoc.Tensor[ptoc.tf32, 8, 32]):
    t = pt.load(x)
    pt.store(out, pt.sqrt(pt.abs(t)) - pt.row_max(t))

@ptoc.kernel
def recip_e4m3(x: ptoc.Tensor[ptoc.e4m3, 8, 128], out: ptoc.Tensor[ptoc.e4m3, 8, 128]):
    t = pt.load(x)
    pt.store(out, pt.recip(pt.exp(t) * t + t))
"""


@pytest.fixture(scope="module")
def kernels(tmp_path_factory: pytest.TempPathFactory) -> dict[str, ptoc.Kernel]:
    return write_kernels(tmp_path_factory.mktemp("asltypes"), SRC)[1]


@pytest.mark.parametrize(
    "name",
    [
        "max_fp64", "neg_u16", "exp_fp64", "abs_s8", "mul_u8", "col_prod_u8",
        "divrem_s64", "select_fp64", "row_sum_fp64", "relu_log_fp64", "sqrt_tf32",
        "recip_e4m3",
    ],
)  # fmt: skip
def test_kernel_verifies(kernels: dict[str, ptoc.Kernel], name: str) -> None:
    ptoc.verify(kernels[name])  # random TF32 inputs are valid TF32 encodings


def _run(kernel: ptoc.Kernel, **inputs: np.ndarray) -> np.ndarray:
    return ptoc.run(ptoc.compile(kernel), **inputs)["out"]


def test_neg_u16_wraps(kernels: dict[str, ptoc.Kernel]) -> None:
    x = np.arange(8 * 32, dtype=np.uint16).reshape(8, 32) * np.uint16(257)
    assert np.array_equal(_run(kernels["neg_u16"], x=x), (0 - x.astype(np.int64)) % 65536)


def test_abs_s8_wraps_at_the_most_negative_value(kernels: dict[str, ptoc.Kernel]) -> None:
    x = (np.arange(8 * 32).reshape(8, 32) - 128).astype(np.int8)
    want = np.abs(x.astype(np.int64))
    want[want == 128] = -128
    assert np.array_equal(_run(kernels["abs_s8"], x=x), want.astype(np.int8))


def test_u8_products_wrap(kernels: dict[str, ptoc.Kernel]) -> None:
    rng = np.random.default_rng(3)
    x, y = (rng.integers(0, 256, (8, 32)).astype(np.uint8) for _ in range(2))
    want = (x.astype(np.int64) * y) % 256
    assert np.array_equal(_run(kernels["mul_u8"], x=x, y=y), want)
    col = np.prod(x.astype(object), axis=0) % 256
    got = _run(kernels["col_prod_u8"], x=x)
    assert got.reshape(-1).tolist() == [int(v) for v in col]


def test_max_fp64_is_ieee_binary64(kernels: dict[str, ptoc.Kernel]) -> None:
    rng = np.random.default_rng(4)
    x = rng.standard_normal((8, 16)) * 1e300
    y = rng.standard_normal((8, 16)) * 1e-300
    assert np.array_equal(_run(kernels["max_fp64"], x=x, y=y), np.maximum(x, y))


def test_exp_fp64_within_half_an_ulp(kernels: dict[str, ptoc.Kernel]) -> None:
    """Correctly rounded: never further from exp(x) than the platform's exp, and equal
    to it wherever that is correctly rounded (which math.exp is nearly always)."""
    x = np.linspace(-700.0, 700.0, 8 * 16).reshape(8, 16)
    got = _run(kernels["exp_fp64"], x=x)
    want = np.array([math.exp(v) for v in x.reshape(-1)]).reshape(8, 16)
    ulps = np.abs(got.view(np.int64) - want.view(np.int64))
    assert ulps.max() <= 1 and (ulps == 0).mean() > 0.95


def test_divrem_s64_wraps(kernels: dict[str, ptoc.Kernel]) -> None:
    x = np.full((4, 16), np.iinfo(np.int64).min, np.int64)
    x[1] = -7
    y = np.full((4, 16), -1, np.int64)
    y[1] = 2
    got = _run(kernels["divrem_s64"], x=x, y=y)
    assert got[0].tolist() == [np.iinfo(np.int64).min] * 16  # MIN / -1 wraps, MIN % -1 = 0
    assert got[1].tolist() == [-3 + 1] * 16  # -7 / 2 truncates to -3, -7 % 2 floors to 1
