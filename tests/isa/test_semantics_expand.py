"""Row/column expansions against element-by-element oracles (seed TROWEXPANDMIN page, ASL)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ptoc.backend.isa import row
from ptoc.backend.isa.datatypes import DataType, info
from ptoc.backend.isa.semantics.core import NV, NX, SemanticError, binary, unary
from ptoc.backend.isa.semantics.expand import (
    EXPAND_OPS,
    col_expand,
    col_expand_expdif,
    expdif_types_legal,
    row_expand,
    row_expand_expdif,
)

D = DataType
ARITH16 = [
    D.FP64,
    D.FP32,
    D.TF32,
    D.HF32,
    D.FP16,
    D.BF16,
    D.E4M3,
    D.E5M2,
    D.S64,
    D.S32,
    D.S16,
    D.S8,
    D.U64,
    D.U32,
    D.U16,
    D.U8,
]
SPECIAL = {
    D.FP32: [0x0, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0x7F800001, 0x3F800000],
    D.FP16: [0x0, 0x8000, 0x7C00, 0xFC00, 0x7E00, 0x7C01, 0x3C00],
    D.BF16: [0x0, 0x8000, 0x7F80, 0xFF80, 0x7FC0, 0x7F81, 0x3F80],
}


def raw(a: np.ndarray) -> np.ndarray:
    return np.asarray(a).view(np.dtype(f"uint{a.dtype.itemsize * 8}"))


def tile(rng: np.random.Generator, dt: DataType, shape) -> np.ndarray:
    ti = info(dt)
    ut = np.dtype(f"uint{ti.bits}")
    if ti.is_float:
        # Real values of modest size (valid for every format incl. TF32/HF32/FP8).
        vals = rng.normal(0, 3, size=shape)
        vals = np.where(rng.random(shape) < 0.2, 0.0, vals)
        bits = raw(np.asarray(vals, np.float64).astype(ti.carrier)).astype(np.uint64)
        if dt in (D.TF32, D.HF32):
            keep = 13 if dt == D.TF32 else 12
            bits &= ~np.uint64((1 << keep) - 1)
        if dt in SPECIAL:
            pick = rng.random(shape) < 0.3
            bits = np.where(
                pick, rng.choice(np.array(SPECIAL[dt], np.uint64), size=shape), bits
            )
        return bits.astype(ut).view(ti.carrier)
    bits = rng.integers(0, 1 << ti.bits, size=shape, dtype=np.uint64)
    return bits.astype(ut).view(ti.carrier)


def cell(a: np.ndarray, p: int, r: int, c: int) -> np.ndarray:
    return a[p : p + 1, r : r + 1, c : c + 1]


def oracle(op, dt, src, bcast, axis):
    """dst[p, r, c] = core.binary(op, src[p, r, c], bcast[p, r|0, 0|c]), one by one."""
    p, rows, cols = src.shape
    out = np.zeros(src.shape, np.uint64)
    status = np.zeros(p, np.uint8)
    for pe in range(p):
        for r in range(rows):
            for c in range(cols):
                b = cell(bcast, pe, r, 0) if axis == "row" else cell(bcast, pe, 0, c)
                res, st_ = binary(op, dt, cell(src, pe, r, c), b)
                out[pe, r, c] = raw(res)[0, 0, 0]
                status[pe] |= st_[0]
    return out, status


@pytest.mark.parametrize("dt", ARITH16)
@given(
    seed=st.integers(0, 2**32 - 1),
    p=st.integers(1, 2),
    r=st.integers(1, 4),
    c=st.integers(1, 9),
    op=st.sampled_from([o for o in EXPAND_OPS if o != "div"]),
    axis=st.sampled_from(["row", "col"]),
)
def test_expand_matches_elementwise_binary(dt, seed, p, r, c, op, axis):
    rng = np.random.default_rng(seed)
    src = tile(rng, dt, (p, r, c))
    bshape = (p, r, 1) if axis == "row" else (p, 1, c)
    bcast = tile(rng, dt, bshape)
    fn = row_expand if axis == "row" else col_expand
    dst, status = fn(op, dt, src, bcast)
    want, want_status = oracle(op, dt, src, bcast, axis)
    assert dst.shape == src.shape and dst.dtype == src.dtype
    assert np.array_equal(raw(dst).astype(np.uint64), want)
    assert status.tolist() == want_status.tolist()


@pytest.mark.parametrize("dt", [D.FP32, D.FP16, D.BF16, D.S32, D.U16])
def test_expand_div(dt):
    rng = np.random.default_rng(11)
    src = tile(rng, dt, (2, 3, 5))
    bcast = tile(rng, dt, (2, 3, 1))
    if info(dt).is_int:
        nonzero = np.where(raw(bcast) == 0, 1, raw(bcast)).astype(raw(bcast).dtype)
        bcast = nonzero.view(info(dt).carrier)
    dst, status = row("TROWEXPANDDIV").semantics(dt, src, bcast)
    want, want_status = oracle("div", dt, src, bcast, "row")
    assert np.array_equal(raw(dst).astype(np.uint64), want)
    assert status.tolist() == want_status.tolist()


def test_trowexpanddiv_integer_zero_divisor_illegal():
    with pytest.raises(SemanticError):
        row_expand("div", D.S32, np.ones((1, 2, 3), np.int32), np.array([[[1], [0]]], np.int32))
    with pytest.raises(SemanticError):
        col_expand("div", D.U8, np.ones((1, 2, 3), np.uint8), np.array([[[1, 0, 2]]], np.uint8))


@pytest.mark.parametrize("dt", ARITH16)
def test_trowexpand_copies_bits(dt):
    rng = np.random.default_rng(5)
    ti = info(dt)
    bits = rng.integers(0, 1 << ti.bits, size=(2, 3, 1), dtype=np.uint64)
    if ti.is_float and ti.bits == 32:
        bits[0, 0, 0] = 0x7F800001  # a signalling NaN is copied, not quieted, no NV
    bcast = bits.astype(np.dtype(f"uint{ti.bits}")).view(ti.carrier)
    dst, status = row_expand(None, dt, None, bcast, shape=(3, 7))
    assert dst.shape == (2, 3, 7)
    assert np.array_equal(raw(dst), np.repeat(raw(bcast), 7, axis=2))
    assert status.tolist() == [0, 0]
    dst, status = row("TCOLEXPAND").semantics(dt, None, bcast.reshape(2, 1, 3), shape=(4, 3))
    assert np.array_equal(raw(dst), np.repeat(raw(bcast).reshape(2, 1, 3), 4, axis=1))
    src = np.zeros((2, 3, 5), ti.carrier)  # a full-shape src only supplies the shape
    assert row("TROWEXPAND").semantics(dt, src, bcast)[0].shape == (2, 3, 5)


def test_trowexpandmin_seed_example():
    """dst[r, c] = typed min(src0[r, c], bcast[r, 0]) with the TMIN rules."""
    src = np.array(
        [
            [
                [0x00000000, 0x7FC00001, 0x7F800001, 0xFFC00002, 0x40000000],
                [0x3F800000, 0xBF800000, 0x7F800000, 0xFF800000, 0x80000000],
            ]
        ],
        np.uint32,
    ).view(np.float32)
    bcast = np.array([[[0x80000000], [0x7FC00003]]], np.uint32).view(np.float32)
    dst, status = row("TROWEXPANDMIN").semantics(D.FP32, src, bcast)
    assert raw(dst).tolist() == [
        [
            [0x80000000, 0x80000000, 0x80000000, 0x80000000, 0x80000000],
            [0x3F800000, 0xBF800000, 0x7F800000, 0xFF800000, 0x80000000],
        ]
    ]
    assert status.tolist() == [NV]
    dst, _ = row_expand(
        "min",
        D.FP32,
        np.array([[[0x7FC00001]]], np.uint32).view(np.float32),
        np.array([[[0xFFC00002]]], np.uint32).view(np.float32),
    )
    assert raw(dst).tolist() == [[[0x7FC00000]]]  # two NaNs: the canonical quiet NaN
    dst, _ = row_expand("min", D.S8, np.array([[[-3, 5]]], np.int8), np.array([[[4]]], np.int8))
    assert dst.tolist() == [[[-3, 4]]]
    dst, _ = row_expand(
        "min", D.U8, np.array([[[253, 5]]], np.uint8), np.array([[[254]]], np.uint8)
    )
    assert dst.tolist() == [[[253, 5]]]


# ---- EXPDIF -----------------------------------------------------------------------------


def widen_oracle(dt: DataType, bits: int) -> np.ndarray:
    """ASL ExactWidenFP16ToFP32 / ExactWidenBF16ToFP32 written with Python ints."""
    if dt == D.BF16:
        return np.array([[[bits << 16]]], np.uint32).view(np.float32)
    if (bits & 0x7C00) == 0x7C00 and bits & 0x3FF:
        return np.array([[[0x7FC00000]]], np.uint32).view(np.float32)
    v = np.array([bits], np.uint16).view(np.float16).astype(np.float64)[0]
    return np.array([[[v]]], np.float32)  # every FP16 number is exact in FP32


PAIRS = [
    (D.FP16, D.FP16),
    (D.BF16, D.BF16),
    (D.FP32, D.FP32),
    (D.FP16, D.FP32),
    (D.BF16, D.FP32),
]


@pytest.mark.parametrize(("src_dt", "dst_dt"), PAIRS)
@given(
    seed=st.integers(0, 2**32 - 1),
    r=st.integers(1, 3),
    c=st.integers(1, 6),
    axis=st.sampled_from(["row", "col"]),
)
def test_expdif_matches_sub_then_exp(src_dt, dst_dt, seed, r, c, axis):
    rng = np.random.default_rng(seed)
    src = tile(rng, src_dt, (1, r, c))
    bcast = tile(rng, src_dt, (1, r, 1) if axis == "row" else (1, 1, c))
    fn = row_expand_expdif if axis == "row" else col_expand_expdif
    dst, status = fn(src_dt, dst_dt, src, bcast)
    assert dst.dtype == info(dst_dt).carrier and dst.shape == src.shape
    want_status = 0
    for i in range(r):
        for j in range(c):
            a = cell(src, 0, i, j)
            b = cell(bcast, 0, i, 0) if axis == "row" else cell(bcast, 0, 0, j)
            if src_dt != dst_dt:
                a, b = (
                    widen_oracle(src_dt, int(raw(a)[0, 0, 0])),
                    widen_oracle(src_dt, int(raw(b)[0, 0, 0])),
                )
            d, s1 = binary("sub", dst_dt, a, b)
            e, s2 = unary("exp", dst_dt, d)
            assert raw(dst)[0, i, j] == raw(e)[0, 0, 0]
            want_status |= int(s1[0]) | int(s2[0])
    assert status.tolist() == [want_status]


def test_expdif_mixed_widening_nan_rules():
    # FP16 sNaN widens to the canonical quiet NaN: no NV. BF16 sNaN stays signalling: NV.
    one16 = np.array([[[0x3C00]]], np.uint16).view(np.float16)
    snan16 = np.array([[[0x7C01]]], np.uint16).view(np.float16)
    dst, status = row_expand_expdif(D.FP16, D.FP32, snan16, one16)
    assert raw(dst).tolist() == [[[0x7FC00000]]] and status.tolist() == [0]
    import ml_dtypes

    snan_bf = np.array([[[0x7F81]]], np.uint16).view(ml_dtypes.bfloat16)
    one_bf = np.array([[[0x3F80]]], np.uint16).view(ml_dtypes.bfloat16)
    dst, status = row_expand_expdif(D.BF16, D.FP32, snan_bf, one_bf)
    assert np.isnan(dst[0, 0, 0]) and status[0] & NV


def test_expdif_mixed_discriminator_values():
    """The two operand pairs ASL HardwareNumericMixedExpdifDiscriminator pins."""
    src = np.array([[[0x2000]], [[0x3C00]]], np.uint16).view(np.float16)  # 2**-7, 1.0
    bc = np.array([[[0x0001]], [[0x1800]]], np.uint16).view(np.float16)  # 2**-24, 2**-9
    dst, status = row_expand_expdif(D.FP16, D.FP32, src, bc)
    assert raw(dst).tolist() == [[[0x3F810100]], [[0x402DA16E]]]
    assert status.tolist() == [NX, NX]  # deliberate: the ASL witness reports no status


def test_expdif_type_pairs():
    for s, d in PAIRS:
        assert expdif_types_legal(s, d) is None
    assert expdif_types_legal(D.FP32, D.FP16) is not None
    assert expdif_types_legal(D.FP16, D.BF16) is not None
    with pytest.raises(ValueError):
        row_expand_expdif(
            D.FP32, D.FP16, np.zeros((1, 1, 1), np.float32), np.zeros((1, 1, 1), np.float32)
        )
