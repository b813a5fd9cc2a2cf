"""The constant memo's key reads the B.IOR words from whichever form the GPRs have (the
array, or an integer scalar block's Python integers: one list for every PE or one per
PE): a result kept under one form is repeated under another exactly when the words are
equal, with the same tiles, queues, status per PE, GPRs and faults as a traced run."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from ptoc.runtime import Machine, MachineConfig, MachineFault
from ptoc.runtime import memo as memo_module
from ptoc.runtime.bundle import build_plan

from .test_constant_memo import FP32_WORDS, GM, INT_WORDS, _index_chain, kernels
from .util import prog

FORMS = ("array", "ints", "ints-per-pe")


def _machine(regs: dict[str, list[int]], gm: bytes, depth: int, form: str) -> Machine:
    m = Machine(MachineConfig(gm_size=GM, depth=depth))
    m.load_gm(0, np.frombuffer(gm, np.uint8))
    for reg, values in regs.items():
        for pe, v in enumerate(values):
            m.set_gpr(reg, v, pe=pe)
    if form != "array":  # what an integer scalar block publishes
        arr = m.state.gpr.copy()
        arr.flags.writeable = False
        rows = arr.tolist()
        one = form == "ints" and all(r == rows[0] for r in rows)
        m.state.publish_gprs(arr, [rows[0]] if one else rows)
    return m


def _outcome(program, regs, gm: bytes, depth: int, form: str, traced: bool) -> object:  # type: ignore[no-untyped-def]
    m = _machine(regs, gm, depth, form)
    try:
        m.run(program, trace=traced)
        out: tuple[object, ...] = ("ran",)
    except MachineFault as f:
        out = ("fault", type(f).__name__, str(f))
    return (*out, m.snapshot())


@given(data=st.data())
def test_kept_results_under_every_gpr_form(data: st.DataObject) -> None:
    program = prog(data.draw(kernels()))
    depth = data.draw(st.sampled_from([2, 4, 8]))
    gm = data.draw(st.binary(min_size=64, max_size=64)) * (GM // 64)
    fp, ints = st.sampled_from(FP32_WORDS), st.sampled_from(INT_WORDS)

    def per_pe(words: st.SearchStrategy[int]) -> list[int]:
        if data.draw(st.booleans()):  # every PE the same word
            return [data.draw(words)] * 4
        return [data.draw(words) for _ in range(4)]  # (PEs that differ)

    first = {"a0": [0] * 4, "s0": [32] * 4, "a1": per_pe(ints), "a2": per_pe(ints),
             "a3": per_pe(ints), "a4": per_pe(fp), "a5": per_pe(fp)}  # fmt: skip
    # the other words: the same but on one PE of one register (a key that must tell the
    # PEs apart), or drawn anew
    second = {reg: list(words) for reg, words in first.items()}
    if data.draw(st.booleans()):
        reg = data.draw(st.sampled_from(["a1", "a2", "a3", "a4", "a5"]))
        pe = data.draw(st.integers(1, 3))
        second[reg][pe] = data.draw(fp if reg in ("a4", "a5") else ints)
    else:
        second = {**second, **{r: per_pe(ints) for r in ("a1", "a2", "a3")}}
        second = {**second, **{r: per_pe(fp) for r in ("a4", "a5")}}
    pool = [first, second]
    runs = st.tuples(st.sampled_from([0, 0, 1]), st.sampled_from(FORMS))
    for k, form in data.draw(st.lists(runs, min_size=2, max_size=6)):
        regs = pool[k]
        assert _outcome(program, regs, gm, depth, form, False) == _outcome(
            program, regs, gm, depth, "array", True
        )


def test_a_result_kept_under_the_array_repeats_under_integers(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The same words in the other form find the kept result (no generic run)."""
    build_plan.cache_clear()  # (equal bundles share one plan: start from none)
    program = prog(_index_chain())
    generic = []
    real = memo_module.execute

    def counting(state, plan):  # type: ignore[no-untyped-def]
        generic.append(plan.name)
        return real(state, plan)

    monkeypatch.setattr(memo_module, "execute", counting)
    regs = {"a1": [5] * 4, "a2": [1] * 4}
    for form in ("array", "array", "ints", "ints-per-pe", "array"):
        m = _machine(regs, bytes(GM), 4, form)
        m.run(program)
        if form != "array":
            assert m.state.gpr_ints is not None  # (nothing made the array)
    # the first run prepares the plans, the second keeps their results, the rest repeat
    assert generic == ["TCI", "TSHLS", "TTRANS"]
