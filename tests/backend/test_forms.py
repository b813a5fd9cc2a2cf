"""The text form of every catalog command form, driven by the catalog alone.

Each test iterates ``catalog.COMMAND_FORMS`` and ``catalog.SCALAR_FORMS`` and draws field
values from the FieldDefs (width, signedness, one-of / not-equal), so a form added to the
catalog is covered without a change here.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ptoc.backend import asm, encoding, forms
from ptoc.backend.isa import FieldDef, catalog
from ptoc.backend.program import Datr, Scalar

ALL_FORMS = (*catalog.COMMAND_FORMS, *catalog.SCALAR_FORMS)


def legal_values(fd: FieldDef) -> st.SearchStrategy[int]:
    """Values the catalog allows in field ``fd``, edges included."""
    if fd.allowed is not None:
        return st.sampled_from(sorted(v for v in fd.allowed if v != fd.excluded))
    if fd.signed:
        lo, hi = -(1 << (fd.width - 1)), (1 << (fd.width - 1)) - 1
    else:
        lo, hi = 0, (1 << fd.width) - 1
    edges = st.sampled_from(sorted({lo, hi, 0, 1, -1 if fd.signed else hi - 1}))
    return st.one_of(edges, st.integers(lo, hi)).filter(fd.legal)


@pytest.mark.parametrize("form", ALL_FORMS, ids=lambda f: f.form_id)
@settings(max_examples=15)
@given(data=st.data())
def test_every_form_round_trips_text_words_text(form, data) -> None:  # type: ignore[no-untyped-def]
    values = {fd.name: data.draw(legal_values(fd), label=fd.name) for fd in form.fields}
    c = encoding.command_of(form, values)
    word, bits = encoding.encode_command(c)
    assert (word, bits) == (form.encode(values), form.length_bits)
    text = asm.format_command(c)
    legal = encoding.field_violation(c) is None  # an unassigned TEPL selector is not
    assert text.startswith((".word ", ".half ")) is not legal, text
    (back,) = asm.parse(text).commands
    assert back == c
    assert encoding.encode_command(back) == (word, bits)
    assert asm.format_command(encoding.decode_word(word, bits)) == text
    if legal:  # the text reads back through this form's own syntax, field for field
        got_form, got = forms.parse_fields(*text.partition(" ")[::2])
        assert got_form is form
        assert {fd.name: got.get(fd.name, fd.omitted) for fd in form.fields} == values


@pytest.mark.parametrize("form", ALL_FORMS, ids=lambda f: f.form_id)
def test_printed_syntaxes_spell_every_field(form) -> None:  # type: ignore[no-untyped-def]
    """No field of a form is dropped by the printer: its printed syntaxes together spell
    all of them (one that leaves a field out prints only when that field is zero), except
    the fields the catalog fixes to one value (B.FPATR's Func and opcode fields)."""
    syntaxes = [s for s in forms.syntaxes_of(form) if s.prints]
    assert syntaxes
    free = {fd.name for fd in form.fields if fd.allowed is None or len(fd.allowed) > 1}
    assert frozenset().union(*(s.fields for s in syntaxes)) >= free


def test_every_spelling_row_names_a_catalog_template() -> None:
    templates = {f.asm for f in ALL_FORMS}
    assert set(forms.SPELLINGS) <= templates


def test_mul_prints_its_catalog_template_without_a_modifier() -> None:
    """``mul SrcL, SrcR`` has no SrcRType field: the printer once wrote ``a1.sw``."""
    c = asm.parse_command("mul a0, a1, ->a2")
    assert isinstance(c, Scalar)
    assert asm.format_command(c) == "mul a0, a1, ->a2"
    assert asm.format_command(asm.parse_command("add a0, a1, ->a2")) == "add a0, a1, ->a2"
    assert asm.format_command(asm.parse_command("add a0, a1.sw<<3, ->a2")) == (
        "add a0, a1.sw<<3, ->a2"
    )


@pytest.mark.parametrize("line", ["BSTARTx.STD FALL", "BSTART\u00e6.VEC TADD, FP32"])
def test_block_start_word_is_matched_whole(line: str) -> None:
    """The word before the first ``.`` was once ignored (``BSTARTx.STD FALL`` parsed)."""
    with pytest.raises(asm.AsmError, match="unknown command"):
        asm.parse(line)


def test_datr_datatype_code_31_is_dtype_none() -> None:
    """B.DATR.DataType allows code 31 (DTYPE_NONE); its number reads like its name."""
    assert asm.parse_command("B.DATR {NORM, 31, Zero, EQ, Default, 0, 0}") == Datr(dtype=31)
    assert asm.format_command(Datr(dtype=31)) == (
        "B.DATR {NORM, DTYPE_NONE, Zero, EQ, Default, 0, 0}"
    )


@pytest.mark.parametrize(
    ("line", "other"),
    [
        ("B.IOT T#1, last, mask=1111", "B.IOT T#1, mask=1111, last"),
        ("B.IOS mask=1100, S7", "B.IOS S7, mask=1100"),
        ("B.IOS ->S3<128B>, mask=1111", "B.IOS mask=1111, ->S3<128B>"),
    ],
)
def test_named_operands_in_either_order(line: str, other: str) -> None:
    assert asm.parse_command(line) == asm.parse_command(other)
    assert asm.format_command(asm.parse_command(line)) == other


def test_fpatr_prints_its_catalog_template_and_accepts_keyed_operands() -> None:
    """B.FPATR is written as the catalog template's nine numbers (PreQuantMode ..
    TransB); the fixed Func/opcode fields are implied, and Name=value reads the same."""
    (c,) = asm.parse("B.FPATR 3, 2, 1, 1, 1, 0, 1, 0, 1").commands
    f = dict(c.fields)  # type: ignore[attr-defined]
    assert (f["PreQuantMode"], f["ReluMode"], f["GroupNCode"], f["TransB"], f["Func"]) == (
        3, 2, 1, 1, 2,
    )  # fmt: skip
    assert asm.format_command(c) == "B.FPATR 3, 2, 1, 1, 1, 0, 1, 0, 1"
    (k,) = asm.parse(
        "B.FPATR PreQuantMode=3, ReluMode=2, GroupNCode=1, RowMaxEn=1, GroupMaxEn=1, "
        "MaxAbsEn=1, TransB=1"
    ).commands
    assert k == c
    word, _ = encoding.encode_command(c)
    assert encoding.decode_word(word, 32) == c
