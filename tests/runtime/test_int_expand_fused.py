"""The lean integer broadcast expansions (``ops/integer_fused.int_expand_runner``:
TROWEXPANDADD .. TCOLEXPANDMIN at the integer types) against the generic runner: the
same tiles, queues, status per PE and faults for every integer DataType of each
operation, sources of raw bytes (wrapping sums and products, the extremes, ties),
broadcast sources of any physical Rows and of another shape, every PE mask and pad
value, sources allocated on fewer PEs than the bundle, smaller machines and full
queues; and the route is taken.

Mutation-checked: the broadcast source's shape or its allocation mask not checked
fails this test.
"""

from __future__ import annotations

from conftest import examples
from hypothesis import given
from hypothesis import strategies as st

from ptoc.backend.isa import Axis, DataType, Executor, info, op, rows
from ptoc.runtime.ops import integer_fused

from ._progs import size_name, smallest_size
from .util import (
    MASKS,
    counted_outcomes,
    small_machines,
    special_gm,
    tload_tile,
    whole_rows_col,
)

GM = 1 << 16
PADS = ["", "B.DATR Zero\n", "B.DATR Max\n", "B.DATR Min\n", "B.DATR Null\n"]
#: (mnemonic, axis, DataType) of the integer expansions the lean form serves
CASES = [
    (r.mnemonic, r.axis, dt)
    for r in rows(executor=Executor.EXPANSION)
    if r.arith in integer_fused.INT_UFUNCS
    for dt in sorted(op(r.mnemonic).dtypes, key=lambda d: d.name)
    if info(dt).is_int and info(dt).bits in (8, 16, 32, 64)
]


def _program(name: str, axis: Axis, dt: DataType, vr: int, vc: int, load_masks: tuple[str, str],
             mask: str, other: int, repeat: int, pad: str) -> tuple[str, int, int]:  # fmt: skip
    """The program, and the bytes its sources and each destination take."""
    col = whole_rows_col(dt, vc)
    # the broadcast source (other: 1 -> another shape, 2 -> more physical Rows)
    if axis is Axis.ROW:
        bvr, bvc, bcol = vr + (other == 1), 1, 1
    else:
        bvr, bvc, bcol = 1, vc, col
        bvc = vc - 1 if other == 1 and vc > 1 else vc
    code = smallest_size(dt, vr, col)
    bcode = smallest_size(dt, bvr * (4 if other == 2 else 1), bcol)
    text = tload_tile(dt, vr, vc, col, size_name(code), base="a0", mask=load_masks[0], hand="T")
    text += tload_tile(dt, bvr, bvc, bcol, size_name(bcode), base="a1", mask=load_masks[1],
                       hand="T", stride="s1")  # fmt: skip
    text += (
        f"""\
        BSTART.SFU {name}, {dt.name}
        {pad}C.B.DIMI {vc}, ->LB0
        C.B.DIMI {vr}, ->LB1
        C.B.DIMI {col}, ->LB2
        B.IOT T#2, T#1, mask={mask}, last, ->U<{size_name(code)}>
        BSTOP
        """
        * repeat
    )
    return text, (64 << code) + (64 << bcode), 64 << code


@examples(200)
@given(data=st.data())
def test_integer_expansions_equal_the_generic_runner(data: st.DataObject) -> None:
    name, axis, dt = data.draw(st.sampled_from(CASES))
    vr, vc = data.draw(st.integers(1, 6)), data.draw(st.integers(1, 24))
    mask = data.draw(st.sampled_from(MASKS))
    clean = data.draw(st.booleans())  # the route's case
    # (each source on its own PEs: either may miss one of the bundle's)
    masks = st.sampled_from([mask, "1111", "1000"])
    load_masks = (mask, mask) if clean else (data.draw(masks), data.draw(masks))
    other = 0 if clean else data.draw(st.sampled_from([0, 1, 2]))
    eb = info(dt).bits // 8
    brow = (1 if axis is Axis.ROW else whole_rows_col(dt, vc)) * eb
    regs = {"a0": [pe * 4096 for pe in range(4)], "a1": [pe * 4096 + 2048 for pe in range(4)],
            "s0": [whole_rows_col(dt, vc) * eb] * 4, "s1": [brow] * 4}  # fmt: skip
    gm = special_gm(data.draw(st.binary(min_size=512, max_size=512)), GM)
    text, loads, dest = _program(name, axis, dt, vr, vc, load_masks, mask, other,
                                 data.draw(st.integers(1, 4)),
                                 data.draw(st.sampled_from(PADS)))  # fmt: skip
    config = (
        {"gm_size": GM, "depth": 4, "pes": 4} if clean else small_machines(data, loads, dest)
    )
    fused, generic, calls = counted_outcomes(
        text, regs, gm, [integer_fused.INT_UFUNCS], **config
    )
    assert fused == generic
    if clean:
        assert calls  # the warm run's bundles took the integer form
