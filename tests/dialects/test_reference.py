"""The reference interpreter: windows, PE offsets, strides and stores, checked against
plain numpy indexing (not against the ops' own semantics)."""

from __future__ import annotations

import numpy as np
import pytest

from ptoc.dialects.modes import CMode
from ptoc.dialects.reference import ReferenceEvalError, output_names, run_reference
from ptoc.testing import KernelBuilder


def _copy_kernel(pes: int, step: int, at: tuple[int, int], pe: tuple[int, int]):
    kb = KernelBuilder("copy", pes=pes)
    x = kb.tensor("x", "S32", (32, 40))
    out = kb.tensor("out", "S32", (32, 40))
    t = kb.load(x, (3, 5), at, step=step, pe=pe)
    kb.store(out, t, at, step=step, pe=pe)
    return kb.finish()


WINDOWS = [(1, 1, (0, 0), (0, 0)), (2, 2, (1, 3), (8, 0)), (4, 3, (2, 1), (1, 9))]


@pytest.mark.parametrize(("pes", "step", "at", "pe"), WINDOWS)  # fmt: skip
def test_load_store_windows(
    pes: int, step: int, at: tuple[int, int], pe: tuple[int, int]
) -> None:
    x = np.arange(32 * 40, dtype=np.int32).reshape(32, 40)
    got = run_reference(_copy_kernel(pes, step, at, pe), {"x": x})["out"]
    want = np.zeros_like(x)
    for p in range(pes):
        r0, c0 = at[0] + p * pe[0], at[1] + p * pe[1]
        rows = slice(r0, r0 + 3 * step, step)
        want[rows, c0 : c0 + 5] = x[rows, c0 : c0 + 5]
    np.testing.assert_array_equal(got, want)


def test_integer_arithmetic_wraps() -> None:
    kb = KernelBuilder("wrap")
    x = kb.tensor("x", "U8", (1, 8))
    out = kb.tensor("out", "U8", (1, 8))
    kb.store(out, kb.adds(kb.load(x, (1, 8)), 200))
    x = (np.arange(8, dtype=np.uint8) * 20).reshape(1, 8)
    got = run_reference(kb.finish(), {"x": x})["out"]
    np.testing.assert_array_equal(got, (np.arange(8) * 20 + 200).reshape(1, 8) % 256)


def test_compare_and_select() -> None:
    kb = KernelBuilder("sel")
    x = kb.tensor("x", "FP32", (1, 4))
    out = kb.tensor("out", "FP32", (1, 4))
    t = kb.load(x, (1, 4))
    kb.store(out, kb.sel(kb.cmp(CMode.LT, t, 0.0), t, 9.0))
    got = run_reference(kb.finish(), {"x": np.array([[-1, 2, -3, 4]], np.float32)})["out"]
    np.testing.assert_array_equal(got, [[-1, 9, -3, 9]])


def test_outputs_are_the_stored_tensors() -> None:
    m = _copy_kernel(1, 1, (0, 0), (0, 0))
    assert output_names(next(iter(m.ops))) == ["out"]


def test_wrong_input_shape_is_reported() -> None:
    with pytest.raises(ReferenceEvalError, match="input x has shape"):
        run_reference(_copy_kernel(1, 1, (0, 0), (0, 0)), {"x": np.zeros((2, 2), np.int32)})


def test_outputs_include_stores_inside_loops_and_exclude_loaded_tensors() -> None:
    """A store in a loop body (a nested region) makes its tensor an output; a tensor
    that is only loaded, even inside the same loop, is not one; the order is the
    parameters' order, not the stores'."""
    import ptoc
    import ptoc.lang as pt

    f32 = ptoc.fp32

    @ptoc.kernel
    def two_outputs(
        x: ptoc.Tensor[f32, 16, 8],
        early: ptoc.Tensor[f32, 16, 8],
        y: ptoc.Tensor[f32, 16, 8],
        late: ptoc.Tensor[f32, 8, 8],
        n: ptoc.Scalar[ptoc.s32],
    ):
        pt.store(late, pt.load(y, rows=(0, 8)))
        for i in pt.range(0, n, 8):
            pt.store(early, pt.exp(pt.load(x, rows=(i, 8))), rows=(i, 8))

    kernel = next(iter(two_outputs.trace().module.ops))
    assert output_names(kernel) == ["early", "late"]
