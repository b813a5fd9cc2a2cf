"""The worked encodings of REFERENCE.md section 12 (hand-computed from the spec's field
tables, independent of ptoc) as test vectors for the assembler and the encoder."""

from __future__ import annotations

import pytest

from ptoc.backend import asm, encoding
from ptoc.backend.errors import DecodeError

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
    # scalar-forms.json: c.movi 0x16 | simm5<<6 | RegDst<<11 (RegDst != 10);
    # c.setret 0x5016 | uimm5<<6 (the RegDst=10 words of c.movi)
    ("c.movi 13, ->s0", 0x16 | 13 << 6 | 11 << 11, 16),
    ("c.movi -1, ->x3", 0x16 | 31 << 6 | 23 << 11, 16),
    ("c.setret 5, ->ra", 0x5016 | 5 << 6, 16),
    # .word / .half spell a parcel directly
    (".word 0x08019181", 0x08019181, 32),
    (".half 0x103c", 0x103C, 16),
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


def test_a_c_movi_word_writing_ra_is_c_setret() -> None:
    """Issue 9 item 18: the decoder reads the word the catalog's c.movi excludes (RegDst
    10) as the form that owns it, never as c.movi."""
    word = 0x16 | 3 << 6 | 10 << 11
    c = encoding.decode_command(word, 16)
    assert c is not None and c.mnemonic == "C.SETRET" and dict(c.fields) == {"uimm5": 3}
    assert asm.format_command(c) == "c.setret 3, ->ra"
    assert encoding.field_violation(asm.parse_command("c.movi 3, ->s0")) is None


def test_source_only_iot_with_dst_bits_does_not_decode() -> None:
    """Issue 9 item 24: DstTile bits 7-8 are unassigned in the source-only B.IOT forms, so
    two words would decode to one command; the one with those bits set is refused."""
    word = encoding.encode_command(asm.parse_command("B.IOT T#1, T#2, mask=1111, last"))[0]
    for spare in (0x80, 0x100, 0x180):
        with pytest.raises(DecodeError, match=f"bits 0x{spare:x} are set"):
            encoding.decode((word | spare).to_bytes(4, "little"))


def test_fall_offset_word_round_trips_as_raw_text() -> None:
    """Issue 9 item 24: a decoded BSTART.STD FALL with a nonzero offset (the reserved FIXUP
    payload) is printed with its offset as a raw word, so disasm -> asm keeps its bytes."""
    word = 0x1001 | 5 << 15
    program = encoding.decode(word.to_bytes(4, "little"))
    text = asm.format_program(program)
    assert text.startswith(".word 0x00029001  // BSTART.STD FALL, 5: ")
    assert encoding.encode(asm.parse(text)) == word.to_bytes(4, "little")


def test_no_form_the_catalog_drops_owns_words_of_a_form_it_keeps() -> None:
    """Issue 9 item 18: the decoder may only read a word as the most specific form of the
    whole spec that matches it. So every spec form that is more specific than a catalog
    form and overlaps it must be in the catalog too (C.SETRET inside c.movi was not)."""
    import json

    from ptoc.backend.isa import catalog, generate

    spec = generate.DEFAULT_SPEC
    if not spec.is_dir():
        pytest.skip(f"the PTO-ISA spec catalogs are not next to the repository ({spec})")
    kept = {f.form_id for f in (*catalog.COMMAND_FORMS, *catalog.SCALAR_FORMS)}
    rows = []
    for name in ("command-forms.json", "scalar-forms.json"):
        for f in json.loads((spec / name).read_text())["forms"]:
            mask = match = shift = 0
            for e in f["encoding"]:
                mask |= int(e["mask"], 16) << shift
                match |= int(e["match"], 16) << shift
                shift += e["width_bits"]
            rows.append((f["form_id"], f["mnemonic"], f["length_bits"], mask, match))
    owners = []
    for kid, kname, kbits, kmask, kmatch in rows:
        if kid not in kept:
            continue
        for did, dname, dbits, dmask, dmatch in rows:
            overlap = dbits == kbits and not (kmatch ^ dmatch) & kmask & dmask
            if overlap and did not in kept and dmask.bit_count() > kmask.bit_count():
                owners.append(f"{dname} owns words of {kname}")
    assert owners == []
