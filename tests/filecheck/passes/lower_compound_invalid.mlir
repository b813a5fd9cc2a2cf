// RUN: xdsl-opt %s --split-input-file --verify-diagnostics | filecheck %s

func.func @k(%x: !tile.tensor<FP32, 1x64>) {
  %a = tile.load %x[0, 0] : !tile.tensor<FP32, 1x64> -> !tile.tile<FP32, 1x64>
  %m = tile.merge_blocks %a block 16 : (!tile.tile<FP32, 1x64>) -> !tile.tile<FP32, 1x64>
  func.return
}
// CHECK: tile.merge_blocks: block must be a positive multiple of 32 records for float32 (pto-isa blockLen = block*8/sizeof(T) must be a multiple of 64), not 16

// -----

func.func @k(%x: !tile.tensor<FP32, 4x40>) {
  %t = tile.load %x[0, 0] : !tile.tensor<FP32, 4x40> -> !tile.tile<FP32, 4x40>
  %e, %s, %a, %g = tile.quantize_mx %t : (!tile.tile<FP32, 4x40>) -> (!tile.tile<E4M3, 4x40>, !tile.tile<E8M0, 4x1>, !tile.tile<FP32, 4x1>, !tile.tile<FP32, 4x1>)
  func.return
}
// CHECK: tile.quantize_mx: MX quantization needs cols % 32 == 0 (pto-isa), not cols=40

// -----

func.func @k(%x: !tile.tensor<FP32, 4x64>) {
  %t = tile.load %x[0, 0] : !tile.tensor<FP32, 4x64> -> !tile.tile<FP32, 4x64>
  %g = tile.gather_pattern %t pattern P0110 : (!tile.tile<FP32, 4x64>) -> !tile.tile<FP32, 4x64>
  func.return
}
// CHECK: tile.gather_pattern: unknown mask pattern 'P0110'; expected one of ['P0001', 'P0010', 'P0100', 'P0101', 'P1000', 'P1010', 'P1111']

// -----

func.func @k(%x: !tile.tensor<FP32, 4x64>) {
  %t = tile.load %x[0, 0] : !tile.tensor<FP32, 4x64> -> !tile.tile<FP32, 4x64>
  %a = tile.load %x[0, 0] : !tile.tensor<FP32, 4x64> -> !tile.tile<FP32, 1x64>
  %m, %n = tile.merge_sorted %a, %t : (!tile.tile<FP32, 1x64>, !tile.tile<FP32, 4x64>) -> (!tile.tile<FP32, 1x320>, !tile.tile<U32, 1x2>)
  func.return
}
// CHECK: tile.merge_sorted: list 1 must be a single row, not 4 rows

// -----

func.func @k(%x: !tile.tensor<FP32, 1x64>) {
  %a = tile.load %x[0, 0] : !tile.tensor<FP32, 1x64> -> !tile.tile<FP32, 1x64>
  %m, %n = tile.merge_sorted %a, %a top_k 129 : (!tile.tile<FP32, 1x64>, !tile.tile<FP32, 1x64>) -> (!tile.tile<FP32, 1x129>, !tile.tile<U32, 1x2>)
  func.return
}
// CHECK: tile.merge_sorted: top_k must be in 1..128 (the total records), not 129

// -----

func.func @k(%x: !tile.tensor<FP32, 2x32>) {
  %a = tile.load %x[0, 0] : !tile.tensor<FP32, 2x32> -> !tile.tile<FP32, 2x32>
  %g = tile.gather_flat %a, %a : (!tile.tile<FP32, 2x32>, !tile.tile<FP32, 2x32>) -> !tile.tile<FP32, 2x32>
  func.return
}
// CHECK: tile.gather_flat: offsets must have an integer element type, not float32

// -----

func.func @k(%x: !tile.tensor<FP32, 2x3>, %o: !tile.tensor<S32, 1x2>) {
  %a = tile.load %x[0, 0] : !tile.tensor<FP32, 2x3> -> !tile.tile<FP32, 2x3>
  %i = tile.load %o[0, 0] : !tile.tensor<S32, 1x2> -> !tile.tile<S32, 1x2>
  %g = tile.gather_blocks %a, %i : (!tile.tile<FP32, 2x3>, !tile.tile<S32, 1x2>) -> !tile.tile<FP32, 1x16>
  func.return
}
// CHECK: tile.gather_blocks: the 24-byte source holds no 32-byte block

