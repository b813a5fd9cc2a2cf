"""``pt.matmul``, ``a @ b`` and ``pt.gemv``: what they record, and their dtype and shape
rules as located diagnostics naming the legal combinations."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import ptoc

from .helpers import op_names, write_kernels

KERNEL = """\
@ptoc.kernel
def k(a: ptoc.Tensor[ptoc.{at}, {m}, {k}], b: ptoc.Tensor[ptoc.{bt}, {k2}, {n}],
      v: ptoc.Tensor[ptoc.{rt}, {vr}, {n}], out: ptoc.Tensor[ptoc.{rt}, {m}, {n}]):
    a, b, v = pt.load(a), pt.load(b), pt.load(v)
    pt.store(out, {expr})
"""


def _kernel(tmp_path: Path, expr: str, at="fp16", bt="fp16", rt="fp32", m=8, k=16, k2=16,
            n=24, vr=1) -> ptoc.Kernel:  # fmt: skip
    text = KERNEL.format(expr=expr, at=at, bt=bt, rt=rt, m=m, k=k, k2=k2, n=n, vr=vr)
    return write_kernels(tmp_path, text)[1]["k"]


def _error(tmp_path: Path, expr: str, **kw) -> ptoc.KernelError:  # type: ignore[no-untyped-def]
    with pytest.raises(ptoc.KernelError) as info:
        _kernel(tmp_path, expr, **kw).trace()
    e = info.value
    assert (e.line, e.col) == (8, 19)  # the expression in pt.store(out, ...)
    return e


@pytest.mark.parametrize(
    ("expr", "ops"),
    [
        ("a @ b", ["tile.matmul"]),
        ("pt.matmul(a, b, bias=v, relu=True)", ["tile.matmul"]),
        ("pt.matmul(a, pt.transpose(pt.transpose(b)), dtype=ptoc.fp32)",
         ["tile.trans", "tile.trans", "tile.matmul"]),
    ],
)  # fmt: skip
def test_matmul_records_tile_matmul_and_verifies(tmp_path: Path, expr, ops) -> None:  # type: ignore[no-untyped-def]
    k = _kernel(tmp_path, expr)
    assert op_names(k)[3:-1] == ops
    ptoc.verify(k, runs=2)


def test_transpose_flags_transpose_the_operands_with_ttrans(tmp_path: Path) -> None:
    k = _kernel(tmp_path, "pt.matmul(pt.transpose(a), b, transpose_a=True)")
    assert op_names(k)[3:-1] == ["tile.trans", "tile.trans", "tile.matmul"]
    k2 = _kernel(tmp_path, "pt.matmul(a, b, transpose_b=True)", n=16)
    assert op_names(k2)[3:-1] == ["tile.trans", "tile.matmul"]
    ptoc.verify(k2)


def test_gemv_is_the_one_row_product_on_tgemv(tmp_path: Path) -> None:
    k = _kernel(tmp_path, "pt.gemv(a, b, bias=v)", m=1)
    assert "TGEMV_BIAS" in ptoc.compile(k).stats().by_op
    x = k.random_inputs(0)
    got = ptoc.verify(k, **x)["out"]
    want = x["a"].astype(np.float64) @ x["b"].astype(np.float64) + x["v"]
    assert np.allclose(got, want, rtol=1e-5, atol=1e-5)


def test_an_illegal_pair_names_the_legal_combinations(tmp_path: Path) -> None:
    e = _error(tmp_path, "a @ b", at="fp16", bt="s8")
    assert "fp16 x s8 is not a legal CUBE matrix pair" in e.message
    assert "FP16" in e.message and "-> FP32" in e.message and "-> S32" in e.message
    assert "-> U32" in e.message


def test_the_inner_dimensions_must_agree(tmp_path: Path) -> None:
    e = _error(tmp_path, "a @ b", k=16, k2=24)
    assert "shape mismatch in pt.matmul: (8, 16) @ (24, 24)" in e.message


def test_the_result_type_is_the_accumulator_type(tmp_path: Path) -> None:
    e = _error(tmp_path, "pt.matmul(a, b, dtype=ptoc.fp16)")
    assert "the result of fp16 x fp16 is fp32" in e.message
    assert "any two of S16, S8 -> S32" in e.message  # the legal pairs, from the catalog
    assert e.hint is not None and "pt.cast" in e.hint


def test_bias_and_accumulator_shapes_and_types(tmp_path: Path) -> None:
    e = _error(tmp_path, "pt.matmul(a, b, bias=v)", vr=2)
    assert "bias must be a (1, 24) fp32 tile" in e.message
    e = _error(tmp_path, "pt.matmul(a, b, acc=v)")
    assert "acc must be a (8, 24) fp32 tile" in e.message
    e = _error(tmp_path, "pt.matmul(a, b, bias=v)", at="s8", bt="s8", rt="fp32")
    assert "bias must be a (1, 24) s32 tile" in e.message


def test_gemv_takes_one_row(tmp_path: Path) -> None:
    e = _error(tmp_path, "pt.gemv(a, b)")
    assert "pt.gemv: a must be one row" in e.message


def test_integer_products_accumulate_exactly(tmp_path: Path) -> None:
    k = _kernel(tmp_path, "a @ b", at="u8", bt="u16", rt="u32", k=40, k2=40)
    x = k.random_inputs(1)
    got = ptoc.verify(k, **x)["out"]
    want = (x["a"].astype(np.uint64) @ x["b"].astype(np.uint64)) % 2**32
    assert np.array_equal(got.astype(np.uint64), want)


MX_KERNEL = """\
@ptoc.kernel
def k(a: ptoc.Tensor[ptoc.{at}, 8, 64], sa: ptoc.Tensor[ptoc.e8m0, {sar}, {sac}],
      b: ptoc.Tensor[ptoc.{bt}, 64, 24], out: ptoc.Tensor[ptoc.fp32, 8, 24]):
    a, sa, b = pt.load(a), pt.load(sa), pt.load(b)
    pt.store(out, {expr})
"""


def _mx(tmp_path: Path, expr: str, at="e4m3", bt="fp16", sar=8, sac=2) -> ptoc.Kernel:  # type: ignore[no-untyped-def]
    text = MX_KERNEL.format(expr=expr, at=at, bt=bt, sar=sar, sac=sac)
    return write_kernels(tmp_path, text)[1]["k"]


def test_matmul_mx_records_an_mx_matmul_and_verifies(tmp_path: Path) -> None:
    k = _mx(tmp_path, "pt.matmul_mx(a, sa, b, None)")
    assert "TMATMUL_MX" in ptoc.compile(k).stats().by_op
    ptoc.verify(k, runs=2)


@pytest.mark.parametrize(
    ("expr", "kw", "message"),
    [
        ("pt.matmul_mx(a, sa, b, None)", {"at": "s8"}, "s8 x fp16 is not a legal MX"),
        ("pt.matmul_mx(a, None, b, None)", {}, "a e4m3 a needs its (8, 2) E8M0 scales"),
        ("pt.matmul_mx(a, sa, b, sa)", {}, "a fp16 b takes no scales"),
        ("pt.matmul_mx(a, sa, b, None)", {"sac": 3}, "the scales of a must be a (8, 2) e8m0"),
    ],
)
def test_matmul_mx_rules(tmp_path: Path, expr: str, kw: dict, message: str) -> None:
    with pytest.raises(ptoc.KernelError) as info:
        _mx(tmp_path, expr, **kw).trace()
    assert message in info.value.message
    assert (info.value.line, info.value.col) == (8, 19)
