"""The compound ops themselves: syntax round trip, verifier diagnostics, reference =
``compound_ref``, the pass registration, the scratch parameter, multi-PE and small
machines."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects import builtin, func
from xdsl.parser import Parser
from xdsl.utils.exceptions import VerifyException

from ptoc.dialects import compound_ops as co
from ptoc.dialects import compound_ref as cr
from ptoc.dialects.reference import kernel_func, run_reference
from ptoc.dialects.tile import Tile
from ptoc.dialects.tile_base import CompoundTileOp
from ptoc.passes.diagnostics import CompileError
from ptoc.passes.lower_compound import SCRATCH_NAME, lower_compound_func
from ptoc.passes.pipeline import PIPELINE, compile_module
from ptoc.passes.universe import PASSES
from ptoc.runtime import MachineConfig
from ptoc.testing import KernelBuilder

from .data import random_bits, sorted_row, u32
from .harness import build, check

ROUND_TRIP = (Path(__file__).parent / "roundtrip.mlir").read_text()


def _parse(text: str) -> builtin.ModuleOp:
    ctx = Context()
    ctx.load_dialect(builtin.Builtin)
    ctx.load_dialect(func.Func)
    ctx.load_dialect(Tile)
    module = Parser(ctx, text).parse_module()
    module.verify()
    return module


def test_every_op_round_trips():
    first = str(_parse(ROUND_TRIP))
    assert str(_parse(first)) == first
    names = {op.name for op in _parse(first).walk()}
    assert {c.name for c in co.COMPOUND_OPS} <= names


@pytest.mark.parametrize(
    "line, message",
    [
        (
            "%r = tile.merge_blocks %a block 16 : (!tile.tile<FP32, 1x64>) -> "
            "!tile.tile<FP32, 1x64>",
            "block must be a positive multiple of 32 records",
        ),
        (
            "%r = tile.gather_pattern %t pattern P0110 : (!tile.tile<FP32, 4x64>) -> "
            "!tile.tile<FP32, 4x32>",
            "unknown mask pattern",
        ),
        (
            "%r:4 = tile.quantize_mx %w : (!tile.tile<FP32, 4x40>) -> (!tile.tile<E4M3, 4x40>, "
            "!tile.tile<E8M0, 4x1>, !tile.tile<FP32, 4x1>, !tile.tile<FP32, 4x1>)",
            "MX quantization needs cols % 32 == 0",
        ),
        (
            "%r:2 = tile.merge_sorted %a, %t : (!tile.tile<FP32, 1x64>, "
            "!tile.tile<FP32, 4x64>) -> (!tile.tile<FP32, 1x320>, !tile.tile<U32, 1x2>)",
            "list 1 must be a single row",
        ),
        (
            "%r:2 = tile.sort32 %i : (!tile.tile<U32, 4x64>) -> (!tile.tile<U32, 4x64>, "
            "!tile.tile<U32, 4x64>)",
            "t has element type uint32",
        ),
        (
            "%r = tile.gather_flat %t, %t : (!tile.tile<FP32, 4x64>, "
            "!tile.tile<FP32, 4x64>) -> !tile.tile<FP32, 4x64>",
            "offsets must have an integer element type",
        ),
        (
            "%r = tile.partial max %a, %t : (!tile.tile<FP32, 1x64>, "
            "!tile.tile<FP32, 4x64>) -> !tile.tile<FP32, 3x64>",
            "b (4, 64) does not fit in the destination",
        ),
        (
            "%r = tile.quantize_rows %t scale 0.5 : (!tile.tile<FP32, 4x64>) -> "
            "!tile.tile<S16, 4x64>",
            "quantize_rows produces S8 or U8",
        ),
        (
            "%r = tile.transpose %t : (!tile.tile<FP32, 4x64>) -> !tile.tile<FP16, 64x4>",
            "dtype float16 must have the source element size (4 bytes)",
        ),
    ],
)
def test_verifier_rejects_with_the_rule(line, message):
    text = (
        "func.func @k(%x: !tile.tensor<FP32, 4x64>, %u: !tile.tensor<U32, 4x64>) {\n"
        "  %t = tile.load %x[0, 0] : !tile.tensor<FP32, 4x64> -> !tile.tile<FP32, 4x64>\n"
        "  %a = tile.load %x[0, 0] : !tile.tensor<FP32, 4x64> -> !tile.tile<FP32, 1x64>\n"
        "  %i = tile.load %u[0, 0] : !tile.tensor<U32, 4x64> -> !tile.tile<U32, 4x64>\n"
        "  %w = tile.load %x[0, 0] : !tile.tensor<FP32, 4x64> -> !tile.tile<FP32, 4x40>\n"
        f"  {line}\n  func.return\n}}"
    )
    with pytest.raises(VerifyException, match=re.escape(message)):
        _parse(text)


def test_reference_is_compound_ref():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 40)).astype(np.float32)
    kb = KernelBuilder("k")
    xt = kb.tensor("x", "FP32", (3, 40))
    v, p = kb.sort32(kb.load(xt, (3, 40)))
    kb.store(kb.tensor("v", "FP32", (3, 40)), v)
    kb.store(kb.tensor("p", "U32", (3, 40)), p)
    out = run_reference(kb.finish(), {"x": x})
    want = cr.sort32(x)
    assert out["v"].tobytes() == want.values.tobytes()
    assert out["p"].tobytes() == want.payload.tobytes()


def test_data_dependent_rejection_names_the_op_and_rule():
    rows = [np.array([1, 2], np.float32), np.array([2, 1], np.float32)]
    kb = KernelBuilder("k")
    ts = [kb.tensor(f"l{i}", "FP32", (1, 2)) for i in range(2)]
    m, _ = kb.merge_sorted([kb.load(t, (1, 2)) for t in ts])
    kb.store(kb.tensor("o", "FP32", (1, 4)), m)
    with pytest.raises(cr.CompoundError, match=r"tile\.merge_sorted: list 0 is not sorted"):
        run_reference(kb.finish(), {"l0": rows[0][None], "l1": rows[1][None]})


def test_pass_is_registered_and_runs_first():
    assert PIPELINE[0].pass_name == "ptoc-lower-compound" and "ptoc-lower-compound" in PASSES
    assert PASSES["ptoc-lower-compound"]().name == "ptoc-lower-compound"


def test_legalize_refuses_an_unlowered_compound_op():
    from ptoc.passes.legalize import legalize_func

    x = np.zeros((2, 32), np.float32)
    module = build("k", {"x": x}, lambda kb, t: kb.sort32(t["x"])[0])
    with pytest.raises(CompileError, match="run lower-compound before legalize"):
        legalize_func(kernel_func(module))


def test_only_views_add_the_scratch_parameter():
    x = np.zeros((4, 8), np.float32)
    plain = build("k", {"x": x}, lambda kb, t: kb.transpose(t["x"]))
    viewed = build("k", {"x": x}, lambda kb, t: kb.transpose(t["x"], None, "U32"))
    names = []
    for module in (plain, viewed):
        f = kernel_func(module)
        lower_compound_func(f)
        module.verify()
        names.append([a.name_hint for a in f.body.block.args])
        assert not any(isinstance(op, CompoundTileOp) for op in f.walk())
    assert SCRATCH_NAME not in names[0] and names[1][-1] == SCRATCH_NAME
    arg = kernel_func(viewed).body.block.args[-1]
    assert arg.type.dims == (1, 128)  # one PE, the 128-byte view rounded to 64 bytes


@pytest.mark.parametrize("pes", [2, 4])
def test_multi_pe_kernels_use_one_scratch_row_per_pe(pes):
    """Every PE runs the lowered bundles on its own data; views use the PE's own row of
    the scratch area (the ABI steps its base per PE)."""
    rng = np.random.default_rng(pes)
    t = random_bits(rng, np.float32, (4 * pes, 16))
    offs = rng.integers(0, 64, (3 * pes, 5)).astype(np.int32)

    def body(kb, x):
        return {"g": kb.gather_flat(x["t"], x["o"]), "s": kb.sort32(x["t"])[1]}

    from ptoc.passes.execute import compare, run_compiled

    kb = KernelBuilder("pes", pes=pes)
    tt, ot = kb.tensor("t", "FP32", t.shape), kb.tensor("o", "S32", offs.shape)
    x = {"t": kb.load(tt, (4, 16), pe=(4, 0)), "o": kb.load(ot, (3, 5), pe=(3, 0))}
    out = body(kb, x)
    kb.store(kb.tensor("g", "FP32", (3 * pes, 5)), out["g"], pe=(3, 0))
    kb.store(kb.tensor("s", "U32", (4 * pes, 16)), out["s"], pe=(4, 0))
    module = kb.finish()
    inputs = {"t": t, "o": offs}
    want = run_reference(module, inputs)
    ck = compile_module(module)
    compare(run_compiled(ck, inputs), want)
    scratch = [p for p in ck.abi.tensors if p.name == SCRATCH_NAME]
    assert scratch and scratch[0].shape[0] == pes


TINY = MachineConfig(depth=4, capacity=16384)
CRAMPED = MachineConfig(hands=2, depth=3, capacity=8192)


@pytest.mark.parametrize("machine", [TINY, CRAMPED], ids=["tiny", "cramped"])
def test_small_machines(machine):
    rng = np.random.default_rng(5)
    x = rng.standard_normal((4, 64)).astype(np.float32)
    rows = [sorted_row(rng.standard_normal(16).astype(np.float32), True) for _ in range(3)]
    inputs = {"x": x, "L": np.stack(rows), "P": u32(rng, (3, 16))}
    tiles = {"x": ("x", (0, 0), (4, 64))}
    for i in range(3):
        tiles[f"l{i}"] = ("L", (i, 0), (1, 16))
        tiles[f"p{i}"] = ("P", (i, 0), (1, 16))

    def body(kb, t):
        # six tensors: with the view scratch (quantize_mx reads the FP32 bits) and the
        # cramped machine's spill area that is all eight ABI base registers
        v, _idx = kb.sort32(t["x"])
        e, _, _, _ = kb.quantize_mx(t["x"])
        _m, p, _ = kb.merge_sorted(
            [t[f"l{i}"] for i in range(3)], [t[f"p{i}"] for i in range(3)], top_k=20
        )
        return {"e": e, "p": p, "part": kb.partial("max", t["x"], v, (5, 70))}

    check("small", inputs, body, machine=machine, tiles=tiles)
