"""Dead code: an op none of whose results reaches a store is dropped by the compiler and
not evaluated by the reference, so its data-dependent rules fault neither side
(docs/pipeline.md, "Dead code")."""

from __future__ import annotations

import numpy as np
import pytest

import ptoc
import ptoc.lang as pt
from ptoc.backend.isa.semantics.core import SemanticError
from ptoc.backend.program import TileStart
from ptoc.dialects.reference import kernel_func, live_ops, run_reference
from ptoc.passes.execute import compare, run_compiled
from ptoc.passes.pipeline import CompiledKernel, compile_module
from ptoc.runtime import MachineConfig
from ptoc.testing import KernelBuilder


def _mnemonics(ck: CompiledKernel) -> set[str]:
    """The operations of a compiled program's tile bundles."""
    return {c.op.mnemonic for c in ck.program if isinstance(c, TileStart) and c.op is not None}


def _zero_division_kernel() -> KernelBuilder:
    kb = KernelBuilder("dead_div")
    x = kb.tensor("x", "S32", (8, 64))
    o = kb.tensor("o", "S32", (8, 64))
    t = kb.load(x, (8, 64))
    kb.binary("TDIV", t, t)  # never stored: dead
    kb.store(o, kb.add(t, 1))
    return kb


def test_a_dead_integer_division_by_zero_faults_neither_side() -> None:
    module = _zero_division_kernel().finish()
    inputs = {"x": np.zeros((8, 64), np.int32)}
    want = run_reference(module, inputs)  # raised the TDIV zero-divisor rule before
    np.testing.assert_array_equal(want["o"], np.ones((8, 64), np.int32))
    for machine in (MachineConfig(), MachineConfig(depth=4, capacity=16384)):
        ck = compile_module(module, machine)
        assert "TDIV" not in _mnemonics(ck) and ck.stats.dead_bundles == 1
        compare(run_compiled(ck, inputs, machine), want)


def test_a_live_division_by_zero_still_faults_in_the_reference() -> None:
    kb = KernelBuilder("live_div")
    x = kb.tensor("x", "S32", (8, 64))
    o = kb.tensor("o", "S32", (8, 64))
    t = kb.load(x, (8, 64))
    kb.store(o, kb.binary("TDIV", t, t))
    with pytest.raises(SemanticError, match="zero"):
        run_reference(kb.finish(), {"x": np.zeros((8, 64), np.int32)})


def test_a_dead_merge_of_unsorted_rows_faults_neither_side() -> None:
    kb = KernelBuilder("dead_merge")
    x = kb.tensor("x", "FP32", (2, 8))
    o = kb.tensor("o", "FP32", (1, 8))
    a, b = kb.load(x, (1, 8)), kb.load(x, (1, 8), (1, 0))
    kb.mrgsort(a, b)  # dead, on unsorted streams
    kb.store(o, kb.abs(a))
    module = kb.finish()
    inputs = {"x": np.array([[3, 1, 2, 0, 5, 4, 7, 6]] * 2, np.float32)}
    want = run_reference(module, inputs)
    ck = compile_module(module)
    assert "TMRGSORT" not in _mnemonics(ck)
    compare(run_compiled(ck, inputs), want)


def test_a_dead_compound_op_leaves_no_scratch_traffic() -> None:
    """A dead gather_flat with offsets past its source: its lowering (through the GM
    scratch area) is dropped with it, not kept alive by its scratch stores."""
    kb = KernelBuilder("dead_flat")
    x = kb.tensor("x", "FP32", (4, 8))
    i = kb.tensor("i", "S32", (4, 8))
    o = kb.tensor("o", "FP32", (4, 8))
    t = kb.load(x, (4, 8))
    kb.gather_flat(t, kb.load(i, (4, 8)))  # dead
    kb.store(o, kb.neg(t))
    module = kb.finish()
    inputs = {
        "x": np.arange(32, dtype=np.float32).reshape(4, 8),
        "i": np.full((4, 8), 1000, np.int32),
    }
    want = run_reference(module, inputs)
    ck = compile_module(module)
    assert _mnemonics(ck) == {"TLOAD", "TNEG", "TSTORE"}
    assert ck.stats.bundles == 3
    compare(run_compiled(ck, inputs), want)


def test_live_ops_keeps_exactly_what_reaches_a_store() -> None:
    kb = _zero_division_kernel()
    f = kernel_func(kb.finish())
    names = [op.name for op in live_ops(f)]
    assert names == ["tile.load", "tile.adds", "tile.store"]


@ptoc.kernel
def _dsl_dead(x: ptoc.Tensor[ptoc.s32, 8, 64], out: ptoc.Tensor[ptoc.s32, 8, 64]):
    t = pt.load(x)
    unused = t / t  # noqa: F841  (dead: a zero input must not fault)
    pt.store(out, t + 1)


def test_dsl_verify_and_run_agree_on_a_dead_division() -> None:
    zeros = np.zeros((8, 64), np.int32)
    assert np.array_equal(ptoc.reference(_dsl_dead, x=zeros)["out"], zeros + 1)
    out = ptoc.verify(_dsl_dead, x=zeros)
    assert np.array_equal(out["out"], zeros + 1)
