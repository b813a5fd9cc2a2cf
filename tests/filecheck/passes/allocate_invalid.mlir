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
