"""Compiler diagnostics: a kernel that cannot fit fails with the value, its size and the
capacity, and every compiler error names the kernel line of the op concerned."""

from __future__ import annotations

import ast
import inspect
import textwrap
from pathlib import Path

import pytest

import ptoc
import ptoc.passes as passes
from ptoc.errors import CompileError as FrontCompileError
from ptoc.loader import import_file, kernels_in
from ptoc.passes.diagnostics import CompileError
from ptoc.passes.pipeline import compile_module
from ptoc.runtime import MachineConfig
from ptoc.testing import KernelBuilder


def test_a_tile_larger_than_the_capacity_is_named() -> None:
    kb = KernelBuilder("huge")
    x = kb.tensor("x", "FP32", (128, 64))
    o = kb.tensor("o", "FP32", (64, 128))
    line = __import__("inspect").currentframe().f_lineno + 1  # type: ignore[union-attr]
    t = kb.load(x, (128, 64))
    kb.store(o, kb.trans(t))
    with pytest.raises(CompileError) as e:
        compile_module(kb.finish(), MachineConfig(capacity=16384))
    msg = str(e.value)
    assert f"{__file__}:{line}" in msg  # the kernel line of the value
    assert "the pto.tload result (!pto.tile<FP32, valid 128x64" in msg  # the value
    assert "32768 bytes" in msg and "16384" in msg  # its size and the capacity


def test_split_tiles_do_not_need_the_whole_capacity() -> None:
    """The same big tile is fine when only row-separable ops use it (legalize splits it)."""
    kb = KernelBuilder("rows")
    x = kb.tensor("x", "FP32", (128, 64))
    o = kb.tensor("o", "FP32", (128, 64))
    kb.store(o, kb.exp(kb.load(x, (128, 64))))
    ck = compile_module(kb.finish(), MachineConfig(capacity=16384))
    assert ck.report is not None and ck.report.peak_bytes <= 16384


# --------------------------------------------------------------------------- locations


def _compile_error(tmp_path: Path, body: str, machine: ptoc.MachineConfig) -> FrontCompileError:
    """Compile kernel ``k`` of ``body`` (a file whose line 4 is the body's first line)."""
    path = tmp_path / "kern.py"
    path.write_text("import ptoc\nimport ptoc.lang as pt\n\n" + textwrap.dedent(body))
    kernels = kernels_in(import_file(path))
    with pytest.raises(FrontCompileError) as info:
        ptoc.compile(kernels["k"], machine)
    assert info.value.file == str(path)
    return info.value


def test_the_live_tiles_capacity_error_names_the_kernel_line(tmp_path: Path) -> None:
    """A one-entry queue cannot hold both sources of a TADD: the allocator's capacity
    error points at the line of the add, with its caret, not at a bundle number only."""
    e = _compile_error(
        tmp_path,
        """\
        T = ptoc.Tensor[ptoc.fp32, 8, 64]

        @ptoc.kernel
        def k(x: T, y: T, out: T):
            a = pt.load(x)
            b = pt.load(y)
            pt.store(out, a + b)
        """,
        ptoc.MachineConfig(hands=1, depth=1),
    )
    assert (e.line, e.col) == (10, 19)
    assert e.message.startswith("TADD: the tiles live when it runs")
    assert "1x1 queue entries" in e.message
    assert str(e).splitlines()[1:3] == ["    pt.store(out, a + b)", "                  ^^^^^"]


def test_the_abi_register_limit_names_the_argument_that_has_none(tmp_path: Path) -> None:
    params = ", ".join(f"x{i}: T" for i in range(24))
    loads = " + ".join(f"pt.load(x{i})" for i in range(24))
    e = _compile_error(
        tmp_path,
        f"""\
        T = ptoc.Tensor[ptoc.fp32, 1, 64]

        @ptoc.kernel
        def k({params}, out: T):
            t = {loads}
            pt.store(out, t)
        """,
        ptoc.MachineConfig(),
    )
    assert "the kernel needs 25 base addresses and scalar arguments" in e.message
    assert e.line == 7  # the def line: the ABI names the parameter
    assert "def k(" in str(e).splitlines()[1]


def test_builder_kernels_get_the_builder_line() -> None:
    kb = KernelBuilder("k")
    x = kb.tensor("x", "FP32", (8, 64))
    o = kb.tensor("o", "FP32", (8, 64))
    a, b = kb.load(x, (8, 64)), kb.load(x, (8, 64), (0, 0), pe=(0, 0))
    line = inspect.currentframe().f_lineno + 1  # type: ignore[union-attr]
    kb.store(o, kb.sub(a, kb.exp(b)))
    with pytest.raises(CompileError) as e:
        compile_module(kb.finish(), MachineConfig(hands=1, depth=1))
    assert str(e.value).startswith(f"{__file__}:{line}:0: pto.t")


#: ``raise CompileError(...)`` sites in passes/ that have no op to point at, and why
KERNEL_LEVEL = {
    ("diagnostics.py", "fail"): "the located constructor itself",
    ("pipeline.py", "_legalize"): "the kernel's PE count (the frontend checks it first)",
    ("legalize/select.py", "legalize_func"): "the kernel's tile.pes attribute",
    ("allocate/assign.py", "apply"): "the pass options",
    ("allocate/gprs.py", "plan_gprs"): "a backstop: allocate names the bundle first",
    ("allocate/gprs.py", "_hoist_most_used"): "a backstop: fewer free registers than the "
    "three a bundle reads",
    ("allocate/tiles.py", "_fail"): "only when no bundle is being planned",
    ("stages.py", "_stage_error"): "the pipeline stage of a whole kernel or module",
    ("emit/program.py", "emit"): "the ptoc-asm target: a module that holds no single program",
    ("emit/program.py", "allocated_machine"): "the kernel's pto.machine attribute",
    ("emit/program.py", "apply"): "the whole program fails validation (the validator names "
    "the command)",
}


def test_every_compile_error_in_the_passes_is_located() -> None:
    """Every CompileError a pass raises goes through ``fail(op, rule)`` (the op's kernel
    line) except the kernel-level checks listed in KERNEL_LEVEL."""
    found = set()
    root = Path(passes.__file__).parent
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text())
        for fn in ast.walk(tree):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(fn):
                if (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Name)
                    and node.func.id == "CompileError"
                ):
                    where = (path.relative_to(root).as_posix(), fn.name)
                    assert where in KERNEL_LEVEL, f"{where[0]}:{node.lineno} in {fn.name}"
                    found.add(where)
    assert found <= set(KERNEL_LEVEL)


def test_a_pass_error_carries_the_op_rule_and_hint_as_data() -> None:
    """``fail`` keeps the op, the rule and the hint as fields; the text is the one
    ``xdsl-opt`` prints; a pickled copy keeps the text (not the IR)."""
    import pickle

    from ptoc.passes.diagnostics import fail
    from ptoc.testing import KernelBuilder

    kb = KernelBuilder("k")
    x = kb.tensor("x", "FP32", (8, 64))
    line = inspect.currentframe().f_lineno + 1  # type: ignore[union-attr]
    t = kb.load(x, (8, 64))
    op = t.owner
    e = fail(op, "a rule", "a hint")
    assert (e.op, e.rule, e.hint, e.loc) == (op, "a rule", "a hint", None)
    assert str(e) == f"{__file__}:{line}:0: tile.load: a rule"
    copy = pickle.loads(pickle.dumps(e))
    assert type(copy) is CompileError and str(copy) == str(e) and copy.hint == "a hint"
