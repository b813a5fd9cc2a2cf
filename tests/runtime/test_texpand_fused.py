"""The fused copy expansions TROWEXPAND and TCOLEXPAND (``reduce.expansion``, their
lean form ``move_fused.lean_expand_copy``) against the generic runner: the same tiles,
queues, status per PE and faults, for every DataType of each operation, broadcast
sources of raw bits (every binade, NaN payloads, +-0, infinities, subnormals), of any
physical Rows and of another shape, every PE mask and pad value, sources allocated on
fewer PEs than the bundle, and little capacity; and the common case takes the lean form.

Mutation-checked: the lean form padding with Null whatever the bundle says, or
accepting a broadcast source of another shape, fails the property test."""

from __future__ import annotations

import numpy as np
from conftest import examples
from hypothesis import given
from hypothesis import strategies as st

from ptoc.backend.isa import Axis, DataType, Executor, info, op, rows
from ptoc.runtime import Machine, MachineConfig
from ptoc.runtime.bundle import build_plan
from ptoc.runtime.ops import elementwise

from ._progs import p2, size_name, smallest_size
from .util import (
    MASKS,
    count_fused,
    count_generic,
    prog,
    small_machines,
    special_gm,
    tload_tile,
    warm_outcome,
)

GM = 1 << 16
PADS = ["", "B.DATR Zero\n", "B.DATR Max\n", "B.DATR Min\n", "B.DATR Null\n"]
#: (mnemonic, axis, DataType) of the copy expansions (types of whole bytes)
CASES = [
    (r.mnemonic, r.axis, dt)
    for r in rows(executor=Executor.EXPANSION)
    if r.arith is None
    for dt in sorted(op(r.mnemonic).dtypes, key=lambda d: d.name)
    if info(dt).bits in (8, 16, 32, 64)
]


def _col(dt: DataType, vc: int) -> int:
    return p2(max(vc, 32 // (info(dt).bits // 8)))


def _program(name: str, axis: Axis, dt: DataType, vr: int, vc: int, load_mask: str,
             mask: str, other: int, repeat: int,
             pad: str = "") -> tuple[str, int, int]:  # fmt: skip
    """The program, and the bytes its source and each destination take."""
    col = _col(dt, vc)
    # the broadcast source (other: 1 -> another shape, 2 -> more physical Rows)
    if axis is Axis.ROW:
        bvr, bvc, bcol = vr + (other == 1), 1, 1
    else:
        bvr, bvc, bcol = 1, vc, col
        bvc = vc - 1 if other == 1 and vc > 1 else vc
    code = smallest_size(dt, bvr * (4 if other == 2 else 1), bcol)
    text = tload_tile(dt, bvr, bvc, bcol, size_name(code), base="a0", mask=load_mask,
                      hand="T")  # fmt: skip
    dcode = smallest_size(dt, vr, col)
    text += (
        f"""\
        BSTART.SFU {name}, {dt.name}
        {pad}C.B.DIMI {vc}, ->LB0
        C.B.DIMI {vr}, ->LB1
        C.B.DIMI {col}, ->LB2
        B.IOT T#1, mask={mask}, last, ->U<{size_name(dcode)}>
        BSTOP
        """
        * repeat
    )
    return text, 64 << code, 64 << dcode


@examples(200)  # (fast examples; the rarer rejections need more of them)
@given(data=st.data())
def test_fused_copy_expansions_equal_the_generic_runner(data: st.DataObject) -> None:
    name, axis, dt = data.draw(st.sampled_from(CASES))
    vr, vc = data.draw(st.integers(1, 6)), data.draw(st.integers(1, 24))
    mask = data.draw(st.sampled_from(MASKS))
    load_mask = data.draw(st.sampled_from([mask, mask, "1111", "1000"]))
    row = (1 if axis is Axis.ROW else _col(dt, vc)) * info(dt).bits // 8
    regs = {"a0": [pe * 4096 for pe in range(4)], "s0": [row] * 4}
    gm = special_gm(data.draw(st.binary(min_size=512, max_size=512)), GM)
    text, loads, dest = _program(name, axis, dt, vr, vc, load_mask, mask,
                                 data.draw(st.sampled_from([0, 0, 0, 1, 2])),
                                 data.draw(st.integers(1, 5)),
                                 data.draw(st.sampled_from(PADS)))  # fmt: skip
    config = small_machines(data, loads, dest)
    assert warm_outcome(text, regs, gm, False, **config) == warm_outcome(
        text, regs, gm, True, **config
    )


def test_the_common_case_takes_the_fused_form(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    build_plan.cache_clear()  # (equal bundles share one plan: start from none)
    published = count_fused(monkeypatch, elementwise)  # (the fused runner's pushes)
    generic = count_generic(monkeypatch)
    for name, axis, _ in CASES[:1] + [c for c in CASES if c[1] is not CASES[0][1]][:1]:
        text, _, _ = _program(name, axis, DataType.FP32, 3, 8, "1111", "1111", 0, 1)
        program = prog(text)
        Machine(MachineConfig(gm_size=GM)).run(program)  # prepares the plans
        m = Machine(MachineConfig(gm_size=GM))
        m.set_gpr("s0", 4 if axis is Axis.ROW else 32)
        m.load_gm(0, np.arange(8, dtype=np.float32))
        generic.clear()
        m.run(program)
        if axis is Axis.ROW:  # rows 0, 1, 2 of a column
            want = np.repeat(np.arange(3, dtype=np.float32)[:, None], 8, axis=1)
        else:
            want = np.repeat(np.arange(8, dtype=np.float32)[None, :], 3, axis=0)
        assert np.array_equal(m.tile("U#1").values[0], want)
        assert generic == []
    assert published == []  # (the lean form publishes without it)
