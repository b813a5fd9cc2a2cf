"""Reductions and expansions: destination shapes (REFERENCE section 6) and values."""

from __future__ import annotations

import numpy as np
import pytest

from ptoc.backend.isa import DataType
from ptoc.backend.isa.semantics import expand, reduce
from ptoc.runtime import TileLegalityFault

from .util import bits, load_tiles, machine, prog, same_bits, tload

F32, S16 = DataType.FP32, DataType.S16


def sfu(
    op: str,
    dt: DataType,
    srcs: str,
    vc: int,
    vr: int,
    size: str,
    *,
    col: int = 0,
    hand: str = "U",
    extra: str = "",
) -> str:
    text = (
        f"BSTART.SFU {op}, {dt.name}\n{extra}B.DIM zero, {vc}, ->LB0\nB.DIM zero, {vr}, ->LB1\n"
    )
    if col:
        text += f"B.DIM zero, {col}, ->LB2\n"
    return text + f"B.IOT {srcs}mask=1111, last, ->{hand}<{size}>\nBSTOP\n"


def test_row_and_column_reductions() -> None:
    rng = np.random.default_rng(7)
    a = rng.standard_normal((4, 8)).astype(np.float32)
    m = machine()
    text = load_tiles(m, [a], F32)
    text += sfu("TROWSUM", F32, "T#1, ", 8, 4, "128B")
    text += sfu("TCOLMAX", F32, "T#1, ", 8, 4, "128B", hand="M")
    text += sfu("TROWARGMIN", F32, "T#1, ", 8, 4, "128B", hand="N")
    m.run(prog(text))
    row = m.tile("U#1")
    assert (row.valid_rows, row.valid_cols, row.cols) == (4, 1, 1)
    want, _ = reduce.row_reduce("sum", F32, a[None])
    assert same_bits(row.values[0], want[0])
    col = m.tile("M#1")
    assert (col.valid_rows, col.valid_cols, col.cols) == (1, 8, 8)
    assert same_bits(col.values[0], a.max(axis=0, keepdims=True))
    arg = m.tile("N#1")
    assert arg.dtype is DataType.U32 and arg.values[0, :, 0].tolist() == a.argmin(1).tolist()


def test_reduction_lbs_describe_the_source() -> None:
    a = np.ones((4, 8), np.int16)
    m = machine()
    m.run(prog(load_tiles(m, [a], S16)))
    with pytest.raises(TileLegalityFault, match="describes"):
        m.run(prog(sfu("TROWSUM", S16, "T#1, ", 8, 2, "128B")))  # LB1 != source rows


def test_row_expansion_min_seed_page() -> None:
    a = np.array([[1.0, -2.0, 3.0, np.nan], [0.0, 5.0, -0.0, 4.0]], np.float32)
    b = np.array([[0.5], [-0.0]], np.float32)
    m = machine()
    text = load_tiles(m, [a], F32)
    m.load_gm(0x40000, b)
    text += (
        "BSTART.STD FALL\nlui 0x40, ->a2\naddi zero, 4, ->a3\nBSTOP\n"
        "BSTART.TLOAD FP32\nB.DIM zero, 1, ->LB0\nB.DIM zero, 2, ->LB1\nB.IOR a2, a3\n"
        "B.IOT mask=1111, last, ->T<128B>\nBSTOP\n"
    )
    text += sfu("TROWEXPANDMIN", F32, "T#2, T#1, ", 4, 2, "128B")
    m.run(prog(text))
    want, _ = expand.row_expand("min", F32, a[None], b[None])
    assert same_bits(m.tile("U#1").values[0], want[0])
    # the broadcast tile must have physical Col 1: reload b into a tile of Col 8
    m.run(
        prog(
            load_tiles(m, [a], F32, base=0x80000)
            + tload(F32, 2, 1, col=8, base="a2", stride="a3")
        )
    )
    assert m.tile("T#1").cols == 8
    with pytest.raises(TileLegalityFault, match="Col 8"):
        m.run(prog(sfu("TROWEXPANDMIN", F32, "T#2, T#1, ", 4, 2, "128B")))


def test_column_expansion_and_copy() -> None:
    a = np.arange(8, dtype=np.int16).reshape(2, 4)
    b = np.array([[10, 20, 30, 40]], np.int16)
    m = machine()
    text = load_tiles(m, [a, b], S16)
    text += sfu("TCOLEXPANDADD", S16, "T#2, T#1, ", 4, 2, "128B")
    text += sfu("TCOLEXPAND", S16, "T#1, ", 4, 3, "128B", hand="M")
    m.run(prog(text))
    assert m.tile("U#1").values[0].tolist() == (a + b).tolist()
    assert m.tile("M#1").values[0].tolist() == [[10, 20, 30, 40]] * 3


def test_expdif_destination_type_from_datr() -> None:
    a = np.array([[1.0, 2.0], [3.0, 0.5]], np.float16)
    b = np.array([[1.0], [2.0]], np.float16)
    m = machine()
    text = load_tiles(m, [a], DataType.FP16)
    m.load_gm(0x40000, b)
    text += (
        "BSTART.STD FALL\nlui 0x40, ->a2\naddi zero, 2, ->a3\nBSTOP\n"
        "BSTART.TLOAD FP16\nB.DIM zero, 1, ->LB0\nB.DIM zero, 2, ->LB1\nB.IOR a2, a3\n"
        "B.IOT mask=1111, last, ->T<128B>\nBSTOP\n"
    )
    text += sfu(
        "TROWEXPANDEXPDIF", DataType.FP16, "T#2, T#1, ", 2, 2, "128B", extra="B.DATR FP32\n"
    )
    m.run(prog(text))
    v = m.tile("U#1")
    want, _ = expand.row_expand_expdif(DataType.FP16, F32, a[None], b[None])
    assert v.dtype is F32 and same_bits(v.values[0], want[0])


def test_expansion_copy_moves_raw_carriers_but_arithmetic_checks_encodings() -> None:
    """``TileOperandsLegal_ExecuteTileExpand`` checks the broadcast source's encodings for
    every expansion but the copy: TROWEXPAND/TCOLEXPAND move raw TF32 carriers (even ones
    with nonzero low fraction bits), TROWEXPANDADD rejects them."""
    raw = np.array([[0x3F800001], [0x3F800002]], np.uint32)
    m = machine()
    text = load_tiles(m, [raw.view(np.float32)], DataType.TF32)
    m.run(prog(text + sfu("TROWEXPAND", DataType.TF32, "T#1, ", 2, 2, "128B")))
    out = m.tile("U#1")
    assert out.dtype is DataType.TF32
    assert bits(out.values[0][:2, :2]).tolist() == [[0x3F800001] * 2, [0x3F800002] * 2]
    full = np.zeros((2, 2), np.float32)
    m2 = machine()
    text = load_tiles(m2, [full, raw.view(np.float32)], DataType.TF32)
    with pytest.raises(TileLegalityFault, match="invalid TF32 encoding"):
        m2.run(prog(text + sfu("TROWEXPANDADD", DataType.TF32, "T#2, T#1, ", 2, 2, "128B")))
