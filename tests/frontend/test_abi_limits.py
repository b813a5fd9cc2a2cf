"""The kernel ABI's limits, at the kernel's source: base addresses past a0..a6 go through
the argument table (a7) into free registers, as many as there are; tensors must fit the
machine's global memory (checked by compile)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import ptoc
from ptoc.cli import main

from .helpers import write_kernels

KERNELS = """\
T = ptoc.Tensor[ptoc.fp32, 8, 64]


@ptoc.kernel
def nine(a: T, b: T, c: T, d: T, e: T, f: T, g: T, h: T,
         i: T):
    pt.store(i, pt.load(a) + pt.load(b) + pt.load(c) + pt.load(d) + pt.load(e)
             + pt.load(f) + pt.load(g) + pt.load(h))


Big = ptoc.Tensor[ptoc.fp32, 1024, 1024]


@ptoc.kernel
def big(x: Big, out: Big):
    pt.store(out, pt.load(x, rows=(0, 8)), rows=0)
"""


@pytest.fixture
def kernels(tmp_path: Path):
    return write_kernels(tmp_path, KERNELS)


@pytest.mark.parametrize("machine", [None, ptoc.MachineConfig(depth=4, capacity=16384)])
def test_nine_tensors_pass_the_last_two_through_the_argument_table(kernels, machine) -> None:
    _, ks = kernels
    prog = ptoc.compile(ks["nine"], machine)
    slots = {b.tensor: b.table_slot for b in prog.abi.bindings}
    assert slots["h"] == 0 and slots["i"] == 1 and slots["a"] is None
    first = prog.asm().split("BSTOP")[0]  # the program's first block loads both slots
    assert first.count("ldi [a7, ") == 2
    ptoc.verify(prog)


def test_more_arguments_than_registers_name_the_first_that_has_none(tmp_path: Path) -> None:
    params = ", ".join(f"x{i}: T" for i in range(24))
    loads = " + ".join(f"pt.load(x{i})" for i in range(24))
    _, ks = write_kernels(
        tmp_path,
        f"""\
T = ptoc.Tensor[ptoc.fp32, 1, 64]


@ptoc.kernel
def wide({params}, out: T):
    pt.store(out, {loads})
""",
    )
    with pytest.raises(ptoc.CompileError) as info:
        ptoc.compile(ks["wide"])
    e = info.value
    assert "the kernel needs 25 base addresses and scalar arguments" in e.message
    assert e.hint is not None and "argument table" in e.hint


def test_compile_checks_that_the_tensors_fit_global_memory(kernels, capsys) -> None:
    path, ks = kernels
    with pytest.raises(ptoc.KernelError) as info:
        ptoc.compile(ks["big"], machine="gm_size=4M")
    e = info.value
    assert (e.file, e.line) == (str(path), 18)  # def big
    assert "needs global memory up to 0x801000" in e.message and "gm_size=4194304" in e.message
    assert e.hint is not None and "--machine gm_size=9M" in e.hint
    assert main(["compile", f"{path}::big", "--machine", "gm_size=4M"]) == 2
    assert "gm_size=9M" in capsys.readouterr().err
    assert ptoc.compile(ks["big"], machine="gm_size=9M") is not None


def test_running_on_a_smaller_machine_suggests_gm_size(kernels) -> None:
    _, ks = kernels
    prog = ptoc.compile(ks["big"])
    x = np.zeros((1024, 1024), np.float32)
    with pytest.raises(ptoc.InputError, match=r"gm_size=9M \(--machine gm_size=9M\)"):
        ptoc.run(prog, machine="gm_size=4M", x=x)


def test_a_machine_gm_overflow_names_gm_size() -> None:
    from ptoc.backend.asm import parse
    from ptoc.runtime import Machine, MachineConfig
    from ptoc.runtime.faults import MachineFault

    m = Machine(MachineConfig(gm_size=1 << 16))
    m.set_gpr("a0", 1 << 16)
    text = "BSTART.TLOAD FP32\nB.DIM zero, 8, ->LB0\nB.IOR a0, zero\n"
    text += "B.IOT mask=1111, last, ->T<128B>\nBSTOP\n"
    with pytest.raises(MachineFault, match=r"global memory \(machine parameter gm_size\)"):
        m.run(parse(text))


def test_a_kernel_level_error_is_placed_at_the_argument_it_names(kernels) -> None:
    """The ABI backstop (no op to point at) names the kernel argument whose base is one
    too many as data; the front end places it at that parameter, with its caret."""
    from ptoc.driver import placed
    from ptoc.passes.diagnostics import CompileError

    path, ks = kernels
    k = ks["nine"]
    e = placed(CompileError("too many bases", hint="fewer", argument=8), k.trace(), k)
    assert (e.file, e.line, e.col) == (str(path), 9, 10)  # the parameter 'i: T'
    assert str(e).splitlines()[1:] == ["    i: T):", "    ^^^^", "hint: fewer"]
    assert (e.rule, e.argument) == ("too many bases", 8)
