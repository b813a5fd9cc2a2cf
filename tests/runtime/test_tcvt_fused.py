"""The fused TCVT (``elementwise.tcvt`` through ``fused_runner``) against the generic
runner: the same tiles, queues, status per PE and faults, for every legal pair of
whole-byte types, sources of raw bits (every binade, NaN payloads, +-0, infinities,
subnormals, ties), every RMode and Sat, a PadValue, every PE mask, sources allocated on
fewer PEs than the bundle or of another descriptor, and little capacity; and the common
case is fused."""

from __future__ import annotations

import numpy as np
from conftest import examples
from hypothesis import given
from hypothesis import strategies as st

from ptoc.backend.isa import DataType, info, legality, op
from ptoc.backend.isa.fields import RMODE_NAMES
from ptoc.runtime import Machine, MachineConfig
from ptoc.runtime.ops import elementwise

from ._progs import p2, size_name, smallest_size
from .util import MASKS, count_fused, prog, special_gm, tload_tile, valid_words, warm_outcome

GM = 1 << 16
_OP = op("TCVT")
#: every (source, destination) pair TCVT accepts among the whole-byte types
PAIRS = [
    (s, d)
    for s in sorted(_OP.dtypes, key=lambda t: t.name)
    for d in sorted(_OP.dtypes, key=lambda t: t.name)
    if info(s).bits % 8 == 0 and info(d).bits % 8 == 0
    and legality.source_dtype_for(_OP, s, d) is None
]  # fmt: skip


def _sizes(src: DataType, dst: DataType, rows: int, col: int) -> tuple[int, int]:
    """The source's and the destination's SizeCode: for the wider type the smallest that
    holds ``rows`` (and gives the other type at least 128 bytes), for the other the one
    of as many physical Rows (TCVT keeps the Rows)."""
    wide, narrow = (src, dst) if info(src).bits >= info(dst).bits else (dst, src)
    code = smallest_size(wide, rows, col)
    while (64 << code) * info(narrow).bits // info(wide).bits < 128:
        code += 1  # (the narrow tile's bytes must make a SizeCode too)
    other = ((64 << code) * info(narrow).bits // info(wide).bits).bit_length() - 7
    return (code, other) if wide == src else (other, code)


def _program(src: DataType, dst: DataType, vr: int, vc: int, rmode: int, sat: bool,
             pad: str, load_mask: str, mask: str, other: bool,
             rows_differ: bool = False) -> str:  # fmt: skip
    col = p2(max(vc, 32 // (min(info(src).bits, info(dst).bits) // 8)))
    load_rows = vr + 1 if other else vr  # another ValidRow: another descriptor
    s_code, d_code = _sizes(src, dst, load_rows, col)
    if rows_differ:  # each type's smallest size: other physical Rows (a fault) mostly
        s_code, d_code = smallest_size(src, load_rows, col), smallest_size(dst, vr, col)
    load = tload_tile(src, load_rows, vc, col, size_name(s_code), base="a0", mask=load_mask,
                      hand="T")  # fmt: skip
    return (
        load
        + f"""\
        BSTART.VEC TCVT, {src.name}
        B.DATR {{NORM, {dst.name}, {pad}, EQ, {RMODE_NAMES[rmode]}, {int(sat)}, 0}}
        C.B.DIMI {vc}, ->LB0
        C.B.DIMI {vr}, ->LB1
        C.B.DIMI {col}, ->LB2
        B.IOT T#1, mask={mask}, last, ->U<{size_name(d_code)}>
        BSTOP
        """
    )


@examples(150)
@given(data=st.data())
def test_fused_tcvt_equals_the_generic_runner(data: st.DataObject) -> None:
    src, dst = data.draw(st.sampled_from(PAIRS))
    vr, vc = data.draw(st.integers(1, 5)), data.draw(st.integers(1, 40))
    mask = data.draw(st.sampled_from(MASKS))
    load_mask = data.draw(st.sampled_from([mask, mask, "1111", "1000"]))
    col = p2(max(vc, 32 // (min(info(src).bits, info(dst).bits) // 8)))
    regs = {"a0": [pe * 8192 for pe in range(4)], "s0": [col * info(src).bits // 8] * 4}
    gm = special_gm(data.draw(st.binary(min_size=512, max_size=512)), GM)
    if src in (DataType.TF32, DataType.HF32):
        gm = valid_words(gm)
    text = _program(src, dst, vr, vc, data.draw(st.integers(0, 7)), data.draw(st.booleans()),
                    data.draw(st.sampled_from(["Null", "Null", "Zero", "Max"])), load_mask,
                    mask, data.draw(st.sampled_from([False, False, False, True])),
                    data.draw(st.sampled_from([False] * 3 + [True])))  # fmt: skip
    config = {"gm_size": GM, "depth": 4, "pes": data.draw(st.sampled_from([4, 4, 4, 2]))}
    assert warm_outcome(text, regs, gm, False, **config) == warm_outcome(
        text, regs, gm, True, **config
    )


def test_the_common_case_takes_the_fused_form(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    published = count_fused(monkeypatch, elementwise)  # (the fused form's pushes)
    program = prog(_program(DataType.FP32, DataType.FP16, 4, 16, 1, False, "Null", "1111",
                            "1111", False))  # fmt: skip
    for _ in range(2):  # the first run prepares the plans
        m = Machine(MachineConfig(gm_size=GM))
        published.clear()
        m.set_gpr("s0", 64)
        m.load_gm(0, np.arange(4096, dtype=np.float32) + 0.25)
        m.run(program)
    assert published == ["FP16"]
    want = (np.arange(64, dtype=np.float32) + 0.25).astype(np.float16).reshape(4, 16)
    assert np.array_equal(m.tile("U#1").values[0], want)
