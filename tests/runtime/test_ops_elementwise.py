"""End-to-end elementwise and tile-scalar programs checked against numpy / the semantics."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ptoc.backend.isa import DataType, row
from ptoc.backend.isa.semantics import core, elementwise
from ptoc.runtime import TileLegalityFault

from .util import const, dims, load_tiles, machine, p2, prog, same_bits, size_for, tload

F32, S32 = DataType.FP32, DataType.S32


def bundle(
    op: str,
    dt: DataType,
    vr: int,
    vc: int,
    srcs: str,
    *,
    eng: str = "VEC",
    hand: str = "U",
    extra: str = "",
    nsrc_binding: str | None = None,
) -> str:
    size = size_for(dt, vr, p2(vc))
    text = f"BSTART.{eng} {op}, {dt.name}\n{extra}" + dims(
        vc, vr, p2(vc) if p2(vc) != vc else None
    )
    if nsrc_binding is not None:
        text += nsrc_binding
    return text + f"B.IOT {srcs}mask=1111, last, ->{hand}<{size}>\nBSTOP\n"


@given(seed=st.integers(0, 2**16), vr=st.integers(1, 4), vc=st.sampled_from([1, 3, 8, 16]))
def test_tadd_fp32_matches_numpy(seed: int, vr: int, vc: int) -> None:
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((vr, vc)).astype(np.float32)
    b = rng.standard_normal((vr, vc)).astype(np.float32)
    m = machine()
    m.run(prog(load_tiles(m, [a, b], F32) + bundle("TADD", F32, vr, vc, "T#2, T#1, ")))
    v = m.tile("U#1")
    for pe in range(4):
        assert same_bits(v.values[pe], a + b)
    assert v.dtype is F32 and (v.valid_rows, v.valid_cols) == (vr, vc)


def test_integer_wrap_and_shift() -> None:
    a = np.array([[2**31 - 1, -5, 7, 1]], np.int32)
    b = np.array([[1, 3, 33, 31]], np.int32)
    m = machine()
    pre = load_tiles(m, [a, b], S32)
    m.run(
        prog(
            pre
            + bundle("TADD", S32, 1, 4, "T#2, T#1, ")
            + bundle("TSHL", S32, 1, 4, "T#2, T#1, ")
        )
    )
    assert m.tile("U#2").values[0].tolist() == [[-(2**31), -2, 40, 32]]
    # shift counts use the low 5 bits: 33 -> 1, 31 -> 31
    assert m.tile("U#1").values[0].tolist() == [[-2, -40, 14, -(2**31)]]


@pytest.mark.parametrize("op", ["TMAX", "TMIN", "TSUB", "TMUL"])
def test_fp16_binary_against_semantics(op: str) -> None:
    a = np.array([[np.nan, 0.0, -0.0, 1.5, np.inf, 65504.0]], np.float16)
    b = np.array([[1.0, -0.0, 0.0, np.nan, 2.0, 65504.0]], np.float16)
    m = machine()
    m.run(
        prog(
            load_tiles(m, [a, b], DataType.FP16) + bundle(op, DataType.FP16, 1, 6, "T#2, T#1, ")
        )
    )
    want, st_ = row(op).semantics(DataType.FP16, a[None], b[None])
    assert same_bits(m.tile("U#1").values[0], want[0])
    assert m.status.tolist() == [int(st_[0])] * 4


@pytest.mark.parametrize("op", ["TEXP", "TLOG", "TSQRT", "TRECIP", "TRSQRT", "TABS", "TNEG"])
def test_unary_bf16_against_semantics(op: str) -> None:
    a = np.array([[0.5, -2.0, 0.0, 3.0, 100.0, -0.0]], ml_dtypes.bfloat16)
    eng = "VEC" if op in ("TABS", "TNEG") else "SFU"
    m = machine()
    m.run(
        prog(
            load_tiles(m, [a], DataType.BF16)
            + bundle(op, DataType.BF16, 1, 6, "T#1, ", eng=eng)
        )
    )
    want, st_ = row(op).semantics(DataType.BF16, a[None])
    assert same_bits(m.tile("U#1").values[0], want[0])
    assert m.status[0] == st_[0]


def test_tdiv_integer_zero_divisor_faults() -> None:
    a = np.array([[1, 2, 3, 4]], np.int32)
    b = np.array([[1, 0, 1, 1]], np.int32)
    m = machine()
    m.run(prog(load_tiles(m, [a, b], S32)))
    with pytest.raises(TileLegalityFault, match="zero divisor"):
        m.run(prog(bundle("TDIV", S32, 1, 4, "T#2, T#1, ", eng="SFU")))


def test_tcmp_predicate_and_tsel() -> None:
    a = np.array([[1.0, np.nan, -0.0, 5.0], [2.0, 3.0, 4.0, -1.0]], np.float32)
    b = np.array([[1.0, 1.0, 0.0, 6.0], [1.0, 3.0, 5.0, -2.0]], np.float32)
    m = machine()
    pre = load_tiles(m, [a, b], F32)
    cmp_ = bundle("TCMP", F32, 2, 4, "T#2, T#1, ", hand="M", extra="B.DATR LE, Max\n")
    sel = (
        "BSTART.VEC TSEL, FP32\nB.DIM zero, 4, ->LB0\nB.DIM zero, 2, ->LB1\n"
        "B.IOT M#1, T#2, mask=1111\nB.IOT T#1, mask=1111, last, ->U<32B>\nBSTOP\n"
    )
    sel = sel.replace("<32B>", f"<{size_for(F32, 2, 4)}>")
    m.run(prog(pre + cmp_ + sel))
    p = m.tile("M#1")
    assert p.predicate and p.values[0].tolist() == (a <= b).tolist()
    assert (p.rows, p.cols) == (m.tile("T#1").rows, 4)
    assert np.all(p.payload[0, 2:]) and p.defined.all()  # PadValue Max: one bits, defined
    assert same_bits(m.tile("U#1").values[0], np.where(a <= b, a, b))


def test_tfma_against_semantics() -> None:
    rng = np.random.default_rng(3)
    a, b, c = (rng.standard_normal((2, 8)).astype(np.float32) for _ in range(3))
    m = machine()
    text = load_tiles(m, [a, b, c], F32)
    text += (
        "BSTART.VEC TFMA, FP32\nB.DIM zero, 8, ->LB0\nB.DIM zero, 2, ->LB1\n"
        "B.IOT T#3, T#2, mask=1111\nB.IOT T#1, mask=1111, last, ->U<64B>\nBSTOP\n"
    )
    m.run(prog(text.replace("<64B>", "<128B>")))
    want, _ = elementwise.tfma(F32, a[None], b[None], c[None])
    assert same_bits(m.tile("U#1").values[0], want[0])


def test_tcvt_fp32_to_s8_saturating() -> None:
    a = np.array([[1.5, -300.0, 2.5, np.nan, 127.4, -0.6]], np.float32)
    m = machine()
    m.load_gm(0x100, a)
    m.set_gpr("a0", 0x100)
    # equal Rows: a 512 B FP32 tile of Col 8 and a 128 B S8 tile of Col 8 both have 16 rows
    pre = tload(F32, 1, 6, size="512B")
    cvt = bundle("TCVT", F32, 1, 6, "T#1, ", extra="B.DATR S8, RNE, Sat=1\n")
    cvt = cvt.replace(f"<{size_for(F32, 1, 8)}>", "<128B>")
    m.run(prog(pre + cvt))
    want, st_ = elementwise.tcvt(F32, a[None], DataType.S8, 1, True)
    v = m.tile("U#1")
    assert v.dtype is DataType.S8 and same_bits(v.values[0], want[0])
    assert m.status[0] == st_[0]


def test_tile_scalar_ops_use_per_pe_gprs() -> None:
    a = np.arange(8, dtype=np.int32).reshape(1, 8)
    m = machine()
    pre = load_tiles(m, [a], S32)
    m.run(prog(pre))
    for pe in range(4):
        m.set_gpr("a5", 10 * pe, pe=pe)
    text = (
        "BSTART.VEC TADDS, S32\nB.DIM zero, 8, ->LB0\nB.IOT T#1, mask=1111, last, "
        "->U<128B>\nB.IOR a5\nBSTOP\n"
    )
    m.run(prog(text))
    v = m.tile("U#1").values
    assert [v[pe, 0].tolist() for pe in range(4)] == [
        (a[0] + 10 * pe).tolist() for pe in range(4)
    ]


def test_tmuls_fp32_scalar_bits_from_lui() -> None:
    a = np.array([[1.0, -2.0, 0.25, 3.0]], np.float32)
    m = machine()
    # 0x40400000 = 3.0f: lui 0x40400 (0x40400 << 12)
    text = load_tiles(m, [a], F32) + "BSTART.STD FALL\nlui 0x40400, ->a6\nBSTOP\n"
    text += (
        "BSTART.VEC TMULS, FP32\nB.DIM zero, 4, ->LB0\nB.IOR a6\n"
        "B.IOT T#1, mask=1111, last, ->U<128B>\nBSTOP\n"
    )
    m.run(prog(text))
    assert m.tile("U#1").values[0].tolist() == [[3.0, -6.0, 0.75, 9.0]]


def test_tcmps_tsels_texpands() -> None:
    a = np.array([[1, 5, -3, 7]], np.int32)
    m = machine()
    text = load_tiles(m, [a], S32) + const("a4", 4)
    text += (
        "BSTART.VEC TCMPS, S32\nB.DATR GT\nB.DIM zero, 4, ->LB0\nB.IOR a4\n"
        "B.IOT T#1, mask=1111, last, ->M<128B>\nBSTOP\n"
        "BSTART.VEC TSELS, S32\nB.DIM zero, 4, ->LB0\nB.IOR a4\n"
        "B.IOT M#1, T#1, mask=1111, last, ->U<128B>\nBSTOP\n"
        "BSTART.VEC TEXPANDS, S32\nB.DATR Min\nB.DIM zero, 3, ->LB0\nB.DIM zero, 4, ->LB2\n"
        "B.IOR a4\nB.IOT mask=1111, last, ->N<128B>\nBSTOP\n"
    )
    m.run(prog(text))
    assert m.tile("M#1").values[0].tolist() == [[False, True, False, True]]
    assert m.tile("U#1").values[0].tolist() == [[4, 5, 4, 7]]
    n = m.tile("N#1")
    assert n.values[0].tolist() == [[4, 4, 4]]
    assert n.payload[0, 0, 3] == np.iinfo(np.int32).min  # Min padding
    want, _ = core.compare(3, S32, a[None], np.full((1, 1, 4), 4, np.int32))
    assert m.tile("M#1").values[0].tolist() == want[0].tolist()


def test_invalid_scalar_encoding() -> None:
    m = machine()
    m.set_gpr("a4", 0x3F800001)  # TF32 keeps 10 fraction bits: the low 13 must be zero
    with pytest.raises(TileLegalityFault, match="encoding"):
        m.run(
            prog(
                "BSTART.VEC TEXPANDS, TF32\nB.DIM zero, 4, ->LB0\nB.IOR a4\n"
                "B.IOT mask=1111, last, ->U<128B>\nBSTOP\n"
            )
        )
