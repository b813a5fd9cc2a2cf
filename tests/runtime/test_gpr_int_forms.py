"""Fused forms that read B.IOR words read them from whichever form the GPRs have: after
an integer scalar block (Python integers, one list for every PE or one per PE) a fused
TEXTRACT, TLOAD and TSTORE leave the same tiles, queues, status, memory and faults as
the traced generic run; and they read the integers without making the array."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from ptoc.backend.isa import DataType, info
from ptoc.runtime import Machine, MachineConfig
from ptoc.runtime.bundle import build_plan

from . import test_memory_fused as memory_tests
from . import test_textract_fused as textract_tests
from .util import MASKS, prog, publish_as_ints, warm_outcome, warm_outcome_ints

GM = textract_tests.GM


@given(data=st.data())
def test_fused_textract_with_integer_gprs(data: st.DataObject) -> None:
    dt = data.draw(st.sampled_from(textract_tests.TYPES))
    vr, vc = data.draw(st.integers(1, 9)), data.draw(st.integers(1, 20))
    mask = data.draw(st.sampled_from(MASKS))
    load_mask = data.draw(st.sampled_from([mask, mask, "1111", "1000"]))
    r, c = data.draw(st.integers(1, vr)), data.draw(st.integers(1, vc))
    offset = st.integers(0, max(vr - r, vc - c) + 1)  # one past the last window too
    ro = data.draw(st.lists(offset, min_size=4, max_size=4))
    co = data.draw(st.lists(offset, min_size=4, max_size=4))
    if data.draw(st.booleans()):  # the usual case: one window for every PE
        ro, co = [ro[0]] * 4, [co[0]] * 4
    row = textract_tests._col(dt, vc) * info(dt).bits // 8
    regs = {"a0": [pe * 4096 for pe in range(4)], "s0": [row] * 4, "a1": ro, "a2": co}
    gm = data.draw(st.binary(min_size=256, max_size=256)) * (GM // 256)
    offsets, repeat = data.draw(st.booleans()), data.draw(st.integers(0, 4))
    text = textract_tests._program(dt, (vr, vc), load_mask, mask, (r, c), offsets, repeat)
    per_pe = data.draw(st.booleans())
    assert warm_outcome_ints(text, regs, gm, per_pe, gm_size=GM, depth=4) == warm_outcome(
        text, regs, gm, True, gm_size=GM, depth=4
    )


@given(data=st.data())
def test_fused_transfers_with_integer_gprs(data: st.DataObject) -> None:
    dt = data.draw(st.sampled_from(memory_tests.TYPES))
    eb = info(dt).carrier.itemsize
    vr, vc = data.draw(st.integers(1, 6)), data.draw(st.integers(1, 24))
    mask = data.draw(st.sampled_from(MASKS))
    row = vc * eb
    strides = st.one_of(
        st.sampled_from([0, eb, row, row + eb, 3 * row, row - eb if row > eb else 0]),
        st.integers(0, 4 * row),
        st.sampled_from([(1 << 64) - row, 1 << 63]),
    )
    four = st.lists
    address = memory_tests._address(eb)
    regs = {
        "a0": data.draw(four(address, min_size=4, max_size=4)),
        "s0": data.draw(four(strides, min_size=4, max_size=4)),
        "a1": data.draw(four(address, min_size=4, max_size=4)),
        "s1": data.draw(four(strides, min_size=4, max_size=4)),
    }
    if data.draw(st.booleans()):  # the kernel's usual case: every PE the same
        regs = {k: [v[0]] * 4 for k, v in regs.items()}
    gm = data.draw(st.binary(min_size=256, max_size=256)) * (memory_tests.GM // 256)
    text = memory_tests._program(dt, vr, vc, mask, data.draw(st.booleans()))
    per_pe = data.draw(st.booleans())
    config = {"gm_size": memory_tests.GM}
    assert warm_outcome_ints(text, regs, gm, per_pe, **config) == warm_outcome(
        text, regs, gm, True, **config
    )


def test_a_fused_textract_reads_integers_without_the_array(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    build_plan.cache_clear()  # (equal bundles share one plan: start from none)
    from ptoc.runtime.ops import layout

    from .util import count_builds

    built = count_builds(monkeypatch, layout)
    program = prog(textract_tests._program(DataType.FP32, (3, 8), "1000", "1000", (2, 5),
                                           True, 0))  # fmt: skip
    Machine(MachineConfig(gm_size=GM)).run(program)  # prepares the plans
    m = Machine(MachineConfig(gm_size=GM))
    for reg, v in (("s0", 32), ("a1", 1), ("a2", 2)):
        m.set_gpr(reg, v)
    m.load_gm(0, np.arange(64, dtype=np.float32))
    publish_as_ints(m, per_pe=False)
    m.run(program)
    assert built == ["TEXTRACT"] and m.state.gpr_ints is not None
    want = np.arange(24, dtype=np.float32).reshape(3, 8)[1:3, 2:7]
    assert np.array_equal(m.tile("U#1").values[0], want)
