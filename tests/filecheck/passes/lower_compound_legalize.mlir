// RUN: xdsl-opt %s -p ptoc-lower-compound,ptoc-legalize --split-input-file | filecheck %s

// A view is one TSTORE of the source into the PE's scratch row and one TLOAD of the
// result (here: the flat column of a computed 4x8 tile, then the gathered column back to
// 2x3).
func.func @flat(%x: !tile.tensor<FP32, 4x8>, %o: !tile.tensor<S32, 6x1>) {
  %l = tile.load %x[0, 0] : !tile.tensor<FP32, 4x8> -> !tile.tile<FP32, 4x8>
  %t = tile.add %l, %l : !tile.tile<FP32, 4x8>
  %i = tile.load %o[0, 0] : !tile.tensor<S32, 6x1> -> !tile.tile<S32, 6x1>
  %g = tile.gather_flat %t, %i : (!tile.tile<FP32, 4x8>, !tile.tile<S32, 6x1>) -> !tile.tile<FP32, 6x1>
  func.return
}
// CHECK-LABEL: func.func @flat(%x: !tile.tensor<FP32, 4x8>, %o: !tile.tensor<S32, 6x1>, %ptoc_scratch: !tile.tensor<U8, 1x128>)
// CHECK:       %[[S:.*]] = pto.addr %ptoc_scratch offset 0 pe_step 128 : !tile.tensor<U8, 1x128>
// CHECK-NEXT:  pto.tstore FP32 %t gpr(%[[S]], %{{.*}}) dims [-1, -1, -1] mask 8 : (!pto.tile<FP32, valid 4x8, phys 16x8, 512B>) -> ()
// CHECK-NEXT:  %[[COL:.*]] = pto.tload FP32 gpr(%[[S]], %{{.*}}) dims [1, 32, -1] mask 8 : () -> !pto.tile<FP32, valid 32x1, phys 128x1, 512B>
// CHECK-NEXT:  %g = pto.tgather FP32 %[[COL]], %i dims [1, 6, -1]

// -----

// A view of a tile loaded from a tensor that nothing writes reads the tensor itself, at
// the load's window (rows 2..5 of whole rows: byte 64): no scratch store (the load itself
// is dead code now, which the scheduler drops).
func.func @forwarded(%x: !tile.tensor<FP32, 8x8>, %o: !tile.tensor<S32, 6x1>) {
  %t = tile.load %x[2, 0] : !tile.tensor<FP32, 8x8> -> !tile.tile<FP32, 4x8>
  %i = tile.load %o[0, 0] : !tile.tensor<S32, 6x1> -> !tile.tile<S32, 6x1>
  %g = tile.gather_flat %t, %i : (!tile.tile<FP32, 4x8>, !tile.tile<S32, 6x1>) -> !tile.tile<FP32, 6x1>
  func.return
}
// CHECK-LABEL: func.func @forwarded
// CHECK:       %[[A:.*]] = pto.addr %x offset 64 : !tile.tensor<FP32, 8x8>
// CHECK-NOT:   pto.tstore
// CHECK:       %[[COL:.*]] = pto.tload FP32 gpr(%[[A]], %{{.*}}) dims [1, 32, -1] mask 8 : () -> !pto.tile<FP32, valid 32x1, phys 128x1, 512B>
// CHECK-NEXT:  %g = pto.tgather FP32 %[[COL]], %i dims [1, 6, -1]

// -----

// A tensor the kernel also writes is not read in place of the image: the view goes
// through the scratch area (the write could land between the load and the view).
func.func @written(%x: !tile.tensor<FP32, 4x8>, %o: !tile.tensor<S32, 6x1>) {
  %t = tile.load %x[0, 0] : !tile.tensor<FP32, 4x8> -> !tile.tile<FP32, 4x8>
  %i = tile.load %o[0, 0] : !tile.tensor<S32, 6x1> -> !tile.tile<S32, 6x1>
  %g = tile.gather_flat %t, %i : (!tile.tile<FP32, 4x8>, !tile.tile<S32, 6x1>) -> !tile.tile<FP32, 6x1>
  tile.store %t, %x[0, 0] : !tile.tile<FP32, 4x8>, !tile.tensor<FP32, 4x8>
  func.return
}
// CHECK-LABEL: func.func @written
// CHECK:       %[[S:.*]] = pto.addr %ptoc_scratch offset 0 pe_step 128
// CHECK-NEXT:  pto.tstore FP32 %t gpr(%[[S]], %{{.*}})

// -----

// TEXTRACT and TCONCAT encode LB0..LB2: their destination shape defaults to the first
// source's rows and Col, which a column window or a widening concatenation changes.
func.func @windows(%x: !tile.tensor<FP32, 8x64>) {
  %t = tile.load %x[0, 0] : !tile.tensor<FP32, 8x64> -> !tile.tile<FP32, 8x64>
  %w = tile.extract %t[0, 32] : !tile.tile<FP32, 8x64> -> !tile.tile<FP32, 8x32>
  %r = tile.extract %t[3, 0] : !tile.tile<FP32, 8x64> -> !tile.tile<FP32, 1x64>
  %c = tile.concat %w, %w : !tile.tile<FP32, 8x32>, !tile.tile<FP32, 8x32> -> !tile.tile<FP32, 8x64>
  func.return
}
// CHECK-LABEL: func.func @windows
// CHECK:       %w = pto.textract FP32 %t gpr(%{{.*}}, %{{.*}}) dims [32, 8, 32] mask 8 : ({{.*}}) -> !pto.tile<FP32, valid 8x32, phys 8x32, 1KB>
// CHECK:       %r = pto.textract FP32 %t gpr(%{{.*}}, %{{.*}}) dims [64, 1, 64] mask 8
// CHECK-NEXT:  %c = pto.tconcat FP32 %w, %w dims [64, 8, 64] mask 8
