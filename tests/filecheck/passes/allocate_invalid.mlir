// RUN: xdsl-opt %s -p 'ptoc-legalize,ptoc-allocate{capacity=16384}' --split-input-file --verify-diagnostics | filecheck %s

// One tile larger than the capacity cannot be allocated at all.
func.func @huge(%x: !tile.tensor<FP32, 128x64>, %o: !tile.tensor<FP32, 128x64>) {
  %big = tile.load %x[0, 0] : !tile.tensor<FP32, 128x64> -> !tile.tile<FP32, 128x64>
  %t = tile.trans %big : !tile.tile<FP32, 128x64> -> !tile.tile<FP32, 64x128>
  tile.store %big, %o[0, 0] : !tile.tile<FP32, 128x64>, !tile.tensor<FP32, 128x64>
  func.return
}
// CHECK: @huge tile.load #0: pto.tload: %big (!pto.tile<FP32, valid 128x64, phys 128x64, 32KB>) needs 32768 bytes per PE, more than the machine's capacity of 16384 bytes per PE

// -----

// Each tile fits, but an operation's sources and result do not fit together.
func.func @pair(%x: !tile.tensor<FP32, 32x64>, %o: !tile.tensor<FP32, 32x64>) {
  %a = tile.load %x[0, 0] : !tile.tensor<FP32, 32x64> -> !tile.tile<FP32, 32x64>
  %b = tile.exp %a : !tile.tile<FP32, 32x64>
  %c = tile.add %a, %b : !tile.tile<FP32, 32x64>
  tile.store %c, %o[0, 0] : !tile.tile<FP32, 32x64>, !tile.tensor<FP32, 32x64>
  func.return
}
// CHECK: @pair tile.add #2: pto.tadd: its sources and results need 24576 bytes per PE at once, more than the machine's capacity of 16384 bytes per PE

// -----

// The ABI passes at most eight base addresses.
func.func @bases(%x: !tile.tensor<FP32, 64x64>, %o: !tile.tensor<FP32, 1x64>) attributes {"tile.pes" = 2 : i64} {
  %a = tile.load %x[0, 0] pe [1, 0] : !tile.tensor<FP32, 64x64> -> !tile.tile<FP32, 1x64>
  %b = tile.load %x[0, 0] pe [2, 0] : !tile.tensor<FP32, 64x64> -> !tile.tile<FP32, 1x64>
  %c = tile.load %x[0, 0] pe [3, 0] : !tile.tensor<FP32, 64x64> -> !tile.tile<FP32, 1x64>
  %d = tile.load %x[0, 0] pe [4, 0] : !tile.tensor<FP32, 64x64> -> !tile.tile<FP32, 1x64>
  %e = tile.load %x[0, 0] pe [5, 0] : !tile.tensor<FP32, 64x64> -> !tile.tile<FP32, 1x64>
  %f = tile.load %x[0, 0] pe [6, 0] : !tile.tensor<FP32, 64x64> -> !tile.tile<FP32, 1x64>
  %g = tile.load %x[0, 0] pe [7, 0] : !tile.tensor<FP32, 64x64> -> !tile.tile<FP32, 1x64>
  %h = tile.load %x[0, 0] pe [8, 0] : !tile.tensor<FP32, 64x64> -> !tile.tile<FP32, 1x64>
  %s1 = tile.add %a, %b : !tile.tile<FP32, 1x64>
  %s2 = tile.add %c, %d : !tile.tile<FP32, 1x64>
  %s3 = tile.add %e, %f : !tile.tile<FP32, 1x64>
  %s4 = tile.add %g, %h : !tile.tile<FP32, 1x64>
  %s5 = tile.add %s1, %s2 : !tile.tile<FP32, 1x64>
  %s6 = tile.add %s3, %s4 : !tile.tile<FP32, 1x64>
  %s7 = tile.add %s5, %s6 : !tile.tile<FP32, 1x64>
  tile.store %s7, %o[0, 0] : !tile.tile<FP32, 1x64>, !tile.tensor<FP32, 1x64>
  func.return
}
// CHECK: the kernel needs 9 base addresses but the ABI passes at most 8 (a0..a7)
