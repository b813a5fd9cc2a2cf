"""Legalize and allocation corner cases found by the random-kernel corpus, pinned as IR."""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects import builtin, func
from xdsl.parser import Parser

from ptoc.dialects.tile import Tile
from ptoc.passes.execute import verify_module
from ptoc.testing import adversarial_inputs

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


#: a TSORT (two 4 KiB destinations) on the tiny machine when no hand is full: only after
#: two fillers into the hand holding two dead 2 KiB tiles do the destinations' own pushes
#: evict them and fit
FILLERS_FIRST = """
func.func @fillers_first(%in_U16: !tile.tensor<U16, 128x128>, %in_U8: !tile.tensor<U8, 128x128>, %in_S8: !tile.tensor<S8, 128x128>, %out_U16: !tile.tensor<U16, 128x128>, %out_U8: !tile.tensor<U8, 128x128>, %out_S8: !tile.tensor<S8, 128x128>) attributes {"tile.pes" = 2 : i64} {
  %0 = tile.load %in_U8[31, 14] pe [64, 0] : !tile.tensor<U8, 128x128> -> !tile.tile<U8, 16x64>
  %1 = tile.load %in_U8[19, 57] pe [64, 0] : !tile.tensor<U8, 128x128> -> !tile.tile<U8, 33x32>
  %2 = tile.load %in_U16[32, 81] pe [64, 0] : !tile.tensor<U16, 128x128> -> !tile.tile<U16, 3x17>
  %3 = tile.load %in_S8[42, 119] pe [64, 0] : !tile.tensor<S8, 128x128> -> !tile.tile<S8, 5x3>
  %4 = tile.load %in_S8[24, 3] step 3 pe [64, 0] : !tile.tensor<S8, 128x128> -> !tile.tile<S8, 1x8>
  %5 = tile.load %in_S8[17, 12] step 2 pe [64, 0] : !tile.tensor<S8, 128x128> -> !tile.tile<S8, 7x100>
  %6 = tile.load %in_S8[55, 5] pe [64, 0] : !tile.tensor<S8, 128x128> -> !tile.tile<S8, 8x107, valid 7x100>
  %7 = tile.tri diagonal 6 upper : !tile.tile<U16, 15x37>
  %8 = tile.cvt %5 sat : !tile.tile<S8, 7x100> -> !tile.tile<U8, 7x100>
  %9 = tile.cmps gt %3, -128 : !tile.tile<S8, 5x3> -> !tile.tile<PRED, 5x3>
  %10 = tile.sels %9, %3, 87 : !tile.tile<PRED, 5x3>, !tile.tile<S8, 5x3>
  %11 = tile.partmax %3, %10 : !tile.tile<S8, 5x3>, !tile.tile<S8, 5x3> -> !tile.tile<S8, 5x3>
  %12 = tile.adds %1, 3 : !tile.tile<U8, 33x32>
  %13 = tile.ci start 26239 descending : !tile.tile<U16, 1x58>
  %14 = tile.cvt %4 sat : !tile.tile<S8, 1x8> -> !tile.tile<U16, 1x8>
  %15 = tile.colargmax %2 : !tile.tile<U16, 3x17> -> !tile.tile<U32, 1x17>
  %16 = tile.subs %4, 3 : !tile.tile<S8, 1x8>
  %17 = tile.cmp le %12, %1 : !tile.tile<U8, 33x32> -> !tile.tile<PRED, 33x32>
  %18 = tile.sel %17, %12, %1 : !tile.tile<PRED, 33x32>, !tile.tile<U8, 33x32>
  %19 = tile.extract %18[21, 25] : !tile.tile<U8, 33x32> -> !tile.tile<U8, 8x5>
  %20 = tile.cvt %10 sat : !tile.tile<S8, 5x3> -> !tile.tile<U8, 5x3>
  %21 = tile.cvt %10 : !tile.tile<S8, 5x3> -> !tile.tile<FP32, 5x3>
  %22 = tile.trans %21 : !tile.tile<FP32, 5x3> -> !tile.tile<FP32, 3x5>
  %23, %24 = tile.sort %22 width 5 descending : !tile.tile<FP32, 3x5> -> !tile.tile<FP32, 3x5>, !tile.tile<U32, 3x5>
  %25 = tile.trans %24 : !tile.tile<U32, 3x5> -> !tile.tile<U32, 5x3>
  %26 = tile.cvt %25 : !tile.tile<U32, 5x3> -> !tile.tile<U16, 5x3>
  %27 = tile.scatter %10, %26 : !tile.tile<S8, 5x3>, !tile.tile<U16, 5x3> -> !tile.tile<S8, 10x3>
  %28 = tile.add %27, %27 : !tile.tile<S8, 10x3>
  %29 = tile.subs %14, 2 : !tile.tile<U16, 1x8>
  %30 = tile.extract %11[2, 2] : !tile.tile<S8, 5x3> -> !tile.tile<S8, 1x1>
  %31 = tile.add %11, %11 : !tile.tile<S8, 5x3>
  %32 = tile.extract %27[1, 2] : !tile.tile<S8, 10x3> -> !tile.tile<S8, 1x1>
  %33 = tile.load %in_U16[50, 0] pe [64, 0] : !tile.tensor<U16, 128x128> -> !tile.tile<U16, 5x3>
  %34 = tile.tri diagonal -18 : !tile.tile<U16, 25x19>
  %35 = tile.rowmin %19 : !tile.tile<U8, 8x5> -> !tile.tile<U8, 8x1>
  %36 = tile.rowexpandadd %19, %35 : !tile.tile<U8, 8x5>, !tile.tile<U8, 8x1>
  %37 = tile.rowprod %33 : !tile.tile<U16, 5x3> -> !tile.tile<U16, 5x1>
  %38 = tile.rowexpandsub %33, %37 : !tile.tile<U16, 5x3>, !tile.tile<U16, 5x1>
  %39 = tile.rowsum %20 : !tile.tile<U8, 5x3> -> !tile.tile<U8, 5x1>
  %40 = tile.rowexpandadd %20, %39 : !tile.tile<U8, 5x3>, !tile.tile<U8, 5x1>
  %41 = tile.cvt %27 : !tile.tile<S8, 10x3> -> !tile.tile<S16, 10x3>
  %42 = tile.cvt %41 sat : !tile.tile<S16, 10x3> -> !tile.tile<S8, 10x3>
  %43 = tile.cvt %33 : !tile.tile<U16, 5x3> -> !tile.tile<FP32, 5x3>
  %44 = tile.trans %43 : !tile.tile<FP32, 5x3> -> !tile.tile<FP32, 3x5>
  %45, %46 = tile.sort %44 width 5 descending : !tile.tile<FP32, 3x5> -> !tile.tile<FP32, 3x5>, !tile.tile<U32, 3x5>
  %47 = tile.trans %46 : !tile.tile<U32, 3x5> -> !tile.tile<U32, 5x3>
  %48 = tile.cvt %47 : !tile.tile<U32, 5x3> -> !tile.tile<U16, 5x3>
  %49 = tile.scatter %33, %48 : !tile.tile<U16, 5x3>, !tile.tile<U16, 5x3> -> !tile.tile<U16, 33x3>
  %50 = tile.cvt %3 sat : !tile.tile<S8, 5x3> -> !tile.tile<U8, 5x3>
  %51 = tile.cvt %34 : !tile.tile<U16, 25x19> -> !tile.tile<FP32, 25x19>
  %52 = tile.trans %51 : !tile.tile<FP32, 25x19> -> !tile.tile<FP32, 19x25>
  %53, %54 = tile.sort %52 width 25 descending : !tile.tile<FP32, 19x25> -> !tile.tile<FP32, 19x25>, !tile.tile<U32, 19x25>
  %55 = tile.trans %54 : !tile.tile<U32, 19x25> -> !tile.tile<U32, 25x19>
  %56 = tile.cvt %55 : !tile.tile<U32, 25x19> -> !tile.tile<S16, 25x19>
  %57 = tile.scatter %34, %56 : !tile.tile<U16, 25x19>, !tile.tile<S16, 25x19> -> !tile.tile<U16, 25x19>
  %58 = tile.extract %36[5, 2] : !tile.tile<U8, 8x5> -> !tile.tile<U8, 2x2>
  %59 = tile.rowmin %58 : !tile.tile<U8, 2x2> -> !tile.tile<U8, 2x1>
  %60 = tile.rowexpandmax %58, %59 : !tile.tile<U8, 2x2>, !tile.tile<U8, 2x1>
  %61 = tile.fillpad %32, -101 : !tile.tile<S8, 1x1> -> !tile.tile<S8, 33x2>
  %62 = tile.extract %61[0, 0] : !tile.tile<S8, 33x2> -> !tile.tile<S8, 13x1>
  %63 = tile.partmax %61, %62 : !tile.tile<S8, 33x2>, !tile.tile<S8, 13x1> -> !tile.tile<S8, 33x2>
  %64 = tile.rowmax %42 : !tile.tile<S8, 10x3> -> !tile.tile<S8, 10x1>
  %65 = tile.rowexpandadd %42, %64 : !tile.tile<S8, 10x3>, !tile.tile<S8, 10x1>
  %66 = tile.and %36, %19 : !tile.tile<U8, 8x5>
  %67 = tile.cvt %66 sat : !tile.tile<U8, 8x5> -> !tile.tile<U16, 8x5>
  %68 = tile.or %66, %19 : !tile.tile<U8, 8x5>
  %69 = tile.adds %7, 1 : !tile.tile<U16, 15x37>
  %70 = tile.extract %16[0, 4] : !tile.tile<S8, 1x8> -> !tile.tile<S8, 1x3>
  %71 = tile.cvt %58 : !tile.tile<U8, 2x2> -> !tile.tile<FP32, 2x2>
  %72 = tile.trans %71 : !tile.tile<FP32, 2x2> -> !tile.tile<FP32, 2x2>
  %73, %74 = tile.sort %72 width 2 : !tile.tile<FP32, 2x2> -> !tile.tile<FP32, 2x2>, !tile.tile<U32, 2x2>
  %75 = tile.trans %74 : !tile.tile<U32, 2x2> -> !tile.tile<U32, 2x2>
  %76 = tile.cvt %75 : !tile.tile<U32, 2x2> -> !tile.tile<S16, 2x2>
  %77 = tile.scatter %58, %76 : !tile.tile<U8, 2x2>, !tile.tile<S16, 2x2> -> !tile.tile<U8, 33x2>
  %78 = tile.adds %70, 2 : !tile.tile<S8, 1x3>
  %79 = tile.add %20, %20 : !tile.tile<U8, 5x3>
  %80 = tile.ci start 69001 : !tile.tile<U16, 1x66>
  %81 = tile.cvt %50 : !tile.tile<U8, 5x3> -> !tile.tile<FP32, 5x3>
  %82 = tile.trans %81 : !tile.tile<FP32, 5x3> -> !tile.tile<FP32, 3x5>
  %83, %84 = tile.sort %82 width 5 : !tile.tile<FP32, 3x5> -> !tile.tile<FP32, 3x5>, !tile.tile<U32, 3x5>
  %85 = tile.trans %84 : !tile.tile<U32, 3x5> -> !tile.tile<U32, 5x3>
  %86 = tile.cvt %85 : !tile.tile<U32, 5x3> -> !tile.tile<S16, 5x3>
  %87 = tile.scatter %50, %86 : !tile.tile<U8, 5x3>, !tile.tile<S16, 5x3> -> !tile.tile<U8, 14x3>
  %88 = tile.extract %20[0, 1] : !tile.tile<U8, 5x3> -> !tile.tile<U8, 3x1>
  %89 = tile.cvt %15 sat : !tile.tile<U32, 1x17> -> !tile.tile<S8, 1x17>
  tile.store %88, %out_U8[34, 4] step 3 pe [64, 0] : !tile.tile<U8, 3x1>, !tile.tensor<U8, 128x128>
  tile.store %87, %out_U8[45, 68] pe [64, 0] : !tile.tile<U8, 14x3>, !tile.tensor<U8, 128x128>
  tile.store %80, %out_U16[62, 53] pe [64, 0] : !tile.tile<U16, 1x66>, !tile.tensor<U16, 128x128>
  tile.store %79, %out_U8[14, 71] pe [64, 0] : !tile.tile<U8, 5x3>, !tile.tensor<U8, 128x128>
  tile.store %78, %out_S8[13, 39] pe [64, 0] : !tile.tile<S8, 1x3>, !tile.tensor<S8, 128x128>
  tile.store %77, %out_U8[20, 108] pe [64, 0] : !tile.tile<U8, 33x2>, !tile.tensor<U8, 128x128>
  tile.store %69, %out_U16[24, 71] pe [64, 0] : !tile.tile<U16, 15x37>, !tile.tensor<U16, 128x128>
  tile.store %68, %out_U8[40, 1] pe [64, 0] : !tile.tile<U8, 8x5>, !tile.tensor<U8, 128x128>
  tile.store %67, %out_U16[19, 90] pe [64, 0] : !tile.tile<U16, 8x5>, !tile.tensor<U16, 128x128>
  tile.store %65, %out_S8[18, 71] step 3 pe [64, 0] : !tile.tile<S8, 10x3>, !tile.tensor<S8, 128x128>
  tile.store %63, %out_S8[23, 2] pe [64, 0] : !tile.tile<S8, 33x2>, !tile.tensor<S8, 128x128>
  tile.store %60, %out_U8[0, 111] pe [64, 0] : !tile.tile<U8, 2x2>, !tile.tensor<U8, 128x128>
  tile.store %57, %out_U16[1, 38] pe [64, 0] : !tile.tile<U16, 25x19>, !tile.tensor<U16, 128x128>
  tile.store %49, %out_U16[1, 23] pe [64, 0] : !tile.tile<U16, 33x3>, !tile.tensor<U16, 128x128>
  func.return
}
"""  # noqa: E501


