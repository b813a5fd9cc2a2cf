"""Padding and definedness (D6) and scalar instructions (ASL scalar/alu)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ptoc.backend.isa import DataType
from ptoc.runtime import IllegalInstructionFault, TileLegalityFault

from .util import bits, machine, prog

EXP = (
    "BSTART.VEC TEXPANDS, {dt}\n{datr}B.DIM zero, 3, ->LB0\nB.DIM zero, 4, ->LB2\n"
    "B.IOR a4\nB.IOT mask=1111, last, ->T<128B>\nBSTOP\n"
)

PAD = {
    # DataType: (Max bits, Min bits), TilePadValueForDataType
    "FP32": (0x7F7FFFFF, 0xFF7FFFFF),
    "FP16": (0x7BFF, 0xFBFF),
    "BF16": (0x7F7F, 0xFF7F),
    "S16": (0x7FFF, 0x8000),
    "U8": (0xFF, 0x00),
    "E4M3": (0x7E, 0xFE),
}


@pytest.mark.parametrize("dt", sorted(PAD))
@pytest.mark.parametrize(
    "datr, which",
    [
        ("", None),
        ("B.DATR Zero\n", 0),
        ("B.DATR Max\n", 1),
        ("B.DATR Min\n", 2),
        ("B.DATR Null\n", None),
    ],
)
def test_pad_values_and_definedness(dt: str, datr: str, which: int | None) -> None:
    m = machine()
    m.set_gpr("a4", 1)
    m.run(prog(EXP.format(dt=dt, datr=datr)))
    v = m.tile("T#1")
    pad = bits(v.payload)[:, 0, 3]
    if which is None:
        # Null: undefined, poisoned (canonical quiet NaN for floats, 0xA5.. for integers)
        poison = {
            "FP32": 0x7FC00000,
            "FP16": 0x7E00,
            "BF16": 0x7FC0,
            "S16": 0xA5A5,
            "U8": 0xA5,
            "E4M3": 0x7F,
        }[dt]
        assert pad.tolist() == [poison] * 4
        defined = m.state.queues[0][0].definedness()
        assert not defined[:, 0, 3].any() and defined[:, 0, :3].all()
    else:
        want = 0 if which == 0 else PAD[dt][which - 1]
        assert pad.tolist() == [want] * 4
        assert m.state.queues[0][0].definedness().all()


def test_undefined_valid_element_faults() -> None:
    m = machine()
    defined = np.ones((4, 16, 8), bool)
    defined[2, 0, 1] = False  # PE2 element [0, 1] undefined
    m.push_tile("T", np.zeros((1, 8), np.float32), DataType.FP32, size=5, defined=defined)
    m.push_tile("T", np.zeros((1, 8), np.float32), DataType.FP32, size=5)
    add = (
        "BSTART.VEC TADD, FP32\nB.DIM zero, 8, ->LB0\n"
        "B.IOT T#1, T#2, mask={mask}, last, ->U<512B>\nBSTOP\n"
    )
    # push_tile sizes: SizeCode 5 = 2 KiB, Col 8 -> 64 rows
    add = add.replace("<512B>", "<2KB>")
    before = m.snapshot()
    with pytest.raises(TileLegalityFault, match="undefined"):
        m.run(prog(add.format(mask="1111")))
    assert m.snapshot() == before
    m.run(prog(add.format(mask="1100")))  # PE2 does not participate: legal


# --------------------------------------------------------------------------- scalar

U64 = (1 << 64) - 1


def run_scalar(lines: str, **regs: int):  # type: ignore[no-untyped-def]
    m = machine()
    for r, v in regs.items():
        m.set_gpr(r, v)
    m.run(prog(f"BSTART.STD FALL\n{lines}\nBSTOP\n"))
    return m


def test_materialisation() -> None:
    m = run_scalar(
        "lui 0x80000, ->a0\naddi zero, 4095, ->a1\nc.movi -1, ->a2\n"
        "ori zero, -2, ->a3\nandi a2, 0x7F, ->a4\nxori a2, 1, ->a5\nc.movi 7, ->zero"
    )
    assert m.gpr("a0") == 0xFFFF_FFFF_8000_0000  # lui sign-extends imm20 << 12
    assert m.gpr("a1") == 4095  # addi zero-extends uimm12
    assert m.gpr("a2") == U64  # c.movi sign-extends simm5
    assert m.gpr("a3") == U64 - 1  # ori sign-extends simm12
    assert m.gpr("a4") == 0x7F and m.gpr("a5") == U64 - 1
    assert m.gpr("zero") == 0


@given(
    x=st.integers(0, U64),
    y=st.integers(0, U64),
    sh=st.integers(0, 63),
    small=st.integers(0, 31),
)
def test_alu_against_python_ints(x: int, y: int, sh: int, small: int) -> None:
    m = run_scalar(
        f"slli a0, {sh}, ->s0\nsrli a0, {sh}, ->s1\nsrai a0, {sh}, ->s2\nadd a0, a1, ->s3\n"
        f"sub a0, a1, ->s4\nmul a0, a1, ->s5\nadd a0, a1.sw<<{small}, ->s6\n"
        f"add a0, a1.uw, ->s7\nsub a0, a1.neg, ->s8\naddi a0, 7, ->x0",
        a0=x,
        a1=y,
    )
    sx = x - (1 << 64) if x >> 63 else x
    low = y & 0xFFFF_FFFF
    sw = low - (1 << 32) if low >> 31 else low
    assert m.gpr("s0") == (x << sh) & U64
    assert m.gpr("s1") == x >> sh
    assert m.gpr("s2") == (sx >> sh) & U64
    assert m.gpr("s3") == (x + y) & U64
    assert m.gpr("s4") == (x - y) & U64
    assert m.gpr("s5") == (x * y) & U64
    assert m.gpr("s6") == (x + (sw << small)) & U64
    assert m.gpr("s7") == (x + low) & U64
    assert m.gpr("s8") == (x + y) & U64
    assert m.gpr("x0") == (x + 7) & U64


def test_scalar_runs_per_pe() -> None:
    m = machine()
    for pe in range(4):
        m.set_gpr("a0", pe * 100, pe=pe)
    m.run(prog("BSTART.STD FALL\naddi a0, 5, ->a1\nBSTOP\n"))
    assert [m.gpr("a1", pe) for pe in range(4)] == [5, 105, 205, 305]


def test_scalar_temporaries_read_only_when_pushed_and_atomic() -> None:
    m = machine()
    before = m.snapshot()
    with pytest.raises(IllegalInstructionFault, match="holds no value"):
        m.run(prog("BSTART.STD FALL\naddi zero, 1, ->a0\naddi r24, 1, ->a1\nBSTOP\n"))
    assert m.snapshot() == before
    m.run(prog("BSTART.STD FALL\naddi zero, 1, ->r25\nBSTOP\n"))  # RegDst 24..29 discard
    assert m.snapshot() == before
