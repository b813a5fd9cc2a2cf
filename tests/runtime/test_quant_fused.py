"""The fused TQUANT and TDEQUANT (``irregular.quantize`` through
``elementwise.fused_runner`` with both B.IOR words) against the generic runner: the same
tiles, queues, status per PE and faults, for FP32 sources of raw bits (every binade, NaN
payloads, +-0, infinities, subnormals, ties) and S8/U8 sources of any byte, multipliers
of raw 64-bit words (negative, zero, infinite and NaN ones: faults; high bits set), zero
points in and out of range, the omitted B.IOR, every RMode and Sat, every PE mask,
sources allocated on fewer PEs than the bundle or of another descriptor, and little
capacity; and the common case is fused."""

from __future__ import annotations

import numpy as np
from conftest import examples
from hypothesis import given
from hypothesis import strategies as st

from ptoc.backend.isa import DataType, info
from ptoc.backend.isa.fields import RMODE_NAMES
from ptoc.runtime import Machine, MachineConfig
from ptoc.runtime.ops import elementwise

from ._progs import p2, size_name, smallest_size
from .util import MASKS, count_fused, prog, special_gm, tload_tile, warm_outcome

GM = 1 << 16
#: multipliers: ordinary positive FP32 values, and the illegal kinds (as raw words)
MULTIPLIERS = [0x3F800000, 0x40000000, 0x3E800000, 0x42FE0000, 0x00000001, 0x7F7FFFFF,
               0x3F800000 | 0xDEAD << 32, 0xBF800000, 0x0, 0x7F800000, 0x7FC00000]  # fmt: skip


def _program(quant: bool, dst: DataType, vr: int, vc: int, rmode: int, sat: bool,
             ior: bool, load_mask: str, mask: str, other: bool) -> str:  # fmt: skip
    src = DataType.FP32 if quant else dst
    out = dst if quant else DataType.FP32
    col = p2(max(vc, 32 // (info(src).bits // 8), 32 // (info(out).bits // 8)))
    load_rows = vr + 1 if other else vr  # another ValidRow: another descriptor
    name = "TQUANT" if quant else "TDEQUANT"
    datr = (
        f"B.DATR {dst.name}, {RMODE_NAMES[rmode]}, Sat={int(sat)}"
        if quant
        else (f"B.DATR FP32, {RMODE_NAMES[rmode]}")
    )
    regs = "B.IOR a1, a2\n" if ior else ""
    load = tload_tile(src, load_rows, vc, col, size_name(smallest_size(src, load_rows, col)),
                      base="a0", mask=load_mask, hand="T")  # fmt: skip
    return (
        load
        + f"""\
        BSTART.SFU {name}, {src.name}
        {datr}
        C.B.DIMI {vc}, ->LB0
        C.B.DIMI {vr}, ->LB1
        C.B.DIMI {col}, ->LB2
        {regs}B.IOT T#1, mask={mask}, last, ->U<{size_name(smallest_size(out, vr, col))}>
        BSTOP
        """
    )


@examples(150)
@given(data=st.data())
def test_fused_quantize_bundles_equal_the_generic_runner(data: st.DataObject) -> None:
    quant = data.draw(st.booleans())
    dst = data.draw(st.sampled_from([DataType.S8, DataType.U8]))
    vr, vc = data.draw(st.integers(1, 6)), data.draw(st.integers(1, 40))
    mask = data.draw(st.sampled_from(MASKS))
    load_mask = data.draw(st.sampled_from([mask, mask, "1111", "1000"]))
    lo, hi = (-128, 127) if dst == DataType.S8 else (0, 255)
    same = data.draw(st.booleans())  # every PE the same scalars (a kernel's usual case)
    n = 1 if same else 4
    # legal scalars (positive finite multipliers of any binade, bits above the low 32 set
    # sometimes), and in a quarter of the cases one illegal multiplier or zero point
    legal = st.sampled_from(MULTIPLIERS[:7]) | st.integers(1, 0x7F7FFFFF)
    mults = data.draw(st.lists(legal, min_size=n, max_size=n)) * (4 // n)
    zps = data.draw(st.lists(st.integers(lo, hi), min_size=n, max_size=n)) * (4 // n)
    bad = data.draw(st.sampled_from([None, None, None, "mult", "zp"]))
    pe = data.draw(st.integers(0, 3))
    if bad == "mult":
        mults[pe] = data.draw(st.sampled_from(MULTIPLIERS[7:]) | st.integers(0, 2**64 - 1))
    elif bad == "zp":
        zps[pe] = data.draw(st.sampled_from([lo - 1, hi + 1, 2**63, -(2**63)]))
    src = DataType.FP32 if quant else dst
    col = p2(max(vc, 32 // (info(src).bits // 8), 8))
    regs = {"a0": [pe * 4096 for pe in range(4)],
            "s0": [col * info(src).bits // 8] * 4,
            "a1": mults,
            "a2": [z & (2**64 - 1) for z in zps]}  # fmt: skip
    gm = special_gm(data.draw(st.binary(min_size=512, max_size=512)), GM)
    text = _program(quant, dst, vr, vc, data.draw(st.integers(0, 7)), data.draw(st.booleans()),
                    data.draw(st.sampled_from([True, True, True, False])), load_mask, mask,
                    data.draw(st.sampled_from([False, False, False, True])))  # fmt: skip
    config = {"gm_size": GM, "depth": 4, "pes": data.draw(st.sampled_from([4, 4, 4, 2]))}
    assert warm_outcome(text, regs, gm, False, **config) == warm_outcome(
        text, regs, gm, True, **config
    )


def test_the_common_case_takes_the_fused_form(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    published = count_fused(monkeypatch, elementwise)  # (the fused form's pushes)
    program = prog(_program(True, DataType.S8, 4, 16, 1, True, True, "1111", "1111", False))
    for _ in range(2):  # the first run prepares the plans
        m = Machine(MachineConfig(gm_size=GM))
        published.clear()
        _common_case(m, program)
    assert published == ["S8"]
    x = np.arange(64, dtype=np.float64).reshape(4, 16)
    want = np.clip(np.rint(x * 0.5 + 3), -128, 127).astype(np.int8)  # (RNE, Sat)
    assert np.array_equal(m.tile("U#1").values[0], want)


def _common_case(m: Machine, program: object) -> None:
    m.set_gpr("s0", 64)
    m.set_gpr("a1", 0x3F000000)  # 0.5
    m.set_gpr("a2", 3)
    m.load_gm(0, np.arange(4096, dtype=np.float32))
    m.run(program)  # type: ignore[arg-type]
