"""Fuzz target: assembler text.

Lines are drawn from canonical text of random commands (every form, reserved values as
raw words), then mutated -- operands dropped, duplicated, swapped or replaced by tokens
from the assembler's own vocabulary, Unicode and huge digits, stray punctuation -- and
mixed with arbitrary Unicode text. ``asm.parse`` must return a Program or raise one
``AsmError`` line naming the file and line; whatever parses must print, re-parse and
encode to the same program (no internal exception anywhere).
"""

from __future__ import annotations

import pytest
from backend.strategies import commands
from hypothesis import given
from hypothesis import strategies as st

from ptoc.backend import asm, encoding
from ptoc.backend.errors import AsmError
from ptoc.backend.isa import OPS, DataType, catalog
from ptoc.backend.isa.fields import GPR_NAMES, SIZE_NAMES

from .budget import fuzz

#: a warning printed from library internals is a defect too
pytestmark = pytest.mark.filterwarnings("error")

VOCAB = sorted(
    {
        *{f.mnemonic for f in catalog.COMMAND_FORMS},
        *{f.mnemonic.lower() for f in catalog.SCALAR_FORMS},
        *OPS,
        *(d.name for d in DataType),
        *GPR_NAMES,
        *SIZE_NAMES.values(),
        "BSTART.VEC", "BSTART.SFU", "BSTART.TEPL", "FALL", "COND", "DIRECT", "RET", "IND",
        "mask=1111", "mask=0000", "mask=0110", "mask=", "last", "<last>", "->T<2KB>",
        "->U<11>", "->S3<128B>", "T#1", "U#16", "N#17", "T#0", "S255", "S256", "LB0=64",
        "->LB3", "Sat=1", "RMode=RTZ", "PadValue=Max", "DTYPE_NONE", "{", "}", "<", ">",
        "->", ",", ";", "=", "#", "//", "0x", "-", "+", "0", "1", "31", "65535", "65536",
        "0x" + "f" * 60, "9" * 4400, "\u00b2", "\u0663", "1_0", "0b102", "0o9", "r24",
        "r31", "r32", ".word", ".half", "0x5016", "0x7001", ".sw", ".uw", ".neg", "<<3",
    }
)  # fmt: skip

tokens = st.sampled_from(VOCAB)
line_of_tokens = st.lists(st.one_of(tokens, st.text(max_size=4)), min_size=1, max_size=8).map(
    lambda ts: " ".join(ts).replace(" , ", ", ")
)


@st.composite
def mutated_line(draw: st.DrawFn) -> str:
    text = asm.format_command(draw(commands))
    word, _, rest = text.partition(" ")
    parts = [p.strip() for p in rest.split(",")] if rest.strip() else []
    op = draw(st.sampled_from(["drop", "dup", "swap", "replace", "insert", "chars", "keep"]))
    if parts and op == "drop":
        del parts[draw(st.integers(0, len(parts) - 1))]
    elif parts and op == "dup":
        i = draw(st.integers(0, len(parts) - 1))
        parts.insert(i, parts[i])
    elif len(parts) > 1 and op == "swap":
        i, j = draw(st.integers(0, len(parts) - 1)), draw(st.integers(0, len(parts) - 1))
        parts[i], parts[j] = parts[j], parts[i]
    elif parts and op == "replace":
        parts[draw(st.integers(0, len(parts) - 1))] = draw(tokens)
    elif op == "insert":
        parts.insert(draw(st.integers(0, len(parts))), draw(tokens))
    elif op == "chars":
        pos = draw(st.integers(0, len(text)))
        return text[:pos] + draw(st.text(min_size=1, max_size=3)) + text[pos:]
    return f"{word} {', '.join(parts)}".strip()


lines = st.one_of(mutated_line(), line_of_tokens, st.text(max_size=40))
texts = st.lists(lines, min_size=1, max_size=6).map(
    lambda ls: "\n".join(ls) if len(ls) % 3 else "; ".join(ls)
)


def check_text(text: str) -> None:
    try:
        program = asm.parse(text, file="f.s")
    except AsmError as e:
        msg = str(e)
        assert msg.startswith("f.s:") and "\n" not in msg and len(msg) < 400, msg
        assert 1 <= e.line <= text.count("\n") + 1
        return
    again = asm.parse(asm.format_program(program))
    assert again == program
    data = encoding.encode(program)
    assert encoding.decode(data) == program


@fuzz(200)
@given(texts)
def test_assembler_text(text: str) -> None:
    check_text(text)


@fuzz(80)
@given(st.text(max_size=200))
def test_assembler_arbitrary_text(text: str) -> None:
    check_text(text)
