"""Runs of consecutive tile bundles: ``Machine.run`` executes them in one loop when it
records nothing per block. What the run does, where it stops and how a fault is named
must not depend on that: each case runs cold, with warm plans and traced (the per-block
path), and all three must agree."""

from __future__ import annotations

import numpy as np
import pytest

from ptoc.backend.isa import DataType
from ptoc.backend.program import Program
from ptoc.runtime import Machine, MachineConfig, MachineFault, TileLegalityFault
from ptoc.runtime.faults import StepBoundExceeded
from ptoc.runtime.machine import compiled, straight_runs

from .util import prog

ADD = (
    "BSTART.VEC TADD, FP32\nB.DIM zero, 8, ->LB0\n"
    "B.IOT {a}, {b}, mask=1111, last, ->U<128B>\nBSTOP\n"
)
SCALAR = "BSTART.STD FALL\naddi zero, 7, ->a3\nBSTOP\n"


def _machine(max_steps: int = 100) -> Machine:
    m = Machine(MachineConfig(gm_size=4096, depth=8, max_steps=max_steps))
    rng = np.random.default_rng(3)
    for _ in range(2):
        m.push_tile("T", rng.standard_normal((4, 1, 8)).astype(np.float32), DataType.FP32)
    return m


def _outcomes(program: Program, max_steps: int = 100) -> list[tuple[str, object, object]]:
    """(fault text or "", U-queue payloads, status) of a cold, a warm and a traced run."""
    out = []
    for trace in (False, False, True):
        m = _machine(max_steps)
        try:
            m.run(program, trace=trace)
            fault = ""
        except MachineFault as f:
            fault = str(f)
        payloads = [t.payload.tobytes() for t in m.state.queues[1]]
        out.append((fault, payloads, m.status.tolist()))
    return out


def test_straight_runs_end_at_every_block_that_is_no_tile_bundle() -> None:
    text = ADD.format(a="T#1", b="T#2") * 2 + SCALAR + ADD.format(a="T#1", b="T#2")
    program = prog(text)
    _, steps = compiled(program)
    assert straight_runs(program, steps) == (2, 2, 2, 4)


def test_a_run_of_bundles_stops_at_the_step_bound() -> None:
    """Five sums under max_steps=3: three commit, the fourth is named in the fault."""
    program = prog(ADD.format(a="U#1", b="T#1").replace("U#1", "T#2", 1) * 5)
    cold, warm, traced = _outcomes(program, max_steps=3)
    assert cold == warm == traced
    fault, payloads, _ = cold
    assert "max_steps=3" in fault and "bundle 3" in fault
    assert len(payloads) == 3
    with pytest.raises(StepBoundExceeded):
        _machine(3).run(program)


def test_a_fault_inside_a_run_names_its_bundle_and_line() -> None:
    """The fourth of six bundles reads an empty queue position: three results commit,
    the fault names bundle 3 (after a scalar block: tile bundles count alone) and its
    source line (its BSTART's), cold, warm and traced alike."""
    good = ADD.format(a="T#1", b="T#2")
    bad = ADD.format(a="T#1", b="M#1")
    text = SCALAR + good * 3 + bad + good * 2
    program = prog(text)
    cold, warm, traced = _outcomes(program)
    assert cold == warm == traced
    fault, payloads, _ = cold
    assert "bundle 3" in fault and "line 16" in fault
    assert len(payloads) == 3
    with pytest.raises(TileLegalityFault) as info:
        _machine().run(program)
    assert info.value.bundle is not None and info.value.bundle.index == 3
