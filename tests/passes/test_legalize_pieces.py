"""What ``legalize`` records of a tile value's row pieces and type facts, how it reads
an access op's window, and how it lets go of the body it replaced.

The unsplit fast path of ``pieces.piecewise`` takes an operand whose one piece has
extent 0 as the whole tile: this pins that such a piece holds every valid row from
row 0, for every place that makes pieces (the rules, loops, matmuls, views, column
reductions), over examples with loops and matmuls, the example kernels, random kernels
and the compound cases, split at two tile size limits (mutation-checked: a loop's or a
matmul's split pieces recorded with extent 0 fail it).
"""

from __future__ import annotations

import gc
import weakref
from contextlib import suppress
from pathlib import Path

import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block
from xdsl.utils.test_value import create_ssa_value

from benchmarks.bench_compiler import MACHINES
from benchmarks.bench_compound import _cases, _module
from ptoc.dialects.tile_memory import AccessOp, LoadOp, StoreOp
from ptoc.dialects.tile_types import TensorType, TileType
from ptoc.loader import import_file, kernels_in
from ptoc.passes import legalize
from ptoc.passes.diagnostics import CompileError
from ptoc.passes.legalize.ctx import LegalizeCtx
from ptoc.passes.legalize.rules import origin_and_pe
from ptoc.passes.pipeline import Options, run_pipeline
from ptoc.testing import KernelSpec, random_kernel
from tests.compiler.kernels import KERNELS

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
#: examples with run-time loops (carried tiles), matmuls and views
STAGE = "legalize"
LOOPS_AND_MATMULS = ["softmax_rows", "rmsnorm_rows", "gemm", "ffn", "attention", "topk_rows"]


def _modules() -> list[ModuleOp]:
    mods = [
        k.trace().module
        for name in LOOPS_AND_MATMULS
        for k in kernels_in(import_file(EXAMPLES / f"{name}.py")).values()
    ]
    mods += [build(0)[0] for build in KERNELS.values()]
    mods += [random_kernel(seed, KernelSpec(60))[0] for seed in range(6)]
    mods += [_module(c) for c in _cases()]
    return mods


def test_a_piece_of_extent_zero_holds_every_valid_row(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[LegalizeCtx] = []
    select = legalize.select
    original = select._legalize_block

    def keep(ctx: LegalizeCtx, block: Block) -> None:
        seen.append(ctx)
        original(ctx, block)

    monkeypatch.setattr(select, "_legalize_block", keep)
    whole = split = 0
    for module in _modules():
        for machine in MACHINES.values():
            for limit in (None, 2048):
                seen.clear()
                options = Options(max_tile_bytes=limit, validate=False)
                # (the pieces made before a compile error are checked all the same)
                with suppress(CompileError):
                    run_pipeline(module.clone(), machine, options=options, stop_after=STAGE)
                for ctx in seen:
                    for f in ctx._facts.values():  # (decoded from the type's parameters)
                        assert (f.valid, f.extent) == (f.type.valid, f.type.extent)
                    for value, pieces in ctx.pieces.items():
                        t = value.type
                        assert type(t) is TileType
                        for p in pieces:
                            if p.extent == 0:
                                assert (p.row0, p.rows) == (0, t.valid[0]), (value, pieces)
                                whole += 1
                            else:
                                split += 1
    assert whole > 4000 and split > 3000


def _body_state(block: Block) -> list[object]:
    """What ``drop_all_references`` leaves in a body: its blocks' and ops' links and
    every value's uses, in walk order."""
    out: list[object] = [block.parent, block._next_block, block._prev_block]
    out += [a.first_use for a in block.args]
    for op in block.ops:
        out += [op.parent, op._operand_uses, op._successors, op._successor_uses]
        out += [r.first_use for r in op.results]
        for region in op.regions:
            out.append(region.parent)
            for inner in region.blocks:
                out += _body_state(inner)
    return out


def test_release_leaves_what_drop_all_references_leaves() -> None:
    """``select.release`` (the teardown of the old body of a kernel legalized in place)
    leaves the state xDSL's ``drop_all_references`` leaves, and frees the old uses at
    once (without the cyclic collector), over kernels with run-time loops."""
    for name in ("softmax_rows", "rmsnorm_rows", "gemm"):
        for k in kernels_in(import_file(EXAMPLES / f"{name}.py")).values():
            bodies = []
            for _ in range(2):
                f = k.trace().module.clone().body.block.first_op
                body = f.body.block
                f.body.detach_block(body)
                bodies.append(body)
            mine, xdsls = bodies
            uses = [weakref.ref(u) for op in mine.walk() for u in op._operand_uses]
            assert uses
            enabled = gc.isenabled()
            gc.disable()
            try:
                legalize.select.release(mine)
                xdsls.drop_all_references()
                assert all(u() is None for u in uses)
            finally:
                if enabled:
                    gc.enable()
            assert _body_state(mine) == _body_state(xdsls)
            assert all(x is None or x == () for x in _body_state(mine))


def test_an_access_window_is_unpacked_as_its_properties_read() -> None:
    """``rules.origin_and_pe`` (the loads' and stores' window offsets unpacked from the
    properties' bytes) agrees with ``op.origin`` and ``op.pe_offsets`` on every access
    op of the corpus, with and without PE offsets, negative ones included."""
    ops = [op for module in _modules() for op in module.walk() if isinstance(op, AccessOp)]
    # (unverified ops: the decoding of any pair, whatever verify accepts)
    x = create_ssa_value(TensorType("FP32", (64, 64)))
    load = LoadOp(x, (40, -3), TileType("FP32", (8, 64)), pe=(-8, 1 << 40))
    ops += [load, StoreOp(load.result, x, (-(1 << 62), 7), pe=(2, -1))]
    with_pe = [op for op in ops if op.pe is not None]
    assert len(ops) > 300 and len(with_pe) > 50
    assert any(p < 0 for op in with_pe for p in op.pe_offsets)
    for op in ops:
        assert origin_and_pe(op) == (op.origin, op.pe_offsets), op
