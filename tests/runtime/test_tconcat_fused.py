"""The fused TCONCAT (``ops/layout.py``) against the generic runner: the same tiles,
queues, status per PE and faults, for every DataType of whole bytes, sources of raw bits
(every binade, NaN payloads, +-0, infinities, subnormals), sources of other ValidRows
and ValidCols (faults), every PE mask, sources allocated on fewer PEs than the bundle,
and little capacity; and the common case is fused."""

from __future__ import annotations

import numpy as np
from conftest import examples
from hypothesis import given
from hypothesis import strategies as st

from ptoc.backend.isa import DataType, info, op
from ptoc.runtime import Machine, MachineConfig
from ptoc.runtime.bundle import build_plan
from ptoc.runtime.ops import layout

from ._progs import p2
from .util import (
    MASKS,
    count_fused,
    prog,
    small_machines,
    special_gm,
    two_loads_then,
    warm_outcome,
)

GM = 1 << 16
#: TCONCAT's DataTypes of whole bytes (GM moves bytes)
TYPES = sorted((d for d in op("TCONCAT").dtypes if info(d).bits in (8, 16, 32, 64)),
               key=lambda d: d.name)  # fmt: skip


def _program(dt: DataType, vr: int, va: int, vb: int, vr_b: int, dst_vc: int,
             load_mask: str, mask: str, repeat: int,
             dt_b: DataType | None = None) -> tuple[str, int, int]:  # fmt: skip
    """The program, and the bytes its sources and each destination take (``dt_b``: the
    second source's DataType, of ``dt``'s width; None: ``dt``)."""
    a, b = (dt, vr, va, "T", "s0"), (dt_b or dt, vr_b, vb, "T", "s0")
    return two_loads_then("TCONCAT", dt, a, b, vr, dst_vc, "T#2, T#1", load_mask, mask, repeat)


@examples(200)  # (fast examples; the rarer rejections need more of them)
@given(data=st.data())
def test_fused_tconcat_equals_the_generic_runner(data: st.DataObject) -> None:
    dt = data.draw(st.sampled_from(TYPES))
    vr, va, vb = (
        data.draw(st.integers(1, 5)),
        data.draw(st.integers(1, 20)),
        data.draw(st.integers(1, 20)),
    )
    vr_b = data.draw(st.sampled_from([vr, vr, vr, vr + 1]))  # (another: a fault)
    dst_vc = va + vb + data.draw(st.sampled_from([0, 0, 0, 1, -1]))
    same_width = [d for d in TYPES if info(d).bits == info(dt).bits]
    dt_b = data.draw(st.sampled_from([dt, dt, dt, *same_width]))  # (another: a fault)
    mask = data.draw(st.sampled_from(MASKS))
    load_mask = data.draw(st.sampled_from([mask, mask, "1111", "1000"]))
    row = p2(max(va, vb, 32 // (info(dt).bits // 8))) * info(dt).bits // 8
    regs = {"a0": [pe * 4096 for pe in range(4)], "a1": [pe * 4096 + 2048 for pe in range(4)],
            "s0": [row] * 4}  # fmt: skip
    gm = special_gm(data.draw(st.binary(min_size=512, max_size=512)), GM)
    text, loads, dest = _program(dt, vr, va, vb, vr_b, dst_vc, load_mask, mask,
                                 data.draw(st.integers(1, 5)), dt_b)  # fmt: skip
    config = small_machines(data, loads, dest)
    assert warm_outcome(text, regs, gm, False, **config) == warm_outcome(
        text, regs, gm, True, **config
    )


def test_the_common_case_takes_the_fused_form(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    build_plan.cache_clear()  # (equal bundles share one plan: start from none)
    published = count_fused(monkeypatch, layout)
    text, _, _ = _program(DataType.FP32, 2, 8, 8, 2, 16, "1111", "1111", 1)
    program = prog(text)
    Machine(MachineConfig(gm_size=GM)).run(program)  # prepares the plans
    m = Machine(MachineConfig(gm_size=GM))
    m.set_gpr("s0", 32)
    m.set_gpr("a1", 2048)
    m.load_gm(0, np.arange(16, dtype=np.float32))
    m.load_gm(2048, -np.arange(16, dtype=np.float32))
    m.run(program)
    a = np.arange(16, dtype=np.float32).reshape(2, 8)
    assert np.array_equal(m.tile("U#1").values[0], np.concatenate([a, -a], axis=1))
    assert published == ["FP32"]
