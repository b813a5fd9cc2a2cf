"""The fused TCMP and TCMPS (``ops/compare_fused.py``) against the generic runner: the
same predicate tiles, queues, status per PE and faults, for every DataType of each
operation (TF32/HF32 sources with invalid encodings included), sources of raw bits
(every binade, NaN payloads, +-0, infinities, subnormals, ties), every comparison mode,
per-PE scalars of raw 64-bit words, every PE mask, sources allocated on fewer PEs than
the bundle, sources of another descriptor, and full queues; and the common case is
fused."""

from __future__ import annotations

import numpy as np
from conftest import examples
from hypothesis import given
from hypothesis import strategies as st

from ptoc.backend.isa import DataType, info
from ptoc.backend.isa.fields import PAD_NAMES
from ptoc.runtime import Machine, MachineConfig
from ptoc.runtime.bundle import build_plan
from ptoc.runtime.ops import compare_fused
from ptoc.runtime.ops.common import ENCODING_TYPES

from ._progs import size_name, smallest_size
from .util import (
    MASKS,
    byte_cases,
    count_fused,
    pe_scalars,
    prog,
    small_machines,
    special_gm,
    tload_tile,
    valid_words,
    warm_outcome,
    whole_rows_col,
)

GM = 1 << 16
CMODES = ["EQ", "NE", "LT", "GT", "LE", "GE"]
#: (mnemonic, DataType) of both comparisons (types of whole bytes: GM moves bytes)
CASES = byte_cases("TCMP", "TCMPS")

ENCODED = [(name, dt) for name, dt in CASES if dt in ENCODING_TYPES]


def _program(name: str, dt: DataType, vr: int, vc: int, load_mask: str, mask: str,
             cmode: str, other: int, scalar: bool, repeat: int,
             pad: str = "Null") -> str:  # fmt: skip
    col = whole_rows_col(dt, vc)
    code = smallest_size(dt, vr + 1, col)
    size = size_name(code)
    # other: 1 -> a later second source has another ValidRow, 2 -> another physical Rows
    vr2 = vr + 1 if other == 1 else vr
    size2 = size_name(code + 1) if other == 2 else size
    text = tload_tile(dt, vr, vc, col, size, base="a0", mask=load_mask, hand="T")
    text += tload_tile(dt, vr, vc, col, size, base="a1", mask=load_mask, hand="T")
    psize = size_name(smallest_size(None, 4 * vr + 4, col))
    srcs = "T#2, T#1" if name == "TCMP" else "T#1"
    ior = "B.IOR a2\n        " if scalar and name == "TCMPS" else ""
    compare = f"""\
        BSTART.VEC {name}, {dt.name}
        B.DATR {{NORM, FP64, {pad}, {cmode}, Default, 0, 0}}
        C.B.DIMI {vc}, ->LB0
        C.B.DIMI {vr}, ->LB1
        C.B.DIMI {col}, ->LB2
        {ior}B.IOT {srcs}, mask={mask}, last, ->M<{psize}>
        BSTOP
        """
    text += compare * repeat
    if other:  # the same bundles (plans) again, on a source of another descriptor
        text += tload_tile(dt, vr2, vc, col, size2, base="a1", mask=load_mask, hand="T")
        text += compare * repeat
    return text


@examples(200)  # (fast examples; the rarer rejections need more of them)
@given(data=st.data())
def test_fused_compares_equal_the_generic_runner(data: st.DataObject) -> None:
    # (the types with encoding rules drawn as often as all others: their rejections)
    name, dt = data.draw(st.sampled_from(CASES) | st.sampled_from(ENCODED))
    vr, vc = data.draw(st.integers(1, 4)), data.draw(st.integers(1, 24))
    mask = data.draw(st.sampled_from(MASKS))
    load_mask = data.draw(st.sampled_from([mask, mask, "1111", "1000"]))
    scalars = pe_scalars(data)
    row = whole_rows_col(dt, vc) * info(dt).bits // 8
    # the second source: elsewhere, or where the first is (every element a tie)
    second = data.draw(st.sampled_from([2048, 2048, 0]))
    regs = {"a0": [pe * 4096 for pe in range(4)], "a1": [pe * 4096 + second for pe in range(4)],
            "s0": [row] * 4, "a2": scalars}  # fmt: skip
    gm = special_gm(data.draw(st.binary(min_size=512, max_size=512)), GM)
    if dt in ENCODING_TYPES and data.draw(st.booleans()):  # (else the loads reject)
        gm = valid_words(gm)
    other = data.draw(st.sampled_from([0, 0, 0, 1, 2]))
    text = _program(name, dt, vr, vc, load_mask, mask, data.draw(st.sampled_from(CMODES)),
                    other, data.draw(st.booleans()), data.draw(st.integers(1, 5)),
                    data.draw(st.sampled_from(PAD_NAMES)))  # fmt: skip
    col = whole_rows_col(dt, vc)
    loads = (64 << smallest_size(dt, vr + 1, col)) * (2 + other)
    config = small_machines(data, loads, 64 << smallest_size(None, 4 * vr + 4, col))
    assert warm_outcome(text, regs, gm, False, **config) == warm_outcome(
        text, regs, gm, True, **config
    )


def test_the_common_case_takes_the_fused_form(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    build_plan.cache_clear()  # (equal bundles share one plan: start from none)
    published = count_fused(monkeypatch, compare_fused)
    for name in ("TCMP", "TCMPS"):
        program = prog(_program(name, DataType.FP32, 2, 8, "1111", "1111", "LT", 0, True, 1))
        Machine(MachineConfig(gm_size=GM)).run(program)  # prepares the plans
        m = Machine(MachineConfig(gm_size=GM))
        m.set_gpr("s0", 32)
        m.set_gpr("a1", 2048)
        m.set_gpr("a2", 0x41000000)  # 8.0
        m.load_gm(0, np.arange(16, dtype=np.float32))
        m.load_gm(2048, np.full(16, 3.0, np.float32))
        m.run(program)
        if name == "TCMP":  # T#2 < T#1
            want = np.arange(16, dtype=np.float32).reshape(2, 8) < 3.0
        else:  # T#1 < the scalar
            want = np.full((2, 8), 3.0, np.float32) < 8.0
        assert np.array_equal(m.tile("M#1").values[0], want)
    assert published == ["predicate", "predicate"]
