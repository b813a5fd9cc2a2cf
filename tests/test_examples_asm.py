"""The assembly examples run on the machine model and compute what they say."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ptoc.backend.program import Program
from ptoc.runtime import Machine

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def test_vadd_example_adds_on_every_pe() -> None:
    m = Machine()
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 8, 64)).astype(np.float32)
    y = rng.standard_normal((4, 8, 64)).astype(np.float32)
    for pe in range(4):
        m.load_gm(0x10000 + pe * 0x1000, x[pe])
        m.load_gm(0x20000 + pe * 0x1000, y[pe])
        for reg, base in (("a0", 0x10000), ("a1", 0x20000), ("a2", 0x30000)):
            m.set_gpr(reg, base + pe * 0x1000, pe=pe)
    m.run(Program.parse((EXAMPLES / "vadd.s").read_text()))
    for pe in range(4):
        out = m.read_gm(0x30000 + pe * 0x1000, np.float32, (8, 64))
        np.testing.assert_array_equal(out.view(np.uint32), (x[pe] + y[pe]).view(np.uint32))


def test_seed_form_quant_example_saturates_to_s8() -> None:
    m = Machine()
    x = (np.random.default_rng(1).standard_normal((4, 32)) * 100).astype(np.float32)
    x[0, :4] = [2.5, -0.5, 1e9, -1e9]  # ties to even and both saturation ends
    for pe in range(4):
        m.load_gm(0x1000 * (pe + 1), x)
        m.set_gpr("a0", 0x1000 * (pe + 1), pe=pe)
        m.set_gpr("a1", 0x8000 + 0x100 * pe, pe=pe)
    m.run(Program.parse((EXAMPLES / "quant_seed_form.s").read_text()))
    expect = np.clip(np.rint(x.astype(np.float64)), -128, 127).astype(np.int8)
    for pe in range(4):
        np.testing.assert_array_equal(m.read_gm(0x8000 + 0x100 * pe, np.int8, (4, 32)), expect)
