"""Matrix products on the CUBE engine: ``pt.matmul``, ``a @ b`` and ``pt.gemv``."""

from __future__ import annotations

from typing import Any

from ptoc.backend.isa.semantics import matmul as sm
from ptoc.dialects import tile_irregular as irr
from ptoc.dialects.tile_matmul import MatmulOp, legal_pairs_text, mx_types_text, result_dtype

from ..dtypes import dtype_of
from ..tile import Tile
from ._core import as_dtype, as_tile, emit_tile, fail


def _operand(x: Any, fn: str, what: str, transpose: bool) -> Tile:
    t = as_tile(x, fn, what)
    if t.dtype.datatype is None:
        fail(f"{fn}: {what} is a predicate tile; matrix inputs are numbers")
    if transpose:  # TransA/TransB apply to Shared primaries only: transpose the tile
        t = emit_tile(fn, irr.TransOp(t.value))
    return t


def matmul(
    a: Tile,
    b: Tile,
    acc: Tile | None = None,
    bias: Tile | None = None,
    dtype: Any = None,
    relu: bool = False,
    transpose_a: bool = False,
    transpose_b: bool = False,
) -> Tile:
    """The matrix product ``a @ b`` on the CUBE engine (TMATMUL and its forms, D11).

    ``a`` is M x K, ``b`` K x N (after ``transpose_a`` / ``transpose_b``, which transpose
    the tile first with TTRANS); the result is M x N in the accumulator type of the pair:
    FP32 for floating inputs (FP32, TF32, HF32, FP16, BF16, HiF8, FP8), S32 for signed
    and U32 for unsigned integers (``dtype``, if given, must be that type). Every element
    starts at ``acc[m, n]`` (an M x N tile of the accumulator type) or +0 and adds the
    exact products ``a[m, k] * b[k, n]`` for k = 0 .. K-1 in order, rounding once per
    step (RNE); then ``bias`` (a 1 x N row of the accumulator type) is added with one
    more rounding, then ``relu`` clamps negatives and -0 to +0. Any shape: the compiler
    splits M, N and K into CUBE blocks and chains K chunks through TMATMUL_ACC, which by
    D11 gives the same bits as one fold. Operands may be loaded tiles or results of
    vector ops."""
    fn = "pt.matmul"
    ta = _operand(a, fn, "a", bool(transpose_a))
    tb = _operand(b, fn, "b", bool(transpose_b))
    at, bt = ta.dtype.datatype, tb.dtype.datatype
    assert at is not None and bt is not None
    if not sm.pair_legal(at, bt):
        fail(
            f"{fn}: {ta.dtype.name} x {tb.dtype.name} is not a legal CUBE matrix pair "
            f"(TileOrdinaryMatrixInputTypesSameClass): {legal_pairs_text()}",
            "convert one operand with pt.cast so both are floating, signed or unsigned",
        )
    if min(ta.dtype.bits, tb.dtype.bits) < 8:
        fail(f"{fn}: packed 4-bit matrix inputs ({ta.dtype.name}, {tb.dtype.name}) are not "
             "supported")  # fmt: skip
    want = dtype_of(result_dtype(at, bt))
    asked = None if dtype is None else as_dtype(dtype, fn)
    if asked is not None and asked != want:
        fail(
            f"{fn}: the result of {ta.dtype.name} x {tb.dtype.name} is {want.name} (the "
            f"accumulator type), not {asked.name}; the legal pairs and their results: "
            f"{legal_pairs_text()}",
            f"convert the result afterwards: pt.cast(pt.matmul(a, b), ptoc.{asked.name})",
        )
    (m, k), (k2, n) = ta.shape, tb.shape
    if k != k2:
        fail(
            f"shape mismatch in {fn}: {ta.shape} @ {tb.shape} (a's columns must equal b's "
            "rows)",
            "transpose an operand with transpose_a=True / transpose_b=True" if m == k2 or
            n == k else None,
        )  # fmt: skip
    extra = {}
    for x, what, shape in ((acc, "acc", (m, n)), (bias, "bias", (1, n))):
        if x is None:
            continue
        t = as_tile(x, fn, what)
        if t.dtype != want or t.shape != shape:
            fail(
                f"{fn}: {what} must be a {shape} {want.name} tile (the accumulator type of "
                f"{ta.dtype.name} x {tb.dtype.name}), not a {t.shape} {t.dtype.name} tile"
            )
        extra[what] = t.value
    return emit_tile(
        fn, MatmulOp(ta.value, tb.value, extra.get("acc"), extra.get("bias"), bool(relu))
    )


