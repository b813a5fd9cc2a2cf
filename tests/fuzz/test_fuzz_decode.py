"""Fuzz target: decoder words.

Parcel streams are drawn as raw bytes, as words of random catalog forms (every field
value, reserved ones included, and sometimes the form's unassigned bits), and as bit
flips, truncations and splices of encoded random programs. ``encoding.decode`` must
return a Program or raise one ``DecodeError`` naming a parcel-aligned offset inside the
data; whatever decodes must encode back to exactly the same bytes and survive the text
round trip (words -> text -> words is lossless).
"""

from __future__ import annotations

import pytest
from backend.strategies import form_words, programs
from hypothesis import given
from hypothesis import strategies as st

from ptoc.backend import asm, encoding
from ptoc.backend.errors import DecodeError

from .budget import fuzz

#: a warning printed from library internals is a defect too
pytestmark = pytest.mark.filterwarnings("error")


def _pack(wbs: list[tuple[int, int]]) -> bytes:
    return b"".join(w.to_bytes(bits // 8, "little") for w, bits in wbs)


@st.composite
def mutated_programs(draw: st.DrawFn) -> bytes:
    try:
        data = bytearray(encoding.encode(draw(programs)))
    except Exception:  # a strategy command with no encoding (never from decode)
        data = bytearray()
    for _ in range(draw(st.integers(0, 3))):
        if not data:
            break
        op = draw(st.sampled_from(["flip", "cut", "splice", "byte"]))
        i = draw(st.integers(0, len(data) - 1))
        if op == "flip":
            data[i] ^= 1 << draw(st.integers(0, 7))
        elif op == "cut":
            del data[i:]
        elif op == "splice":
            data[i:i] = draw(st.binary(min_size=1, max_size=6))
        else:
            data[i] = draw(st.integers(0, 255))
    return bytes(data)


streams = st.one_of(
    st.binary(max_size=64),
    st.lists(form_words(), min_size=1, max_size=12).map(_pack),
    mutated_programs(),
)


def check_bytes(data: bytes) -> None:
    try:
        program = encoding.decode(data)
    except DecodeError as e:
        assert 0 <= e.offset < max(len(data), 1) and e.offset % 2 == 0, e
        assert f"offset 0x{e.offset:x}" in str(e) and "\n" not in str(e)
        return
    assert encoding.encode(program) == data
    text = asm.format_program(program)
    again = asm.parse(text)
    assert again == program
    assert encoding.encode(again) == data


@fuzz(200)
@given(streams)
def test_decoder_words(data: bytes) -> None:
    check_bytes(data)
