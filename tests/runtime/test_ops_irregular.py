"""ADR 0083 operations (seed S0) and the other Mode-3 selectors, end to end."""

from __future__ import annotations

import numpy as np
import pytest

from ptoc.backend.isa import DataType
from ptoc.backend.isa.semantics import generate, quant, sorting
from ptoc.runtime import TileAllocationFault, TileLegalityFault

from .util import const, load_tiles, machine, prog, same_bits

F32, F16, S32, U32, S16 = DataType.FP32, DataType.FP16, DataType.S32, DataType.U32, DataType.S16


def sfu(op: str, dt: str, body: str) -> str:
    return f"BSTART.SFU {op}, {dt}\n{body}BSTOP\n"


def test_tquant_and_tdequant_with_gpr_scalars() -> None:
    x = np.array([[0.4, -1.6, 100.0, np.nan], [2.5, -200.0, 0.0, 3.49]], np.float32)
    m = machine()
    text = load_tiles(m, [x], F32)
    # multiplier 2.0 (0x40000000), zero point 3
    text += "BSTART.STD FALL\nlui 0x40000, ->a4\nc.movi 3, ->a5\nBSTOP\n"
    text += sfu(
        "TQUANT",
        "FP32",
        "B.DATR S8, RNE, Sat=1\nB.DIM zero, 4, ->LB0\n"
        "B.DIM zero, 2, ->LB1\nB.IOR a4, a5\nB.IOT T#1, mask=1111, last, ->U<128B>\n",
    )
    text += sfu(
        "TDEQUANT",
        "S8",
        "B.DATR FP32\nB.DIM zero, 4, ->LB0\nB.DIM zero, 2, ->LB1\n"
        "B.IOR a4, a5\nB.IOT U#1, mask=1111, last, ->M<128B>\n",
    )
    m.run(prog(text))
    g = np.full(4, 0x40000000, np.uint64)
    zp = np.full(4, 3, np.uint64)
    q, st_q = quant.tquant(DataType.S8, np.broadcast_to(x, (4, 2, 4)), g, zp, 1, True)
    assert same_bits(m.tile("U#1").values, q)
    d, st_d = quant.tdequant(DataType.S8, q, g, zp, 0)
    assert same_bits(m.tile("M#1").values, d)
    assert m.status.tolist() == (st_q | st_d).tolist()


def test_tquant_defaults_and_explicit_zero_ior() -> None:
    x = np.array([[1.4, -2.6]], np.float32)
    m = machine()
    body = "B.DATR U8\nB.DIM zero, 2, ->LB0\nB.IOT T#1, mask=1111, last, ->U<128B>\n"
    m.run(prog(load_tiles(m, [x], F32) + sfu("TQUANT", "FP32", body)))
    # omitted B.IOR: multiplier 1.0 and zero point 0; U8 with Sat=0 keeps the low 8 bits
    assert m.tile("U#1").values[0].tolist() == [[1, 253]]
    with pytest.raises(TileLegalityFault, match="multiplier"):
        m.run(prog(sfu("TQUANT", "FP32", body.replace("B.IOT", "B.IOR zero, zero\nB.IOT"))))
    with pytest.raises(TileLegalityFault, match=r"B\.DATR"):
        m.run(prog(sfu("TQUANT", "FP32", body.replace("B.DATR U8\n", ""))))


def test_tsort_groups_and_indices() -> None:
    x = np.array([[3.0, 1.0, np.nan, 2.0, -0.0, 0.0, 5.0, 4.0]], np.float16)
    m = machine()
    text = load_tiles(m, [x], F16) + const("a4", 1)
    text += sfu(
        "TSORT",
        "FP16",
        "B.DIM zero, 3, ->LB0\nB.IOR a4\n"
        "B.IOT T#1, mask=1111, ->U<128B>\nB.IOT mask=1111, last, ->M<128B>\n",
    )
    m.run(prog(text))
    vals, idx, _ = sorting.tsort(F16, x[None], 3, True)
    assert same_bits(m.tile("U#1").values[0], vals[0])
    assert same_bits(m.tile("M#1").values[0], idx[0])
    with pytest.raises(TileLegalityFault, match="sort_width"):
        m.run(prog(text.replace("B.DIM zero, 3", "B.DIM zero, 65")))


