"""Tile-scalar (Mode 1) entry points and the core helpers they rest on."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ptoc.backend.isa import Executor, row, rows
from ptoc.backend.isa.datatypes import DataType as D
from ptoc.backend.isa.datatypes import info
from ptoc.backend.isa.semantics import core

NV, DZ, OF, UF, NX = 1, 2, 4, 8, 16
UINT = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}


@pytest.mark.parametrize(
    "dt",
    [D.FP64, D.FP32, D.FP16, D.BF16, D.E4M3, D.S8, D.S64, D.U16, D.U64],
    ids=lambda d: d.name,
)
@settings(max_examples=20)
@given(gpr=st.lists(st.integers(0, 2**64 - 1), min_size=2, max_size=2))
def test_scalar_operand_takes_low_raw_bits(dt: D, gpr: list[int]) -> None:
    """REFERENCE 10.2 / TileRawElementValue: only the low element-width bits matter."""
    g = np.array(gpr, np.uint64)
    s = core.scalar_operand(dt, g)
    assert s.shape == (2, 1, 1) and s.dtype == info(dt).carrier
    w = info(dt).bits
    bits = s.view(UINT[w]).ravel()
    assert [int(b) for b in bits] == [v & ((1 << w) - 1) for v in gpr]


_INT_ONLY = ("and", "or", "xor", "shl", "shr")
_SCALAR_CASES = [
    (m, dt)
    for m in sorted(r.mnemonic for r in rows(executor=Executor.TILE_SCALAR))
    for dt in (D.FP32, D.FP16, D.S32, D.U8)
    if not (info(dt).is_float and row(m).arith in _INT_ONLY)
]


@pytest.mark.parametrize(
    ("mnemonic", "dt"), _SCALAR_CASES, ids=[f"{m}-{d.name}" for m, d in _SCALAR_CASES]
)
def test_tile_scalar_equals_tile_tile_with_broadcast(mnemonic: str, dt: D) -> None:
    """TxxxS(src, scalar) == Txxx(src, scalar broadcast) for every binary mnemonic."""
    op = row(mnemonic).arith
    assert op is not None
    rng = np.random.default_rng(7)
    src = rng.integers(-50, 50, size=(2, 3, 5)).astype(info(dt).carrier)
    w = info(dt).bits
    raw = [0x1234_5678_0000_0000 | 3, (0xFFFF << 48) | 5]
    if info(dt).is_float:
        one = np.array([3.0, 5.0], info(dt).carrier).view(UINT[w])
        raw = [(0xABCD << 48) | int(one[0]), (0x1111 << 48) | int(one[1])]
    gpr = np.array(raw, np.uint64)
    got, st_ = row(mnemonic).semantics(dt, src, gpr)
    sc = (
        np.array([r & ((1 << w) - 1) for r in raw], np.uint64)
        .astype(UINT[w])
        .view(info(dt).carrier)
    )
    want, wst = core.binary(op, dt, src, np.broadcast_to(sc.reshape(2, 1, 1), src.shape))
    assert np.array_equal(got.view(UINT[w]), want.view(UINT[w])) and np.array_equal(st_, wst)


def test_tdivs_trems_integer_zero_scalar() -> None:
    """TDIVS integer zero is an Illegal Block Exception (Fault_BundleControl); TREMS is a
    plain legality fault; a floating zero scalar is a legal divisor (x/0 -> Inf, DZ)."""
    src = np.ones((2, 1, 3), np.int32)
    gpr = np.array([7, 1 << 32], np.uint64)  # PE1's low 32 bits are zero
    with pytest.raises(core.BundleControlSemanticError):
        row("TDIVS").semantics(D.S32, src, gpr)
    with pytest.raises(core.SemanticError) as e:
        row("TREMS").semantics(D.S32, src, gpr)
    assert type(e.value) is core.SemanticError
    r, s = row("TDIVS").semantics(
        D.FP32, np.ones((2, 1, 3), np.float32), np.array([0, 0x80000000], np.uint64)
    )
    assert list(r[0].ravel()) == [np.inf] * 3 and list(r[1].ravel()) == [-np.inf] * 3
    assert list(s) == [DZ, DZ]


def test_tcmps_tsels_texpands() -> None:
    src = np.array([[[1.0, np.nan, -0.0]], [[3.0, 2.0, 0.0]]], np.float32)
    gpr = np.array([0x3F800000, 0], np.uint64)
    p, s = row("TCMPS").semantics(D.FP32, src, gpr, 0)
    assert p.tolist() == [[[True, False, False]], [[False, False, True]]] and not s.any()
    p, _ = row("TCMPS").semantics(D.FP32, src, gpr, 1)
    assert p[0, 0, 1]  # NaN NE anything
    pred = np.array([[[True, False, True]], [[False, True, False]]])
    snan_gpr = np.array([0xDEAD_0000_7F80_0001, 0x8000_0000], np.uint64)
    r, s = row("TSELS").semantics(D.FP32, pred, src, snan_gpr)
    bits = r.view(np.uint32)
    assert bits[0, 0, 1] == 0x7F800001 and bits[1, 0, 0] == 0x80000000 and not s.any()
    assert bits[0, 0, 0] == src.view(np.uint32)[0, 0, 0]
    r, s = row("TEXPANDS").semantics(D.BF16, (2, 3, 4), np.array([0x1_3F80, 0xFFC1], np.uint64))
    assert r.shape == (2, 3, 4) and set(r[0].view(np.uint16).ravel()) == {0x3F80}
    assert set(r[1].view(np.uint16).ravel()) == {0xFFC1} and not s.any()


def test_status_helpers_and_canonical_nan() -> None:
    flags = np.zeros((3, 2, 2), bool)
    flags[1, 1, 0] = True
    assert list(core.fold_status(flags, core.NX)) == [0, NX, 0]
    f8 = np.zeros((2, 4), np.uint8)
    f8[0] = [1, 16, 0, 0]
    assert list(core.fold_flags(f8)) == [17, 0]
    assert list(core.no_status(3)) == [0, 0, 0]
    assert core.canonical_nan(D.FP32) == 0x7FC00000 and core.canonical_nan(D.E4M3) == 0x7F
    assert core.canonical_nan(D.E5M2) == 0x7E and core.canonical_nan(D.BF16) == 0x7FC0
    assert core.canonical_nan(D.HiF8) == 0x80 and core.canonical_nan(D.E8M0) == 0xFF
    with pytest.raises(ValueError):
        core.canonical_nan(D.E2M1X2)
    e = core.SemanticError("TGATHER index 9 is out of range")
    assert e.rule == "TGATHER index 9 is out of range"


def test_pad_values_match_reference_table() -> None:
    """REFERENCE 4.3 / TilePadValueForDataType: Max and Min are finite, not infinities."""
    table = {
        (D.FP32, 1): 0x7F7FFFFF, (D.FP32, 2): 0xFF7FFFFF, (D.FP16, 1): 0x7BFF,
        (D.FP16, 2): 0xFBFF, (D.BF16, 1): 0x7F7F, (D.E4M3, 1): 0x7E, (D.E5M2, 1): 0x7B,
        (D.TF32, 1): 0x7F7FE000, (D.HF32, 2): 0xFF7FF000, (D.S32, 1): 0x7FFFFFFF,
        (D.S32, 2): 0x80000000, (D.U32, 1): 0xFFFFFFFF, (D.U32, 2): 0, (D.S8, 2): 0x80,
        (D.FP64, 1): 0x7FEFFFFFFFFFFFFF, (D.U64, 1): 2**64 - 1, (D.FP32, 0): 0,
    }  # fmt: skip
    for (dt, pad), want in table.items():
        v = np.asarray(core.pad_value(dt, pad))
        assert v.dtype == info(dt).carrier and v.shape == ()
        assert int(core.to_bits(v)) == want, (dt, pad)
    with pytest.raises(ValueError):
        core.pad_value(D.FP32, 3)


def test_bits_round_trip() -> None:
    for dt in D:
        w = info(dt).carrier.itemsize * 8
        bits = np.arange(16, dtype=UINT[w]).reshape(1, 4, 4)
        assert np.array_equal(core.to_bits(core.from_bits(bits, dt)), bits)
