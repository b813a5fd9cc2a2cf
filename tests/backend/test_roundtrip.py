"""Round trips over every command form: text <-> Program <-> words."""

from __future__ import annotations

from hypothesis import given

from ptoc.backend import asm, encoding
from ptoc.backend.program import Program

from .strategies import commands, programs


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