def matmul_mx(
    a: Tile,
    a_scales: Tile | None,
    b: Tile,
    b_scales: Tile | None,
    acc: Tile | None = None,
    bias: Tile | None = None,
    relu: bool = False,
) -> Tile:
    """The MX matrix product (TMATMUL_MX and its forms, D11): like :func:`matmul` with
    each product ``a[m, k] * b[k, n]`` multiplied by the exact power-of-two E8M0 scales
    ``a_scales[m, k // 32]`` and ``b_scales[k // 32, n]`` before it enters the fold.
    ``a`` and ``b`` are FP16, BF16, E4M3 or E5M2 (any two); the FP8 sides take their
    scales (M x ceil(K/32) and ceil(K/32) x N E8M0 tiles), FP16/BF16 sides none
    (``None``). The result, ``acc`` and ``bias`` are FP32.

    Example::

        @ptoc.kernel
        def matmul_mx_example(
            a: ptoc.Tensor[ptoc.e4m3, 8, 64],
            a_scales: ptoc.Tensor[ptoc.e8m0, 8, 2],
            b: ptoc.Tensor[ptoc.fp16, 64, 24],
            out: ptoc.Tensor[ptoc.fp32, 8, 24],
        ):
            y = pt.matmul_mx(pt.load(a), pt.load(a_scales), pt.load(b), None)
            pt.store(out, y)


        ptoc.verify(matmul_mx_example)
    """
    fn = "pt.matmul_mx"
    ta, tb = _operand(a, fn, "a", False), _operand(b, fn, "b", False)
    at, bt = ta.dtype.datatype, tb.dtype.datatype
    assert at is not None and bt is not None
    if not sm.pair_legal(at, bt, mx=True) or min(ta.dtype.bits, tb.dtype.bits) < 8:
        fail(f"{fn}: {ta.dtype.name} x {tb.dtype.name} is not a legal MX matrix pair "
             f"(TileMXOperandPairLegal): {mx_types_text()}")  # fmt: skip
    (m, k), (k2, n) = ta.shape, tb.shape
    if k != k2:
        fail(f"shape mismatch in {fn}: {ta.shape} @ {tb.shape} (a's columns must equal b's "
             "rows)")  # fmt: skip
    blocks = sm.scale_blocks(k)
    scales = {}
    for x, t, what, shape in (
        (a_scales, ta, "a", (m, blocks)),
        (b_scales, tb, "b", (blocks, n)),
    ):
        dt = t.dtype.datatype
        assert dt is not None
        if not sm.needs_scale(dt):
            if x is not None:
                fail(f"{fn}: a {t.dtype.name} {what} takes no scales (pass None)")
            continue
        if x is None:
            fail(f"{fn}: a {t.dtype.name} {what} needs its {shape} E8M0 scales")
        s = as_tile(x, fn, f"the scales of {what}")
        if s.dtype.name != "e8m0" or s.shape != shape:
            fail(
                f"{fn}: the scales of {what} must be a {shape} e8m0 tile (one per 32 K "
                f"elements), not a {s.shape} {s.dtype.name} tile"
            )
        scales[what] = s.value
    extra = {}
    for x, what, shape in ((acc, "acc", (m, n)), (bias, "bias", (1, n))):
        if x is None:
            continue
        t = as_tile(x, fn, what)
        if t.dtype.name != "fp32" or t.shape != shape:
            fail(f"{fn}: {what} must be a {shape} fp32 tile, not a {t.shape} {t.dtype.name} "
                 "tile")  # fmt: skip
        extra[what] = t.value
    op = MatmulOp(ta.value, tb.value, extra.get("acc"), extra.get("bias"), bool(relu),
                  mx=True, a_scale=scales.get("a"), b_scale=scales.get("b"))  # fmt: skip
    return emit_tile(fn, op)


def gemv(
    a: Tile, b: Tile, acc: Tile | None = None, bias: Tile | None = None, dtype: Any = None,
    relu: bool = False,
) -> Tile:  # fmt: skip
    """The vector-matrix product of a 1 x K row ``a`` and a K x N matrix ``b`` (TGEMV and
    its ACC/BIAS forms): :func:`matmul` with M = 1."""
    fn = "pt.gemv"
    ta = as_tile(a, fn, "a")
    if ta.shape[0] != 1:
        fail(f"{fn}: a must be one row (1 x K), not {ta.shape}", "use pt.matmul for M > 1")
    return matmul(ta, b, acc=acc, bias=bias, dtype=dtype, relu=relu)


#: what ``ptoc.lang`` exports from this module
__all__ = ["gemv", "matmul", "matmul_mx"]