def test_tsort_encoded_zero_width_selects_32() -> None:
    x = np.arange(40, 0, -1, dtype=np.float32).reshape(1, 40)
    m = machine()
    text = load_tiles(m, [x], F32)
    text += sfu(
        "TSORT",
        "FP32",
        "B.DIM zero, 0, ->LB0\nB.IOT T#1, mask=1111, ->U<256B>\n"
        "B.IOT mask=1111, last, ->M<256B>\n",
    )
    m.run(prog(text))
    vals, _, _ = sorting.tsort(F32, x[None], 32, False)
    assert same_bits(m.tile("U#1").values[0], vals[0])


def test_tmrgsort_shape_and_unsorted_input() -> None:
    a = np.array([[1.0, 3.0, 5.0]], np.float32)
    b = np.array([[2.0, 3.0, 4.0, 9.0, 10.0]], np.float32)
    m = machine()
    text = load_tiles(m, [a, b], F32)
    merge = sfu("TMRGSORT", "FP32", "B.IOT T#2, T#1, mask=1111, last, ->U<128B>\n")
    m.run(prog(text + merge))
    v = m.tile("U#1")
    assert (v.valid_rows, v.valid_cols, v.cols) == (1, 8, 8)
    assert v.values[0].tolist() == [[1.0, 2.0, 3.0, 3.0, 4.0, 5.0, 9.0, 10.0]]
    m.run(prog(load_tiles(m, [b[:, ::-1].copy()], F32, base=0x80000)))
    with pytest.raises(TileLegalityFault):
        m.run(prog(merge))


def test_tmrgsort_wider_than_32768_columns_is_an_allocation_fault() -> None:
    """The 0.58.3 TMRGSORT contract (the seed is silent, D4): "a combined width above the
    architectural physical-column range ... raises Fault_TileAllocation before effects"."""
    a = np.arange(16384, dtype=np.float16).reshape(1, -1)
    b = np.arange(16385, dtype=np.float16).reshape(1, -1)
    m = machine()
    m.run(prog(load_tiles(m, [a, b], F16)))
    before = m.snapshot()
    merge = sfu("TMRGSORT", "FP16", "B.IOT T#2, T#1, mask=1111, last, ->U<64KB>\n")
    with pytest.raises(TileAllocationFault, match="32768"):
        m.run(prog(merge))
    assert m.snapshot() == before  # no effect
    ok = sfu("TMRGSORT", "FP16", "B.IOT T#2, T#2, mask=1111, last, ->U<64KB>\n")
    m.run(prog(ok))  # 32768 columns exactly is representable
    assert m.tile("U#1").valid_cols == 32768


def test_ttrans_dims_must_be_the_transpose() -> None:
    a = np.arange(6, dtype=np.int32).reshape(2, 3)
    m = machine()
    text = load_tiles(m, [a], S32)
    good = sfu(
        "TTRANS",
        "S32",
        "B.DIM zero, 2, ->LB0\nB.DIM zero, 3, ->LB1\nB.IOT T#1, mask=1111, last, ->U<128B>\n",
    )
    m.run(prog(text + good))
    v = m.tile("U#1")
    assert v.values[0].tolist() == a.T.tolist() and (v.rows, v.cols) == (16, 2)
    with pytest.raises(TileLegalityFault, match="transposed"):
        m.run(prog(good.replace("B.DIM zero, 3, ->LB1\n", "")))  # LB1 default 1


