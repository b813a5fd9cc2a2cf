"""Allocation corner cases found by the random-kernel corpus, pinned as IR."""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects import builtin, func
from xdsl.parser import Parser

from ptoc.dialects.random_kernel import adversarial_inputs
from ptoc.dialects.tile import Tile
from ptoc.passes.execute import verify_module

from .conftest import MACHINES

#: a TSORT (two 4 KiB destinations) on the tiny machine while dead 4 KiB tiles sit behind
#: 128-byte fillers: every single push was feasible, both together were not, and the
#: allocator gave up ("the tiles live ... need more than the 16384-byte capacity") instead
#: of pushing the fillers that release the dead tiles
TWO_RESULTS = """
func.func @two_results(%in_FP32: !tile.tensor<FP32, 64x128>, %in_U8: !tile.tensor<U8, 64x128>, %in_S32: !tile.tensor<S32, 64x128>, %out_FP32: !tile.tensor<FP32, 64x128>, %out_U8: !tile.tensor<U8, 64x128>, %out_S32: !tile.tensor<S32, 64x128>) attributes {"tile.pes" = 1 : i64} {
  %0 = tile.load %in_U8[1, 12] : !tile.tensor<U8, 64x128> -> !tile.tile<U8, 1x64>
  %1 = tile.load %in_FP32[22, 19] : !tile.tensor<FP32, 64x128> -> !tile.tile<FP32, 4x32>
  %2 = tile.recip %1 : !tile.tile<FP32, 4x32>
  %3 = tile.load %in_FP32[57, 8] : !tile.tensor<FP32, 64x128> -> !tile.tile<FP32, 7x100>
  %4 = tile.colmin %0 : !tile.tile<U8, 1x64> -> !tile.tile<U8, 1x64>
  %5 = tile.insert %1, %2[0, 0] : !tile.tile<FP32, 4x32>, !tile.tile<FP32, 4x32>
  %6 = tile.extract %3[0, 0] : !tile.tile<FP32, 7x100> -> !tile.tile<FP32, 3x4>
  %7 = tile.partadd %6, %3 : !tile.tile<FP32, 3x4>, !tile.tile<FP32, 7x100> -> !tile.tile<FP32, 7x100>
  %8 = tile.recip %2 : !tile.tile<FP32, 4x32>
  %9 = tile.rowmin %3 : !tile.tile<FP32, 7x100> -> !tile.tile<FP32, 7x1>
  %10 = tile.rowexpandmul %3, %9 : !tile.tile<FP32, 7x100>, !tile.tile<FP32, 7x1>
  %11 = tile.concat %8, %1 : !tile.tile<FP32, 4x32>, !tile.tile<FP32, 4x32> -> !tile.tile<FP32, 4x64>
  %12 = tile.cvt %0 sat : !tile.tile<U8, 1x64> -> !tile.tile<S32, 1x64>
  %13 = tile.cmp ge %5, %1 : !tile.tile<FP32, 4x32> -> !tile.tile<PRED, 4x32>
  %14 = tile.sel %13, %5, %8 : !tile.tile<PRED, 4x32>, !tile.tile<FP32, 4x32>
  %15 = tile.maxs %12, 3 : !tile.tile<S32, 1x64>
  %16, %17 = tile.sort %7 width 1 descending : !tile.tile<FP32, 7x100> -> !tile.tile<FP32, 7x100>, !tile.tile<U32, 7x100>
  %18 = tile.rowprod %15 : !tile.tile<S32, 1x64> -> !tile.tile<S32, 1x1>
  %19 = tile.rowexpandmin %15, %18 : !tile.tile<S32, 1x64>, !tile.tile<S32, 1x1>
  %20 = tile.extract %14[0, 1] : !tile.tile<FP32, 4x32> -> !tile.tile<FP32, 1x23>
  %21, %22 = tile.sort %20 width 23 descending : !tile.tile<FP32, 1x23> -> !tile.tile<FP32, 1x23>, !tile.tile<U32, 1x23>
  %23 = tile.mrgsort %21, %21 descending : !tile.tile<FP32, 1x23>, !tile.tile<FP32, 1x23> -> !tile.tile<FP32, 1x46>
  tile.store %23, %out_FP32[55, 27] : !tile.tile<FP32, 1x46>, !tile.tensor<FP32, 64x128>
  tile.store %19, %out_S32[37, 26] : !tile.tile<S32, 1x64>, !tile.tensor<S32, 64x128>
  tile.store %16, %out_FP32[26, 10] : !tile.tile<FP32, 7x100>, !tile.tensor<FP32, 64x128>
  tile.store %11, %out_FP32[27, 3] : !tile.tile<FP32, 4x64>, !tile.tensor<FP32, 64x128>
  func.return
}
"""  # noqa: E501


def _parse(text: str) -> builtin.ModuleOp:
    ctx = Context()
    for d in (builtin.Builtin, func.Func, Tile):
        ctx.load_dialect(d)
    module = Parser(ctx, text).parse_module()
    module.verify()
    return module


def test_two_destinations_release_dead_tiles_behind_fillers() -> None:
    module = _parse(TWO_RESULTS)
    for seed in range(3):
        verify_module(module, adversarial_inputs(module, seed), MACHINES["tiny"])
