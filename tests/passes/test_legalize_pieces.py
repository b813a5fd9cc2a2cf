"""What ``legalize`` records of a tile value's row pieces.

The unsplit fast path of ``pieces.piecewise`` takes an operand whose one piece has
extent 0 as the whole tile: this pins that such a piece holds every valid row from
row 0, for every place that makes pieces (the rules, loops, matmuls, views, column
reductions), over examples with loops and matmuls, the example kernels, random kernels
and the compound cases, split at two tile size limits (mutation-checked: a loop's or a
matmul's split pieces recorded with extent 0 fail it).
"""

from __future__ import annotations

from contextlib import suppress
from pathlib import Path

import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block

from benchmarks.bench_compiler import MACHINES
from benchmarks.bench_compound import _cases, _module
from ptoc.dialects.tile_types import TileType
from ptoc.loader import import_file, kernels_in
from ptoc.passes import legalize
from ptoc.passes.diagnostics import CompileError
from ptoc.passes.legalize.ctx import LegalizeCtx
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
