// Every compound op once, in its custom syntax (test_ops.test_every_op_round_trips).
func.func @k(%x: !tile.tensor<FP32, 4x64>, %i: !tile.tensor<U32, 4x64>) {
  %t = tile.load %x[0, 0] : !tile.tensor<FP32, 4x64> -> !tile.tile<FP32, 4x64>
  %p = tile.load %i[0, 0] : !tile.tensor<U32, 4x64> -> !tile.tile<U32, 4x64>
  %a = tile.load %x[0, 0] : !tile.tensor<FP32, 4x64> -> !tile.tile<FP32, 1x64>
  %b = tile.load %x[1, 0] : !tile.tensor<FP32, 4x64> -> !tile.tile<FP32, 1x32>
  %pa = tile.load %i[0, 0] : !tile.tensor<U32, 4x64> -> !tile.tile<U32, 1x64>
  %pb = tile.load %i[1, 0] : !tile.tensor<U32, 4x64> -> !tile.tile<U32, 1x32>
  %sc = tile.load %x[0, 0] : !tile.tensor<FP32, 4x64> -> !tile.tile<FP32, 4x1>
  %v, %q = tile.sort32 %t payload %p : (!tile.tile<FP32, 4x64>, !tile.tile<U32, 4x64>) -> (!tile.tile<FP32, 4x64>, !tile.tile<U32, 4x64>)
  %m, %mp, %n = tile.merge_sorted %a, %b payloads %pa, %pb ascending top_k 10 exhausted : (!tile.tile<FP32, 1x64>, !tile.tile<FP32, 1x32>, !tile.tile<U32, 1x64>, !tile.tile<U32, 1x32>) -> (!tile.tile<FP32, 1x10>, !tile.tile<U32, 1x10>, !tile.tile<U32, 1x2>)
  %mb = tile.merge_blocks %a block 32 : (!tile.tile<FP32, 1x64>) -> !tile.tile<FP32, 1x64>
  %pk = tile.pack_records %t, %p : (!tile.tile<FP32, 4x64>, !tile.tile<U32, 4x64>) -> !tile.tile<U32, 4x128>
  %uv, %up = tile.unpack_records %pk : (!tile.tile<U32, 4x128>) -> (!tile.tile<FP32, 4x64>, !tile.tile<U32, 4x64>)
  %g = tile.gather_pattern %t pattern P1010 : (!tile.tile<FP32, 4x64>) -> !tile.tile<S32, 4x32>
  %gf = tile.gather_flat %t, %p : (!tile.tile<FP32, 4x64>, !tile.tile<U32, 4x64>) -> !tile.tile<FP32, 4x64>
  %gb = tile.gather_blocks %t, %pb : (!tile.tile<FP32, 4x64>, !tile.tile<U32, 1x32>) -> !tile.tile<FP32, 1x256>
  %sf = tile.scatter_flat %t, %p into %t : (!tile.tile<FP32, 4x64>, !tile.tile<U32, 4x64>, !tile.tile<FP32, 4x64>) -> !tile.tile<FP32, 4x64>
  %tr = tile.transpose %t scratch %t : (!tile.tile<FP32, 4x64>, !tile.tile<FP32, 4x64>) -> !tile.tile<U32, 64x4>
  %qr = tile.quantize_rows %t scale %sc offset 3.0 : (!tile.tile<FP32, 4x64>, !tile.tile<FP32, 4x1>) -> !tile.tile<U8, 4x64>
  %qs = tile.quantize_rows %t scale 0.5 : (!tile.tile<FP32, 4x64>) -> !tile.tile<S8, 4x64>
  %dq = tile.dequantize_rows %qs scale %sc offset %sc : (!tile.tile<S8, 4x64>, !tile.tile<FP32, 4x1>, !tile.tile<FP32, 4x1>) -> !tile.tile<FP32, 4x64>
  %e, %es, %am, %sg = tile.quantize_mx %t : (!tile.tile<FP32, 4x64>) -> (!tile.tile<E4M3, 4x64>, !tile.tile<E8M0, 4x2>, !tile.tile<FP32, 4x2>, !tile.tile<FP32, 4x2>)
  %dm = tile.dequantize_mx %e, %es : (!tile.tile<E4M3, 4x64>, !tile.tile<E8M0, 4x2>) -> !tile.tile<FP32, 4x64>
  %pm = tile.partial max %a, %b pad -inf : (!tile.tile<FP32, 1x64>, !tile.tile<FP32, 1x32>) -> !tile.tile<FP32, 3x70>
  %pe = tile.partial add empty, %b : (!tile.tile<FP32, 1x32>) -> !tile.tile<FP32, 3x70>
  %pee = tile.partial min empty, empty : () -> !tile.tile<S16, 3x70>
  func.return
}
