"""Bundles whose sources are constant tiles repeat their kept result (``runtime/memo.py``)
exactly as the generic path computes it: the same tiles, queues, status per PE, GPRs and
faults as a traced run, run after run on one program whose B.IOR words repeat or change
(raw words across the FP32 binades, NaN payloads, +-0, infinities, subnormals, invalid
encodings), every PE mask, queues filled past their depth, chains of constant tiles
(TCI, TSHLS, TADDS, TMAXS, TTRANS, TROWEXPAND, TEXPANDS, TMULS) and tiles computed from
a loaded one; and the kept results are used, dropped for other sources and for keys that
keep changing, and shared by runs on several threads."""

from __future__ import annotations

import sys
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ptoc.backend.isa import DataType
from ptoc.runtime import Machine, MachineConfig, MachineFault
from ptoc.runtime import memo as memo_module
from ptoc.runtime.bundle import build_plan
from ptoc.runtime.machine import compiled

from ._progs import size_name, smallest_size
from .util import MASKS, prog

GM = 1 << 12
U32, FP32 = DataType.U32, DataType.FP32
FP32_WORDS = [0, 0x80000000, 0x3F800000, 0x7F7FFFFF, 0xFF7FFFFF, 0x7F800000, 0xFF800000,
              0x7FC00001, 0x7F800001, 0x00000001, 0x00800000, 0x4B000000, 1 << 63]  # fmt: skip
INT_WORDS = [0, 1, 3, 31, 32, 0xFFFFFFFF, 1 << 40]
OF, NX = 4, 16  # (the status bits)


def _t(dt: DataType, rows: int, col: int) -> str:
    return f"T<{size_name(smallest_size(dt, rows, col))}>"


def _bundle(head: str, dims: tuple[int, ...], body: str) -> str:
    lbs = "".join(f"C.B.DIMI {d}, ->LB{i}\n" for i, d in enumerate(dims))
    return f"BSTART.{head}\n{lbs}{body}BSTOP\n"


@st.composite
def kernels(draw: st.DrawFn) -> str:
    m = draw(st.sampled_from(MASKS))
    text = ""
    if draw(st.booleans()):  # an index chain: TCI, integer steps, TTRANS, TROWEXPAND
        n = draw(st.sampled_from([8, 16, 32]))
        ior = draw(st.sampled_from(["", "B.IOR a1, zero\n"]))
        text += _bundle("SFU TCI, U32", (n,), f"{ior}B.IOT mask={m}, last, ->{_t(U32, 1, n)}\n")
        for _ in range(draw(st.integers(0, 3))):
            op, reg = draw(st.sampled_from([("TSHLS", "a2"), ("TADDS", "a3"), ("TMAXS", "a3")]))
            step = f"B.IOR {reg}\nB.IOT T#1, mask={m}, last, ->{_t(U32, 1, n)}\n"
            text += _bundle(f"VEC {op}, U32", (n,), step)
        if draw(st.booleans()):
            text += _bundle("SFU TTRANS, U32", (1, n, 8),
                            f"B.IOT T#1, mask={m}, last, ->{_t(U32, n, 8)}\n")  # fmt: skip
            if draw(st.booleans()):
                text += _bundle("SFU TROWEXPAND, U32", (5, n, 8),
                                f"B.IOT T#1, mask={m}, last, ->{_t(U32, n, 8)}\n")  # fmt: skip
    if draw(st.booleans()) or not text:  # a float fill, steps with status, a loaded tile
        r = draw(st.integers(1, 2))
        ior = draw(st.sampled_from(["", "B.IOR a4\n"]))
        out = f"mask={m}, last, ->{_t(FP32, r, 8)}\n"
        text += _bundle("VEC TEXPANDS, FP32", (8, r), f"{ior}B.IOT {out}")
        for _ in range(draw(st.integers(0, 2))):
            op = draw(st.sampled_from(["TADDS", "TMULS"]))
            text += _bundle(f"VEC {op}, FP32", (8, r), f"B.IOR a5\nB.IOT T#1, {out}")
        if draw(st.booleans()):
            text += _bundle("TLOAD FP32", (8, r), f"B.IOR a0, s0\nB.IOT {out}")
            text += _bundle("VEC TADD, FP32", (8, r), f"B.IOT T#1, T#2, {out}")
            text += _bundle("VEC TADDS, FP32", (8, r), f"B.IOR a5\nB.IOT T#1, {out}")
    return text


def _outcome(program, regs: dict[str, int], gm: bytes, depth: int, traced: bool) -> object:  # type: ignore[no-untyped-def]
    m = Machine(MachineConfig(gm_size=GM, depth=depth))
    m.load_gm(0, np.frombuffer(gm, np.uint8))
    for reg, value in regs.items():
        m.set_gpr(reg, value)
    try:
        m.run(program, trace=traced)
        out: tuple[object, ...] = ("ran",)
    except MachineFault as f:
        out = ("fault", type(f).__name__, str(f))
    return (*out, m.snapshot())


