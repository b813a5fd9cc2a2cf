"""Blocks as a graph (D12): FALL / DIRECT / COND / RET, labels, loops and the step bound."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ptoc.backend.errors import AsmError
from ptoc.backend.program import END, Program, ScalarStart
from ptoc.backend.target import ConfigError, MachineConfig
from ptoc.runtime import Machine
from ptoc.runtime.cli import run_main
from ptoc.runtime.faults import BundleControlFault, InstructionPCFault, StepBoundExceeded
from ptoc.runtime.machine import compiled

COUNTDOWN = """\
BSTART.STD FALL
addi zero, 0, ->a1
BSTOP
loop:
BSTART.STD COND, loop
add a1, a0, ->a1
subi a0, 1, ->a0
setc.ne a0, zero
BSTOP
BSTART.STD FALL
sdi a1, [a2, 0]
BSTOP
"""


def countdown(n: int, **cfg: int) -> tuple[Machine, int]:
    m = Machine(MachineConfig(gm_size=4096, **cfg))
    m.set_gpr("a0", n)
    m.set_gpr("a2", 0x100)
    report = m.run(Program.parse(COUNTDOWN))
    return m, report.scalar_blocks


@pytest.mark.parametrize("n", [1, 2, 5, 40])
def test_count_down_loop(n: int) -> None:
    m, blocks = countdown(n)
    assert m.gpr("a0") == 0
    assert int(m.read_gm(0x100, np.uint64, 1)[0]) == n * (n + 1) // 2
    assert blocks == n + 2  # the entry, n loop iterations, the exit


def test_cond_not_taken_without_a_setter_and_taken_when_set() -> None:
    text = """\
BSTART.STD COND, skip
{setc}
BSTOP
BSTART.STD FALL
c.movi 1, ->a3
BSTOP
skip:
BSTART.STD FALL
c.movi 2, ->a4
BSTOP
"""
    m = Machine()
    m.run(Program.parse(text.format(setc="")))
    assert (m.gpr("a3"), m.gpr("a4")) == (1, 2)  # not taken: falls through
    m = Machine()
    m.set_gpr("a0", 5)
    m.run(Program.parse(text.format(setc="setc.geui a0, 5")))
    assert (m.gpr("a3"), m.gpr("a4")) == (0, 2)  # taken: skips the middle block


def test_nested_loops() -> None:
    text = """\
BSTART.STD FALL
c.movi 3, ->a0
c.movi 0, ->a5
BSTOP
outer:
BSTART.STD FALL
c.movi 4, ->a1
BSTOP
inner:
BSTART.STD COND, inner
addi a5, 1, ->a5
subi a1, 1, ->a1
setc.ne a1, zero
BSTOP
BSTART.STD COND, outer
subi a0, 1, ->a0
setc.ne a0, zero
BSTOP
"""
    m = Machine()
    report = m.run(Program.parse(text))
    assert m.gpr("a5") == 12
    assert report.scalar_blocks == 1 + 3 * (1 + 4 + 1)


def test_direct_and_ret() -> None:
    text = """\
