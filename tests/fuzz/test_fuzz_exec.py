"""Fuzz target: executor programs.

Programs are drawn three ways: bundle-shaped blocks built from random commands of every
kind (a random BSTART, header commands with any field values -- reserved ones and ones
that have no encoding at all included -- and a terminator), scalar blocks, and text
mutations of valid programs. They run block by block on small machines of random shape
whose queues already hold tiles of random DataTypes. The only exceptions allowed out of
``Machine.run`` are ptoc machine faults, and a faulting block leaves the machine exactly
as it was (snapshot equality).
"""

from __future__ import annotations

import contextlib
import random

import numpy as np
import pytest
from backend.strategies import commands, scalar_starts, scalars, tile_starts
from hypothesis import given
from hypothesis import strategies as st
from runtime.test_robustness import SEEDS, _swap_operands, tiny

from ptoc.backend.asm import parse
from ptoc.backend.errors import AsmError
from ptoc.backend.isa import DataType, info
from ptoc.backend.program import Program, Stop
from ptoc.runtime import Machine, MachineConfig, MachineFault, StepBoundExceeded

from .budget import fuzz

#: a warning printed from library internals is a defect too
pytestmark = pytest.mark.filterwarnings("error")

configs = st.builds(
    MachineConfig,
    hands=st.integers(1, 4),
    depth=st.integers(1, 4),
    capacity=st.sampled_from([0, 512, 4096, 16384]),
    pes=st.integers(1, 4),
    gm_size=st.just(1 << 16),
    max_steps=st.just(1000),  # a random block may branch to itself
)
_TILE_TYPES = [DataType.FP32, DataType.FP16, DataType.S32, DataType.U8, DataType.BF16]


def machine(config: MachineConfig, seed: int) -> Machine:
    """A machine with GPRs pointing into GM, GM filled, and a few tiles queued."""
    rnd = random.Random(seed)
    m = Machine(config)
    for pe in range(config.pes):
        m.set_gpr("a0", 0x100 * pe, pe=pe)
        m.set_gpr("a1", rnd.choice([0, 8, 16, 32]), pe=pe)
        m.set_gpr("a2", rnd.choice([0, 4, 8]), pe=pe)
        m.set_gpr("a4", pe, pe=pe)
    m.load_gm(0, bytes(rnd.randrange(256) for _ in range(4096)))
    for _ in range(rnd.randint(0, 4)):
        dt = rnd.choice(_TILE_TYPES)
        hand = rnd.choice("TUMN"[: config.hands])
        values = np.random.default_rng(rnd.randrange(1 << 30)).integers(0, 5, (4, 8))
        every = (0b1111 << (4 - config.pes)) & 0b1111  # PE0..PEn-1
        with contextlib.suppress(MachineFault):  # no capacity for it on this machine
            m.push_tile(hand, values.astype(info(dt).carrier), dt, mask=every)
    return m


def run_blockwise(m: Machine, program: Program) -> str:
    for blk in program.blocks():
        cmds = tuple(c for c in (blk.start, *blk.commands, blk.stop) if c is not None)
        before = m.snapshot()
        try:
            m.run(Program(cmds))
        except StepBoundExceeded as f:
            # a block that branches to itself: the bound stops the run between two of
            # its runs, after the earlier ones committed (no single block faulted)
            assert "max_steps" in str(f)
            return type(f).__name__
        except MachineFault as f:
            after = m.snapshot()
            assert after == before, f"{type(f).__name__} changed the machine: " + ", ".join(
                after.differences(before)
            )
            text = str(f)
            assert text.startswith("Fault_") and "\n" not in text, text
            return type(f).__name__
    return "ok"


@st.composite
def bundle_programs(draw: st.DrawFn) -> Program:
    out = []
    for _ in range(draw(st.integers(1, 3))):
        if draw(st.integers(0, 4)) == 0:
            out.append(draw(scalar_starts))
            out.extend(draw(st.lists(scalars(), max_size=3)))
        else:
            out.append(draw(tile_starts()))
            out.extend(draw(st.lists(commands, max_size=6)))
        if draw(st.integers(0, 5)):
            out.append(Stop(draw(st.booleans())))
    return Program(tuple(out))


@st.composite
def mutated_seeds(draw: st.DrawFn) -> str:
    rnd = random.Random(draw(st.integers(0, 2**32 - 1)))
    lines = draw(st.sampled_from(SEEDS)).strip().split("\n")
    for _ in range(draw(st.integers(1, 3))):
        i = rnd.randrange(len(lines))
        kind = draw(st.sampled_from(["drop", "dup", "swap", "operands", "number", "type"]))
        if kind == "drop" and len(lines) > 1:
            del lines[i]
        elif kind == "dup":
            lines.insert(i, lines[i])
        elif kind == "swap":
            j = rnd.randrange(len(lines))
            lines[i], lines[j] = lines[j], lines[i]
        elif kind == "operands":
            lines[i] = _swap_operands(lines[i], rnd)
        elif kind == "number":
            lines[i] = lines[i].replace(
                str(rnd.choice([0, 1, 2, 4, 8])), str(rnd.choice([0, 3, 7, 65, 1 << 16])), 1
            )
        else:
            lines[i] = lines[i].replace(
                rnd.choice(["S32", "FP32"]), rnd.choice([d.name for d in DataType]), 1
            )
    return "\n".join(lines) + "\n"


@fuzz(80)
@given(bundle_programs(), configs, st.integers(0, 2**32 - 1))
def test_random_bundle_programs(program: Program, config: MachineConfig, seed: int) -> None:
    run_blockwise(machine(config, seed), program)


@fuzz(80)
@given(mutated_seeds(), configs, st.integers(0, 2**32 - 1))
def test_mutated_valid_programs(text: str, config: MachineConfig, seed: int) -> None:
    try:
        program = parse(text)
    except AsmError:
        return
    run_blockwise(machine(config, seed), program)


def test_the_seed_programs_reach_the_computation() -> None:
    """Guard: unmutated, the seeds run to completion (on the machine they were written
    for), so the mutations start from programs that reach every stage of the executor."""
    assert [run_blockwise(tiny(), parse(t)) for t in SEEDS] == ["ok"] * len(SEEDS)
