"""Header-command rules and reserved encodings, each with its fault class and no effect."""

from __future__ import annotations

import numpy as np
import pytest

from ptoc.backend.encoding import decode, encode
from ptoc.backend.isa import Family, op
from ptoc.backend.isa.fields import Hand
from ptoc.backend.program import Datr, Dim, Ior, Iot, Program, Stop, TileRef, TileStart
from ptoc.runtime import (
    BundleControlFault,
    IllegalInstructionFault,
    MachineFault,
    TileLegalityFault,
)

from .util import machine, prog

FILL = """
BSTART.STD FALL
c.movi 3, ->a4
BSTOP
BSTART.VEC TEXPANDS, S32
B.DIM zero, 8, ->LB0
B.IOR a4
B.IOT mask=1111, last, ->T<128B>
BSTOP
"""


def _ready():
    m = machine()
    m.run(prog(FILL + FILL))
    return m


def _faults(text: str, cls: type[MachineFault]) -> MachineFault:
    m = _ready()
    before = m.snapshot()
    with pytest.raises(cls) as info:
        m.run(prog(text))
    assert m.snapshot() == before, m.snapshot().differences(before)
    assert type(info.value) is cls
    return info.value


TADD_HEAD = "BSTART.VEC TADD, S32\nB.DIM zero, 8, ->LB0\n"
TADD_IOT = "B.IOT T#1, T#2, mask=1111, last, ->U<128B>\nBSTOP\n"


def test_reference_bundle_runs() -> None:
    m = _ready()
    m.run(prog(TADD_HEAD + TADD_IOT))
    assert np.all(m.tile("U#1").values == 6)


@pytest.mark.parametrize(
    "extra",
    [
        "B.DATR Zero\nB.DATR Zero\n",  # duplicate B.DATR
        "B.DIM zero, 1, ->LB1\nB.DIM zero, 1, ->LB1\n",  # LB1 twice
        "C.B.DIMI 1, ->LB1\nB.DIM zero, 1, ->LB1\n",  # write-once across both forms
        "B.DIM zero, 1, ->LB2\nC.B.DIMI 8, ->LB2\n",
    ],
)
def test_duplicate_header_commands(extra: str) -> None:
    f = _faults(TADD_HEAD + extra + TADD_IOT, BundleControlFault)
    assert f.bundle is not None and f.bundle.index == 0


def test_bundle_index_counts_the_tile_bundles_of_the_run() -> None:
    """FILL is a scalar block and a bundle: the bad TADD is bundle 2 (docs/formats.md)."""
    m = machine()
    bad = TADD_HEAD + "B.DATR Zero\nB.DATR Zero\n" + TADD_IOT
    with pytest.raises(BundleControlFault) as info:
        m.run(prog(FILL + FILL + bad))
    assert info.value.bundle is not None and info.value.bundle.index == 2
    assert not info.value.bundle.scalar and "at bundle 2," in str(info.value)


def test_a_fault_in_a_scalar_block_names_the_scalar_block() -> None:
    m = machine()
    bad = "BSTART.STD FALL\nB.DIM zero, 8, ->LB0\nBSTOP\n"
    with pytest.raises(BundleControlFault) as info:
        m.run(prog(FILL + bad))
    assert info.value.bundle is not None and info.value.bundle.scalar
    assert info.value.bundle.index == 1 and "at scalar block 1" in str(info.value)


def test_second_ior_is_bundle_control() -> None:
    text = "BSTART.VEC TADDS, S32\nB.DIM zero, 8, ->LB0\nB.IOR a4\nB.IOR a4\n"
    text += "B.IOT T#1, mask=1111, last, ->T<128B>\nBSTOP\n"
    _faults(text, BundleControlFault)


def test_binding_after_last() -> None:
    text = TADD_HEAD + "B.IOT T#1, T#2, mask=1111, last, ->U<128B>\n"
    text += "B.IOT T#1, mask=1111, last\nBSTOP\n"
    _faults(text, BundleControlFault)


def test_fifth_binding() -> None:
    text = TADD_HEAD + "B.IOT T#1, T#2, mask=1111\n" * 4 + TADD_IOT
    f = _faults(text, BundleControlFault)
    assert "at most 4" in f.rule


def test_missing_last() -> None:
    text = TADD_HEAD + "B.IOT T#1, T#2, mask=1111, ->U<128B>\nBSTOP\n"
    _faults(text, BundleControlFault)


def test_mask_mismatch_is_tile_legality() -> None:
    # asl/block/model/dispatch/commands.asl BundleTileMaskCanAppend; B.IOT contract
    text = "BSTART.VEC TSEL, S32\nB.DIM zero, 8, ->LB0\nB.IOT T#1, T#2, mask=1100\n"
    text += "B.IOT T#1, mask=1111, last, ->U<128B>\nBSTOP\n"
    _faults(text, TileLegalityFault)


def test_header_outside_bundle() -> None:
    _faults("B.DIM zero, 8, ->LB0\n", BundleControlFault)


def test_stray_bstop() -> None:
    _faults("BSTOP\n", BundleControlFault)


def test_scalar_inside_tile_bundle() -> None:
    _faults(TADD_HEAD + "addi zero, 1, ->a0\n" + TADD_IOT, BundleControlFault)