#: the cramped machine (8 KiB, 2 KiB pieces) and U16/U8 33x32 tiles: column arg-max/min
#: need their U8 operands whole (2 KiB); keeping the U16 chains behind them whole too
#: left a TXOR with two whole 4 KiB sources and a whole 4 KiB result ("its sources and
#: results need 12288 bytes"), where pieces and assembled U8 operands fit
WHOLE_CHAINS = """
func.func @whole_chains(%in_S16: !tile.tensor<S16, 64x128>, %in_U16: !tile.tensor<U16, 64x128>, %in_U8: !tile.tensor<U8, 64x128>, %out_S16: !tile.tensor<S16, 64x128>, %out_U16: !tile.tensor<U16, 64x128>, %out_U8: !tile.tensor<U8, 64x128>) attributes {"tile.pes" = 1 : i64} {
  %0 = tile.load %in_U16[31, 71] pe [64, 0] : !tile.tensor<U16, 64x128> -> !tile.tile<U16, 33x32>
  %1 = tile.load %in_U16[18, 49] step 3 pe [64, 0] : !tile.tensor<U16, 64x128> -> !tile.tile<U16, 16x64>
  %2 = tile.subs %0, 2 : !tile.tile<U16, 33x32>
  %3 = tile.xor %0, %2 : !tile.tile<U16, 33x32>
  %4 = tile.cvt %2 sat : !tile.tile<U16, 33x32> -> !tile.tile<U8, 33x32>
  %5 = tile.muls %0, 2 : !tile.tile<U16, 33x32>
  %6 = tile.subs %4, 1 : !tile.tile<U8, 33x32>
  %7 = tile.colargmax %4 : !tile.tile<U8, 33x32> -> !tile.tile<U32, 1x32>
  %8 = tile.cvt %3 sat : !tile.tile<U16, 33x32> -> !tile.tile<U8, 33x32>
  %9 = tile.rowsum %1 : !tile.tile<U16, 16x64> -> !tile.tile<U16, 16x1>
  %10 = tile.rowexpandmax %1, %9 : !tile.tile<U16, 16x64>, !tile.tile<U16, 16x1>
  %11 = tile.extract %10[8, 41] : !tile.tile<U16, 16x64> -> !tile.tile<U16, 4x16>
  %12 = tile.rowmin %6 : !tile.tile<U8, 33x32> -> !tile.tile<U8, 33x1>
  %13 = tile.rowexpandsub %6, %12 : !tile.tile<U8, 33x32>, !tile.tile<U8, 33x1>
  %14 = tile.or %10, %1 : !tile.tile<U16, 16x64>
  %15 = tile.partmin %13, %8 : !tile.tile<U8, 33x32>, !tile.tile<U8, 33x32> -> !tile.tile<U8, 33x32>
  %16 = tile.cvt %5 sat : !tile.tile<U16, 33x32> -> !tile.tile<S16, 33x32>
  %17 = tile.maxs %16, 2 : !tile.tile<S16, 33x32>
  %18 = tile.rowmin %4 : !tile.tile<U8, 33x32> -> !tile.tile<U8, 33x1>
  %19 = tile.rowexpandmax %4, %18 : !tile.tile<U8, 33x32>, !tile.tile<U8, 33x1>
  %20 = tile.and %15, %13 : !tile.tile<U8, 33x32>
  %21 = tile.cmp lt %13, %6 : !tile.tile<U8, 33x32> -> !tile.tile<PRED, 33x32>
  %22 = tile.sels %21, %13, 1 : !tile.tile<PRED, 33x32>, !tile.tile<U8, 33x32>
  %23 = tile.cvt %7 sat : !tile.tile<U32, 1x32> -> !tile.tile<U16, 1x32>
  tile.store %22, %out_U8[29, 7] pe [64, 0] : !tile.tile<U8, 33x32>, !tile.tensor<U8, 64x128>
  tile.store %20, %out_U8[8, 92] pe [64, 0] : !tile.tile<U8, 33x32>, !tile.tensor<U8, 64x128>
  tile.store %19, %out_U8[19, 68] pe [64, 0] : !tile.tile<U8, 33x32>, !tile.tensor<U8, 64x128>
  tile.store %17, %out_S16[21, 52] pe [64, 0] : !tile.tile<S16, 33x32>, !tile.tensor<S16, 64x128>
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


def test_fillers_make_a_short_queue_evict_for_the_destinations() -> None:
    module = _parse(FILLERS_FIRST)
    for seed in range(3):
        verify_module(module, adversarial_inputs(module, seed), MACHINES["tiny"])


def test_a_producer_stays_whole_only_when_that_beats_assembling_its_result() -> None:
    module = _parse(WHOLE_CHAINS)
    for seed in range(3):
        verify_module(module, adversarial_inputs(module, seed), MACHINES["cramped"])
