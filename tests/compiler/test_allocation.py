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


#: a TSORT (two 4 KiB destinations) on the tiny machine whose source sits in front of a
#: dead 4 KiB tile: the results fit only when both go into the source's hand (the second
#: evicting the source itself, which the bundle has already read); pushing each to its
#: own best hand found no room ("the tiles live ... need more than the capacity")
ASSIGNMENT = """
func.func @assignment(%in_BF16: !tile.tensor<BF16, 128x128>, %in_S8: !tile.tensor<S8, 128x128>, %in_FP32: !tile.tensor<FP32, 128x128>, %out_BF16: !tile.tensor<BF16, 128x128>, %out_S8: !tile.tensor<S8, 128x128>, %out_FP32: !tile.tensor<FP32, 128x128>) attributes {"tile.pes" = 2 : i64} {
  %0 = tile.load %in_FP32[9, 14] pe [64, 0] : !tile.tensor<FP32, 128x128> -> !tile.tile<FP32, 16x64>
  %1 = tile.load %in_BF16[0, 71] pe [64, 0] : !tile.tensor<BF16, 128x128> -> !tile.tile<BF16, 33x32>
  %2 = tile.load %in_BF16[23, 60] pe [64, 0] : !tile.tensor<BF16, 128x128> -> !tile.tile<BF16, 33x32>
  %3 = tile.muls %0, 3.0 : !tile.tile<FP32, 16x64>
  %4 = tile.min %2, %1 : !tile.tile<BF16, 33x32>
  %5 = tile.cmps eq %1, nan : !tile.tile<BF16, 33x32> -> !tile.tile<PRED, 33x32>
  %6 = tile.sel %5, %1, %4 : !tile.tile<PRED, 33x32>, !tile.tile<BF16, 33x32>
  %7 = tile.rowmin %3 : !tile.tile<FP32, 16x64> -> !tile.tile<FP32, 16x1>
  %8 = tile.rowexpandsub %3, %7 : !tile.tile<FP32, 16x64>, !tile.tile<FP32, 16x1>
  %9 = tile.insert %2, %4[0, 0] : !tile.tile<BF16, 33x32>, !tile.tile<BF16, 33x32>
  %10 = tile.rowsum %6 : !tile.tile<BF16, 33x32> -> !tile.tile<BF16, 33x1>
  %11 = tile.rowexpandadd %6, %10 : !tile.tile<BF16, 33x32>, !tile.tile<BF16, 33x1>
  %12 = tile.abs %3 : !tile.tile<FP32, 16x64>
  %13 = tile.tri diagonal -3 upper : !tile.tile<FP32, 17x24>
  %14 = tile.extract %0[0, 0] : !tile.tile<FP32, 16x64> -> !tile.tile<FP32, 13x9>
  %15 = tile.partmul %14, %0 : !tile.tile<FP32, 13x9>, !tile.tile<FP32, 16x64> -> !tile.tile<FP32, 16x64>
  %16 = tile.partmin %4, %1 : !tile.tile<BF16, 33x32>, !tile.tile<BF16, 33x32> -> !tile.tile<BF16, 33x32>
  %17 = tile.load %in_BF16[0, 78] pe [64, 0] : !tile.tensor<BF16, 128x128> -> !tile.tile<BF16, 33x32>
  %18 = tile.rowprod %8 : !tile.tile<FP32, 16x64> -> !tile.tile<FP32, 16x1>
  %19 = tile.rowexpandexpdif %8, %18 : !tile.tile<FP32, 16x64>, !tile.tile<FP32, 16x1> -> !tile.tile<FP32, 16x64>
  %20 = tile.sub %17, %11 : !tile.tile<BF16, 33x32>
  %21 = tile.trans %9 : !tile.tile<BF16, 33x32> -> !tile.tile<BF16, 32x33>
  %22 = tile.colsum %19 : !tile.tile<FP32, 16x64> -> !tile.tile<FP32, 1x64>
  %23 = tile.colexpand %22 : !tile.tile<FP32, 1x64> -> !tile.tile<FP32, 16x64>
  %24 = tile.abs %19 : !tile.tile<FP32, 16x64>
  %25, %26 = tile.sort %12 width 16 descending : !tile.tile<FP32, 16x64> -> !tile.tile<FP32, 16x64>, !tile.tile<U32, 16x64>
  %27 = tile.rowsum %19 : !tile.tile<FP32, 16x64> -> !tile.tile<FP32, 16x1>
  %28 = tile.rowexpandexpdif %19, %27 : !tile.tile<FP32, 16x64>, !tile.tile<FP32, 16x1> -> !tile.tile<FP32, 16x64>
  %29 = tile.extract %6[24, 30] : !tile.tile<BF16, 33x32> -> !tile.tile<BF16, 3x2>
  %30 = tile.insert %28, %0[0, 0] : !tile.tile<FP32, 16x64>, !tile.tile<FP32, 16x64>
  %31 = tile.extract %23[7, 21] : !tile.tile<FP32, 16x64> -> !tile.tile<FP32, 5x8>
  %32 = tile.extract %31[3, 0] : !tile.tile<FP32, 5x8> -> !tile.tile<FP32, 2x3>
  %33 = tile.extract %24[2, 4] : !tile.tile<FP32, 16x64> -> !tile.tile<FP32, 1x11>
  %34, %35 = tile.sort %33 width 11 descending : !tile.tile<FP32, 1x11> -> !tile.tile<FP32, 1x11>, !tile.tile<U32, 1x11>
  %36 = tile.extract %24[8, 6] : !tile.tile<FP32, 16x64> -> !tile.tile<FP32, 1x41>
  %37, %38 = tile.sort %36 width 41 descending : !tile.tile<FP32, 1x41> -> !tile.tile<FP32, 1x41>, !tile.tile<U32, 1x41>
  %39 = tile.mrgsort %34, %37 descending : !tile.tile<FP32, 1x11>, !tile.tile<FP32, 1x41> -> !tile.tile<FP32, 1x52>
  %40 = tile.cvt %26 sat : !tile.tile<U32, 16x64> -> !tile.tile<FP32, 16x64>
  tile.store %39, %out_FP32[6, 38] pe [64, 0] : !tile.tile<FP32, 1x52>, !tile.tensor<FP32, 128x128>
  tile.store %32, %out_FP32[29, 120] step 3 pe [64, 0] : !tile.tile<FP32, 2x3>, !tile.tensor<FP32, 128x128>
  tile.store %30, %out_FP32[18, 23] step 3 pe [64, 0] : !tile.tile<FP32, 16x64>, !tile.tensor<FP32, 128x128>
  tile.store %29, %out_BF16[52, 106] pe [64, 0] : !tile.tile<BF16, 3x2>, !tile.tensor<BF16, 128x128>
  tile.store %40, %out_FP32[4, 34] pe [64, 0] : !tile.tile<FP32, 16x64>, !tile.tensor<FP32, 128x128>
  tile.store %21, %out_BF16[0, 76] step 2 pe [64, 0] : !tile.tile<BF16, 32x33>, !tile.tensor<BF16, 128x128>
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


def test_two_destinations_try_every_assignment_of_hands() -> None:
    module = _parse(ASSIGNMENT)
    for seed in range(3):
        verify_module(module, adversarial_inputs(module, seed), MACHINES["tiny"])