def test_header_in_scalar_block() -> None:
    _faults("BSTART.STD FALL\nB.DIM zero, 8, ->LB0\nBSTOP\n", BundleControlFault)


def test_fpatr_outside_cube() -> None:
    _faults(
        TADD_HEAD + "B.FPATR Func=2, Opc1=2, Opcode=1, W=1\n" + TADD_IOT, BundleControlFault
    )


def test_zero_mask_binding_outside_bundle_is_skipped() -> None:
    m = _ready()
    m.run(prog("B.IOT T#1, mask=0000, last\n"))  # PEMode 000: before the placement check


# --------------------------------------------------------------------------- reserved


def _words_program(*cmds) -> bytes:  # type: ignore[no-untyped-def]
    return encode(Program(tuple(cmds)))


def _patch(data: bytes, index: int, set_bits: int, clear: int = 0) -> bytes:
    words = list(np.frombuffer(data, np.uint32))
    words[index] = (int(words[index]) & ~clear) | set_bits
    return np.array(words, np.uint32).tobytes()


def _tadd_words() -> bytes:
    return _words_program(
        TileStart(Family.TEPL, op("TADD").selector, 17),
        Dim(0, 0, 8),
        Iot((TileRef(Hand.T, 1), TileRef(Hand.T, 2)), 0b1111, True, Hand.U, 1),
        Stop(),
    )


def _reserved(data: bytes) -> None:
    m = _ready()
    before = m.snapshot()
    with pytest.raises(IllegalInstructionFault):
        m.run(data)
    assert m.snapshot() == before


def test_words_reference_runs() -> None:
    m = _ready()
    m.run(_tadd_words())
    assert np.all(m.tile("U#1").values == 6)


def test_reserved_tepl_selector() -> None:
    # TEPL selector 0x005 (Mode 0 Function 5) is reserved
    _reserved(_patch(_tadd_words(), 0, 5 << 20, 0x1F << 20))


def test_reserved_bstart_dtype() -> None:
    _reserved(_patch(_tadd_words(), 0, 15 << 27, 0x1F << 27))


def test_reserved_size_code() -> None:
    _reserved(_patch(_tadd_words(), 2, 11 << 15, 0xF << 15))


def test_reserved_gpr_selector_in_dim() -> None:
    _reserved(_patch(_tadd_words(), 1, 24 << 15, 0x1F << 15))


def test_reserved_gpr_selector_in_ior() -> None:
    data = _words_program(
        TileStart(Family.TEPL, op("TADDS").selector, 17),
        Dim(0, 0, 8),
        Ior(2),
        Iot((TileRef(Hand.T, 1),), 0b1111, True, Hand.T, 1),
        Stop(),
    )
    _reserved(_patch(data, 2, 25 << 15, 0x1F << 15))


def test_reserved_datr_fields() -> None:
    base = [TileStart(Family.TEPL, op("TADD").selector, 17), Dim(0, 0, 8), Datr()]
    tail = [Iot((TileRef(Hand.T, 1), TileRef(Hand.T, 2)), 0b1111, True, Hand.U, 1), Stop()]
    data = _words_program(*base, *tail)
    _reserved(_patch(data, 2, 6 << 29))  # CMode 6
    _reserved(_patch(data, 2, 21 << 20))  # DataType 21
    _reserved(_patch(data, 2, 2 << 7))  # Layout 2


def test_reserved_loopnest() -> None:
    p = decode(b"\x3c\xd0")  # C.B.DIMI with LoopNest 3
    assert isinstance(p.commands[0], Dim)
    data = encode(Program((TileStart(Family.TEPL, op("TADD").selector, 17),))) + b"\x3c\xd0"
    data += _tadd_words()[4:]
    _reserved(data)


def test_programmatic_reserved_iot() -> None:
    m = _ready()
    bad = Program(
        (
            TileStart(Family.TEPL, op("TADD").selector, 17),
            Dim(0, 0, 8),
            Iot((TileRef(Hand.T, 1), TileRef(Hand.T, 2)), 0b1010, True, Hand.U, 1),
            Stop(),
        )
    )
    with pytest.raises(IllegalInstructionFault):
        m.run(bad)


def test_matrix_bundle_without_fpatr_is_bundle_control() -> None:
    """Exactly one B.FPATR is mandatory in a CUBE matrix bundle (checked at dispatch,
    after the zero-mask no-op: ``ExecuteBundleTMATMULOperation``)."""
    text = "BSTART.TMATMUL FP16\nB.IOT T#1, T#2, mask=1111, last, ->U<128B>\nBSTOP\n"
    f = _faults(text, BundleControlFault)
    assert "B.FPATR" in str(f)


def test_fault_message_names_bundle_op_rule_and_line() -> None:
    m = _ready()
    with pytest.raises(BundleControlFault) as info:
        m.run(prog(TADD_HEAD + "B.DATR Zero\nB.DATR Zero\n" + TADD_IOT))
    text = str(info.value)
    assert "Fault_BundleControl" in text and "bundle 0" in text and "line 4" in text
    assert "B.DATR" in text and "\n" not in text
    assert info.value.fault.value == "Fault_BundleControl"