def test_tgather_and_tscatter() -> None:
    vals = np.arange(12, dtype=np.int32).reshape(3, 4)
    idx = np.array([[2, 0, 1, 2], [0, 0, 2, 1]], np.int32)
    m = machine()
    text = load_tiles(m, [vals, idx], S32)
    text += sfu(
        "TGATHER",
        "S32",
        "B.DIM zero, 4, ->LB0\nB.DIM zero, 2, ->LB1\n"
        "B.IOT T#2, T#1, mask=1111, last, ->U<128B>\n",
    )
    m.run(prog(text))
    assert m.tile("U#1").values[0].tolist() == np.take_along_axis(vals, idx, 0).tolist()
    # scatter row indices: rows of a 2x4 source into a 3-row destination
    sidx = np.array([[2, 0, 1, 0], [0, 2, 2, 2]], np.int32)
    src = np.array([[1, 2, 3, 4], [5, 6, 7, 8]], np.int32)
    m.run(
        prog(
            load_tiles(m, [src, sidx], S32, base=0x80000)
            + sfu(
                "TSCATTER",
                "S32",
                "B.DIM zero, 4, ->LB0\nB.DIM zero, 3, ->LB1\n"
                "B.IOT T#2, T#1, mask=1111, last, ->U<128B>\n",
            )
        )
    )
    v = m.tile("U#1")
    want = np.zeros((3, 4), np.int32)
    for r in range(2):
        for c in range(4):
            want[sidx[r, c], c] = src[r, c]
    assert v.values[0].tolist() == want.tolist()
    assert v.defined.all() and not v.payload[0, 3:].any()  # zero-initialised, defined
    dup = sidx.copy()
    dup[1, 0] = 2
    m.run(prog(load_tiles(m, [src, dup], S32, base=0xC0000)))
    with pytest.raises(TileLegalityFault, match="select one destination"):
        m.run(
            prog(
                sfu(
                    "TSCATTER",
                    "S32",
                    "B.DIM zero, 4, ->LB0\nB.DIM zero, 3, ->LB1\n"
                    "B.IOT T#2, T#1, mask=1111, last, ->U<128B>\n",
                )
            )
        )


def test_tgather_rejects_out_of_range_index() -> None:
    m = machine()
    text = load_tiles(m, [np.ones((2, 4), np.int32), np.full((1, 4), 2, np.int32)], S32)
    with pytest.raises(TileLegalityFault):
        m.run(
            prog(
                text
                + sfu(
                    "TGATHER",
                    "S32",
                    "B.DIM zero, 4, ->LB0\nB.IOT T#2, T#1, mask=1111, last, ->U<128B>\n",
                )
            )
        )


def test_tpartadd_union() -> None:
    a = np.arange(8, dtype=np.int16).reshape(2, 4)
    b = np.array([[100, 200]], np.int16)
    m = machine()
    text = load_tiles(m, [a, b], S16)
    text += sfu(
        "TPARTADD",
        "S16",
        "B.DIM zero, 4, ->LB0\nB.DIM zero, 2, ->LB1\n"
        "B.IOT T#2, T#1, mask=1111, last, ->U<128B>\n",
    )
    m.run(prog(text))
    want = a.copy()
    want[:1, :2] += b
    assert m.tile("U#1").values[0].tolist() == want.tolist()
    with pytest.raises(TileLegalityFault, match=r"B\.DATR"):
        m.run(prog(text.replace("B.DIM zero, 4, ->LB0", "B.DATR Zero\nB.DIM zero, 4, ->LB0")))


def test_tci_ttri() -> None:
    m = machine()
    text = const("a4", 5) + const("a5", 1)
    text += sfu(
        "TCI",
        "S32",
        "B.DIM zero, 6, ->LB0\nB.DIM zero, 8, ->LB2\nB.IOR a4, a5\n"
        "B.IOT mask=1111, last, ->U<128B>\n",
    )
    text += sfu(
        "TTRI",
        "FP32",
        "B.DIM zero, 4, ->LB0\nB.DIM zero, 3, ->LB1\nB.IOR zero, a5\n"
        "B.IOT mask=1111, last, ->M<128B>\n",
    )
    m.run(prog(text))
    assert m.tile("U#1").values[0].tolist() == [[5, 4, 3, 2, 1, 0]]
    want, _ = generate.ttri(F32, (3, 4), np.zeros(4, np.uint64), np.ones(4, np.uint64))
    assert same_bits(m.tile("M#1").values, want)
    with pytest.raises(TileLegalityFault, match="must be 1"):
        m.run(
            prog(
                sfu(
                    "TCI",
                    "S32",
                    "B.DIM zero, 6, ->LB0\nB.DIM zero, 2, ->LB1\n"
                    "B.IOT mask=1111, last, ->U<128B>\n",
                )
            )
        )


