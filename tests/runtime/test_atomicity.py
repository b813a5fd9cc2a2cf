"""PE_MASK=0000 strict no-op and "no effect on rejection" for every fault kind."""

from __future__ import annotations

import numpy as np
import pytest

from ptoc.backend.isa import DataType
from ptoc.runtime import (
    BundleControlFault,
    DataAlignmentFault,
    DataPageFault,
    IllegalInstructionFault,
    MachineFault,
    TileAllocationFault,
    TileLegalityFault,
    UnsupportedOperation,
)

from .util import GM, machine, prog, rejected_without_effect, tload, tstore


def ready():  # type: ignore[no-untyped-def]
    """A machine with two S32 8x8 tiles (T#1 = 1.., T#2 = 100..), a sticky status bit and
    GM data, with a0 = 0x1000, a1 = 32 (row stride) on every PE."""
    m = machine(capacity=4096)
    a = np.arange(64, dtype=np.int32).reshape(8, 8)
    m.load_gm(0x1000, a + 100)
    m.load_gm(0x2000, a + 1)
    m.set_gpr("a0", 0x1000)
    m.set_gpr("a1", 32)
    m.set_gpr("a2", 0x2000)
    m.run(prog(tload(DataType.S32, 8, 8) + tload(DataType.S32, 8, 8, base="a2")))
    m.state.status[:] = [1, 0, 16, 0]
    return m


def no_effect(text: str, cls: type[MachineFault], m=None) -> MachineFault:  # type: ignore[no-untyped-def]
    return rejected_without_effect(m or ready(), text, cls)  # type: ignore[return-value]


BIN = "BSTART.{eng} {op}, {dt}\n{dims}B.IOT T#1, T#2, mask={mask}, last, ->U<{size}>\nBSTOP\n"


def binop(
    op: str = "TADD",
    dt: str = "S32",
    dims: str = "B.DIM zero, 8, ->LB0\nB.DIM zero, 8, ->LB1\n",
    mask: str = "1111",
    size: str = "256B",
) -> str:
    eng = "SFU" if op in ("TDIV", "TREM") else "VEC"
    return BIN.format(eng=eng, op=op, dt=dt, dims=dims, mask=mask, size=size)


def test_reference_runs() -> None:
    m = ready()
    m.run(prog(binop()))
    a = np.arange(64, dtype=np.int32).reshape(8, 8)
    assert np.array_equal(m.tile("U#1").values[2], 2 * a + 101)


@pytest.mark.parametrize(
    "text, cls",
    [
        (binop(dt="FP64"), TileLegalityFault),  # source type mismatch
        (binop(op="TSHL", dt="FP32"), TileLegalityFault),  # unsupported DataType
        (binop(dims=""), TileLegalityFault),  # missing LB0
        (binop(dims="B.DIM zero, 0, ->LB0\n"), TileLegalityFault),  # explicit zero
        (binop(size="128B"), TileAllocationFault),  # TSize too small
        (binop(size="2KB"), TileLegalityFault),  # physical Rows differ from the sources
        (
            binop(dims="B.DIM zero, 8, ->LB0\nB.DIM zero, 8, ->LB1\nB.DATR Max\nB.DATR Max\n"),
            BundleControlFault,
        ),
        (
            "BSTART.VEC TADD, S32\nB.DIM zero, 8, ->LB0\nB.DIM zero, 8, ->LB1\nB.IOR a0\n"
            "B.IOT T#1, T#2, mask=1111, last, ->U<256B>\nBSTOP\n",
            TileLegalityFault,
        ),
    ],
)
def test_no_effect_per_fault(text: str, cls: type[MachineFault]) -> None:
    no_effect(text, cls)


def test_data_dependent_fault_has_no_effect() -> None:
    m = ready()
    # T#3 := TSUB T#1, T#1 (all zero); TDIV by it is an integer zero divisor
    m.run(prog(binop(op="TSUB").replace("T#1, T#2", "T#1, T#1").replace("->U", "->T")))
    no_effect(binop(op="TDIV").replace("T#1, T#2", "T#2, T#1"), TileLegalityFault, m)


