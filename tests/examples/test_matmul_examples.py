"""The matrix examples (``examples/gemm.py``, ``ffn.py``, ``attention.py``): each verifies
bit for bit on the machine model (default and tiny machine) and computes what it says,
compared with a float64 numpy computation within the stated error bound."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import ptoc
from ptoc.loader import load_kernel

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
TINY = ptoc.MachineConfig(depth=4, capacity=16384)
#: the FP32 unit roundoff: one rounding per K step (D11)
U32 = 2.0**-24
#: FP16's unit roundoff: P and the SiLU gate are rounded to FP16 between the products
U16 = 2.0**-11


def kernel(spec: str) -> ptoc.Kernel:
    file, _, name = spec.partition("::")
    return load_kernel(f"{EXAMPLES / file}.py::{name}")


def f64(x: np.ndarray) -> np.ndarray:
    return np.asarray(x).astype(np.float64)


SPECS = [
    "gemm::gemm_fp16",
    "gemm::gemm_int8",
    "gemm_mx::gemm_mxfp8",
    "ffn::ffn",
    "attention::attention_d64",
    "attention::attention_d128",
]


#: (spec, machine): every example on the default machine; on the tiny one all but
#: gemm_mxfp8, whose pt.quantize_mx keeps its 32 KiB activation tile whole (twice the tiny
#: machine's capacity)
NOT_TINY = ("gemm_mx::gemm_mxfp8",)
CASES = [pytest.param(s, None, id=f"{s}-default") for s in SPECS] + [
    pytest.param(s, TINY, id=f"{s}-tiny") for s in SPECS if s not in NOT_TINY
]


@pytest.mark.parametrize(("spec", "machine"), CASES)
def test_matrix_examples_verify_bit_for_bit(spec: str, machine) -> None:  # type: ignore[no-untyped-def]
    k = kernel(spec)
    prog = ptoc.compile(k, machine)
    for seed in range(2):
        ptoc.verify(prog, **k.random_inputs(seed))


def test_gemm_fp16_is_the_product_within_the_fold_bound() -> None:
    """K FP32 roundings of exact products: ``|C - AB| <= K u (|A| |B|)`` (u = 2**-24)."""
    k = kernel("gemm::gemm_fp16")
    x = k.random_inputs(3)
    out = ptoc.verify(k, **x)["c"]
    a, b = f64(x["a"]), f64(x["b"])
    bound = a.shape[1] * U32 * (np.abs(a) @ np.abs(b))
    assert (np.abs(f64(out) - a @ b) <= bound).all()
    ops = ptoc.compile(k).stats().by_op
    assert ops["TMATMUL_ACC"] > 0  # the K loop chains through the accumulator


def test_gemm_int8_is_exact() -> None:
    k = kernel("gemm::gemm_int8")
    x = k.random_inputs(4)
    out = ptoc.verify(k, **x)["c"]
    want = x["a"].astype(np.int64) @ x["b"].astype(np.int64)
    assert np.array_equal(out.astype(np.int64), want)


def test_ffn_is_silu_gated_within_tolerance() -> None:
    """``y = silu(x w1) w2``; the gate is rounded to FP16 (relative 2**-11), the rest is
    FP32: ``|y - y64| <= 4 u16 (|g| |w2|) + 1e-6``."""
    k = kernel("ffn::ffn")
    x = k.random_inputs(5)
    out = ptoc.verify(k, **x)["y"]
    h = f64(x["x"]) @ f64(x["w1"])
    g = h / (1 + np.exp(-h))
    w2 = f64(x["w2"])
    bound = 4 * U16 * (np.abs(g) @ np.abs(w2)) + 1e-6
    assert (np.abs(f64(out) - g @ w2) <= bound).all()


@pytest.mark.parametrize("spec", ["attention::attention_d64", "attention::attention_d128"])
def test_attention_is_softmax_attention_within_tolerance(spec: str) -> None:
    """``O = softmax(Q K^T / sqrt(d)) V``; P is rounded to FP16 for PV, so each output is
    within ``4 u16 max|V|`` (plus the FP32 rounding of the rest) of float64."""
    k = kernel(spec)
    x = k.random_inputs(6)
    out = ptoc.verify(k, **x)["o"]
    q, kk, v = f64(x["q"]), f64(x["k"]), f64(x["v"])
    s = q @ kk.T / np.sqrt(q.shape[1])
    p = np.exp(s - s.max(axis=1, keepdims=True))
    want = (p / p.sum(axis=1, keepdims=True)) @ v
    assert np.abs(f64(out) - want).max() <= 4 * U16 * np.abs(v).max() + 1e-5


def test_gemm_mxfp8_is_the_product_within_the_quantization_bound() -> None:
    """MXFP8: the FP32 activations lose at most 2**-4 relatively (E4M3 keeps 3 fraction
    bits; the block scale puts the block maximum at the top binade), or 2**-9 of the
    block maximum where an element falls below E4M3's normal range; the weights are
    exact (E4M3 times powers of two), the fold adds K FP32 roundings."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("gemm_mx", EXAMPLES / "gemm_mx.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    k = mod.gemm_mxfp8
    x = mod.inputs(7)
    prog = ptoc.compile(k)
    assert prog.stats().by_op["TMATMUL_MX"] >= 1
    out = f64(ptoc.verify(prog, **x)["out"])
    xs = f64(x["x"])
    w = f64(x["w"]) * np.repeat(f64(x["w_scales"]), 32, axis=0)
    amax = np.repeat(np.abs(xs).reshape(xs.shape[0], -1, 32).max(axis=2), 32, axis=1)
    err_x = 2.0**-4 * np.abs(xs) + 2.0**-9 * amax
    bound = err_x @ np.abs(w) + xs.shape[1] * U32 * (np.abs(xs) @ np.abs(w)) * 1.1
    assert (np.abs(out - xs @ w) <= bound).all()
