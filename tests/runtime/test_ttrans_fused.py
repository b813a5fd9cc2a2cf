"""The fused TTRANS (``ops/move_fused.py``) against the generic runner: the same tiles,
queues, status and faults for every element width, raw-bit sources, destinations that
are and are not the transposed source, sources on fewer PEs than the bundle, a
transpose of a transpose, and full queues; and the common case is fused."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ptoc.backend.isa import DataType, info
from ptoc.runtime import Machine, MachineConfig

from ._progs import size_name, smallest_size
from .util import (
    MASKS,
    WIDTH_TYPES,
    count_generic,
    prog,
    warm_outcome,
    whole_rows_col,
)

GM = 1 << 16
TYPES = WIDTH_TYPES
_col = whole_rows_col


def _program(dt: DataType, vr: int, vc: int, load_mask: str, mask: str,
             dst: tuple[int, int], twice: bool, depth_fill: int) -> str:  # fmt: skip
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
    shapes = [dst, (dst[1], dst[0])] if twice else [dst]
    for _ in range(depth_fill + 1):
        for k, (r, c) in enumerate(shapes):
            dcol = _col(dt, c)
            src = "T#1" if k == 0 else "U#1"
            text += f"""\
        BSTART.SFU TTRANS, {dt.name}
        C.B.DIMI {c}, ->LB0
        C.B.DIMI {r}, ->LB1
        C.B.DIMI {dcol}, ->LB2
        B.IOT {src}, mask={mask}, last, ->U<{size_name(smallest_size(dt, r, dcol))}>
        BSTOP
        """
    return text


@given(data=st.data())
def test_fused_ttrans_equals_the_generic_runner(data: st.DataObject) -> None:
    dt = data.draw(st.sampled_from(TYPES))
    vr, vc = data.draw(st.integers(1, 9)), data.draw(st.integers(1, 20))
    mask = data.draw(st.sampled_from(MASKS))
    load_mask = data.draw(st.sampled_from([mask, mask, "1111", "1000"]))
    dst = data.draw(st.sampled_from([(vc, vr), (vc, vr), (vr, vc), (vc, max(1, vr - 1))]))
    row = _col(dt, vc) * info(dt).bits // 8
    regs = {"a0": [pe * 4096 for pe in range(4)], "s0": [row] * 4}
    gm = data.draw(st.binary(min_size=256, max_size=256)) * (GM // 256)
    text = _program(dt, vr, vc, load_mask, mask, dst, data.draw(st.booleans()),
                    data.draw(st.integers(0, 4)))  # fmt: skip
    assert warm_outcome(text, regs, gm, False, gm_size=GM, depth=4) == warm_outcome(
        text, regs, gm, True, gm_size=GM, depth=4
    )


@pytest.mark.parametrize("mask", ["1000", "1100", "1111"])
def test_the_common_case_takes_the_fused_form(monkeypatch, mask: str) -> None:  # type: ignore[no-untyped-def]
    generic = count_generic(monkeypatch)
    program = prog(_program(DataType.FP32, 3, 8, mask, mask, (8, 3), False, 0))
    Machine(MachineConfig(gm_size=GM)).run(program)  # prepares the plans
    m = Machine(MachineConfig(gm_size=GM))
    m.set_gpr("s0", 32)
    m.load_gm(0, np.arange(64, dtype=np.float32))
    generic.clear()
    m.run(program)
    assert generic == []
    want = np.arange(24, dtype=np.float32).reshape(3, 8).T
    assert np.array_equal(m.tile("U#1").values[0], want)
