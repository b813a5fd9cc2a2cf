"""The lean integer elementwise form (``ops/integer_fused.py``) against the generic
runner: the same tiles, queues, status per PE and faults for every integer DataType of
TADD, TSUB, TMUL, TAND, TOR, TXOR, TMAX and TMIN, sources of raw bytes (wrapping sums
and products, the extremes, ties, equal sources), every PE mask, padding values,
sources allocated on fewer PEs than the bundle, sources of another descriptor, smaller
machines and full queues; and the route is taken."""

from __future__ import annotations

from conftest import examples
from hypothesis import given
from hypothesis import strategies as st

from ptoc.backend.isa import DataType, info
from ptoc.backend.isa.fields import PAD_NAMES
from ptoc.runtime.ops import integer_fused

from ._progs import size_name, smallest_size
from .util import (
    MASKS,
    byte_cases,
    counted_outcomes,
    small_machines,
    special_gm,
    tload_tile,
    whole_rows_col,
)

GM = 1 << 16
#: (mnemonic, DataType): the integer types of each operation the lean form serves
CASES = [
    (name, dt)
    for name, dt in byte_cases("TADD", "TSUB", "TMUL", "TAND", "TOR", "TXOR", "TMAX", "TMIN")
    if info(dt).is_int
]


def _program(name: str, dt: DataType, vr: int, vc: int, load_masks: tuple[str, str],
             mask: str, other: int, repeat: int, pad: str) -> str:  # fmt: skip
    col = whole_rows_col(dt, vc)
    code = smallest_size(dt, vr + 1, col)
    size = size_name(code)
    # other: 1 -> a later second source has another ValidRow, 2 -> another physical Rows
    vr2 = vr + 1 if other == 1 else vr
    size2 = size_name(code + 1) if other == 2 else size
    text = tload_tile(dt, vr, vc, col, size, base="a0", mask=load_masks[0], hand="T")
    text += tload_tile(dt, vr, vc, col, size, base="a1", mask=load_masks[1], hand="T")
    op = f"""\
        BSTART.VEC {name}, {dt.name}
        B.DATR {{NORM, FP64, {pad}, EQ, Default, 0, 0}}
        C.B.DIMI {vc}, ->LB0
        C.B.DIMI {vr}, ->LB1
        C.B.DIMI {col}, ->LB2
        B.IOT T#2, T#1, mask={mask}, last, ->U<{size}>
        BSTOP
        """
    text += op * repeat
    if other:  # the same bundles (plans) again, on a source of another descriptor
        text += tload_tile(dt, vr2, vc, col, size2, base="a1", mask=load_masks[1], hand="T")
        text += op * repeat
    return text


@examples(200)
@given(data=st.data())
def test_integer_form_equals_the_generic_runner(data: st.DataObject) -> None:
    name, dt = data.draw(st.sampled_from(CASES))
    vr, vc = data.draw(st.integers(1, 4)), data.draw(st.integers(1, 24))
    mask = data.draw(st.sampled_from(MASKS))
    clean = data.draw(st.booleans())  # the route's case: sources on the bundle's PEs
    masks = st.sampled_from([mask, "1111", "1000"])
    # (each source on its own PEs: either may miss one of the bundle's)
    load_masks = (mask, mask) if clean else (data.draw(masks), data.draw(masks))
    row = whole_rows_col(dt, vc) * info(dt).bits // 8
    # the second source: elsewhere, or where the first is (equal operands)
    second = data.draw(st.sampled_from([2048, 2048, 0]))
    regs = {"a0": [pe * 4096 for pe in range(4)], "a1": [pe * 4096 + second for pe in range(4)],
            "s0": [row] * 4}  # fmt: skip
    gm = special_gm(data.draw(st.binary(min_size=512, max_size=512)), GM)
    other = 0 if clean else data.draw(st.sampled_from([0, 1, 2]))
    text = _program(name, dt, vr, vc, load_masks, mask, other, data.draw(st.integers(1, 5)),
                    data.draw(st.sampled_from(PAD_NAMES)))  # fmt: skip
    col = whole_rows_col(dt, vc)
    loads = (64 << smallest_size(dt, vr + 1, col)) * (2 + other)
    dest = 64 << smallest_size(dt, vr + 1, col)
    config = (
        {"gm_size": GM, "depth": 4, "pes": 4} if clean else small_machines(data, loads, dest)
    )
    fused, generic, calls = counted_outcomes(
        text, regs, gm, [integer_fused.INT_UFUNCS], **config
    )
    assert fused == generic
    if clean and info(dt).carrier.itemsize * 8 == info(dt).bits:
        assert calls  # the warm run's bundles took the integer form
