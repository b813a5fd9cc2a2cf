"""The fused CUBE runners (``runtime/ops/cube_fused.py``) against the generic path.

A warm program runs its CUBE transport loads and stores and its plain matrix bundles
through their fused forms (``engine.execute_untraced``); a traced run takes the generic
runner and ``engine.commit`` for every bundle. Both must leave the same machine --
every payload bit (NaN payloads included), definedness, padding, per-PE status, GM
and the tiles' serials -- and raise the same fault with nothing changed. Operands span
every binade, subnormals, NaN payloads, signed zeros and infinities, so the compiled
FP16/BF16 fold declines on some PEs and the numpy path settles them inside the fused
form.
"""

from __future__ import annotations

import contextlib
from typing import Any

import numpy as np
import pytest
from conftest import examples
from hypothesis import given
from hypothesis import strategies as st

from ptoc.backend.asm import parse
from ptoc.backend.isa import DataType, info
from ptoc.backend.isa.cube import CubeLayout
from ptoc.backend.isa.semantics import compiled
from ptoc.backend.isa.semantics import matmul as sm
from ptoc.runtime import MachineFault

from ._progs import Rig
from .cube_rig import cube_load, cube_size, cube_store, matrix
from .util import count_generic

D = DataType
M16, M32, N8 = CubeLayout.M16, CubeLayout.M32, CubeLayout.N8
#: where D is stored, per PE (beyond the rig's operand windows)
STORE_AT, STORE_SPAN = 0xC0000, 0x4000

#: raw specials per type: +-0 (with the sign bit below), +Inf, quiet and signalling NaN
#: payloads, the largest finite value, the smallest subnormal and normal, a subnormal
SPECIALS = {
    D.FP16: [0x0000, 0x7C00, 0x7E01, 0x7C01, 0x7BFF, 0x0001, 0x0400, 0x03FF],
    D.BF16: [0x0000, 0x7F80, 0x7FC1, 0x7F81, 0x7F7F, 0x0001, 0x0080, 0x007F],
    D.FP32: [0, 0x7F800000, 0x7FC00001, 0x7F800001, 0x7F7FFFFF, 1, 0x00800000, 0x7FFFFF],
}


def raw_values(rng: np.random.Generator, dt: DataType, shape: tuple[int, ...], style: str):  # type: ignore[no-untyped-def]
    """Raw bits of ``dt``: every encoding ("raw": all binades, NaN payloads, subnormals),
    moderate values ("normal": the compiled fold's route) or normal values mixed with
    the type's specials of either sign ("special")."""
    bits = info(dt).bits
    if style == "raw" or not info(dt).is_float:
        return rng.integers(0, 1 << bits, shape, dtype=np.uint64)
    v = rng.uniform(-4, 4, shape)
    if dt == D.FP16:
        raw = v.astype(np.float16).view(np.uint16).astype(np.uint64)
    else:
        raw = v.astype(np.float32).view(np.uint32).astype(np.uint64)
        if dt == D.BF16:
            raw >>= np.uint64(16)
    if style == "special":
        sign = np.uint64(1 << (bits - 1))
        pool = np.array(SPECIALS[dt], np.uint64)
        pool = np.concatenate([pool, pool | sign])
        raw = np.where(rng.random(shape) < 0.25, rng.choice(pool, shape), raw)
    return raw


@st.composite
def cases(draw):  # type: ignore[no-untyped-def]
    dt = draw(st.sampled_from([D.FP16, D.BF16, D.FP32, D.S8]))
    m = draw(st.sampled_from([1, 5, 16, 32]))
    layout = M16 if m <= 16 and draw(st.booleans()) else M32
    n = draw(st.sampled_from([1, 8, 13, 64]))
    k = draw(st.sampled_from([1, 16, 33, 64]))
    acc = draw(st.booleans())
    mask = draw(st.sampled_from(["1111", "1100", "0100", "1110", "0001"]))
    style = draw(st.sampled_from(["raw", "normal", "special"]))
    pad = draw(st.sampled_from(["", "Null", "Max"]))
    seed = draw(st.integers(0, 2**32 - 1))
    return dt, m, layout, n, k, acc, mask, style, pad, seed


def _program(rigs: list[Rig], case: Any) -> str:
    """The kernel of ``case`` -- load A (and C), load B, TMATMUL[_ACC], store D -- with
    the same operands placed in every rig's GM; returns its text."""
    dt, m, layout, n, k, acc, mask, style, pad, seed = case
    texts = []
    for rig in rigs:
        rng = np.random.default_rng(seed)  # the same values in every rig
        P = rig.pes
        acc_t = sm.accumulator_type(dt, dt)
        d_size = cube_size(acc_t, layout, m, n)
        pad_field = f"PadValue={pad}" if pad else ""
        text = cube_load(rig, raw_values(rng, dt, (P, m, k), style), dt, layout, mask=mask,
                         pad=pad_field)  # fmt: skip
        text += cube_load(rig, raw_values(rng, dt, (P, k, n), style), dt, N8, hand="N",
                          mask=mask, pad=pad_field)  # fmt: skip
        srcs = ["T#1", "N#1"]
        if acc:
            c = raw_values(rng, acc_t, (P, m, n), style)
            text += cube_load(rig, c, acc_t, layout, hand="U", size=d_size, mask=mask)
            srcs = ["U#1", *srcs]
        text += matrix("TMATMUL_ACC" if acc else "TMATMUL", dt, (m, n, k), srcs,
                       [("U", d_size)], mask=mask)  # fmt: skip
        text += cube_store(acc_t, layout, "U#1", m, n, mask=mask)
        for pe in range(P):
            rig.m.set_gpr("a0", STORE_AT + pe * STORE_SPAN, pe=pe)
            rig.m.set_gpr("a1", n * info(acc_t).carrier.itemsize, pe=pe)
        texts.append(text)
    assert len(set(texts)) == 1
    return texts[0]