def test_thistogram() -> None:
    src = np.array([[0x0102, 0x0105, 0x0201, 0x01FF]], np.uint16)
    filt = np.array([[1]], np.uint8)
    m = machine()
    text = load_tiles(m, [src], DataType.U16) + load_tiles(m, [filt], DataType.U8, base=0x80000)
    text += sfu(
        "THISTOGRAM",
        "U16",
        "B.DATR {NORM, U32, Zero, EQ, Default, 0, 0}\n"
        "B.IOT T#2, T#1, mask=1111, last, ->U<1KB>\n",
    )
    m.run(prog(text))
    want, _ = generate.thistogram(DataType.U16, src[None], filt[None], 0)
    v = m.tile("U#1")
    assert (v.valid_rows, v.valid_cols) == (1, 256) and same_bits(v.values[0], want[0])
    with pytest.raises(TileAllocationFault):
        m.run(prog(text.replace("U<1KB>", "U<512B>")))


def test_tconcat_textract_tinsert_tfillpad() -> None:
    a = np.arange(8, dtype=np.int32).reshape(2, 4)
    b = np.arange(100, 104, dtype=np.int32).reshape(2, 2)
    m = machine()
    text = load_tiles(m, [a, b], S32) + const("a4", 1)
    text += sfu(
        "TCONCAT",
        "S32",
        "B.DIM zero, 6, ->LB0\nB.DIM zero, 8, ->LB2\n"
        "B.IOT T#2, T#1, mask=1111, last, ->U<128B>\n",
    )
    text += sfu(
        "TEXTRACT",
        "S32",
        "B.DIM zero, 2, ->LB0\nB.DIM zero, 1, ->LB1\nB.IOR a4, a4\n"
        "B.IOT T#2, mask=1111, last, ->M<128B>\n",
    )
    text += sfu(
        "TINSERT", "S32", "B.IOR zero, a4\nB.IOT T#2, T#1, mask=1111, last, ->N<128B>\n"
    )
    text += sfu(
        "TFILLPAD",
        "S32",
        "B.DIM zero, 8, ->LB2\nB.IOR a4\nB.IOT T#1, mask=1111, last, ->N<512B>\n",
    )
    m.run(prog(text))
    assert m.tile("U#1").values[0].tolist() == np.concatenate([a, b], 1).tolist()
    assert m.tile("M#1").values[0].tolist() == [[5, 6]]
    ins = a.copy()
    ins[:, 1:3] = b
    n2 = m.tile("N#2")
    assert n2.values[0].tolist() == ins.tolist() and n2.rows == m.tile("T#2").rows
    fill = m.tile("N#1")
    assert fill.defined.all() and fill.payload[0, 0].tolist() == [100, 101, 1, 1, 1, 1, 1, 1]
    with pytest.raises(TileLegalityFault, match="exceeds"):
        m.run(
            prog(
                sfu(
                    "TEXTRACT",
                    "S32",
                    "B.DIM zero, 4, ->LB0\nB.IOR a4, a4\n"
                    "B.IOT T#2, mask=1111, last, ->M<128B>\n",
                )
            )
        )


def test_timg2col_has_no_feature_map_descriptor_to_read() -> None:
    """Feature-map descriptors are invalid after reset and every allocation and no
    instruction configures one, so TIMG2COL is illegal (Fault_TileLegality) whenever its
    schema holds; an illegal DataType is still reported first."""
    from ptoc.runtime import TileLegalityFault

    m = machine()
    m.run(prog(load_tiles(m, [np.ones((1, 4), np.int32)], S32)))
    before = m.snapshot()
    body = "B.DIM zero, 4, ->LB0\nB.IOT T#1, mask=1111, last, ->U<128B>\n"
    with pytest.raises(TileLegalityFault, match="feature-map descriptor"):
        m.run(prog(sfu("TIMG2COL", "S32", body)))
    with pytest.raises(TileLegalityFault, match="DataType") as info:
        m.run(prog(sfu("TIMG2COL", "FP64", body)))
    assert "feature-map" not in str(info.value)
    assert m.snapshot() == before