BSTART.STD DIRECT, body
setret 4, ->ra
BSTOP
BSTART.STD DIRECT, end
c.movi 9, ->a3
BSTOP
body:
BSTART.STD RET
c.movi 5, ->a4
BSTOP
end:
"""
    # setret at address 4 names 4 + (4 << 1) = 12: the block after the DIRECT one
    m = Machine("max_steps=10")
    report = m.run(Program.parse(text))
    assert (m.gpr("a3"), m.gpr("a4"), m.gpr("ra")) == (9, 5, 12)
    assert report.scalar_blocks == 3


def test_ret_to_the_end_and_to_nowhere() -> None:
    prog = Program.parse("BSTART.STD RET\nc.movi 1, ->a3\nBSTOP\n")
    m = Machine()
    m.set_gpr("ra", 10)  # the program's size: the run ends
    m.run(prog)
    assert m.gpr("a3") == 1
    for ra, why in ((6, "starts no block"), (3, "is odd")):
        m = Machine()
        m.set_gpr("ra", ra)
        before = m.snapshot()
        with pytest.raises(InstructionPCFault, match=why):
            m.run(prog)
        assert m.snapshot() == before


def test_divergent_condition_and_return_address_fault() -> None:
    m = Machine()
    m.set_gpr("a0", 1, pe=2)
    with pytest.raises(BundleControlFault, match="PE2 true"):
        m.run(Program.parse("BSTART.STD COND, 0\nsetc.ne a0, zero\nBSTOP\n"))
    m = Machine()
    m.set_gpr("ra", 8, pe=1)
    with pytest.raises(BundleControlFault, match="different return addresses"):
        m.run(Program.parse("BSTART.STD RET\nBSTOP\n"))


def test_second_condition_setter_is_rejected_before_effects() -> None:
    m = Machine()
    before = m.snapshot()
    with pytest.raises(BundleControlFault, match="second condition setter"):
        m.run(
            Program.parse(
                "BSTART.STD COND, 0\nc.movi 1, ->a0\nsetc.eq a0, a0\nc.setc.ne a0, a0\nBSTOP\n"
            )
        )
    assert m.snapshot() == before


def test_branch_into_a_block_body_faults() -> None:
    prog = Program.parse(
        "BSTART.STD DIRECT, 4\nc.movi 1, ->a0\nBSTOP\nBSTART.STD FALL\nBSTOP\n"
    )
    with pytest.raises(InstructionPCFault, match="starts no block"):
        Machine().run(prog)


def test_step_bound() -> None:
    with pytest.raises(StepBoundExceeded) as e:
        countdown(1000, max_steps=50)
    text = str(e.value)
    assert "max_steps=50" in text and "scalar block 50" in text and "line 5" in text
    m, _ = countdown(48, max_steps=50)  # 50 blocks exactly: the bound is not exceeded
    assert m.gpr("a0") == 0
    assert MachineConfig().max_steps == 10**8
    assert "max_steps" not in MachineConfig().text()
    assert MachineConfig.parse("max_steps=7").text().endswith("max_steps=7")
    with pytest.raises(ConfigError, match="max_steps=0 must be positive"):
        MachineConfig(max_steps=0)


def test_cli_step_bound_exit_3(tmp_path: Path) -> None:
    import io

    s = tmp_path / "spin.s"
    s.write_text("spin:\nBSTART.STD DIRECT, spin\nBSTOP\n")
    out, err = io.StringIO(), io.StringIO()
    code = run_main([str(s), "--machine", "max_steps=1000"], out, err)
    assert code == 3
    assert "step bound exceeded at scalar block 1000" in err.getvalue()
    assert "max_steps=1000" in err.getvalue()


# ----------------------------------------------------------------------------- labels


def test_label_errors() -> None:
    with pytest.raises(AsmError, match=r"<asm>:1: undefined label 'nowhere'"):
        Program.parse("BSTART.STD COND, nowhere\nBSTOP\n")
    with pytest.raises(AsmError, match=r"<asm>:2: label 'x' is defined twice"):
        Program.parse("x:\nx: BSTOP\n")
    far = "far:\n" + "BSTART.STD FALL\n" + "c.movi 0, ->a0\n" * 70000 + "BSTART.STD COND, far\n"
    with pytest.raises(AsmError, match=r"label 'far' is -140004 bytes away: .*17"):
        Program.parse(far)


def test_graph_successors() -> None:
    g = Program.parse(COUNTDOWN).graph()
    assert [g.successors(i) for i in range(len(g.blocks))] == [(1,), (2, 1), (END,)]
    assert g.starts == (0, 12, 32)


def _block(kind: str, body: list[str], target: int | None) -> list[str]:
    head = f"BSTART.STD {kind}" + (f", t{target}" if target is not None else "")
    return [head, *body, "BSTOP"]


BODY = ["c.movi 1, ->a0", "addi a0, 3, ->a1", "sdi a1, [a2, 1]", "lui 0x12345, ->a3"]


BODY = ["c.movi 1, ->a0", "addi a0, 3, ->a1", "sdi a1, [a2, 1]", "lui 0x12345, ->a3"]


@st.composite
def programs(draw: st.DrawFn) -> str:
    n = draw(st.integers(1, 6))
    bodies = [draw(st.lists(st.sampled_from(BODY), max_size=3)) for _ in range(n)]
    lines: list[str] = []
    for i in range(n):
        lines.append(f"t{i}:")
        kind = draw(st.sampled_from(["FALL", "DIRECT", "COND", "RET"]))
        target = draw(st.integers(0, n)) if kind in ("DIRECT", "COND") else None
        lines += _block(kind, bodies[i], target)
    lines.append(f"t{n}:")
    return "\n".join(lines) + "\n"


@given(programs())
def test_label_round_trip(text: str) -> None:
    prog = Program.parse(text)
    printed = prog.asm()
    again = Program.parse(printed)
    assert again == prog
    words = prog.encode()
    decoded = Program.decode(words)
    assert decoded == prog
    assert decoded.asm() == printed
    # every label the printer generated is a branch target, and targets agree
    g1, g2 = prog.graph(), decoded.graph()
    assert g1.target == g2.target and g1.fall == g2.fall
    for b, t in zip(g1.blocks, g1.target):
        if isinstance(b.start, ScalarStart) and b.start.kind in ("DIRECT", "COND"):
            assert t is not None


# ----------------------------------------------------------------------------- tile loops

TILE_LOOP = """\
BSTART.STD FALL
c.movi 8, ->a3
BSTOP
loop:
BSTART.TLOAD FP32
B.DIM a0, 0, ->LB0
B.DIM zero, 1, ->LB1
B.DIM zero, 8, ->LB2
B.IOR a1, a3
B.IOT mask=1111, last, ->T<128B>
BSTOP
BSTART.VEC TADDS, FP32
B.DIM a0, 0, ->LB0
B.DIM zero, 1, ->LB1
B.DIM zero, 8, ->LB2
B.IOR a4
B.IOT T#1, mask=1111, last, ->T<128B>
BSTOP
BSTART.TSTORE FP32
B.IOR a2, a3
B.IOT T#1, mask=1111, last
BSTOP
BSTART.STD COND, loop
addi a2, 32, ->a2
subi a0, 1, ->a0
setc.ne a0, zero
BSTOP
"""


def test_loop_over_tile_bundles_with_register_dims() -> None:
    """The loop body's bundles read ValidCol from the induction variable a0 (B.DIM
    register form): iteration k stores n - k elements; the bundle plans are built once
    and their per-shape specs cached per LB tuple, not per iteration."""
    n = 6
    m = Machine("gm_size=65536,depth=4")
    src = np.arange(1, 9, dtype=np.float32)
    m.load_gm(0x1000, src)
    m.load_gm(0x2000, np.full((n, 8), -1, np.float32))
    m.set_gpr("a0", n)
    m.set_gpr("a1", 0x1000)
    m.set_gpr("a2", 0x2000)
    m.set_gpr("a4", int(np.float32(0.5).view(np.uint32)))
    prog = Program.parse(TILE_LOOP)
    report = m.run(prog)
    assert report.bundles == 3 * n and report.scalar_blocks == n + 1
    out = m.read_gm(0x2000, np.float32, (n, 8))
    for k in range(n):
        cols = n - k
        assert np.array_equal(out[k, :cols], src[:cols] + np.float32(0.5))
        assert np.all(out[k, cols:] == -1)
    _, steps = compiled(prog)  # the compiled program (white box: the caches)
    plans = [payload for kind, _, payload in steps if kind == "tile"]
    assert [len(p.cache) for p in plans] == [n, n, 1]  # TSTORE takes its shape from the tile
    m.set_gpr("a0", n)
    m.set_gpr("a2", 0x2000)
    m.run(prog)  # a second run reuses the plans and their caches
    assert [len(p.cache) for p in plans] == [n, n, 1]


def test_program_keeps_its_executable_form_across_machines(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The block graph, the compiled scalar blocks and the validated bundle plans live on
    the Program: a new Machine running it builds none of them again, and the loop body's
    per-shape preparation is reused (one entry per LB tuple, never per run)."""
    n = 3
    prog = Program.parse(TILE_LOOP)
    graphs = []
    real = Program.graph

    def counted(self: Program):  # type: ignore[no-untyped-def]
        graphs.append(self)
        return real(self)

    monkeypatch.setattr(Program, "graph", counted)
    outs, sizes = [], []
    for _ in range(3):
        m = Machine("gm_size=65536,depth=4")
        m.load_gm(0x1000, np.arange(1, 9, dtype=np.float32))
        m.set_gpr("a0", n)
        m.set_gpr("a1", 0x1000)
        m.set_gpr("a2", 0x2000)
        m.set_gpr("a4", int(np.float32(0.5).view(np.uint32)))
        m.run(prog)
        outs.append(m.read_gm(0x2000, np.float32, (n, 8)))
        _, steps = compiled(prog)
        sizes.append([len(p.cache) for kind, _, p in steps if kind == "tile"])
    assert len(graphs) == 1
    assert all(np.array_equal(o, outs[0]) for o in outs)
    assert sizes[0] == sizes[1] == sizes[2]
    assert sizes[0][0] >= n and sizes[0][2] == 1
