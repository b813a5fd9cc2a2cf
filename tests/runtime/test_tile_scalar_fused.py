"""The fused tile-scalar bundles (TADDS .. TMINS, ``elementwise.fused_runner`` with its
B.IOR scalar) against the generic runner: the same tiles, queues, status per PE and
faults, for every operation at its DataTypes, sources of raw bits (every binade, NaN
payloads, +-0, infinities, subnormals), scalars of raw 64-bit words (invalid encodings,
high bits set, the omitted B.IOR), every PE mask, sources allocated on fewer PEs than
the bundle, and a source of another descriptor; and the common case is fused."""

from __future__ import annotations

import numpy as np
from conftest import examples
from hypothesis import given
from hypothesis import strategies as st

from ptoc.backend.isa import DataType, Executor, info, op, rows
from ptoc.runtime import Machine, MachineConfig
from ptoc.runtime.ops import elementwise

from ._progs import p2, sfu_or_vec, size_name, smallest_size
from .util import SPECIAL_WORDS, count_fused, pe_scalars, prog, warm_outcome

GM = 1 << 16
MASKS = ["1000", "0100", "0010", "0001", "1100", "1110", "1111"]
#: (mnemonic, DataType) of every tile-scalar operation (4-bit and 6-bit types aside:
#: their GM transfer is not whole bytes)
CASES = [
    (r.mnemonic, dt)
    for r in rows(executor=Executor.TILE_SCALAR)
    for dt in sorted(op(r.mnemonic).dtypes, key=lambda d: d.name)
    if info(dt).bits in (8, 16, 32, 64)
]


def _program(name: str, dt: DataType, vr: int, vc: int, load_mask: str, mask: str,
             scalar: bool, other: bool) -> str:  # fmt: skip
    eb = info(dt).bits // 8
    col = p2(max(vc, 32 // eb))
    size = size_name(smallest_size(dt, vr, col))
    ior = "B.IOR a1\n" if scalar else ""
    load_rows = vr + 1 if other else vr  # another ValidRow: another descriptor
    return f"""\
        BSTART.TLOAD {dt.name}
        C.B.DIMI {vc}, ->LB0
        C.B.DIMI {load_rows}, ->LB1
        C.B.DIMI {col}, ->LB2
        B.IOR a0, s0
        B.IOT mask={load_mask}, last, ->T<{size_name(smallest_size(dt, load_rows, col))}>
        BSTOP
        {sfu_or_vec(name)} {name}, {dt.name}
        C.B.DIMI {vc}, ->LB0
        C.B.DIMI {vr}, ->LB1
        C.B.DIMI {col}, ->LB2
        {ior}B.IOT T#1, mask={mask}, last, ->U<{size}>
        BSTOP
        """


@given(data=st.data())
def test_fused_tile_scalar_bundles_equal_the_generic_runner(data: st.DataObject) -> None:
    _fused_equals_generic(data, CASES)


#: the cases the compiled kernel runs (``native.compiled_runner`` with a scalar operand)
COMPILED = [(n, dt) for n, dt in CASES if dt in (DataType.FP32, DataType.FP64)
            and n in ("TADDS", "TSUBS", "TMULS", "TDIVS", "TMAXS", "TMINS")]  # fmt: skip


@examples(100)
@given(data=st.data())
def test_compiled_tile_scalar_bundles_equal_the_generic_runner(data: st.DataObject) -> None:
    """The FP32/FP64 cases, which the compiled kernel runs with each PE's scalar as a
    zero-stride operand, more often."""
    _fused_equals_generic(data, COMPILED)


def _fused_equals_generic(data: st.DataObject, cases: list[tuple[str, DataType]]) -> None:
    name, dt = data.draw(st.sampled_from(cases))
    vr, vc = data.draw(st.integers(1, 4)), data.draw(st.integers(1, 24))
    mask = data.draw(st.sampled_from(MASKS))
    load_mask = data.draw(st.sampled_from([mask, mask, "1111", "1000"]))
    scalars = pe_scalars(data)
    row = p2(max(vc, 32 // (info(dt).bits // 8))) * info(dt).bits // 8
    regs = {"a0": [pe * 4096 for pe in range(4)], "s0": [row] * 4, "a1": scalars}
    raw = data.draw(st.binary(min_size=512, max_size=512))
    specials = b"".join(w.to_bytes(8, "little") for w in SPECIAL_WORDS)
    gm = (raw + specials) * (GM // (512 + len(specials))) + b"\0" * (GM % (512 + len(specials)))
    text = _program(name, dt, vr, vc, load_mask, mask, data.draw(st.booleans()),
                    data.draw(st.sampled_from([False, False, False, True])))  # fmt: skip
    assert warm_outcome(text, regs, gm, False, gm_size=GM) == warm_outcome(
        text, regs, gm, True, gm_size=GM
    )


def test_the_common_case_takes_the_fused_form(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """(FP16: FP32 and FP64 take the compiled kernel, ``test_compiled_arith_runner``.)"""
    published = count_fused(monkeypatch, elementwise)  # (the fused form's pushes)
    text = _program("TMULS", DataType.FP16, 4, 16, "1111", "1111", True, False)
    program = prog(text)
    m = Machine(MachineConfig(gm_size=GM))
    m.run(program)  # prepares the plans
    m = Machine(MachineConfig(gm_size=GM))
    m.set_gpr("s0", 32)
    m.set_gpr("a1", 0x4000)  # 2.0
    m.load_gm(0, np.arange(4096, dtype=np.float16))
    m.run(program)
    assert published == ["FP16"]
    want = np.arange(64, dtype=np.float16).reshape(4, 16) * 2
    assert np.array_equal(m.tile("U#1").values[0], want)
