"""The fused TEXTRACT (``ops/layout.py``) against the generic runner: the same tiles,
queues, status and faults for every element width, raw-bit sources, windows at offsets
that are the same on every PE and that differ, windows past the source (faults),
sources on fewer PEs than the bundle, and full queues; and the common case is fused."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from ptoc.backend.isa import DataType, info
from ptoc.runtime import Machine, MachineConfig
from ptoc.runtime.bundle import build_plan
from ptoc.runtime.ops import layout

from ._progs import size_name, smallest_size
from .util import MASKS, WIDTH_TYPES, count_builds, prog, warm_outcome, whole_rows_col

GM = 1 << 16
TYPES = WIDTH_TYPES
_col = whole_rows_col


def _program(dt: DataType, src: tuple[int, int], load_mask: str, mask: str,
             dst: tuple[int, int], offsets: bool, repeat: int) -> str:  # fmt: skip
    vr, vc = src
    col = _col(dt, vc)
    text = f"""\
        BSTART.TLOAD {dt.name}
        C.B.DIMI {vc}, ->LB0
        C.B.DIMI {vr}, ->LB1
        C.B.DIMI {col}, ->LB2
        B.IOR a0, s0
        B.IOT mask={load_mask}, last, ->T<{size_name(smallest_size(dt, vr, col))}>
        BSTOP
        """
    r, c = dst
    dcol = _col(dt, c)
    ior = "B.IOR a1, a2\n        " if offsets else ""
    for _ in range(repeat + 1):
        text += f"""\
        BSTART.SFU TEXTRACT, {dt.name}
        C.B.DIMI {c}, ->LB0
        C.B.DIMI {r}, ->LB1
        C.B.DIMI {dcol}, ->LB2
        {ior}B.IOT T#1, mask={mask}, last, ->U<{size_name(smallest_size(dt, r, dcol))}>
        BSTOP
        """
    return text


@given(data=st.data())
def test_fused_textract_equals_the_generic_runner(data: st.DataObject) -> None:
    dt = data.draw(st.sampled_from(TYPES))
    vr, vc = data.draw(st.integers(1, 9)), data.draw(st.integers(1, 20))
    mask = data.draw(st.sampled_from(MASKS))
    load_mask = data.draw(st.sampled_from([mask, mask, "1111", "1000"]))
    r, c = data.draw(st.integers(1, vr)), data.draw(st.integers(1, vc))
    offset = st.integers(0, max(vr - r, vc - c) + 1)  # one past the last window too
    ro = data.draw(st.lists(offset, min_size=4, max_size=4))
    co = data.draw(st.lists(offset, min_size=4, max_size=4))
    if data.draw(st.booleans()):  # the usual case: one window for every PE
        ro, co = [ro[0]] * 4, [co[0]] * 4
    row = _col(dt, vc) * info(dt).bits // 8
    regs = {"a0": [pe * 4096 for pe in range(4)], "s0": [row] * 4, "a1": ro, "a2": co}
    gm = data.draw(st.binary(min_size=256, max_size=256)) * (GM // 256)
    text = _program(dt, (vr, vc), load_mask, mask, (r, c), data.draw(st.booleans()),
                    data.draw(st.integers(0, 4)))  # fmt: skip
    assert warm_outcome(text, regs, gm, False, gm_size=GM, depth=4) == warm_outcome(
        text, regs, gm, True, gm_size=GM, depth=4
    )


def test_the_common_case_takes_the_fused_form(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    build_plan.cache_clear()  # (equal bundles share one plan: start from none)
    built = count_builds(monkeypatch, layout)
    program = prog(_program(DataType.FP32, (3, 8), "1000", "1000", (2, 5), True, 0))
    Machine(MachineConfig(gm_size=GM)).run(program)  # prepares the plans
    m = Machine(MachineConfig(gm_size=GM))
    m.set_gpr("s0", 32)
    m.set_gpr("a1", 1)
    m.set_gpr("a2", 2)
    m.load_gm(0, np.arange(64, dtype=np.float32))
    m.run(program)
    assert built == ["TEXTRACT"]
    want = np.arange(24, dtype=np.float32).reshape(3, 8)[1:3, 2:7]
    assert np.array_equal(m.tile("U#1").values[0], want)
