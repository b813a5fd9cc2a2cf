// RUN: xdsl-opt %s | filecheck %s
// RUN: xdsl-opt %s --print-op-generic | xdsl-opt | filecheck %s
// RUN: xdsl-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @kernel
// CHECK-SAME: attributes {tile.pes = 2 : i64}
func.func @kernel(%x: !tile.tensor<FP32, 16x64>, %y: !tile.tensor<FP16, 16x64, stride 80>, %out: !tile.tensor<S8, 16x64>) attributes {"tile.pes" = 2 : i64} {
  // CHECK-NEXT: %t = tile.load %x[0, 0] pe [8, 0] : !tile.tensor<FP32, 16x64> -> !tile.tile<FP32, 8x64>
  %t = tile.load %x[0, 0] pe [8, 0] : !tile.tensor<FP32, 16x64> -> !tile.tile<FP32, 8x64>
  // CHECK-NEXT: %h = tile.load %y[1, 2] step 2 : !tile.tensor<FP16, 16x64, stride 80> -> !tile.tile<FP16, 8x64, valid 7x60>
  %h = tile.load %y[1, 2] step 2 : !tile.tensor<FP16, 16x64, stride 80> -> !tile.tile<FP16, 8x64, valid 7x60>
  // CHECK-NEXT: %a = tile.add %t, %t : !tile.tile<FP32, 8x64>
  %a = tile.add %t, %t : !tile.tile<FP32, 8x64>
  // CHECK-NEXT: %s = tile.adds %a, 0.1 : !tile.tile<FP32, 8x64>
  %s = tile.adds %a, 0.1 : !tile.tile<FP32, 8x64>
  // CHECK-NEXT: %n = tile.muls %s, -inf : !tile.tile<FP32, 8x64>
  %n = tile.muls %s, -inf : !tile.tile<FP32, 8x64>
  // CHECK-NEXT: %e = tile.exp %n : !tile.tile<FP32, 8x64>
  %e = tile.exp %n : !tile.tile<FP32, 8x64>
  // CHECK-NEXT: %m = tile.rowmax %e : !tile.tile<FP32, 8x64> -> !tile.tile<FP32, 8x1>
  %m = tile.rowmax %e : !tile.tile<FP32, 8x64> -> !tile.tile<FP32, 8x1>
  // CHECK-NEXT: %d = tile.rowexpandsub %e, %m : !tile.tile<FP32, 8x64>, !tile.tile<FP32, 8x1>
  %d = tile.rowexpandsub %e, %m : !tile.tile<FP32, 8x64>, !tile.tile<FP32, 8x1>
  // CHECK-NEXT: %c = tile.cvt %d rmode rtz sat : !tile.tile<FP32, 8x64> -> !tile.tile<FP16, 8x64>
  %c = tile.cvt %d rmode rtz sat : !tile.tile<FP32, 8x64> -> !tile.tile<FP16, 8x64>
  // CHECK-NEXT: %p = tile.cmps lt %d, nan : !tile.tile<FP32, 8x64> -> !tile.tile<PRED, 8x64>
  %p = tile.cmps lt %d, nan : !tile.tile<FP32, 8x64> -> !tile.tile<PRED, 8x64>
  // CHECK-NEXT: %w = tile.sels %p, %d, -0.0 : !tile.tile<PRED, 8x64>, !tile.tile<FP32, 8x64>
  %w = tile.sels %p, %d, -0.0 : !tile.tile<PRED, 8x64>, !tile.tile<FP32, 8x64>
  // CHECK-NEXT: %q = tile.quant %w mult 127.5 zp -3 rmode rna sat : !tile.tile<FP32, 8x64> -> !tile.tile<S8, 8x64>
  %q = tile.quant %w mult 127.5 zp -3 rmode rna sat : !tile.tile<FP32, 8x64> -> !tile.tile<S8, 8x64>
  // CHECK-NEXT: %v, %i = tile.sort %w width 16 descending : !tile.tile<FP32, 8x64> -> !tile.tile<FP32, 8x64>, !tile.tile<U32, 8x64>
  %v, %i = tile.sort %w width 16 descending : !tile.tile<FP32, 8x64> -> !tile.tile<FP32, 8x64>, !tile.tile<U32, 8x64>
  // CHECK-NEXT: %f = tile.full 1.0e-05 : !tile.tile<FP32, 4x16, valid 3x10>
  %f = tile.full 1.0e-05 : !tile.tile<FP32, 4x16, valid 3x10>
  // CHECK-NEXT: %ci = tile.ci start 5 descending : !tile.tile<S32, 1x16>
  %ci = tile.ci start 5 descending : !tile.tile<S32, 1x16>
  // CHECK-NEXT: %tr = tile.trans %v : !tile.tile<FP32, 8x64> -> !tile.tile<FP32, 64x8>
  %tr = tile.trans %v : !tile.tile<FP32, 8x64> -> !tile.tile<FP32, 64x8>
  // CHECK-NEXT: %ex = tile.extract %v[1, 2] : !tile.tile<FP32, 8x64> -> !tile.tile<FP32, 4x8>
  %ex = tile.extract %v[1, 2] : !tile.tile<FP32, 8x64> -> !tile.tile<FP32, 4x8>
  // CHECK-NEXT: %in = tile.insert %v, %ex[2, 8] : !tile.tile<FP32, 8x64>, !tile.tile<FP32, 4x8>
  %in = tile.insert %v, %ex[2, 8] : !tile.tile<FP32, 8x64>, !tile.tile<FP32, 4x8>
  // CHECK-NEXT: %fp = tile.fillpad %ex, -1.5 : !tile.tile<FP32, 4x8> -> !tile.tile<FP32, 8x16, valid 6x12>
  %fp = tile.fillpad %ex, -1.5 : !tile.tile<FP32, 4x8> -> !tile.tile<FP32, 8x16, valid 6x12>
  // CHECK-NEXT: tile.store %q, %out[0, 0] pe [8, 0] : !tile.tile<S8, 8x64>, !tile.tensor<S8, 16x64>
  tile.store %q, %out[0, 0] pe [8, 0] : !tile.tile<S8, 8x64>, !tile.tensor<S8, 16x64>
  func.return
}

// GENERIC: "tile.load"(%x) <{offsets = array<i64: 0, 0>, pe = array<i64: 8, 0>, operandSegmentSizes = array<i32: 1, 0, 0>}>
// GENERIC: "tile.adds"(%a) <{scalar = #tile.scalar<0.1>}>
// GENERIC: "tile.cmps"(%d) <{cmode = #tile<cmode lt>, scalar = #tile.scalar<nan>}>
// GENERIC: "tile.quant"(%w) <{multiplier = #tile.scalar<127.5>, zero_point = #tile.scalar<-3>, rmode = #tile<rmode rna>, sat}>
