"""The worked encodings of REFERENCE.md section 12 (hand-computed from the spec's field
tables, independent of ptoc) as test vectors for the assembler and the encoder."""

from __future__ import annotations

import pytest

from ptoc.backend import asm, encoding

VECTORS = [
    ("BSTART.VEC TADD, FP32", 0x08019181, 32),
    ("BSTART.SFU TROWEXPANDMIN, FP16", 0x24A19181, 32),
    ("BSTART.SFU TQUANT, FP32", 0x0EA19181, 32),
    ("BSTART.TEPL 0, 0, U64", 0xC0019181, 32),
    ("B.DIM zero, 64, ->LB0", 0x04000043, 32),
    ("B.DIM zero, 8, ->LB1", 0x00801043, 32),
    ("B.DIM a0, 0, ->LB2", 0x00012043, 32),
    ("C.B.DIMI 64, ->LB0", 0x103C, 16),
    ("C.B.DIMI 8, ->LB1", 0x423C, 16),
    ("B.IOT T#1, T#2, mask=1111, last, ->T<4KB>", 0x040B4E13, 32),
    ("B.IOT T#1, T#2, mask=1111, last, ->T<4KiB>", 0x040B4E13, 32),
    ("B.IOT T#1, mask=1111, last, ->U<2KB>", 0x000ADE93, 32),
    ("B.IOT mask=1111, last, ->T<128B>", 0x0008EE13, 32),
    ("B.DATR Max", 0x08001023, 32),
    ("B.DATR {NORM, S8, Zero, EQ, RNE, 1, 0}", 0x05309023, 32),
    ("B.DATR S8, RNE, Sat=1", 0x05309023, 32),
    ("B.IOR a0, a1", 0x00310013, 32),
    ("B.IOR a0, a1, zero, ->zero", 0x00310013, 32),
    ("BSTOP", 0x00000001, 32),
    ("B.DATR {NORM, FP64, Zero, EQ, Default, 0, 0}", 0x00001023, 32),
    ("B.IOT T#1, T#2, mask=1111, last, ->U<5>", 0x040ACE93, 32),
    ("C.BSTOP", 0x0000, 16),
    # seed TADD page / ASL fixture: TEPL 0x00019181 | mode<<25 | fn<<20 | dt<<27
    ("BSTART.SFU TPARTMIN, S8", 0x00019181 | 3 << 25 | 20 << 20 | 19 << 27, 32),
    # ASL fixture: B.IOT 0x4013 | PEMode<<9 | Dst<<7 | Size<<15 | Src0<<20 | Src1<<26 | L<<19
    ("B.IOT U#3, N#16, mask=1000, ->M<64KB>", 0x4013 | 1 << 9 | 2 << 7 | 10 << 15 | 18 << 20
     | 63 << 26, 32),
]  # fmt: skip


@pytest.mark.parametrize(("text", "word", "bits"), VECTORS, ids=[v[0] for v in VECTORS])
def test_worked_encoding(text: str, word: int, bits: int) -> None:
    cmd = asm.parse_command(text)
    assert encoding.encode_command(cmd) == (word, bits)
    assert encoding.decode_command(word, bits) == cmd


def test_minimal_tadd_bundle_bytes() -> None:
    """REFERENCE 12: the minimal complete TADD bundle, word by word."""
    text = """
        BSTART.VEC TADD, FP32
        B.DATR {NORM, FP64, Zero, EQ, Default, 0, 0}
        B.DIM  zero, 64, ->LB0
        B.DIM  zero, 8,  ->LB1
        B.IOT  T#1, T#2, mask=1111, last, ->U<5>
        BSTOP
    """
    words = [0x08019181, 0x00001023, 0x04000043, 0x00801043, 0x040ACE93, 0x00000001]
    data = encoding.encode(asm.parse(text))
    assert data == b"".join(w.to_bytes(4, "little") for w in words)


def test_mixed_parcel_stream_decodes_16_and_32_bit() -> None:
    text = "BSTART.VEC TADD, FP32\nC.B.DIMI 64, ->LB0\nC.B.DIMI 8, ->LB1\n" \
           "B.IOT T#1, T#2, mask=1111, last, ->U<2KB>\nC.BSTOP\n"  # fmt: skip
    data = encoding.encode(asm.parse(text))
    assert len(data) == 4 + 2 + 2 + 4 + 2
    program = encoding.decode(data)
    assert program.offsets == (0, 4, 6, 8, 12)
    assert asm.format_program(program) == text
