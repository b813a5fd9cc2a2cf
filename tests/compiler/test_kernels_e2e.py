"""Example kernels compile, validate, run without a fault and match the tile reference
bit for bit on every machine of ``conftest.MACHINES``."""

from __future__ import annotations

import numpy as np
import pytest

from ptoc.dialects.reference import run_reference
from ptoc.passes.execute import Mismatch, compare, run_compiled
from ptoc.passes.pipeline import compile_module

from .conftest import MACHINES
from .kernels import KERNELS


@pytest.mark.parametrize("machine", sorted(MACHINES))
@pytest.mark.parametrize("name", sorted(KERNELS))
def test_kernel_matches_reference(name: str, machine: str) -> None:
    module, inputs = KERNELS[name](7)
    config = MACHINES[machine]
    ck = compile_module(module, config)
    assert ck.report is not None and ck.report.bundles == ck.program.bundle_count()
    got = run_compiled(ck, inputs, config)
    compare(got, run_reference(module, inputs))


def test_softmax_reference_is_a_softmax() -> None:
    """The oracle itself is checked against plain numpy (rows sum to one)."""
    module, inputs = KERNELS["softmax"](3)
    out = run_reference(module, inputs)["out"]
    x = inputs["x"].astype(np.float64)
    want = np.exp(x - x.max(axis=1, keepdims=True))
    want /= want.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(out, want, rtol=1e-6, atol=1e-7)


def test_layernorm_reference_is_a_layernorm() -> None:
    module, inputs = KERNELS["layernorm"](3)
    out = run_reference(module, inputs)["out"]
    x = inputs["x"].astype(np.float64)
    norm = (x - x.mean(1, keepdims=True)) / np.sqrt(x.var(1, keepdims=True) + 1e-5)
    want = norm * inputs["gamma"] + inputs["beta"]
    np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-4)


def test_compare_reports_the_first_differing_bits() -> None:
    a = np.array([[1.0, 2.0]], np.float32)
    b = a.copy()
    b.view(np.uint32)[0, 1] ^= 1
    with pytest.raises(Mismatch, match=r"differs at \(0, 1\).*0x40000000.*0x40000001"):
        compare({"o": a}, {"o": b})


def test_signed_zero_is_a_mismatch() -> None:
    with pytest.raises(Mismatch):
        compare({"o": np.array([0.0], np.float32)}, {"o": np.array([-0.0], np.float32)})
