// RUN: xdsl-opt %s -p ptoc-legalize --split-input-file --verify-diagnostics | filecheck %s

// TTRANS has no row-piece form: a transpose of a tile over one allocation is refused.
func.func @k(%x: !tile.tensor<FP32, 256x256>, %o: !tile.tensor<FP32, 256x256>) {
  %t = tile.load %x[0, 0] : !tile.tensor<FP32, 256x256> -> !tile.tile<FP32, 256x256>
  %u = tile.trans %t : !tile.tile<FP32, 256x256> -> !tile.tile<FP32, 256x256>
  tile.store %u, %o[0, 0] : !tile.tile<FP32, 256x256>, !tile.tensor<FP32, 256x256>
  func.return
}
// CHECK: @k tile.trans #1: %t exceeds one allocation and tile.trans cannot be split

// -----

// A split column sum would change the fold order (bit-exactness), so it is refused.
func.func @k(%x: !tile.tensor<FP32, 512x64>) {
  %t = tile.load %x[0, 0] : !tile.tensor<FP32, 512x64> -> !tile.tile<FP32, 512x64>
  %s = tile.colsum %t : !tile.tile<FP32, 512x64> -> !tile.tile<FP32, 1x64>
  func.return
}
// CHECK: @k tile.colsum #1: !tile.tile<FP32, 512x64> exceeds one allocation and tile.colsum cannot be split without changing its fold order

// -----

// One row wider than the tile size limit cannot be cut into row pieces.
func.func @k(%x: !tile.tensor<FP32, 1x32768>) {
  %t = tile.load %x[0, 0] : !tile.tensor<FP32, 1x32768> -> !tile.tile<FP32, 1x32768>
  func.return
}
// CHECK: @k tile.load #0: %t (!tile.tile<FP32, 1x32768>) has rows wider than the tile size limit (65536 bytes per PE; max-tile-bytes may raise it up to one 65536-byte allocation)

// -----

func.func @k(%x: !tile.tensor<FP32, 8x64>) attributes {"tile.pes" = 5 : i64} {
  func.return
}
// CHECK: @k: tile.pes = 5 is outside 1..4
