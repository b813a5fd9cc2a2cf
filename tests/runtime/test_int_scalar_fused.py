"""The lean integer tile-scalar form (``ops/integer_fused.int_scalar_runner``) against
the generic runner: the same tiles, queues, status per PE and faults for every integer
DataType of TADDS, TSUBS, TMULS, TMAXS, TMINS, TANDS, TORS, TXORS, TSHLS and TSHRS,
sources of raw bytes (wrapping sums and products, the extremes, ties), scalars of raw
64-bit words (high bits set, the sign bit of the element, shift counts past the width,
one word on every PE and one per PE, the omitted B.IOR), every PE mask, padding values,
sources allocated on fewer PEs than the bundle, sources of another descriptor, smaller
machines and full queues; and the route is taken.

Mutation-checked: the right shift on the unsigned view (logical for a signed type), the
scalar's low bits not sign-extended, a shift count of the low log2(width) + 1 bits, and
the scalar of PE 0 used on every PE each fail this test.
"""

from __future__ import annotations

from conftest import examples
from hypothesis import given
from hypothesis import strategies as st

from ptoc.backend.isa import DataType, info
from ptoc.backend.isa.fields import PAD_NAMES
from ptoc.runtime.ops import integer_fused

from ._progs import sfu_or_vec, size_name, smallest_size
from .util import (
    MASKS,
    SPECIAL_WORDS,
    byte_cases,
    counted_outcomes,
    pe_scalars,
    small_machines,
    special_gm,
    tload_tile,
    whole_rows_col,
)

GM = 1 << 16
NAMES = ("TADDS", "TSUBS", "TMULS", "TMAXS", "TMINS",
         "TANDS", "TORS", "TXORS", "TSHLS", "TSHRS")  # fmt: skip
#: (mnemonic, DataType): the integer types of each operation the lean form serves
CASES = [(name, dt) for name, dt in byte_cases(*NAMES) if info(dt).is_int]
#: scalar words: the special encodings, the element extremes and signs of each width,
#: shift counts around each width, and any word
WORDS = st.one_of(
    st.sampled_from(SPECIAL_WORDS),
    st.sampled_from([(1 << b) - 1 for b in (7, 8, 15, 16, 31, 32, 63, 64)]),
    st.sampled_from([1 << b for b in (7, 15, 31, 63)]),
    st.integers(0, 70),
    st.integers(0, (1 << 64) - 1),
)


def _program(name: str, dt: DataType, vr: int, vc: int, load_mask: str, mask: str,
             other: int, repeat: int, pad: str, scalar: bool) -> str:  # fmt: skip
    col = whole_rows_col(dt, vc)
    code = smallest_size(dt, vr + 1, col)
    size = size_name(code)
    # other: 1 -> a later source has another ValidRow, 2 -> another physical Rows
    vr2 = vr + 1 if other == 1 else vr
    size2 = size_name(code + 1) if other == 2 else size
    text = tload_tile(dt, vr, vc, col, size, base="a0", mask=load_mask, hand="T")
    ior = "B.IOR a1\n" if scalar else ""
    op = f"""\
        {sfu_or_vec(name)} {name}, {dt.name}
        B.DATR {{NORM, FP64, {pad}, EQ, Default, 0, 0}}
        C.B.DIMI {vc}, ->LB0
        C.B.DIMI {vr}, ->LB1
        C.B.DIMI {col}, ->LB2
        {ior}B.IOT T#1, mask={mask}, last, ->U<{size}>
        BSTOP
        """
    text += op * repeat
    if other:  # the same bundles (plans) again, on a source of another descriptor
        text += tload_tile(dt, vr2, vc, col, size2, base="a0", mask=load_mask, hand="T")
        text += op * repeat
    return text


@examples(200)
@given(data=st.data())
def test_integer_scalar_form_equals_the_generic_runner(data: st.DataObject) -> None:
    name, dt = data.draw(st.sampled_from(CASES))
    vr, vc = data.draw(st.integers(1, 4)), data.draw(st.integers(1, 24))
    mask = data.draw(st.sampled_from(MASKS))
    clean = data.draw(st.booleans())  # the route's case: the source on the bundle's PEs
    load_mask = mask if clean else data.draw(st.sampled_from([mask, "1111", "1000"]))
    row = whole_rows_col(dt, vc) * info(dt).bits // 8
    regs = {"a0": [pe * 4096 for pe in range(4)], "a1": pe_scalars(data, WORDS),
            "s0": [row] * 4}  # fmt: skip
    gm = special_gm(data.draw(st.binary(min_size=512, max_size=512)), GM)
    other = 0 if clean else data.draw(st.sampled_from([0, 1, 2]))
    scalar = data.draw(st.integers(0, 3)) > 0  # (mostly with B.IOR)
    text = _program(name, dt, vr, vc, load_mask, mask, other, data.draw(st.integers(1, 5)),
                    data.draw(st.sampled_from(PAD_NAMES)), scalar)  # fmt: skip
    col = whole_rows_col(dt, vc)
    loads = (64 << smallest_size(dt, vr + 1, col)) * (1 + (other > 0))
    dest = 64 << smallest_size(dt, vr + 1, col)
    config = (
        {"gm_size": GM, "depth": 4, "pes": 4} if clean else small_machines(data, loads, dest)
    )
    tables = [integer_fused.INT_UFUNCS, integer_fused._SHIFTS]
    fused, generic, calls = counted_outcomes(text, regs, gm, tables, **config)
    assert fused == generic
    if clean:
        assert calls  # the warm run's bundles took the integer form
