"""The fused TMOV (``ops/memory_fused.fused_tmov``) against the generic runner: the same
tiles, queues, status and faults for every element width, raw-bit sources (NaN payloads,
+-0, infinities, subnormals: moved bit for bit, padding included), the BSTART DataType
the source's or another one or DTYPE_NONE, dimensions that repeat the source's shape
or not, sources of another descriptor through one plan, sources on fewer PEs than the
bundle, predicate sources, every PE mask, and full queues; and the common case is fused.

Mutation-checked: the fused form ignoring the BSTART DataType, or keeping one
destination for every source descriptor, fails the property test.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from ptoc.backend.isa import DataType, info
from ptoc.runtime import Machine, MachineConfig
from ptoc.runtime.bundle import build_plan

from ._progs import size_name, smallest_size
from .util import (
    MASKS,
    WIDTH_TYPES,
    count_generic,
    prog,
    special_gm,
    tload_tile,
    warm_outcome,
    whole_rows_col,
)

GM = 1 << 16


def _program(dt: DataType, vr: int, vr2: int, vc: int, load_mask: str, mask: str,
             bstart: str, dims: bool, repeat: int, predicate: bool) -> str:  # fmt: skip
    """A TLOAD (ValidRow ``vr``), ``repeat`` TMOVs of it, a second TLOAD (ValidRow
    ``vr2``) and the same TMOVs again (one plan, two source descriptors); ``predicate``:
    a TCMPS predicate of the first tile is moved instead."""
    col = whole_rows_col(dt, vc)
    size = size_name(smallest_size(dt, max(vr, vr2), col))
    dim = f"C.B.DIMI {vc}, ->LB0\nC.B.DIMI {vr}, ->LB1\nC.B.DIMI {col}, ->LB2\n" if dims else ""
    move = f"BSTART.TMOV {bstart}\n{dim}B.IOT T#1, mask={mask}, last, ->U<{size}>\nBSTOP\n"
    text = tload_tile(dt, vr, vc, col, size, base="a0", mask=load_mask, hand="T")
    if predicate:
        text += f"""\
        BSTART.VEC TCMPS, {dt.name}
        C.B.DIMI {vc}, ->LB0
        C.B.DIMI {vr}, ->LB1
        C.B.DIMI {col}, ->LB2
        B.IOT T#1, mask={load_mask}, last, ->T<{size}>
        BSTOP
        """
    text += move * repeat
    text += tload_tile(dt, vr2, vc, col, size, base="a0", mask=load_mask, hand="T")
    return text + move * repeat


@given(data=st.data())
def test_fused_tmov_equals_the_generic_runner(data: st.DataObject) -> None:
    dt = data.draw(st.sampled_from(WIDTH_TYPES))
    vr, vc = data.draw(st.integers(1, 6)), data.draw(st.integers(1, 20))
    vr2 = data.draw(st.sampled_from([vr, vr, max(1, vr - 1), vr + 1]))
    mask = data.draw(st.sampled_from(MASKS))
    load_mask = data.draw(st.sampled_from([mask, mask, "1111", "1000"]))
    other = DataType.U16 if dt is not DataType.U16 else DataType.FP16
    bstart = data.draw(st.sampled_from([dt.name, dt.name, "DTYPE_NONE", other.name]))
    row = whole_rows_col(dt, vc) * info(dt).bits // 8
    regs = {"a0": [pe * 4096 for pe in range(4)], "s0": [row] * 4}
    gm = special_gm(data.draw(st.binary(min_size=512, max_size=512)), GM)
    text = _program(dt, vr, vr2, vc, load_mask, mask, bstart, data.draw(st.booleans()),
                    data.draw(st.integers(1, 5)),
                    data.draw(st.sampled_from([False, False, False, True])))  # fmt: skip
    config = {"gm_size": GM, "depth": 4, "pes": data.draw(st.sampled_from([4, 4, 2]))}
    build_plan.cache_clear()  # (equal bundles share one plan: start from none)
    assert warm_outcome(text, regs, gm, False, **config) == warm_outcome(
        text, regs, gm, True, **config
    )


def test_the_common_case_takes_the_fused_form(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    build_plan.cache_clear()
    generic = count_generic(monkeypatch)
    program = prog(_program(DataType.FP32, 3, 3, 8, "1000", "1000", "FP32", True, 1, False))
    Machine(MachineConfig(gm_size=GM)).run(program)  # prepares the plans
    m = Machine(MachineConfig(gm_size=GM))
    m.set_gpr("s0", 32)
    m.load_gm(0, np.arange(64, dtype=np.float32))
    generic.clear()
    m.run(program)
    assert generic == []
    want = np.arange(24, dtype=np.float32).reshape(3, 8)
    assert np.array_equal(m.tile("U#1").values[0], want)
