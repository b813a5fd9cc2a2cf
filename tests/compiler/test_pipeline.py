"""compile_module: the ABI, the Program's text and binary forms, the pass registry."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp, UnknownLoc
from xdsl.passes import ModulePass

import ptoc
from ptoc.backend.asm import format_program, parse
from ptoc.backend.encoding import decode, encode
from ptoc.passes.diagnostics import CompileError
from ptoc.passes.emit import AbiBinding
from ptoc.passes.execute import run_compiled
from ptoc.passes.geometry import default_tile_limit
from ptoc.passes.pipeline import PIPELINE, _copy_free, compile_module
from ptoc.passes.universe import PASSES, PTOC_UNIVERSE
from ptoc.runtime import MachineConfig
from ptoc.testing import KernelBuilder

from .kernels import KERNELS


def test_pipeline_names_are_registered_passes() -> None:
    names = tuple(s.pass_name for s in PIPELINE)
    assert names == ("ptoc-lower-compound", "ptoc-legalize", "ptoc-allocate", "ptoc-emit")
    assert tuple(s.name for s in PIPELINE) == ptoc.STAGES[1:]
    for name in names:
        cls = PASSES[name]()
        assert issubclass(cls, ModulePass) and cls.name == name and cls.__doc__
    assert {"tile", "pto"} <= set(PTOC_UNIVERSE.all_dialects)


def test_xdsl_opt_sees_the_passes() -> None:
    r = subprocess.run(
        [
            sys.executable,
            "-c",
            "from xdsl.universe import Universe; "
            "print(sorted(Universe.get_multiverse().all_passes))",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "ptoc-allocate" in r.stdout


def test_abi_of_a_split_kernel() -> None:
    module, _ = KERNELS["softmax"](0)
    ck = compile_module(module)
    assert ck.abi.pes == 4 and ck.abi.scratch_bytes == 0
    assert ck.abi.bindings == (AbiBinding("a0", "x", 2048), AbiBinding("a1", "out", 2048))
    assert [t.output for t in ck.abi.tensors] == [False, True]


def test_program_text_and_binary_round_trip() -> None:
    module, _ = KERNELS["quant_rows"](0)
    prog = compile_module(module).program
    assert parse(format_program(prog)) == prog
    assert decode(encode(prog)) == prog


def test_compile_does_not_modify_the_kernel() -> None:
    module, _ = KERNELS["layernorm"](0)
    before = str(module)
    compile_module(module, MachineConfig(depth=4, capacity=16384))
    assert str(module) == before


@pytest.mark.parametrize("textual", [False, True])
def test_compile_reports_each_stage_as_it_finishes(textual: bool) -> None:
    """``on_stage`` sees every stage in pipeline order, each with the kernel at the stage
    the next one takes -- both without a copy of the module and with one (a parsed
    kernel has unlocated ops, which legalize names in place) -- and the program the
    compile returns is the one it saw."""
    from xdsl.context import Context
    from xdsl.dialects import func
    from xdsl.dialects.builtin import Builtin
    from xdsl.parser import Parser

    from ptoc.dialects.tile import Tile
    from ptoc.passes.stages import Stage, kernel_stage

    if textual:
        ctx = Context()
        for d in (Builtin, func.Func, Tile):
            ctx.load_dialect(d)
        module = Parser(ctx, TEXT_KERNEL).parse_module()
    else:
        module, _ = KERNELS["softmax"](0)
    assert _copy_free(module) is not textual
    seen: list[tuple[str, Stage | None]] = []
    emitted = []

    def on_stage(name, c):  # type: ignore[no-untyped-def]
        seen.append((name, kernel_stage(c.kernel)))
        emitted.append(c.emitted)
        # the stage the pipeline takes the kernel to be at, without a walk, is its stage
        assert c.known in (None, seen[-1][1])

    ck = compile_module(module, on_stage=on_stage)
    assert seen == [
        ("lower-compound", Stage.TILE),
        ("legalize", Stage.LEGALIZED),
        ("allocate", Stage.ALLOCATED),
        ("emit", Stage.ALLOCATED),
    ]
    assert emitted[:3] == [None] * 3 and emitted[3] is not None
    assert emitted[3].program == ck.program


def test_split_threshold_follows_the_machine() -> None:
    assert default_tile_limit(MachineConfig()) == 16384
    assert default_tile_limit(MachineConfig(depth=4)) == 65536
    assert default_tile_limit(MachineConfig(depth=4, capacity=16384)) == 4096
    assert default_tile_limit(MachineConfig(depth=2, capacity=20000)) == 4096


def test_kernel_pes_must_exist_on_the_machine() -> None:
    module, _ = KERNELS["softmax"](0)
    with pytest.raises(CompileError, match="runs on 4 PEs; the machine has 2"):
        compile_module(module, MachineConfig(pes=2))


def test_only_scheduled_bundles_are_emitted() -> None:
    kb = KernelBuilder("dead")
    x = kb.tensor("x", "FP32", (8, 64))
    o = kb.tensor("o", "FP32", (8, 64))
    t = kb.load(x, (8, 64))
    kb.exp(t)
    kb.store(o, t)
    ck = compile_module(kb.finish())
    assert ck.program.bundle_count() == 2 and ck.stats.dead_bundles == 1
    x_in = np.arange(512, dtype=np.float32).reshape(8, 64)
    np.testing.assert_array_equal(run_compiled(ck, {"x": x_in})["o"], x_in)


TEXT_KERNEL = """
func.func @scale(%x: !tile.tensor<BF16, 16x32>, %o: !tile.tensor<BF16, 16x32>)
    attributes {"tile.pes" = 2 : i64} {
  %t = tile.load %x[0, 0] pe [8, 0] : !tile.tensor<BF16, 16x32> -> !tile.tile<BF16, 8x32>
  %m = tile.rowmax %t : !tile.tile<BF16, 8x32> -> !tile.tile<BF16, 8x1>
  %s = tile.rowexpandsub %t, %m : !tile.tile<BF16, 8x32>, !tile.tile<BF16, 8x1>
  %r = tile.muls %s, 0.25 : !tile.tile<BF16, 8x32>
  tile.store %r, %o[0, 0] pe [8, 0] : !tile.tile<BF16, 8x32>, !tile.tensor<BF16, 16x32>
  func.return
}
"""


def test_a_textual_kernel_compiles_and_matches_its_reference() -> None:
    from xdsl.context import Context
    from xdsl.dialects import func
    from xdsl.dialects.builtin import Builtin
    from xdsl.parser import Parser

    from ptoc.dialects.reference import run_reference
    from ptoc.dialects.tile import Tile
    from ptoc.passes.execute import compare

    ctx = Context()
    for d in (Builtin, func.Func, Tile):
        ctx.load_dialect(d)
    module = Parser(ctx, TEXT_KERNEL).parse_module()
    inputs = {"x": np.linspace(-3, 3, 16 * 32, dtype=np.float32).reshape(16, 32)}
    for machine in (MachineConfig(), MachineConfig(depth=4, capacity=16384)):
        ck = compile_module(module, machine)
        compare(run_compiled(ck, inputs, machine), run_reference(module, inputs))


def test_run_passes_applies_the_named_pipeline_in_place() -> None:
    from ptoc.dialects import pto
    from ptoc.passes.pipeline import run_passes

    module, _ = KERNELS["softmax"](0)
    run_passes(module)
    assert any(isinstance(op, pto.ProgramOp) for op in module.walk())


def test_compile_error_is_a_ptoc_error() -> None:
    from ptoc.backend.errors import Error

    assert issubclass(CompileError, Error)


def _untouched(module: ModuleOp) -> None:
    """No op outside ``module`` uses one of its values (a compile built its own IR)."""
    inside = {id(op) for op in module.walk()}
    values = [r for op in module.walk() for r in op.results]
    blocks = [b for op in module.walk() for reg in op.regions for b in reg.blocks]
    values += [a for b in blocks for a in b.args]
    assert all(id(u.operation) in inside for v in values for u in v.uses)


@pytest.mark.parametrize("name", ["softmax", "layernorm", "sort_merge"])
def test_compile_module_leaves_its_module_unchanged(name: str) -> None:
    """The copy-free path (nothing to lower, every op located) and the copying one give
    the same program, and neither changes the module or links new IR to it."""
    module, _ = KERNELS[name](0)
    text = str(module)
    assert _copy_free(module)
    fast = compile_module(module, MachineConfig(depth=4, capacity=16384))
    assert fast.module is not module and str(module) == text
    _untouched(module)
    unlocated = module.clone()
    first = next(iter(next(iter(unlocated.ops)).body.block.ops))
    first.location = UnknownLoc()  # legalize names it: the module is copied first
    assert not _copy_free(unlocated)
    slow = compile_module(unlocated, MachineConfig(depth=4, capacity=16384))
    assert slow.program.asm() == fast.program.asm()
    assert isinstance(first.location, UnknownLoc)
    _untouched(unlocated)


def test_a_compile_walks_the_kernel_for_its_stage_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only the kernel the compile is given has its stage checked by a walk over its ops:
    each later stage takes the kernel the stage before it left."""
    from ptoc.passes import stages

    calls = []
    real = stages.kernel_stage

    def counted(f):  # type: ignore[no-untyped-def]
        calls.append(f)
        return real(f)

    monkeypatch.setattr(stages, "kernel_stage", counted)
    module, _ = KERNELS["softmax"](0)
    compile_module(module)
    assert len(calls) == 1


def test_the_pipeline_still_rejects_a_kernel_past_its_first_stage() -> None:
    """A legalized kernel given to the whole pipeline is refused at its first stage, with
    the one-line stage error."""
    from ptoc.passes.pipeline import run_pipeline

    module, _ = KERNELS["softmax"](0)
    legalized = module.clone()
    run_pipeline(legalized, stop_after="legalize")
    with pytest.raises(CompileError, match="already legalized"):
        compile_module(legalized)