// -----

func.func @k(%x: !tile.tensor<FP32, 2x8>, %o: !tile.tensor<S32, 2x4>) {
  %a = tile.load %x[0, 0] : !tile.tensor<FP32, 2x8> -> !tile.tile<FP32, 2x8>
  %i = tile.load %o[0, 0] : !tile.tensor<S32, 2x4> -> !tile.tile<S32, 2x4>
  %s = tile.scatter_flat %a, %i : (!tile.tile<FP32, 2x8>, !tile.tile<S32, 2x4>) -> !tile.tile<FP32, 4x4>
  func.return
}
// CHECK: tile.scatter_flat: offsets shape (2, 4) differs from t shape (2, 8)

// -----

func.func @k(%x: !tile.tensor<FP32, 4x64>) {
  %t = tile.load %x[0, 0] : !tile.tensor<FP32, 4x64> -> !tile.tile<FP32, 4x64>
  %q = tile.quantize_rows %t scale 0.5 : (!tile.tile<FP32, 4x64>) -> !tile.tile<S16, 4x64>
  func.return
}
// CHECK: tile.quantize_rows: quantize_rows produces S8 or U8, not int16

// -----

func.func @k(%x: !tile.tensor<S32, 4x64>) {
  %t = tile.load %x[0, 0] : !tile.tensor<S32, 4x64> -> !tile.tile<S32, 4x64>
  %q = tile.dequantize_rows %t scale 0.5 : (!tile.tile<S32, 4x64>) -> !tile.tile<FP32, 4x64>
  func.return
}
// CHECK: tile.dequantize_rows: q has element type int32; expected one of int8, uint8, int16

// -----

func.func @k(%x: !tile.tensor<FP32, 8x8>) {
  %a = tile.load %x[0, 0] : !tile.tensor<FP32, 8x8> -> !tile.tile<FP32, 8x8>
  %r = tile.partial max %a, empty pad 0.5 : (!tile.tile<FP32, 8x8>) -> !tile.tile<FP32, 4x8>
  func.return
}
// CHECK: tile.partial: a (8, 8) does not fit in the destination (4, 8)

// -----

func.func @k(%x: !tile.tensor<S8, 8x8>) {
  %a = tile.load %x[0, 0] : !tile.tensor<S8, 8x8> -> !tile.tile<S8, 8x8>
  %r = tile.partial max %a, empty pad 300 : (!tile.tile<S8, 8x8>) -> !tile.tile<S8, 8x8>
  func.return
}
// CHECK: tile.partial pad: S8 scalar 300 is outside -128..127

// -----

func.func @k(%x: !tile.tensor<FP32, 4x8>) {
  %a = tile.load %x[0, 0] : !tile.tensor<FP32, 4x8> -> !tile.tile<FP32, 4x8>
  %r = tile.transpose %a : (!tile.tile<FP32, 4x8>) -> !tile.tile<FP32, 4x8>
  func.return
}
// CHECK: tile.transpose result 0 is FP32 8x4, not FP32 4x8

// -----

func.func @k(%x: !tile.tensor<FP32, 4x8>, %s: !tile.tensor<U8, 1x64>) {
  %a = tile.load %x[0, 0] : !tile.tensor<FP32, 4x8> -> !tile.tile<FP32, 4x8>
  %v = tile.view %a via %s offset 8 : !tile.tile<FP32, 4x8>, !tile.tensor<U8, 1x64> -> !tile.tile<U32, 32x1>
  func.return
}
// CHECK: tile.view reads bytes up to 136 of a 128-byte source

// -----

func.func @k(%x: !tile.tensor<FP32, 4x8>, %s: !tile.tensor<U8, 1x64>) {
  %a = tile.load %x[0, 0] : !tile.tensor<FP32, 4x8> -> !tile.tile<FP32, 4x8>
  %v = tile.view %a via %s : !tile.tile<FP32, 4x8>, !tile.tensor<U8, 1x64> -> !tile.tile<U32, 32x1>
  func.return
}
// CHECK: tile.view needs a U8 scratch tensor of 1 row(s) of 128 bytes, not !tile.tensor<U8, 1x64>
