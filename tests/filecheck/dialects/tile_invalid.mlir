// RUN: xdsl-opt %s --split-input-file --verify-diagnostics | filecheck %s

func.func @k(%x: !tile.tensor<FP32, 8x64>) {
  %t = tile.load %x[0, 0] : !tile.tensor<FP32, 8x64> -> !tile.tile<FP32, 8x64>
  %u = tile.and %t, %t : !tile.tile<FP32, 8x64>
  func.return
}
// CHECK: tile.and does not accept DataType FP32 (TAND accepts S16, S32, S64, S8, U16, U32, U64, U8)

// -----

func.func @k(%x: !tile.tensor<FP32, 8x64>) attributes {"tile.pes" = 2 : i64} {
  %t = tile.load %x[0, 0] pe [4, 0] : !tile.tensor<FP32, 8x64> -> !tile.tile<FP32, 8x64>
  func.return
}
// CHECK: tile.load on PE 1 reaches element [11, 63] outside the 8x64 tensor

// -----

func.func @k(%x: !tile.tensor<FP16, 8x64>) {
  %t = tile.load %x[0, 0] : !tile.tensor<FP16, 8x64> -> !tile.tile<FP32, 8x64>
  func.return
}
// CHECK: tile.load tile DataType FP32 differs from the tensor's FP16

// -----

func.func @k(%x: !tile.tensor<FP32, 8x64>) {
  %t = tile.load %x[0, 0] : !tile.tensor<FP32, 8x64> -> !tile.tile<FP32, 8x64>
  %u = tile.trans %t : !tile.tile<FP32, 8x64> -> !tile.tile<FP32, 8x64>
  func.return
}
// CHECK: tile.trans of !tile.tile<FP32, 8x64> produces the transposed tile, not !tile.tile<FP32, 8x64>

// -----

func.func @k(%x: !tile.tensor<FP32, 8x64>) {
  %t = tile.load %x[0, 0] : !tile.tensor<FP32, 8x64> -> !tile.tile<FP32, 8x64>
  %m = tile.rowsum %t : !tile.tile<FP32, 8x64> -> !tile.tile<FP32, 8x2>
  func.return
}
// CHECK: tile.rowsum of !tile.tile<FP32, 8x64> produces !tile.tile<FP32, 8x1>, not !tile.tile<FP32, 8x2>

// -----

func.func @k(%x: !tile.tensor<FP32, 8x64>) {
  %t = tile.load %x[0, 0] : !tile.tensor<FP32, 8x64> -> !tile.tile<FP32, 8x64>
  %b = tile.load %x[0, 0] : !tile.tensor<FP32, 8x64> -> !tile.tile<FP32, 4x1>
  %d = tile.rowexpandsub %t, %b : !tile.tile<FP32, 8x64>, !tile.tile<FP32, 4x1>
  func.return
}
// CHECK: tile.rowexpandsub broadcast tile must have valid 8x1 and one column, not !tile.tile<FP32, 4x1>

// -----

func.func @k(%x: !tile.tensor<S8, 8x64>) {
  %t = tile.load %x[0, 0] : !tile.tensor<S8, 8x64> -> !tile.tile<S8, 8x64>
  %u = tile.adds %t, 300 : !tile.tile<S8, 8x64>
  func.return
}
// CHECK: tile.adds: S8 scalar 300 is outside -128..127

// -----

func.func @k(%x: !tile.tensor<S32, 8x64>) {
  %t = tile.load %x[0, 0] : !tile.tensor<S32, 8x64> -> !tile.tile<S32, 8x64>
  %u = tile.divs %t, 0 : !tile.tile<S32, 8x64>
  func.return
}
// CHECK: tile.divs has an integer zero divisor

// -----

func.func @k(%x: !tile.tensor<FP32, 8x64>) {
  %t = tile.load %x[0, 0] : !tile.tensor<FP32, 8x64> -> !tile.tile<FP32, 8x64>
  %q = tile.quant %t mult 0.0 : !tile.tile<FP32, 8x64> -> !tile.tile<S8, 8x64>
  func.return
}
// CHECK: tile.quant: TQUANT multiplier must be nonzero

// -----

func.func @k(%x: !tile.tensor<FP32, 8x64>) {
  %t = tile.load %x[0, 0] : !tile.tensor<FP32, 8x64> -> !tile.tile<FP32, 8x64>
  %v, %i = tile.sort %t width 65 : !tile.tile<FP32, 8x64> -> !tile.tile<FP32, 8x64>, !tile.tile<U32, 8x64>
  func.return
}
// CHECK: tile.sort width is 1..64

// -----

func.func @k(%v: !tile.tensor<FP32, 8x64>, %i: !tile.tensor<S16, 8x64>) {
  %a = tile.load %v[0, 0] : !tile.tensor<FP32, 8x64> -> !tile.tile<FP32, 8x64>
  %b = tile.load %i[0, 0] : !tile.tensor<S16, 8x64> -> !tile.tile<S16, 8x64>
  %g = tile.gather %a, %b : !tile.tile<FP32, 8x64>, !tile.tile<S16, 8x64> -> !tile.tile<FP32, 8x64>
  func.return
}
// CHECK: tile.gather: TGATHER index DataType S16 is not S32 or U32

// -----

func.func @k(%x: !tile.tensor<FP32, 8x64>) {
  %t = tile.load %x[0, 0] : !tile.tensor<FP32, 8x64> -> !tile.tile<FP32, 8x64, valid 9x64>
  func.return
}
// CHECK: tile valid shape 9x64 must be nonempty and inside the extent 8x64

// -----

func.func @k(%x: !tile.tensor<FP32, 8x64, stride 32>) {
  func.return
}
// CHECK: tensor 8x64 needs a row stride of at least 64 elements, not 32
