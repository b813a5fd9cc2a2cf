"""Carried tiles that do not fit the queues across a loop's back edge (D12): the largest
carried tiles live in the spill area, the body reloads them from their slot and the back
edge stores their new values there; the validator follows the slot around the loop."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import ptoc
import ptoc.lang as pt
from ptoc.loader import load_kernel
from ptoc.passes.validate import ValidationError, validate

from .test_loops import _wild

TINY = ptoc.MachineConfig(depth=4, capacity=16384)
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
F32 = ptoc.fp32
ROWS, COLS = 16, 64  # a 4 KiB FP32 block: three accumulators and two temporaries > 16 KiB


def _x(seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((128, COLS)).astype(np.float32)


def _accumulators(count: int) -> ptoc.Kernel:
    """``count`` accumulators carried through a loop over ``n`` rows of ``x``."""

    @ptoc.kernel
    def accumulate(
        x: ptoc.Tensor[F32, 128, COLS],
        out: ptoc.Tensor[F32, ROWS * count, COLS],
        n: ptoc.Scalar[ptoc.s32],
    ):
        accs = [pt.load(x, rows=(0, ROWS)) * float(k + 1) for k in range(count)]
        for i in pt.range(0, n, ROWS):
            t = pt.load(x, rows=(i, ROWS))
            accs = [acc + t * float(k + 2) for k, acc in enumerate(accs)]
        for k, acc in enumerate(accs):
            pt.store(out, acc, rows=(ROWS * k, ROWS))

    return accumulate


def _want(x: np.ndarray, count: int, n: int) -> np.ndarray:
    accs = [x[:ROWS] * np.float32(k + 1) for k in range(count)]
    for i in range(0, n, ROWS):
        t = x[i : i + ROWS]
        accs = [acc + t * np.float32(k + 2) for k, acc in enumerate(accs)]
    return np.concatenate(accs)


def _loop_spills(prog: ptoc.Program) -> int:
    """Spill bundles inside the program's loop bodies."""
    (lp,) = prog.loops
    return sum(
        1 for i, it in prog.intents.items() if lp.header <= i < lp.exit and it.kind == "spill"
    )


@pytest.mark.parametrize("n", [0, 16, 48, 128])
def test_accumulators_beyond_the_capacity_verify(n: int) -> None:
    k = _accumulators(3)
    prog = ptoc.compile(k, TINY)
    x = _x(n)
    got = ptoc.verify(prog, x=x, n=n)["out"]
    assert np.array_equal(got.view(np.uint32), _want(x, 3, n).view(np.uint32))
    assert _loop_spills(prog) > 0  # the back edge stores a carried tile's new value
    assert _loop_spills(ptoc.compile(k)) == 0  # the default machine keeps them resident


def test_an_initial_value_read_after_the_loop_keeps_its_own_slot() -> None:
    """The carried tile's slot is written by every iteration, so an initial value that is
    read again after the loop cannot share it."""

    @ptoc.kernel
    def k(
        x: ptoc.Tensor[F32, 128, COLS],
        out: ptoc.Tensor[F32, 3 * ROWS, COLS],
        first: ptoc.Tensor[F32, ROWS, COLS],
        n: ptoc.Scalar[ptoc.s32],
    ):
        a0 = pt.load(x, rows=(0, ROWS))
        accs = [a0, a0 * 2.0, a0 * 3.0]
        for i in pt.range(0, n, ROWS):
            t = pt.load(x, rows=(i, ROWS))
            accs = [pt.maximum(acc, t * float(j + 1)) for j, acc in enumerate(accs)]
        for j, acc in enumerate(accs):
            pt.store(out, acc, rows=(ROWS * j, ROWS))
        pt.store(first, a0 + a0)

    prog = ptoc.compile(k, TINY)
    for n in (0, 32, 128):
        x = _x(n + 1)
        res = ptoc.verify(prog, x=x, n=n)
        assert np.array_equal(res["first"], x[:ROWS] + x[:ROWS])


def test_a_spilled_carried_tile_in_a_nested_loop() -> None:
    @ptoc.kernel
    def k(x: ptoc.Tensor[F32, 128, COLS], out: ptoc.Tensor[F32, 6 * ROWS, COLS]):
        for b in pt.range(0, 2, 1):
            accs = [pt.load(x, rows=(0, ROWS)) * float(j + 1) for j in range(3)]
            for i in pt.range(0, 64, ROWS):
                t = pt.load(x, rows=(i + b * 64, ROWS))
                accs = [acc + t for acc in accs]
            for j, acc in enumerate(accs):
                pt.store(out, acc, rows=(b * 3 * ROWS + ROWS * j, ROWS))

    x = _x(7)
    got = ptoc.verify(ptoc.compile(k, TINY), x=x)["out"]
    for b in range(2):
        accs = [x[:ROWS] * np.float32(j + 1) for j in range(3)]
        for i in range(0, 64, ROWS):
            accs = [acc + x[b * 64 + i : b * 64 + i + ROWS] for acc in accs]
        want = np.concatenate(accs)
        assert np.array_equal(got[b * 3 * ROWS : (b + 1) * 3 * ROWS], want)


@given(
    count=st.integers(1, 4),
    n=st.integers(0, 8).map(lambda v: ROWS * v),
    tiny=st.booleans(),
    data=st.integers(0, 2**16),
)
def test_random_carried_sets_verify(count: int, n: int, tiny: bool, data: int) -> None:
    """Any number of accumulators on either machine, over data with NaN payloads, signed
    zeros, infinities and subnormals: bit-exact against the reference (validated paths)."""
    ptoc.verify(ptoc.compile(_accumulators(count), TINY if tiny else None),
                x=_wild(128, COLS, data), n=n)  # fmt: skip


def test_validator_rejects_a_back_edge_that_does_not_store_the_new_value() -> None:
    """With the back edge's store of a carried tile's new value taken for an ordinary
    store, the slot holds the finished iteration's argument at the header: the body's
    reload of it fails the replay."""
    from ptoc.passes.pipeline import Options, run_pipeline

    k = _accumulators(3)
    c = run_pipeline(k.trace().module.clone(), TINY, options=Options(validate=False))
    em = c.emitted
    assert em is not None and len(em.loops) == 1
    validate(em, TINY)  # as emitted: valid
    lp = em.loops[0]
    spill = max(i for i, it in em.intents.items() if it.kind == "spill" and i < lp.latch)
    intents = dict(em.intents)
    intents[spill] = dataclasses.replace(intents[spill], kind="op")
    with pytest.raises(ValidationError, match="reload of value"):
        validate(dataclasses.replace(em, intents=intents), TINY)


def test_compiles_are_deterministic() -> None:
    """The same kernel compiles to the same program every time (the allocation's choices
    never follow the iteration order of a set of values, which changes between runs)."""
    k = load_kernel(str(EXAMPLES / "attention.py") + "::attention_loop_d128")
    texts = {ptoc.compile(k, TINY).program.asm() for _ in range(3)}
    assert len(texts) == 1