def test_tdivs_zero_scalar_divisor() -> None:
    text = (
        "BSTART.SFU TDIVS, S32\nB.DIM zero, 8, ->LB0\nB.DIM zero, 8, ->LB1\n"
        "B.IOT T#1, mask=1111, last, ->U<256B>\nB.IOR zero\nBSTOP\n"
    )
    f = no_effect(text, BundleControlFault)  # "Illegal Block Exception" (TDIVS.asl)
    assert "zero" in f.rule


def test_memory_faults_store_nothing() -> None:
    m = ready()
    m.set_gpr("a0", GM - 64)  # rows 2..7 fall beyond the memory
    no_effect(tstore(DataType.S32), DataPageFault, m)
    m.set_gpr("a0", 0x3002)  # misaligned S32 base
    no_effect(tstore(DataType.S32), DataAlignmentFault, m)
    m.set_gpr("a0", GM - 64)
    no_effect(tload(DataType.S32, 8, 8), DataPageFault, m)


def test_illegal_instruction_and_unsupported_have_no_effect() -> None:
    from ptoc.backend.encoding import encode

    data = bytearray(encode(prog(binop())))
    data[3] = (data[3] & 0x07) | (15 << 3)  # BSTART DataType 15 is reserved
    m = ready()
    before = m.snapshot()
    with pytest.raises(IllegalInstructionFault):
        m.run(bytes(data))
    assert m.snapshot() == before
    no_effect("BSTART.GMOV S32\nB.IOR a0, a1\nB.IOT T#1, mask=1111, last\nBSTOP\n",
              UnsupportedOperation)  # fmt: skip


def test_fault_midway_keeps_earlier_bundles() -> None:
    m = ready()
    good = binop()
    with pytest.raises(TileLegalityFault):
        m.run(prog(good + binop(dims="")))
    assert len(m.state.queues[1]) == 1  # the first bundle committed


# --------------------------------------------------------------------------- mask 0000


@pytest.mark.parametrize(
    "text",
    [
        binop(mask="0000", dt="FP64"),
        binop(mask="0000", dims=""),
        binop(mask="0000", size="128B"),
        binop(mask="0000").replace("T#1, T#2", "T#9, N#16"),  # empty queue positions
        binop(mask="0000").replace("BSTOP", "B.IOR a0\nB.IOS S3, mask=0000\nBSTOP"),
        tload(DataType.S32, 8, 8, mask="0000").replace("B.IOR a0", "B.IOR a3"),
        tstore(DataType.S32, "M#1", mask="0000"),
        "BSTART.TMATMUL FP16\nB.IOT T#1, T#2, mask=0000, last, ->U<128B>\nBSTOP\n",
        "BSTART.SFU TQUANT, FP32\nB.DATR S8\nB.DIM zero, 8, ->LB0\nB.IOR zero, zero\n"
        "B.IOT T#1, mask=0000, last, ->U<128B>\nBSTOP\n",
    ],
)
def test_zero_mask_is_a_strict_noop(text: str) -> None:
    m = ready()
    m.set_gpr("a3", GM * 4)  # a TLOAD base far outside the memory
    before = m.snapshot()
    report = m.run(prog(text))
    assert m.snapshot() == before
    assert report.bundles == 1


def test_zero_mask_does_not_hide_header_faults() -> None:
    # duplicate header commands fault at the command, before the commit-time mask test
    no_effect(
        binop(mask="0000").replace("BSTOP", "B.DATR Zero\nB.DATR Zero\nBSTOP"),
        BundleControlFault,
    )


def test_mixed_zero_and_nonzero_masks() -> None:
    # the PEMode 000 binding is skipped; what remains does not match the TSEL schema
    text = (
        "BSTART.VEC TSEL, S32\nB.DIM zero, 8, ->LB0\nB.IOT T#1, T#2, mask=0000\n"
        "B.IOT T#1, mask=1111, last, ->U<128B>\nBSTOP\n"
    )
    f = no_effect(text, TileLegalityFault)
    assert "binding stream" in f.rule
