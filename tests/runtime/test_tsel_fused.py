"""The fused TSEL and TSELS (``elementwise.fused_runner`` with a predicate source)
against the generic runner: the same tiles, queues, status per PE and faults, for every
DataType of each operation, sources of raw bits (every binade, NaN payloads, +-0,
infinities, subnormals), predicates of mixed bits, per-PE scalars of raw 64-bit words
(invalid encodings, the omitted B.IOR), every PE mask, sources allocated on fewer PEs
than the bundle, predicates and sources of another descriptor, and little capacity;
and the common case is fused."""

from __future__ import annotations

import numpy as np
from conftest import examples
from hypothesis import given
from hypothesis import strategies as st

from ptoc.backend.isa import DataType, info
from ptoc.backend.isa.fields import PAD_NAMES
from ptoc.runtime import Machine, MachineConfig
from ptoc.runtime.bundle import build_plan
from ptoc.runtime.ops import elementwise
from ptoc.runtime.ops.common import ENCODING_TYPES

from ._progs import size_name, smallest_size
from .util import (
    MASKS,
    SPECIAL_WORDS,
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
#: (mnemonic, DataType) of both selections (types of whole bytes: GM moves bytes)
CASES = byte_cases("TSEL", "TSELS")
ENCODED = [(name, dt) for name, dt in CASES if dt in ENCODING_TYPES]


def _sizes(dt: DataType, vr: int, vc: int) -> tuple[int, int]:
    """Size codes of the ``dt`` sources and of the predicate's ``dt`` source (one
    physical Rows: the predicate's)."""
    code = smallest_size(dt, vr, whole_rows_col(dt, vc))
    return code, code


def _program(name: str, dt: DataType, vr: int, vc: int, load_mask: str, mask: str,
             pred_vr: int, scalar: bool, repeat: int, pad: str = "Null") -> str:  # fmt: skip
    col = whole_rows_col(dt, vc)
    code, pcode = _sizes(dt, vr, vc)
    size = size_name(code)
    text = tload_tile(dt, vr, vc, col, size, base="a0", mask=load_mask, hand="T")
    text += tload_tile(dt, vr, vc, col, size, base="a1", mask=load_mask, hand="T")
    # the predicate: a third source < a3 (its ValidRow ``pred_vr``: another one does not
    # match)
    text += tload_tile(dt, pred_vr, vc, col, size_name(pcode), base="a2",
                       mask=load_mask, hand="N")  # fmt: skip
    text += f"""\
        BSTART.VEC TCMPS, {dt.name}
        B.DATR {{NORM, FP64, Null, LT, Default, 0, 0}}
        C.B.DIMI {vc}, ->LB0
        C.B.DIMI {pred_vr}, ->LB1
        C.B.DIMI {col}, ->LB2
        B.IOR a3
        B.IOT N#1, mask={load_mask}, last, ->M<{size_name(smallest_size(None, 64, col))}>
        BSTOP
        """
    if name == "TSEL":
        iot = "B.IOT M#1, T#2, mask={m}\n        B.IOT T#1, mask={m}, last"
    else:
        iot = ("B.IOR a4\n        " if scalar else "") + "B.IOT M#1, T#2, mask={m}, last"
    for _ in range(repeat):
        text += f"""\
        BSTART.VEC {name}, {dt.name}
        B.DATR {{NORM, FP64, {pad}, EQ, Default, 0, 0}}
        C.B.DIMI {vc}, ->LB0
        C.B.DIMI {vr}, ->LB1
        C.B.DIMI {col}, ->LB2
        {iot.format(m=mask)}, ->U<{size}>
        BSTOP
        """
    return text


@examples(200)  # (fast examples; the rarer rejections need more of them)
@given(data=st.data())
def test_fused_selections_equal_the_generic_runner(data: st.DataObject) -> None:
    # (the types with encoding rules drawn as often as all others: their rejections)
    name, dt = data.draw(st.sampled_from(CASES) | st.sampled_from(ENCODED))
    vr, vc = data.draw(st.integers(1, 4)), data.draw(st.integers(1, 24))
    mask = data.draw(st.sampled_from(MASKS))
    load_mask = data.draw(st.sampled_from([mask, mask, "1111", "1000"]))
    # (words with high bits set: what a narrower type ignores and a 64-bit one reads)
    words = st.sampled_from(SPECIAL_WORDS) | st.integers(0, (1 << 64) - 1).map(
        lambda w: w | (1 << 63)
    )
    scalars = pe_scalars(data, words)
    threshold = data.draw(words)
    row = whole_rows_col(dt, vc) * info(dt).bits // 8
    regs = {"a0": [pe * 4096 for pe in range(4)], "a1": [pe * 4096 + 1024 for pe in range(4)],
            "a2": [pe * 4096 + 2048 for pe in range(4)], "s0": [row] * 4,
            "a3": [threshold] * 4, "a4": scalars}  # fmt: skip
    gm = special_gm(data.draw(st.binary(min_size=512, max_size=512)), GM)
    if dt in ENCODING_TYPES and data.draw(st.booleans()):  # (else the loads reject)
        gm = valid_words(gm)
    pred_vr = data.draw(st.sampled_from([vr, vr, vr, vr + 1]))
    scalar = data.draw(st.sampled_from([True, True, False]))  # (False: B.IOR omitted)
    pad = data.draw(st.sampled_from(PAD_NAMES))
    text = _program(name, dt, vr, vc, load_mask, mask, pred_vr, scalar,
                    data.draw(st.integers(1, 5)), pad)  # fmt: skip
    code, pcode = _sizes(dt, vr, vc)
    config = small_machines(data, 2 * (64 << code) + 2 * (64 << pcode), 64 << code)
    assert warm_outcome(text, regs, gm, False, **config) == warm_outcome(
        text, regs, gm, True, **config
    )


def test_the_common_case_takes_the_fused_form(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    build_plan.cache_clear()  # (equal bundles share one plan: start from none)
    published = count_fused(monkeypatch, elementwise)
    for name in ("TSEL", "TSELS"):
        program = prog(_program(name, DataType.FP32, 2, 8, "1111", "1111", 2, True, 1))
        Machine(MachineConfig(gm_size=GM)).run(program)  # prepares the plans
        m = Machine(MachineConfig(gm_size=GM))
        m.set_gpr("s0", 32)
        m.set_gpr("a1", 1024)
        m.set_gpr("a2", 2048)
        m.set_gpr("a3", 0x41000000)  # 8.0
        m.set_gpr("a4", 0x41000000)  # 8.0
        m.load_gm(0, np.arange(16, dtype=np.float32))
        m.load_gm(1024, np.full(16, 3.0, np.float32))
        m.load_gm(2048, np.arange(16, dtype=np.float32))
        m.run(program)
        other = 3.0 if name == "TSEL" else 8.0
        a = np.arange(16, dtype=np.float32).reshape(2, 8)
        assert np.array_equal(m.tile("U#1").values[0], np.where(a < 8, a, other))
    assert published == ["FP32", "FP32"]
