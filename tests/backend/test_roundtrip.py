"""Round trips over every command form: text <-> Program <-> words."""

from __future__ import annotations

from hypothesis import given

from ptoc.backend import asm, encoding
from ptoc.backend.errors import DecodeError
from ptoc.backend.program import Program

from .strategies import ALL_FORMS, commands, form_words, programs, reserved_values


@given(programs)
def test_print_parse_round_trip(p: Program) -> None:
    assert asm.parse(asm.format_program(p)) == p


@given(programs)
def test_encode_decode_round_trip(p: Program) -> None:
    assert encoding.decode(encoding.encode(p)) == p


@given(programs)
def test_encode_of_reparsed_text_is_identical(p: Program) -> None:
    assert encoding.encode(asm.parse(asm.format_program(p))) == encoding.encode(p)


@given(commands)
def test_one_line_seed_form_equals_canonical(c) -> None:
    one = asm.format_command(c)
    joined = asm.parse(f"{one}; {one};{one}")
    assert joined.commands == (c, c, c)


@given(form_words())
def test_words_text_words_is_lossless(wb: tuple[int, int]) -> None:
    """Issue 9 item 24: every word that decodes prints as text that assembles back to the
    same word (reserved values as raw .word/.half), and decodes through the most specific
    form that matches it (never another form)."""
    word, bits = wb
    data = word.to_bytes(bits // 8, "little")
    try:
        program = encoding.decode(data)
    except DecodeError as e:
        assert "must be zero" in str(e) and word & encoding.unassigned_bits(_owner(word, bits))
        return
    (c,) = program.commands
    assert encoding.encode(program) == data
    assert encoding.encode(asm.parse(asm.format_program(program))) == data
    assert asm.parse(asm.format_command(c)).commands == (c,)
    form, _ = encoding.command_form_values(c)
    assert form is _owner(word, bits)


def _owner(word: int, bits: int):  # type: ignore[no-untyped-def]
    matching = [f for f in ALL_FORMS if f.length_bits == bits and f.matches(word)]
    return max(matching, key=lambda f: f.mask.bit_count())


def test_every_reserved_field_value_round_trips_as_a_raw_word() -> None:
    """Every value a form constraint reserves (exhaustively for fields up to 8 bits)
    decodes, is named by field_violation, prints as .word/.half and assembles back."""
    seen = 0
    owners: set[str] = set()
    for f in ALL_FORMS:
        for fd in f.fields:
            for v in reserved_values(fd):
                word = f.match | fd.insert(v)
                if not f.matches(word) or fd.extract(word) != fd.extract(fd.insert(v)):
                    continue  # a "field" that is part of the fixed bits (B.FPATR opcodes)
                c = encoding.decode_command(word, f.length_bits)
                assert c is not None, (f.asm, fd.name, v)
                owner = _owner(word, f.length_bits)
                if owner is not f:  # a more specific form owns the word: it is that form
                    assert encoding.command_form_values(c)[0] is owner
                    owners.add(owner.mnemonic)
                    continue
                assert encoding.field_violation(c) is not None
                text = asm.format_command(c)
                assert text.startswith(".word " if f.length_bits == 32 else ".half ")
                assert asm.parse(text).commands == (c,)
                seen += 1
    assert seen > 300
    # c.movi RegDst=10 is C.SETRET; a destination B.IOT with SizeCode 0 is source-only
    assert owners == {"C.SETRET", "B.IOT"}


def test_every_op_and_form_is_reachable_by_the_strategies() -> None:
    """Guard: the strategies cover every catalog operation and command form."""
    from ptoc.backend.isa import OPS, catalog

    from .strategies import iots  # noqa: F401

    mnemonics = {f.mnemonic for f in catalog.COMMAND_FORMS}
    assert {"B.IOT", "B.DIM", "C.B.DIMI", "B.DATR", "B.IOR", "B.IOS", "BSTOP", "C.BSTOP"} <= (
        mnemonics
    )
    assert len(OPS) == 109
    assert len([f for f in catalog.COMMAND_FORMS if f.mnemonic == "B.IOT"]) == 5
