"""``ptoc.verify(kernel, expected=fn, rtol=, atol=)`` and ``ptoc verify --expected``: the
author's own numpy function, within a tolerance, with the worst elements reported; and
``runs=`` / ``seed=`` like the command line."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import ptoc
from ptoc.cli import main
from ptoc.expected import compare_close, default_tolerance

from .helpers import write_kernels

KERNELS = """\
T = ptoc.Tensor[ptoc.fp32, 8, 64]


@ptoc.kernel
def softmax(x: T, out: T):
    t = pt.load(x)
    e = pt.exp(t - pt.row_max(t))
    pt.store(out, e / pt.row_sum(e))


@ptoc.kernel
def wrong_softmax(x: T, out: T):  # divides by the row maximum: verifies bit for bit
    t = pt.load(x)
    e = pt.exp(t - pt.row_max(t))
    pt.store(out, e / pt.row_max(e))


def softmax_ref(x):
    e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


@ptoc.kernel
def two(x: T, a: T, b: T):
    t = pt.load(x)
    pt.store(a, t + 1.0)
    pt.store(b, t * 2.0)


def two_ref(x):
    return {"a": x + 1, "b": x * 2}
"""


@pytest.fixture
def ks(tmp_path: Path):
    return write_kernels(tmp_path, KERNELS)


def _ref(ks):
    path, kernels = ks
    return path, kernels, kernels["softmax"].fn.__globals__["softmax_ref"]


def test_the_intended_kernel_is_within_tolerance(ks) -> None:
    _, kernels, ref = _ref(ks)
    out = ptoc.verify(kernels["softmax"], expected=ref, runs=3, seed=5)
    assert out.closeness is not None
    worst_abs, worst_rel = out.closeness["out"]
    assert 0 < worst_rel < 1e-5 and worst_abs < 1e-6


def test_a_bit_exact_but_wrong_kernel_reports_the_worst_elements(ks) -> None:
    _, kernels, ref = _ref(ks)
    x = np.random.default_rng(1).standard_normal((8, 64)).astype(np.float32)
    with pytest.raises(ptoc.ToleranceError) as info:
        ptoc.verify(kernels["wrong_softmax"], expected=ref, x=x)
    e = info.value
    assert isinstance(e, ptoc.VerifyError)
    got = ptoc.reference(kernels["wrong_softmax"], x=x)["out"].astype(np.float64)
    want = ref(x)
    err = np.abs(got - want)
    assert e.counts["out"] == (int((err > 1e-8 + 1e-5 * np.abs(want)).sum()), 512)
    first = e.deviations[0]
    assert first.index == tuple(int(i) for i in np.unravel_index(np.argmax(err), err.shape))
    assert first.abs_err == pytest.approx(err.max())
    assert first.rel_err == pytest.approx(err.max() / abs(want[first.index]))
    assert len(e.deviations) == 8
    assert [d.abs_err for d in e.deviations] == sorted((d.abs_err for d in e.deviations),
                                                       reverse=True)  # fmt: skip
    text = str(e)
    assert text.startswith(
        "verify wrong_softmax: the outputs are bit-exact with the reference but differ from "
        "softmax_ref beyond the tolerance in"
    )
    assert "(rtol=1e-05, atol=1e-08)" in text and "abs err" in text and "rel err" in text


def test_tolerances_and_defaults(ks) -> None:
    _, kernels, ref = _ref(ks)
    ptoc.verify(kernels["wrong_softmax"], expected=ref, rtol=1e9)  # anything goes
    assert default_tolerance(np.dtype(np.float32)) == (1e-5, 1e-8)
    assert default_tolerance(np.dtype(np.float16)) == (2 * 2.0**-10, 1e-8)
    assert default_tolerance(np.dtype(np.int32)) == (0.0, 0.0)


def test_compare_close_on_nan_inf_and_zero() -> None:
    nan, inf = np.nan, np.inf
    g = np.array([[nan, inf, 0.0, 1.0, -inf]], np.float32)
    ok = np.array([[nan, inf, -0.0, 1.0 + 1e-7, -inf]])
    assert compare_close("k", {"o": g}, {"o": ok}, None, None) == {
        "o": (pytest.approx(1e-7), pytest.approx(1e-7))
    }
    cases = [([[1.0, inf, 0, 1, -inf]], 0), ([[nan, -inf, 0, 1, -inf]], 1),
             ([[nan, inf, 1e-3, 1, -inf]], 2), ([[nan, inf, nan, 1, -inf]], 2)]  # fmt: skip
    for bad, i in cases:
        with pytest.raises(ptoc.ToleranceError) as info:
            compare_close("k", {"o": g}, {"o": np.array(bad)}, None, None)
        assert info.value.deviations[0].index == (0, i)


def test_several_outputs_by_name(ks) -> None:
    _, kernels = ks
    ref = kernels["two"].fn.__globals__["two_ref"]
    ptoc.verify(kernels["two"], expected=ref)
    with pytest.raises(ptoc.ToleranceError, match="elements of 'b'"):
        ptoc.verify(kernels["two"], expected=lambda x: {"a": x + 1, "b": x * 3})


@pytest.mark.parametrize(
    ("fn", "needle"),
    [
        (lambda x: 1 / 0, "the expected function <lambda> raised ZeroDivisionError"),
        (lambda y: y, "raised TypeError"),
        (lambda x: x[:4], "returned 'out' of shape (4, 64); the tensor is (8, 64)"),
        (lambda x: {"nope": x}, "returned 'nope', which softmax does not store to"),
        (lambda x: "text", "returned a non-numeric 'out'"),
    ],
)
def test_a_broken_expected_function_is_one_input_error(ks, fn, needle: str) -> None:
    _, kernels, _ = _ref(ks)
    with pytest.raises(ptoc.InputError) as info:
        ptoc.verify(kernels["softmax"], expected=fn)
    assert needle in str(info.value)


def test_runs_and_seed_match_the_command_line(ks, monkeypatch) -> None:
    _, kernels, _ = _ref(ks)
    k = kernels["softmax"]
    seen: list[int] = []
    real = type(k).random_inputs

    def spy(self, seed=0):
        seen.append(seed)
        return real(self, seed)

    monkeypatch.setattr(type(k), "random_inputs", spy)
    ptoc.verify(k, runs=3, seed=7)
    assert seen == [7, 8, 9]
    with pytest.raises(ptoc.InputError, match="runs must be at least 1"):
        ptoc.verify(k, runs=0)
    with pytest.raises(ptoc.InputError, match="not both"):
        ptoc.verify(k, runs=2, x=np.zeros((8, 64), np.float32))


def test_command_line_expected(ks, capsys) -> None:
    path, _ = ks
    assert main(["verify", f"{path}::softmax", "--expected", "softmax_ref", "--runs", "2"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("softmax: bit-exact in 2 runs (seeds 0..1), within tolerance of "
                          "softmax_ref (worst abs err ")  # fmt: skip
    assert main(["verify", f"{path}::wrong_softmax", "--expected", f"{path}::softmax_ref"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("verify wrong_softmax (seed 0): the outputs are bit-exact")
    assert main(["verify", f"{path}::wrong_softmax", "--expected", "softmax_ref",
                 "--rtol", "100"]) == 0  # fmt: skip
    capsys.readouterr()
    assert main(["verify", f"{path}::softmax", "--expected", "softmax_rf"]) == 2
    assert "has no function 'softmax_rf' (did you mean softmax_ref?)" in capsys.readouterr().err
    assert main(["verify", f"{path}::softmax", "--expected", "softmax_ref",
                 "--atol", "-1"]) == 2  # fmt: skip
    assert "atol is a non-negative number, not -1.0" in capsys.readouterr().err


FLOATS = st.floats(width=32, allow_nan=True, allow_infinity=True, allow_subnormal=True)


@settings(deadline=None)
@given(
    hnp.arrays(np.float32, (3, 4), elements=FLOATS),
    hnp.arrays(np.float64, (3, 4), elements=st.floats(allow_nan=True, allow_infinity=True)),
    st.sampled_from([None, 0.0, 1e-7, 1e-3, 0.5]),
    st.sampled_from([None, 0.0, 1e-30, 1e-3, 1.0]),
    st.booleans(),
)
def test_compare_close_is_numpys_isclose(g, w, rtol, atol, near) -> None:
    """Every binade, subnormals, +-0, +-inf and NaN on both sides; ``near`` makes the
    expected values a few ulp from the machine's, so ties with the tolerance occur."""
    if near:
        with np.errstate(over="ignore"):  # the top finite value steps to inf on purpose
            w = np.where(np.isfinite(g), np.nextafter(g, np.float32(np.inf)), g)
        w = w.astype(np.float64)
        w[0, 0] = -0.0 if g[0, 0] == 0 else w[0, 0]
    r, a = default_tolerance(g.dtype)
    r, a = (r if rtol is None else rtol), (a if atol is None else atol)
    ok = np.isclose(g.astype(np.float64), w, rtol=r, atol=a, equal_nan=True)
    try:
        compare_close("k", {"o": g}, {"o": w}, rtol, atol)
    except ptoc.ToleranceError as e:
        assert e.counts == {"o": (int((~ok).sum()), 12)}
        shown = [d.index for d in e.deviations]
        assert len(shown) == min(8, int((~ok).sum())) == len(set(shown))
        assert all(not ok[i] for i in shown)
        for d in e.deviations:  # the reported values are the arrays' own
            assert np.array_equal(np.float32(d.got), g[d.index], equal_nan=True)
    else:
        assert ok.all()