@given(data=st.data())
def test_kept_constant_results_equal_the_generic_path(data: st.DataObject) -> None:
    program = prog(data.draw(kernels()))
    depth = data.draw(st.sampled_from([2, 4, 8]))
    raw = data.draw(st.binary(min_size=64, max_size=64))
    gm = raw * (GM // 64)
    fp, ints = st.sampled_from(FP32_WORDS), st.sampled_from(INT_WORDS)
    pool = [
        {"a0": 0, "s0": 32, "a1": data.draw(ints), "a2": data.draw(ints),
         "a3": data.draw(ints), "a4": data.draw(fp), "a5": data.draw(fp)}
        for _ in range(2)
    ]  # fmt: skip
    # runs whose words repeat (the kept result is repeated) and change (it is not)
    for k in data.draw(st.lists(st.sampled_from([0, 0, 1]), min_size=2, max_size=6)):
        regs = pool[k]
        assert _outcome(program, regs, gm, depth, False) == _outcome(
            program, regs, gm, depth, True
        )


def _index_chain() -> str:
    t, column = _t(U32, 1, 16), _t(U32, 16, 8)
    return (
        _bundle("SFU TCI, U32", (16,), f"B.IOR a1, zero\nB.IOT mask=1111, last, ->{t}\n")
        + _bundle("VEC TSHLS, U32", (16,), f"B.IOR a2\nB.IOT T#1, mask=1111, last, ->{t}\n")
        + _bundle("SFU TTRANS, U32", (1, 16, 8), f"B.IOT T#1, mask=1111, last, ->{column}\n")
    )


def test_a_constant_chain_runs_once(monkeypatch: pytest.MonkeyPatch) -> None:
    build_plan.cache_clear()  # (equal bundles share one plan: start from none)
    program = prog(_index_chain())
    generic = []
    real = memo_module.execute

    def counting(state, plan):  # type: ignore[no-untyped-def]
        generic.append(plan.name)
        return real(state, plan)

    monkeypatch.setattr(memo_module, "execute", counting)
    runs = []
    for _ in range(3):
        m = Machine(MachineConfig(gm_size=GM))
        m.set_gpr("a1", 5)
        m.set_gpr("a2", 1)
        m.run(program)
        runs.append(m)
    # the first run prepares the plans, the second keeps their results, the third repeats
    assert generic == ["TCI", "TSHLS", "TTRANS"]
    want = ((5 + np.arange(16, dtype=np.uint32)) * 2).reshape(16, 1)
    last = runs[-1].tile("T#1")
    assert np.array_equal(last.values[0], want)
    kept, repeated = runs[1].state.queues[0][0], runs[2].state.queues[0][0]
    assert repeated is not kept and repeated.payload is kept.payload  # two tiles, one payload


def test_other_sources_and_changing_words_drop_the_memo() -> None:
    t = _t(FP32, 1, 8)
    load = _bundle("TLOAD FP32", (8, 1), f"B.IOR a0, s0\nB.IOT mask=1000, last, ->{t}\n")
    step = _bundle("VEC TADDS, FP32", (8, 1), f"B.IOR a5\nB.IOT T#1, mask=1000, last, ->{t}\n")
    fill = _bundle("VEC TEXPANDS, FP32", (8, 1), f"B.IOR a4\nB.IOT mask=1000, last, ->{t}\n")
    program = prog(load + step + fill)
    for k in range(2 + memo_module.MAX_MISSES):
        m = Machine(MachineConfig(gm_size=GM))
        m.set_gpr("s0", 32)
        m.set_gpr("a4", 0x3F800000 + k)  # another fill every run
        m.run(program)
    _, steps = compiled(program)
    plans = {p.name: p for kind, _, p in steps if kind == "tile"}
    assert plans["TADDS"].memo is None  # its source was loaded
    assert plans["TEXPANDS"].memo is None  # its word changed every run
    assert plans["TLOAD"].memo is None  # GM: never kept


def test_a_repeated_result_ors_its_status_in() -> None:
    t = _t(FP32, 1, 8)
    program = prog(
        _bundle("VEC TEXPANDS, FP32", (8, 1), f"B.IOR a4\nB.IOT mask=1100, last, ->{t}\n")
        + _bundle("VEC TADDS, FP32", (8, 1), f"B.IOR a4\nB.IOT T#1, mask=1100, last, ->{t}\n")
    )
    for _ in range(3):  # prepared, kept, repeated
        m = Machine(MachineConfig(gm_size=GM))
        m.set_gpr("a4", 0x7F7FFFFF)  # the largest finite FP32, twice: overflow
        m.run(program)
        assert m.status.tolist() == [OF | NX, OF | NX, 0, 0]


def test_runs_on_threads_share_the_kept_results() -> None:
    program = prog(_index_chain())
    want = {}
    for words in ((5, 1), (7, 2)):
        m = Machine(MachineConfig(gm_size=GM))
        m.set_gpr("a1", words[0])
        m.set_gpr("a2", words[1])
        m.run(program, trace=True)
        want[words] = m.snapshot()

    def runs(k: int) -> bool:
        ok = True
        for i in range(30):  # the record is replaced while other threads read it
            words = (5, 1) if (i + k) % 3 else (7, 2)
            m = Machine(MachineConfig(gm_size=GM))
            m.set_gpr("a1", words[0])
            m.set_gpr("a2", words[1])
            m.run(program)
            ok = ok and m.snapshot() == want[words]
        return ok

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as the interpreter can
    try:
        with ThreadPoolExecutor(4) as pool:
            assert all(pool.map(runs, range(4)))
    finally:
        sys.setswitchinterval(interval)
