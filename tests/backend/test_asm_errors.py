"""Bad input gives one ``FILE:LINE: message`` naming the rule, never a traceback."""

from __future__ import annotations

import pytest

from ptoc.backend import asm, encoding
from ptoc.backend.errors import AsmError, DecodeError

BAD = [
    ("BSTART.VEC TFOO, FP32", "unknown tile operation 'TFOO'"),
    ("BSTART.VEC TADD, FP33", "unknown DataType 'FP33'"),
    ("BSTART.VEC TADD, 21", "DataType code 21 is reserved"),
    ("BSTART.VEC TQUANT, FP32", "TQUANT executes on SFU: write BSTART.SFU TQUANT"),
    ("BSTART.SFU TADD, FP32", "TADD executes on VEC"),
    ("B.IOT T#1, mask=1111, last, ->T<11>", "SizeCode 11 is reserved"),
    ("B.IOT T#1, mask=1111, last, ->T<3MB>", "unknown tile size '3MB'"),
    ("B.IOT T#1, mask=1111, last, ->T<128KB>", "size 128KB (SizeCode 11) is reserved"),
    ("B.IOR r24", "GPR selector 24 is reserved in header commands"),
    ("B.DIM r24, 1, ->LB0", "GPR selector 24 is reserved"),
    ("C.B.DIMI 300, ->LB0", "C.B.DIMI immediate 300 does not fit 8 unsigned bits"),
    ("B.DIM zero, 131072, ->LB0", "B.DIM immediate 131072 does not fit 17 unsigned bits"),
    ("C.B.DIMI 1, ->LB3", "C.B.DIMI LoopNest 3 is reserved"),
    ("B.IOT T#17, mask=1111", "tile position T#17 is outside #1..#16"),
    ("B.IOT X#1, mask=1111", "malformed tile operand 'X#1'"),
    ("B.IOT T#1, mask=11", "malformed mask 'mask=11'"),
    ("B.IOT T#1, mask=0110, last, ->T<1KB>", "PEMode"),
    ("B.IOT T#1, T#2, T#3, mask=1111", "at most two sources"),
    ("B.DATR {NORM, FP32, Zero}", "B.DATR {...} lists Layout"),
    ("B.DATR Layout=2", "Layout code 2 is reserved"),
    ("FROB a0", "unknown command 'FROB'"),
    ("addi zero, 5000, ->a0", "addi immediate 5000 does not fit uimm12"),
    ("c.movi 3, ->ra", "c.movi RegDst=10 is not legal"),
    ("BSTOP a0", "BSTOP takes no operands"),
]


@pytest.mark.parametrize(("line", "message"), BAD, ids=[b[0] for b in BAD])
def test_bad_line_names_file_line_and_rule(line: str, message: str) -> None:
    text = f"BSTART.STD FALL\nBSTOP\n{line}\n"
    with pytest.raises(AsmError) as info:
        try:
            asm.parse(text, file="k.s")
        except AsmError:
            raise
        except Exception as e:  # pragma: no cover - the failure we guard against
            pytest.fail(f"internal exception leaked: {e!r}")
    err = info.value
    assert str(err).startswith("k.s:3: ")
    assert message in str(err)
    assert "\n" not in str(err)


def test_decode_error_names_offset_and_word() -> None:
    good = encoding.encode(asm.parse("BSTOP\n"))
    bad = good + (0x7FFFFFFF & ~0x7F | 0x7B).to_bytes(4, "little")
    with pytest.raises(DecodeError) as info:
        encoding.decode(bad)
    assert "offset 0x4" in str(info.value)
    assert info.value.offset == 4


def test_truncated_binary() -> None:
    with pytest.raises(DecodeError, match="runs past the end"):
        encoding.decode(b"\x01\x00")
    with pytest.raises(DecodeError, match="half a parcel"):
        encoding.decode(b"\x01\x00\x00")