def _outcome(rig: Rig, prog: Any, trace: bool) -> tuple[Any, ...]:
    """Run ``prog``: the fault (type and rule) or None, the machine, the tiles' serials."""
    fault = None
    try:
        rig.m.run(prog, trace=trace)
    except MachineFault as f:
        fault = (type(f), f.rule)
    serials = [t.serial for q in rig.m.state.queues for t in q]
    return fault, rig.m.snapshot(), serials


@examples(25)
@given(case=cases(), kernels=st.booleans())
def test_fused_cube_bundles_equal_the_generic_path(case: Any, kernels: bool) -> None:
    """Warm (fused) and traced (generic) runs of one program leave identical machines,
    with the compiled kernels or without; the warm run executes every CUBE bundle in
    its fused form."""
    warm_up, cold, warm = Rig(), Rig(), Rig()
    text = _program([warm_up, cold, warm], case)
    prog = parse(text)  # a program of its own: its plans start cold
    warm_up.m.run(prog)  # plans ready; the matrix bundle accepts its sources
    with contextlib.ExitStack() as stack:
        if not kernels:
            stack.enter_context(compiled.suspended())
        want = _outcome(cold, prog, trace=True)
        mp = stack.enter_context(pytest.MonkeyPatch.context())
        generic = count_generic(mp)
        got = _outcome(warm, prog, trace=False)
    assert want[0] is None and got[0] is None
    assert got[1] == want[1], got[1].differences(want[1])
    assert got[2] == want[2]
    assert generic == []  # every bundle took its fused form


@examples(15)
@given(case=cases(), which=st.sampled_from(["capacity", "pes"]))
def test_fused_cube_bundles_fault_as_the_generic_path(case: Any, which: str) -> None:
    """On a machine where a bundle faults -- one byte too little capacity for D (the
    matrix bundle computes, then cannot publish), fewer PEs than the mask names -- the
    fused forms decline and the generic path raises the same fault, leaving the same
    machine."""
    dt, m, layout, n, k, acc = case[:6]
    acc_t = sm.accumulator_type(dt, dt)
    sizes = [cube_size(dt, layout, m, k), cube_size(dt, N8, k, n)]
    sizes += [cube_size(acc_t, layout, m, n)] * (2 if acc else 1)
    cfg = (
        {"capacity": sum(1 << (s + 6) for s in sizes) - 1}
        if which == "capacity"
        else {"pes": 1}
    )
    warm_up, cold, warm = Rig(), Rig(**cfg), Rig(**cfg)
    text = _program([warm_up], case)
    assert _program([cold, warm], case) == text
    prog = parse(text)
    warm_up.m.run(prog)
    want = _outcome(cold, prog, trace=True)
    got = _outcome(warm, prog, trace=False)
    assert want[0] is not None
    assert got[0] == want[0]
    assert got[1] == want[1], got[1].differences(want[1])
    assert got[2] == want[2]


def test_strided_operand_copies_outlive_the_kernel_call(monkeypatch: Any) -> None:
    """The compiled fold reads a strided operand through the address of a contiguous
    copy, which must still be alive when the kernel runs: a freed copy's first bytes
    are the allocator's (a wrong product that depends on what ran before)."""
    import weakref

    from ptoc.runtime.ops import cube_fused

    kernel = cube_fused.kernels.compiled_half()
    if kernel is None:
        pytest.skip("no C compiler: the numpy route passes no addresses")
    passed: list[weakref.ref] = []  # type: ignore[type-arg]
    real_address = cube_fused.address

    def recorded(a):  # type: ignore[no-untyped-def]
        passed.append(weakref.ref(a))  # an array whose memory the kernel will read
        return real_address(a)

    alive: list[bool] = []

    def checking(*args):  # type: ignore[no-untyped-def]
        if passed:  # (a call on strided operands: their copies are alive)
            alive.append(all(r() is not None for r in passed))
            passed.clear()
        return kernel(*args)

    monkeypatch.setattr(cube_fused, "address", recorded)
    monkeypatch.setattr(cube_fused.kernels, "compiled_half", lambda: checking)
    # A 32 x 33 of Col 34 and B 33 x 1 of Col 8: both strided, on every PE
    case = (D.FP16, 32, M32, 1, 33, False, "1111", "normal", "", 0)
    warm_up, cold, warm = Rig(), Rig(), Rig()
    prog = parse(_program([warm_up, cold, warm], case))
    warm_up.m.run(prog)
    want = _outcome(cold, prog, trace=True)
    got = _outcome(warm, prog, trace=False)
    assert alive and all(alive)
    assert got[1] == want[1]
