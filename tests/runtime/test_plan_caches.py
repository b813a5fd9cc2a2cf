"""What a bundle plan keeps between executions never changes what the bundle does.

A TLOAD/TSTORE plan keeps its probed footprints by base and stride registers: the same
plan with other registers addresses other memory, new GM contents are read again, and
a footprint that faults faults every time (only successful probes are kept).
"""

from __future__ import annotations

import numpy as np
import pytest

from ptoc.backend.isa import DataType
from ptoc.runtime.faults import DataPageFault

from .util import machine, prog, tload, tstore

F32 = DataType.FP32


def test_a_load_plan_follows_its_registers_and_the_memory() -> None:
    m = machine(gm_size=1 << 16)
    a = np.arange(32, dtype=np.float32).reshape(4, 8)
    m.load_gm(0x100, a)
    m.load_gm(0x800, a + 100)
    m.set_gpr("a1", 32)
    program = prog(tload(F32, 1, 8))
    got = []
    for base in (0x100, 0x800, 0x100):
        for pe in range(4):
            m.set_gpr("a0", base + 32 * pe, pe=pe)
        m.run(program)
        got.append(m.tile("T#1").values[:, 0].copy())
    m.load_gm(0x100, a * 2)  # the same registers read the new contents
    m.run(program)
    got.append(m.tile("T#1").values[:, 0].copy())
    assert np.array_equal(got[0], a) and np.array_equal(got[2], a)
    assert np.array_equal(got[1], a + 100) and np.array_equal(got[3], a * 2)
    m.set_gpr("a0", (1 << 16) - 16)  # every PE now reads past the end
    for _ in range(2):
        with pytest.raises(DataPageFault):
            m.run(program)


def test_a_store_plan_follows_its_registers() -> None:
    m = machine(gm_size=1 << 16)
    a = np.arange(32, dtype=np.float32).reshape(4, 8)
    m.load_gm(0x100, a)
    m.set_gpr("a1", 32)
    for pe in range(4):
        m.set_gpr("a0", 0x100 + 32 * pe, pe=pe)
    m.run(prog(tload(F32, 1, 8)))
    program = prog(tstore(F32, base="a2", stride="a1"))
    for base in (0x1000, 0x2000):
        for pe in range(4):
            m.set_gpr("a2", base + 32 * pe, pe=pe)
        m.run(program)
    for base in (0x1000, 0x2000):
        assert np.array_equal(m.read_gm(base, np.float32, (4, 8)), a)
