// RUN: xdsl-opt %s -p ptoc-lower-compound --split-input-file | filecheck %s

// sort32 without a payload: TSORT, then the group base (c & ~31) added to the offsets.
func.func @sort32(%x: !tile.tensor<FP32, 2x64>) {
  %t = tile.load %x[0, 0] : !tile.tensor<FP32, 2x64> -> !tile.tile<FP32, 2x64>
  %v, %i = tile.sort32 %t : (!tile.tile<FP32, 2x64>) -> (!tile.tile<FP32, 2x64>, !tile.tile<U32, 2x64>)
  func.return
}
// CHECK-LABEL: func.func @sort32
// CHECK-NEXT:  %t = tile.load %x[0, 0] : !tile.tensor<FP32, 2x64> -> !tile.tile<FP32, 2x64>
// CHECK-NEXT:  %v, %{{.*}} = tile.sort %t width 32 descending : !tile.tile<FP32, 2x64> -> !tile.tile<FP32, 2x64>, !tile.tile<U32, 2x64>
// CHECK-NEXT:  %{{.*}} = tile.ci start 0 : !tile.tile<U32, 1x64>
// CHECK-NEXT:  %{{.*}} = tile.ands %{{.*}}, 4294967264 : !tile.tile<U32, 1x64>
// CHECK-NEXT:  %{{.*}} = tile.colexpand %{{.*}} : !tile.tile<U32, 1x64> -> !tile.tile<U32, 2x64>
// CHECK-NEXT:  %i = tile.add %{{.*}}, %{{.*}} : !tile.tile<U32, 2x64>
// CHECK-NEXT:  func.return

// -----

// sort32 with a payload: the source columns permute the payload (TTRANS, TGATHER, TTRANS).
func.func @sort32_payload(%x: !tile.tensor<FP32, 2x32>, %y: !tile.tensor<U32, 2x32>) {
  %t = tile.load %x[0, 0] : !tile.tensor<FP32, 2x32> -> !tile.tile<FP32, 2x32>
  %p = tile.load %y[0, 0] : !tile.tensor<U32, 2x32> -> !tile.tile<U32, 2x32>
  %v, %q = tile.sort32 %t payload %p : (!tile.tile<FP32, 2x32>, !tile.tile<U32, 2x32>) -> (!tile.tile<FP32, 2x32>, !tile.tile<U32, 2x32>)
  func.return
}
// CHECK-LABEL: func.func @sort32_payload
// CHECK-NEXT:  %t = tile.load %x[0, 0] : !tile.tensor<FP32, 2x32> -> !tile.tile<FP32, 2x32>
// CHECK-NEXT:  %p = tile.load %y[0, 0] : !tile.tensor<U32, 2x32> -> !tile.tile<U32, 2x32>
// CHECK-NEXT:  %v, %{{.*}} = tile.sort %t width 32 descending : !tile.tile<FP32, 2x32> -> !tile.tile<FP32, 2x32>, !tile.tile<U32, 2x32>
// CHECK-NEXT:  %{{.*}} = tile.trans %p : !tile.tile<U32, 2x32> -> !tile.tile<U32, 32x2>
// CHECK-NEXT:  %{{.*}} = tile.trans %{{.*}} : !tile.tile<U32, 2x32> -> !tile.tile<U32, 32x2>
// CHECK-NEXT:  %{{.*}} = tile.gather %{{.*}}, %{{.*}} : !tile.tile<U32, 32x2>, !tile.tile<U32, 32x2> -> !tile.tile<U32, 32x2>
// CHECK-NEXT:  %q = tile.trans %{{.*}} : !tile.tile<U32, 32x2> -> !tile.tile<U32, 2x32>
// CHECK-NEXT:  func.return

// -----

// Four lists without payloads: k - 1 = 3 TMRGSORT (a balanced tree), constant counts.
func.func @merge4(%x: !tile.tensor<FP32, 4x32>) {
  %a = tile.load %x[0, 0] : !tile.tensor<FP32, 4x32> -> !tile.tile<FP32, 1x32>
  %b = tile.load %x[1, 0] : !tile.tensor<FP32, 4x32> -> !tile.tile<FP32, 1x32>
  %c = tile.load %x[2, 0] : !tile.tensor<FP32, 4x32> -> !tile.tile<FP32, 1x32>
  %d = tile.load %x[3, 0] : !tile.tensor<FP32, 4x32> -> !tile.tile<FP32, 1x32>
  %m, %n = tile.merge_sorted %a, %b, %c, %d : (!tile.tile<FP32, 1x32>, !tile.tile<FP32, 1x32>, !tile.tile<FP32, 1x32>, !tile.tile<FP32, 1x32>) -> (!tile.tile<FP32, 1x128>, !tile.tile<U32, 1x4>)
  func.return
}
// CHECK-LABEL: func.func @merge4
// CHECK-NEXT:  %a = tile.load %x[0, 0] : !tile.tensor<FP32, 4x32> -> !tile.tile<FP32, 1x32>
// CHECK-NEXT:  %b = tile.load %x[1, 0] : !tile.tensor<FP32, 4x32> -> !tile.tile<FP32, 1x32>
// CHECK-NEXT:  %c = tile.load %x[2, 0] : !tile.tensor<FP32, 4x32> -> !tile.tile<FP32, 1x32>
// CHECK-NEXT:  %d = tile.load %x[3, 0] : !tile.tensor<FP32, 4x32> -> !tile.tile<FP32, 1x32>
// CHECK-NEXT:  %{{.*}} = tile.mrgsort %a, %b descending : !tile.tile<FP32, 1x32>, !tile.tile<FP32, 1x32> -> !tile.tile<FP32, 1x64>
// CHECK-NEXT:  %{{.*}} = tile.mrgsort %c, %d descending : !tile.tile<FP32, 1x32>, !tile.tile<FP32, 1x32> -> !tile.tile<FP32, 1x64>
// CHECK-NEXT:  %m = tile.mrgsort %{{.*}}, %{{.*}} descending : !tile.tile<FP32, 1x64>, !tile.tile<FP32, 1x64> -> !tile.tile<FP32, 1x128>
// CHECK-NEXT:  %n = tile.full 32 : !tile.tile<U32, 1x4>
// CHECK-NEXT:  func.return

// -----

// Two short lists with payloads and top-k: the merge order from one TSORT of both lists.
func.func @merge_small(%x: !tile.tensor<FP32, 2x16>, %y: !tile.tensor<U32, 2x16>) {
  %a = tile.load %x[0, 0] : !tile.tensor<FP32, 2x16> -> !tile.tile<FP32, 1x16>
  %b = tile.load %x[1, 0] : !tile.tensor<FP32, 2x16> -> !tile.tile<FP32, 1x16>
  %pa = tile.load %y[0, 0] : !tile.tensor<U32, 2x16> -> !tile.tile<U32, 1x16>
  %pb = tile.load %y[1, 0] : !tile.tensor<U32, 2x16> -> !tile.tile<U32, 1x16>
  %m, %p, %n = tile.merge_sorted %a, %b payloads %pa, %pb top_k 8 : (!tile.tile<FP32, 1x16>, !tile.tile<FP32, 1x16>, !tile.tile<U32, 1x16>, !tile.tile<U32, 1x16>) -> (!tile.tile<FP32, 1x8>, !tile.tile<U32, 1x8>, !tile.tile<U32, 1x2>)
  func.return
}
// CHECK-LABEL: func.func @merge_small
// CHECK-NEXT:  %a = tile.load %x[0, 0] : !tile.tensor<FP32, 2x16> -> !tile.tile<FP32, 1x16>
// CHECK-NEXT:  %b = tile.load %x[1, 0] : !tile.tensor<FP32, 2x16> -> !tile.tile<FP32, 1x16>
// CHECK-NEXT:  %pa = tile.load %y[0, 0] : !tile.tensor<U32, 2x16> -> !tile.tile<U32, 1x16>
// CHECK-NEXT:  %pb = tile.load %y[1, 0] : !tile.tensor<U32, 2x16> -> !tile.tile<U32, 1x16>
// CHECK-NEXT:  %{{.*}} = tile.mrgsort %a, %b descending : !tile.tile<FP32, 1x16>, !tile.tile<FP32, 1x16> -> !tile.tile<FP32, 1x32>
// CHECK-NEXT:  %{{.*}} = tile.concat %pa, %pb : !tile.tile<U32, 1x16>, !tile.tile<U32, 1x16> -> !tile.tile<U32, 1x32>
// CHECK-NEXT:  %{{.*}} = tile.concat %a, %b : !tile.tile<FP32, 1x16>, !tile.tile<FP32, 1x16> -> !tile.tile<FP32, 1x32>
// CHECK-NEXT:  %{{.*}}, %{{.*}} = tile.sort %{{.*}} width 32 descending : !tile.tile<FP32, 1x32> -> !tile.tile<FP32, 1x32>, !tile.tile<U32, 1x32>
// CHECK-NEXT:  %{{.*}} = tile.trans %{{.*}} : !tile.tile<U32, 1x32> -> !tile.tile<U32, 32x1>
// CHECK-NEXT:  %{{.*}} = tile.trans %{{.*}} : !tile.tile<U32, 1x32> -> !tile.tile<U32, 32x1>
// CHECK-NEXT:  %{{.*}} = tile.gather %{{.*}}, %{{.*}} : !tile.tile<U32, 32x1>, !tile.tile<U32, 32x1> -> !tile.tile<U32, 32x1>
// CHECK-NEXT:  %{{.*}} = tile.trans %{{.*}} : !tile.tile<U32, 32x1> -> !tile.tile<U32, 1x32>
// CHECK-NEXT:  %{{.*}} = tile.cmp eq %{{.*}}, %{{.*}} : !tile.tile<FP32, 1x32> -> !tile.tile<PRED, 1x32>
// CHECK-NEXT:  %{{.*}} = tile.sel %{{.*}}, %{{.*}}, %{{.*}} : !tile.tile<PRED, 1x32>, !tile.tile<U32, 1x32>
// CHECK-NEXT:  %m = tile.extract %{{.*}}[0, 0] : !tile.tile<FP32, 1x32> -> !tile.tile<FP32, 1x8>
// CHECK-NEXT:  %p = tile.extract %{{.*}}[0, 0] : !tile.tile<U32, 1x32> -> !tile.tile<U32, 1x8>
// CHECK-NEXT:  %{{.*}} = tile.ci start 0 : !tile.tile<U32, 1x32>
// CHECK-NEXT:  %{{.*}} = tile.trans %{{.*}} : !tile.tile<U32, 1x32> -> !tile.tile<U32, 32x1>
// CHECK-NEXT:  %{{.*}} = tile.scatter %{{.*}}, %{{.*}} : !tile.tile<U32, 32x1>, !tile.tile<U32, 32x1> -> !tile.tile<U32, 32x1>
// CHECK-NEXT:  %{{.*}} = tile.trans %{{.*}} : !tile.tile<U32, 32x1> -> !tile.tile<U32, 1x32>
// CHECK-NEXT:  %{{.*}} = tile.extract %{{.*}}[0, 0] : !tile.tile<U32, 1x32> -> !tile.tile<U32, 1x16>
// CHECK-NEXT:  %{{.*}} = tile.extract %{{.*}}[0, 16] : !tile.tile<U32, 1x32> -> !tile.tile<U32, 1x16>
// CHECK-NEXT:  %{{.*}} = tile.cmps lt %{{.*}}, 8 : !tile.tile<U32, 1x16> -> !tile.tile<PRED, 1x16>
// CHECK-NEXT:  %{{.*}} = tile.full 1 : !tile.tile<U32, 1x16>
// CHECK-NEXT:  %{{.*}} = tile.sels %{{.*}}, %{{.*}}, 0 : !tile.tile<PRED, 1x16>, !tile.tile<U32, 1x16>
// CHECK-NEXT:  %{{.*}} = tile.rowsum %{{.*}} : !tile.tile<U32, 1x16> -> !tile.tile<U32, 1x1>
// CHECK-NEXT:  %{{.*}} = tile.cmps lt %{{.*}}, 8 : !tile.tile<U32, 1x16> -> !tile.tile<PRED, 1x16>
// CHECK-NEXT:  %{{.*}} = tile.sels %{{.*}}, %{{.*}}, 0 : !tile.tile<PRED, 1x16>, !tile.tile<U32, 1x16>
// CHECK-NEXT:  %{{.*}} = tile.rowsum %{{.*}} : !tile.tile<U32, 1x16> -> !tile.tile<U32, 1x1>
// CHECK-NEXT:  %n = tile.concat %{{.*}}, %{{.*}} : !tile.tile<U32, 1x1>, !tile.tile<U32, 1x1> -> !tile.tile<U32, 1x2>
// CHECK-NEXT:  func.return

// -----

// Four-block merge of one row with payloads: values per group from a TMRGSORT tree;
// records' positions from compare matrices (> 64 records: TCMP, no arithmetic on values),
// one TSCATTER routes payloads; a TCMP/TSEL ties them to the merged values.
func.func @merge_blocks(%x: !tile.tensor<FP32, 1x96>, %y: !tile.tensor<U32, 1x96>) {
  %v = tile.load %x[0, 0] : !tile.tensor<FP32, 1x96> -> !tile.tile<FP32, 1x96>
  %p = tile.load %y[0, 0] : !tile.tensor<U32, 1x96> -> !tile.tile<U32, 1x96>
  %m, %q = tile.merge_blocks %v payload %p block 32 : (!tile.tile<FP32, 1x96>, !tile.tile<U32, 1x96>) -> (!tile.tile<FP32, 1x96>, !tile.tile<U32, 1x96>)
  func.return
}
// CHECK-LABEL: func.func @merge_blocks
// CHECK-NEXT:  %v = tile.load %x[0, 0] : !tile.tensor<FP32, 1x96> -> !tile.tile<FP32, 1x96>
// CHECK-NEXT:  %p = tile.load %y[0, 0] : !tile.tensor<U32, 1x96> -> !tile.tile<U32, 1x96>
// CHECK-NEXT:  %{{.*}} = tile.extract %v[0, 0] : !tile.tile<FP32, 1x96> -> !tile.tile<FP32, 1x32>
// CHECK-NEXT:  %{{.*}} = tile.extract %v[0, 32] : !tile.tile<FP32, 1x96> -> !tile.tile<FP32, 1x32>
// CHECK-NEXT:  %{{.*}} = tile.extract %v[0, 64] : !tile.tile<FP32, 1x96> -> !tile.tile<FP32, 1x32>
// CHECK-NEXT:  %{{.*}} = tile.mrgsort %{{.*}}, %{{.*}} descending : !tile.tile<FP32, 1x32>, !tile.tile<FP32, 1x32> -> !tile.tile<FP32, 1x64>
// CHECK-NEXT:  %m = tile.mrgsort %{{.*}}, %{{.*}} descending : !tile.tile<FP32, 1x64>, !tile.tile<FP32, 1x32> -> !tile.tile<FP32, 1x96>
// CHECK-NEXT:  %{{.*}} = tile.trans %{{.*}} : !tile.tile<FP32, 1x32> -> !tile.tile<FP32, 32x1>
// CHECK-NEXT:  %{{.*}} = tile.rowexpand %{{.*}} : !tile.tile<FP32, 32x1> -> !tile.tile<FP32, 32x32>
// CHECK-NEXT:  %{{.*}} = tile.colexpand %{{.*}} : !tile.tile<FP32, 1x32> -> !tile.tile<FP32, 32x32>
// CHECK-NEXT:  %{{.*}} = tile.cmp lt %{{.*}}, %{{.*}} : !tile.tile<FP32, 32x32> -> !tile.tile<PRED, 32x32>
// CHECK-NEXT:  %{{.*}} = tile.full 1 : !tile.tile<U32, 32x32>
// CHECK-NEXT:  %{{.*}} = tile.sels %{{.*}}, %{{.*}}, 0 : !tile.tile<PRED, 32x32>, !tile.tile<U32, 32x32>
// CHECK-NEXT:  %{{.*}} = tile.rowsum %{{.*}} : !tile.tile<U32, 32x32> -> !tile.tile<U32, 32x1>
// CHECK-NEXT:  %{{.*}} = tile.colsum %{{.*}} : !tile.tile<U32, 32x32> -> !tile.tile<U32, 1x32>
// CHECK-NEXT:  %{{.*}} = tile.colexpand %{{.*}} : !tile.tile<FP32, 1x32> -> !tile.tile<FP32, 32x32>
// CHECK-NEXT:  %{{.*}} = tile.cmp lt %{{.*}}, %{{.*}} : !tile.tile<FP32, 32x32> -> !tile.tile<PRED, 32x32>
// CHECK-NEXT:  %{{.*}} = tile.sels %{{.*}}, %{{.*}}, 0 : !tile.tile<PRED, 32x32>, !tile.tile<U32, 32x32>
// CHECK-NEXT:  %{{.*}} = tile.rowsum %{{.*}} : !tile.tile<U32, 32x32> -> !tile.tile<U32, 32x1>
// CHECK-NEXT:  %{{.*}} = tile.add %{{.*}}, %{{.*}} : !tile.tile<U32, 32x1>
// CHECK-NEXT:  %{{.*}} = tile.colsum %{{.*}} : !tile.tile<U32, 32x32> -> !tile.tile<U32, 1x32>
// CHECK-NEXT:  %{{.*}} = tile.trans %{{.*}} : !tile.tile<FP32, 1x32> -> !tile.tile<FP32, 32x1>
// CHECK-NEXT:  %{{.*}} = tile.rowexpand %{{.*}} : !tile.tile<FP32, 32x1> -> !tile.tile<FP32, 32x32>
// CHECK-NEXT:  %{{.*}} = tile.colexpand %{{.*}} : !tile.tile<FP32, 1x32> -> !tile.tile<FP32, 32x32>
// CHECK-NEXT:  %{{.*}} = tile.cmp lt %{{.*}}, %{{.*}} : !tile.tile<FP32, 32x32> -> !tile.tile<PRED, 32x32>
// CHECK-NEXT:  %{{.*}} = tile.sels %{{.*}}, %{{.*}}, 0 : !tile.tile<PRED, 32x32>, !tile.tile<U32, 32x32>
// CHECK-NEXT:  %{{.*}} = tile.rowsum %{{.*}} : !tile.tile<U32, 32x32> -> !tile.tile<U32, 32x1>
// CHECK-NEXT:  %{{.*}} = tile.colsum %{{.*}} : !tile.tile<U32, 32x32> -> !tile.tile<U32, 1x32>
// CHECK-NEXT:  %{{.*}} = tile.add %{{.*}}, %{{.*}} : !tile.tile<U32, 1x32>
// CHECK-NEXT:  %{{.*}} = tile.cmp ne %{{.*}}, %{{.*}} : !tile.tile<FP32, 1x32> -> !tile.tile<PRED, 1x32>
// CHECK-NEXT:  %{{.*}} = tile.full 1 : !tile.tile<U32, 1x32>
// CHECK-NEXT:  %{{.*}} = tile.sels %{{.*}}, %{{.*}}, 0 : !tile.tile<PRED, 1x32>, !tile.tile<U32, 1x32>
// CHECK-NEXT:  %{{.*}} = tile.rowsum %{{.*}} : !tile.tile<U32, 1x32> -> !tile.tile<U32, 1x1>
// CHECK-NEXT:  %{{.*}} = tile.cmp ne %{{.*}}, %{{.*}} : !tile.tile<FP32, 1x32> -> !tile.tile<PRED, 1x32>
// CHECK-NEXT:  %{{.*}} = tile.sels %{{.*}}, %{{.*}}, 0 : !tile.tile<PRED, 1x32>, !tile.tile<U32, 1x32>
// CHECK-NEXT:  %{{.*}} = tile.rowsum %{{.*}} : !tile.tile<U32, 1x32> -> !tile.tile<U32, 1x1>
// CHECK-NEXT:  %{{.*}} = tile.cmp ne %{{.*}}, %{{.*}} : !tile.tile<FP32, 1x32> -> !tile.tile<PRED, 1x32>
// CHECK-NEXT:  %{{.*}} = tile.sels %{{.*}}, %{{.*}}, 0 : !tile.tile<PRED, 1x32>, !tile.tile<U32, 1x32>
// CHECK-NEXT:  %{{.*}} = tile.rowsum %{{.*}} : !tile.tile<U32, 1x32> -> !tile.tile<U32, 1x1>
// CHECK-NEXT:  %{{.*}} = tile.add %{{.*}}, %{{.*}} : !tile.tile<U32, 1x1>
// CHECK-NEXT:  %{{.*}} = tile.muls %{{.*}}, 4294967295 : !tile.tile<U32, 1x1>
// CHECK-NEXT:  %{{.*}} = tile.adds %{{.*}}, 64 : !tile.tile<U32, 1x1>
// CHECK-NEXT:  %{{.*}} = tile.ci start 0 : !tile.tile<U32, 1x32>
// CHECK-NEXT:  %{{.*}} = tile.rowexpandmul %{{.*}}, %{{.*}} : !tile.tile<U32, 1x32>, !tile.tile<U32, 1x1>
// CHECK-NEXT:  %{{.*}} = tile.add %{{.*}}, %{{.*}} : !tile.tile<U32, 1x32>
// CHECK-NEXT:  %{{.*}} = tile.trans %{{.*}} : !tile.tile<U32, 32x1> -> !tile.tile<U32, 1x32>
// CHECK-NEXT:  %{{.*}} = tile.add %{{.*}}, %{{.*}} : !tile.tile<U32, 1x32>
// CHECK-NEXT:  %{{.*}} = tile.muls %{{.*}}, 4294967295 : !tile.tile<U32, 1x1>
// CHECK-NEXT:  %{{.*}} = tile.add %{{.*}}, %{{.*}} : !tile.tile<U32, 1x1>
// CHECK-NEXT:  %{{.*}} = tile.adds %{{.*}}, 32 : !tile.tile<U32, 1x1>
// CHECK-NEXT:  %{{.*}} = tile.ci start 32 : !tile.tile<U32, 1x32>
// CHECK-NEXT:  %{{.*}} = tile.rowexpandmul %{{.*}}, %{{.*}} : !tile.tile<U32, 1x32>, !tile.tile<U32, 1x1>
// CHECK-NEXT:  %{{.*}} = tile.add %{{.*}}, %{{.*}} : !tile.tile<U32, 1x32>
// CHECK-NEXT:  %{{.*}} = tile.rowexpandsub %{{.*}}, %{{.*}} : !tile.tile<U32, 1x32>, !tile.tile<U32, 1x1>
// CHECK-NEXT:  %{{.*}} = tile.trans %{{.*}} : !tile.tile<U32, 32x1> -> !tile.tile<U32, 1x32>
// CHECK-NEXT:  %{{.*}} = tile.add %{{.*}}, %{{.*}} : !tile.tile<U32, 1x32>
// CHECK-NEXT:  %{{.*}} = tile.sub %{{.*}}, %{{.*}} : !tile.tile<U32, 1x32>
// CHECK-NEXT:  %{{.*}} = tile.add %{{.*}}, %{{.*}} : !tile.tile<U32, 1x1>
// CHECK-NEXT:  %{{.*}} = tile.ci start 64 : !tile.tile<U32, 1x32>
// CHECK-NEXT:  %{{.*}} = tile.rowexpandmul %{{.*}}, %{{.*}} : !tile.tile<U32, 1x32>, !tile.tile<U32, 1x1>
// CHECK-NEXT:  %{{.*}} = tile.add %{{.*}}, %{{.*}} : !tile.tile<U32, 1x32>
// CHECK-NEXT:  %{{.*}} = tile.rowexpandsub %{{.*}}, %{{.*}} : !tile.tile<U32, 1x32>, !tile.tile<U32, 1x1>
// CHECK-NEXT:  %{{.*}} = tile.sub %{{.*}}, %{{.*}} : !tile.tile<U32, 1x32>
// CHECK-NEXT:  %{{.*}} = tile.concat %{{.*}}, %{{.*}} : !tile.tile<U32, 1x32>, !tile.tile<U32, 1x32> -> !tile.tile<U32, 1x64>
// CHECK-NEXT:  %{{.*}} = tile.concat %{{.*}}, %{{.*}} : !tile.tile<U32, 1x64>, !tile.tile<U32, 1x32> -> !tile.tile<U32, 1x96>
// CHECK-NEXT:  %{{.*}} = tile.trans %p : !tile.tile<U32, 1x96> -> !tile.tile<U32, 96x1>
// CHECK-NEXT:  %{{.*}} = tile.trans %{{.*}} : !tile.tile<U32, 1x96> -> !tile.tile<U32, 96x1>
// CHECK-NEXT:  %{{.*}} = tile.scatter %{{.*}}, %{{.*}} : !tile.tile<U32, 96x1>, !tile.tile<U32, 96x1> -> !tile.tile<U32, 96x1>
// CHECK-NEXT:  %{{.*}} = tile.trans %{{.*}} : !tile.tile<U32, 96x1> -> !tile.tile<U32, 1x96>
// CHECK-NEXT:  %{{.*}} = tile.cmp eq %m, %m : !tile.tile<FP32, 1x96> -> !tile.tile<PRED, 1x96>
// CHECK-NEXT:  %q = tile.sel %{{.*}}, %{{.*}}, %{{.*}} : !tile.tile<PRED, 1x96>, !tile.tile<U32, 1x96>
// CHECK-NEXT:  func.return

// -----

// Mask-pattern gather of a computed tile: the kept columns are rows of the transposed
// tile.
func.func @pattern(%x: !tile.tensor<FP32, 4x64>) {
  %l = tile.load %x[0, 0] : !tile.tensor<FP32, 4x64> -> !tile.tile<FP32, 4x64>
  %t = tile.add %l, %l : !tile.tile<FP32, 4x64>
  %g = tile.gather_pattern %t pattern P1010 : (!tile.tile<FP32, 4x64>) -> !tile.tile<FP32, 4x32>
  func.return
}
// CHECK-LABEL: func.func @pattern
// CHECK:       %t = tile.add %l, %l : !tile.tile<FP32, 4x64>
// CHECK-NEXT:  %{{.*}} = tile.trans %t : !tile.tile<FP32, 4x64> -> !tile.tile<FP32, 64x4>
// CHECK-NEXT:  %{{.*}} = tile.ci start 0 : !tile.tile<U32, 1x32>
// CHECK-NEXT:  %{{.*}} = tile.shls %{{.*}}, 1 : !tile.tile<U32, 1x32>
// CHECK-NEXT:  %{{.*}} = tile.adds %{{.*}}, 1 : !tile.tile<U32, 1x32>
// CHECK-NEXT:  %{{.*}} = tile.trans %{{.*}} : !tile.tile<U32, 1x32> -> !tile.tile<U32, 32x1>
// CHECK-NEXT:  %{{.*}} = tile.rowexpand %{{.*}} : !tile.tile<U32, 32x1> -> !tile.tile<U32, 32x4>
// CHECK-NEXT:  %{{.*}} = tile.gather %{{.*}}, %{{.*}} : !tile.tile<FP32, 64x4>, !tile.tile<U32, 32x4> -> !tile.tile<FP32, 32x4>
// CHECK-NEXT:  %g = tile.trans %{{.*}} : !tile.tile<FP32, 32x4> -> !tile.tile<FP32, 4x32>
// CHECK-NEXT:  func.return

// -----

// A tile loaded from a tensor nothing writes: the strided view, which reads the tensor
// itself (legalize: one TLOAD), then a view back.
func.func @pattern_loaded(%x: !tile.tensor<FP32, 4x64>) {
  %t = tile.load %x[0, 0] : !tile.tensor<FP32, 4x64> -> !tile.tile<FP32, 4x64>
  %g = tile.gather_pattern %t pattern P1010 : (!tile.tile<FP32, 4x64>) -> !tile.tile<FP32, 4x32>
  func.return
}
// CHECK-LABEL: func.func @pattern_loaded
// CHECK-NEXT:  %t = tile.load %x[0, 0] : !tile.tensor<FP32, 4x64> -> !tile.tile<FP32, 4x64>
// CHECK-NEXT:  %{{.*}} = tile.view %t via %ptoc_scratch offset 4 stride 8 : !tile.tile<FP32, 4x64>, !tile.tensor<U8, 1x1024> -> !tile.tile<FP32, 128x1>
// CHECK-NEXT:  %g = tile.view %{{.*}} via %ptoc_scratch : !tile.tile<FP32, 128x1>, !tile.tensor<U8, 1x1024> -> !tile.tile<FP32, 4x32>
// CHECK-NEXT:  func.return

// -----

// A type no row selector moves (BF16) with C % period == 0: two strided GM views.
func.func @pattern_view(%x: !tile.tensor<BF16, 4x64>) {
  %t = tile.load %x[0, 0] : !tile.tensor<BF16, 4x64> -> !tile.tile<BF16, 4x64>
  %g = tile.gather_pattern %t pattern P0001 : (!tile.tile<BF16, 4x64>) -> !tile.tile<BF16, 4x16>
  func.return
}
// CHECK-LABEL: func.func @pattern_view
// CHECK-NEXT:  %t = tile.load %x[0, 0] : !tile.tensor<BF16, 4x64> -> !tile.tile<BF16, 4x64>
// CHECK-NEXT:  %{{.*}} = tile.view %t via %ptoc_scratch stride 8 : !tile.tile<BF16, 4x64>, !tile.tensor<U8, 1x512> -> !tile.tile<BF16, 64x1>
// CHECK-NEXT:  %g = tile.view %{{.*}} via %ptoc_scratch : !tile.tile<BF16, 64x1>, !tile.tensor<U8, 1x512> -> !tile.tile<BF16, 4x16>
// CHECK-NEXT:  func.return

// -----

// Flat gather: a column view of the source, one of the offsets, one TGATHER, a view back.
func.func @flat(%x: !tile.tensor<FP32, 8x32>, %o: !tile.tensor<S32, 4x16>) {
  %t = tile.load %x[0, 0] : !tile.tensor<FP32, 8x32> -> !tile.tile<FP32, 8x32>
  %i = tile.load %o[0, 0] : !tile.tensor<S32, 4x16> -> !tile.tile<S32, 4x16>
  %g = tile.gather_flat %t, %i : (!tile.tile<FP32, 8x32>, !tile.tile<S32, 4x16>) -> !tile.tile<FP32, 4x16>
  func.return
}
// CHECK-LABEL: func.func @flat
// CHECK-NEXT:  %t = tile.load %x[0, 0] : !tile.tensor<FP32, 8x32> -> !tile.tile<FP32, 8x32>
// CHECK-NEXT:  %i = tile.load %o[0, 0] : !tile.tensor<S32, 4x16> -> !tile.tile<S32, 4x16>
// CHECK-NEXT:  %{{.*}} = tile.view %t via %ptoc_scratch : !tile.tile<FP32, 8x32>, !tile.tensor<U8, 1x1024> -> !tile.tile<FP32, 256x1>
// CHECK-NEXT:  %{{.*}} = tile.view %i via %ptoc_scratch : !tile.tile<S32, 4x16>, !tile.tensor<U8, 1x1024> -> !tile.tile<S32, 64x1>
// CHECK-NEXT:  %{{.*}} = tile.gather %{{.*}}, %{{.*}} : !tile.tile<FP32, 256x1>, !tile.tile<S32, 64x1> -> !tile.tile<FP32, 64x1>
// CHECK-NEXT:  %g = tile.view %{{.*}} via %ptoc_scratch : !tile.tile<FP32, 64x1>, !tile.tensor<U8, 1x1024> -> !tile.tile<FP32, 4x16>
// CHECK-NEXT:  func.return

// -----

// 32-byte block gather: U32 rows of 8; the byte offset rotated right by 5 is the row.
func.func @blocks(%x: !tile.tensor<FP16, 2x128>, %o: !tile.tensor<U32, 2x4>) {
  %t = tile.load %x[0, 0] : !tile.tensor<FP16, 2x128> -> !tile.tile<FP16, 2x128>
  %i = tile.load %o[0, 0] : !tile.tensor<U32, 2x4> -> !tile.tile<U32, 2x4>
  %g = tile.gather_blocks %t, %i : (!tile.tile<FP16, 2x128>, !tile.tile<U32, 2x4>) -> !tile.tile<FP16, 2x64>
  func.return
}
// CHECK-LABEL: func.func @blocks
// CHECK-NEXT:  %t = tile.load %x[0, 0] : !tile.tensor<FP16, 2x128> -> !tile.tile<FP16, 2x128>
// CHECK-NEXT:  %i = tile.load %o[0, 0] : !tile.tensor<U32, 2x4> -> !tile.tile<U32, 2x4>
// CHECK-NEXT:  %{{.*}} = tile.view %t via %ptoc_scratch : !tile.tile<FP16, 2x128>, !tile.tensor<U8, 1x512> -> !tile.tile<U32, 16x8>
// CHECK-NEXT:  %{{.*}} = tile.cvt %i sat : !tile.tile<U32, 2x4> -> !tile.tile<S32, 2x4>
// CHECK-NEXT:  %{{.*}} = tile.view %{{.*}} via %ptoc_scratch : !tile.tile<S32, 2x4>, !tile.tensor<U8, 1x512> -> !tile.tile<S32, 8x1>
// CHECK-NEXT:  %{{.*}} = tile.shrs %{{.*}}, 5 : !tile.tile<S32, 8x1>
// CHECK-NEXT:  %{{.*}} = tile.shls %{{.*}}, 27 : !tile.tile<S32, 8x1>
// CHECK-NEXT:  %{{.*}} = tile.or %{{.*}}, %{{.*}} : !tile.tile<S32, 8x1>
// CHECK-NEXT:  %{{.*}} = tile.rowexpand %{{.*}} : !tile.tile<S32, 8x1> -> !tile.tile<S32, 8x8>
// CHECK-NEXT:  %{{.*}} = tile.gather %{{.*}}, %{{.*}} : !tile.tile<U32, 16x8>, !tile.tile<S32, 8x8> -> !tile.tile<U32, 8x8>
// CHECK-NEXT:  %g = tile.view %{{.*}} via %ptoc_scratch : !tile.tile<U32, 8x8>, !tile.tensor<U8, 1x512> -> !tile.tile<FP16, 2x64>
// CHECK-NEXT:  func.return

// -----

// Flat scatter with duplicates: sorted keys find the last writer per destination.
func.func @scatter(%x: !tile.tensor<FP32, 2x8>, %o: !tile.tensor<S32, 2x8>) {
  %t = tile.load %x[0, 0] : !tile.tensor<FP32, 2x8> -> !tile.tile<FP32, 2x8>
  %i = tile.load %o[0, 0] : !tile.tensor<S32, 2x8> -> !tile.tile<S32, 2x8>
  %s = tile.scatter_flat %t, %i : (!tile.tile<FP32, 2x8>, !tile.tile<S32, 2x8>) -> !tile.tile<FP32, 3x4>
  func.return
}
// CHECK-LABEL: func.func @scatter
// CHECK-NEXT:  %t = tile.load %x[0, 0] : !tile.tensor<FP32, 2x8> -> !tile.tile<FP32, 2x8>
// CHECK-NEXT:  %i = tile.load %o[0, 0] : !tile.tensor<S32, 2x8> -> !tile.tile<S32, 2x8>
// CHECK-NEXT:  %{{.*}} = tile.view %i via %ptoc_scratch : !tile.tile<S32, 2x8>, !tile.tensor<U8, 1x128> -> !tile.tile<S32, 1x16>
// CHECK-NEXT:  %{{.*}} = tile.full 0 : !tile.tile<S32, 12x1>
// CHECK-NEXT:  %{{.*}} = tile.trans %{{.*}} : !tile.tile<S32, 1x16> -> !tile.tile<S32, 16x1>
// CHECK-NEXT:  %{{.*}} = tile.gather %{{.*}}, %{{.*}} : !tile.tile<S32, 12x1>, !tile.tile<S32, 16x1> -> !tile.tile<S32, 16x1>
// CHECK-NEXT:  %{{.*}} = tile.trans %{{.*}} : !tile.tile<S32, 16x1> -> !tile.tile<S32, 1x16>
// CHECK-NEXT:  %{{.*}} = tile.add %{{.*}}, %{{.*}} : !tile.tile<S32, 1x16>
// CHECK-NEXT:  %{{.*}} = tile.muls %{{.*}}, 16 : !tile.tile<S32, 1x16>
// CHECK-NEXT:  %{{.*}} = tile.ci start 0 : !tile.tile<S32, 1x16>
// CHECK-NEXT:  %{{.*}} = tile.add %{{.*}}, %{{.*}} : !tile.tile<S32, 1x16>
// CHECK-NEXT:  %{{.*}} = tile.cvt %{{.*}} : !tile.tile<S32, 1x16> -> !tile.tile<FP32, 1x16>
// CHECK-NEXT:  %{{.*}}, %{{.*}} = tile.sort %{{.*}} width 64 : !tile.tile<FP32, 1x16> -> !tile.tile<FP32, 1x16>, !tile.tile<U32, 1x16>
// CHECK-NEXT:  %{{.*}} = tile.cvt %{{.*}} : !tile.tile<FP32, 1x16> -> !tile.tile<S32, 1x16>
// CHECK-NEXT:  %{{.*}} = tile.divs %{{.*}}, 16 : !tile.tile<S32, 1x16>
// CHECK-NEXT:  %{{.*}} = tile.rems %{{.*}}, 16 : !tile.tile<S32, 1x16>
// CHECK-NEXT:  %{{.*}} = tile.extract %{{.*}}[0, 1] : !tile.tile<S32, 1x16> -> !tile.tile<S32, 1x15>
// CHECK-NEXT:  %{{.*}} = tile.full -1 : !tile.tile<S32, 1x1>
// CHECK-NEXT:  %{{.*}} = tile.concat %{{.*}}, %{{.*}} : !tile.tile<S32, 1x15>, !tile.tile<S32, 1x1> -> !tile.tile<S32, 1x16>
// CHECK-NEXT:  %{{.*}} = tile.cmp ne %{{.*}}, %{{.*}} : !tile.tile<S32, 1x16> -> !tile.tile<PRED, 1x16>
// CHECK-NEXT:  %{{.*}} = tile.ci start 12 : !tile.tile<S32, 1x16>
// CHECK-NEXT:  %{{.*}} = tile.sel %{{.*}}, %{{.*}}, %{{.*}} : !tile.tile<PRED, 1x16>, !tile.tile<S32, 1x16>
// CHECK-NEXT:  %{{.*}} = tile.adds %{{.*}}, 1 : !tile.tile<S32, 1x16>
// CHECK-NEXT:  %{{.*}} = tile.trans %{{.*}} : !tile.tile<S32, 1x16> -> !tile.tile<S32, 16x1>
// CHECK-NEXT:  %{{.*}} = tile.trans %{{.*}} : !tile.tile<S32, 1x16> -> !tile.tile<S32, 16x1>
// CHECK-NEXT:  %{{.*}} = tile.scatter %{{.*}}, %{{.*}} : !tile.tile<S32, 16x1>, !tile.tile<S32, 16x1> -> !tile.tile<S32, 28x1>
// CHECK-NEXT:  %{{.*}} = tile.extract %{{.*}}[0, 0] : !tile.tile<S32, 28x1> -> !tile.tile<S32, 12x1>
// CHECK-NEXT:  %{{.*}} = tile.full 0 : !tile.tile<U32, 1x1>
// CHECK-NEXT:  %{{.*}} = tile.view %{{.*}}, %t via %ptoc_scratch : !tile.tile<U32, 1x1>, !tile.tile<FP32, 2x8>, !tile.tensor<U8, 1x128> -> !tile.tile<U32, 17x1>
// CHECK-NEXT:  %{{.*}} = tile.gather %{{.*}}, %{{.*}} : !tile.tile<U32, 17x1>, !tile.tile<S32, 12x1> -> !tile.tile<U32, 12x1>
// CHECK-NEXT:  %{{.*}} = tile.view %{{.*}} via %ptoc_scratch : !tile.tile<U32, 12x1>, !tile.tensor<U8, 1x128> -> !tile.tile<U32, 3x4>
// CHECK-NEXT:  %s = tile.view %{{.*}} via %ptoc_scratch : !tile.tile<U32, 3x4>, !tile.tensor<U8, 1x128> -> !tile.tile<FP32, 3x4>
// CHECK-NEXT:  func.return

// -----

// Transpose with a scratch tile: the seed TTRANS, the scratch dropped.
func.func @transpose(%x: !tile.tensor<S8, 27x77>) {
  %t = tile.load %x[0, 0] : !tile.tensor<S8, 27x77> -> !tile.tile<S8, 27x77>
  %r = tile.transpose %t scratch %t : (!tile.tile<S8, 27x77>, !tile.tile<S8, 27x77>) -> !tile.tile<S8, 77x27>
  func.return
}
// CHECK-LABEL: func.func @transpose
// CHECK-NEXT:  %t = tile.load %x[0, 0] : !tile.tensor<S8, 27x77> -> !tile.tile<S8, 27x77>
// CHECK-NEXT:  %r = tile.trans %t : !tile.tile<S8, 27x77> -> !tile.tile<S8, 77x27>
// CHECK-NEXT:  func.return

// -----

// Row-varying quantize: x*s (TROWEXPANDMUL), +o (TROWEXPANDADD), TQUANT 1.0/0 RNE Sat;
// a scalar scale is a TMULS (TQUANT's own multiplier would round x*m once, D10).
func.func @quant(%x: !tile.tensor<FP32, 8x64>, %s: !tile.tensor<FP32, 8x1>, %o: !tile.tensor<FP32, 8x1>) {
  %t = tile.load %x[0, 0] : !tile.tensor<FP32, 8x64> -> !tile.tile<FP32, 8x64>
  %sc = tile.load %s[0, 0] : !tile.tensor<FP32, 8x1> -> !tile.tile<FP32, 8x1>
  %of = tile.load %o[0, 0] : !tile.tensor<FP32, 8x1> -> !tile.tile<FP32, 8x1>
  %q = tile.quantize_rows %t scale %sc offset %of : (!tile.tile<FP32, 8x64>, !tile.tile<FP32, 8x1>, !tile.tile<FP32, 8x1>) -> !tile.tile<U8, 8x64>
  %r = tile.quantize_rows %t scale 0.25 : (!tile.tile<FP32, 8x64>) -> !tile.tile<S8, 8x64>
  func.return
}
// CHECK-LABEL: func.func @quant
// CHECK-NEXT:  %t = tile.load %x[0, 0] : !tile.tensor<FP32, 8x64> -> !tile.tile<FP32, 8x64>
// CHECK-NEXT:  %sc = tile.load %s[0, 0] : !tile.tensor<FP32, 8x1> -> !tile.tile<FP32, 8x1>
// CHECK-NEXT:  %of = tile.load %o[0, 0] : !tile.tensor<FP32, 8x1> -> !tile.tile<FP32, 8x1>
// CHECK-NEXT:  %{{.*}} = tile.rowexpandmul %t, %sc : !tile.tile<FP32, 8x64>, !tile.tile<FP32, 8x1>
// CHECK-NEXT:  %{{.*}} = tile.rowexpandadd %{{.*}}, %of : !tile.tile<FP32, 8x64>, !tile.tile<FP32, 8x1>
// CHECK-NEXT:  %q = tile.quant %{{.*}} rmode rne sat : !tile.tile<FP32, 8x64> -> !tile.tile<U8, 8x64>
// CHECK-NEXT:  %[[M:.*]] = tile.muls %t, 0.25 : !tile.tile<FP32, 8x64>
// CHECK-NEXT:  %r = tile.quant %[[M]] rmode rne sat : !tile.tile<FP32, 8x64> -> !tile.tile<S8, 8x64>
// CHECK-NEXT:  func.return

// -----

// Row-varying dequantize: TCVT to FP32, -o, *s; the scalar integer form is one TDEQUANT.
func.func @dequant(%x: !tile.tensor<S16, 8x64>, %y: !tile.tensor<U8, 8x64>, %s: !tile.tensor<FP32, 8x1>) {
  %q = tile.load %x[0, 0] : !tile.tensor<S16, 8x64> -> !tile.tile<S16, 8x64>
  %u = tile.load %y[0, 0] : !tile.tensor<U8, 8x64> -> !tile.tile<U8, 8x64>
  %sc = tile.load %s[0, 0] : !tile.tensor<FP32, 8x1> -> !tile.tile<FP32, 8x1>
  %r = tile.dequantize_rows %q scale %sc offset %sc : (!tile.tile<S16, 8x64>, !tile.tile<FP32, 8x1>, !tile.tile<FP32, 8x1>) -> !tile.tile<FP32, 8x64>
  %d = tile.dequantize_rows %u scale 0.5 offset 3.0 : (!tile.tile<U8, 8x64>) -> !tile.tile<FP32, 8x64>
  func.return
}
// CHECK-LABEL: func.func @dequant
// CHECK-NEXT:  %q = tile.load %x[0, 0] : !tile.tensor<S16, 8x64> -> !tile.tile<S16, 8x64>
// CHECK-NEXT:  %u = tile.load %y[0, 0] : !tile.tensor<U8, 8x64> -> !tile.tile<U8, 8x64>
// CHECK-NEXT:  %sc = tile.load %s[0, 0] : !tile.tensor<FP32, 8x1> -> !tile.tile<FP32, 8x1>
// CHECK-NEXT:  %{{.*}} = tile.cvt %q : !tile.tile<S16, 8x64> -> !tile.tile<FP32, 8x64>
// CHECK-NEXT:  %{{.*}} = tile.rowexpandsub %{{.*}}, %sc : !tile.tile<FP32, 8x64>, !tile.tile<FP32, 8x1>
// CHECK-NEXT:  %r = tile.rowexpandmul %{{.*}}, %sc : !tile.tile<FP32, 8x64>, !tile.tile<FP32, 8x1>
// CHECK-NEXT:  %d = tile.dequant %u mult 0.5 zp 3 : !tile.tile<U8, 8x64> -> !tile.tile<FP32, 8x64>
// CHECK-NEXT:  func.return

// -----

// MXFP8 of one 32-column group: the FP32 bits (a view), sign cleared, group max of the
// bits, E by a shift, max(E, 8) - 8, 0xFF for NaN groups, E8M0 by a view, TRECIP scaling,
// saturating TCVT to E4M3.
func.func @mx(%x: !tile.tensor<FP32, 4x32>) {
  %t = tile.load %x[0, 0] : !tile.tensor<FP32, 4x32> -> !tile.tile<FP32, 4x32>
  %e, %s, %a, %g = tile.quantize_mx %t : (!tile.tile<FP32, 4x32>) -> (!tile.tile<E4M3, 4x32>, !tile.tile<E8M0, 4x1>, !tile.tile<FP32, 4x1>, !tile.tile<FP32, 4x1>)
  %y = tile.dequantize_mx %e, %s : (!tile.tile<E4M3, 4x32>, !tile.tile<E8M0, 4x1>) -> !tile.tile<FP32, 4x32>
  func.return
}
// CHECK-LABEL: func.func @mx
// CHECK-NEXT:  %t = tile.load %x[0, 0] : !tile.tensor<FP32, 4x32> -> !tile.tile<FP32, 4x32>
// CHECK-NEXT:  %{{.*}} = tile.view %t via %ptoc_scratch : !tile.tile<FP32, 4x32>, !tile.tensor<U8, 1x512> -> !tile.tile<U32, 4x32>
// CHECK-NEXT:  %{{.*}} = tile.ands %{{.*}}, 2147483647 : !tile.tile<U32, 4x32>
// CHECK-NEXT:  %{{.*}} = tile.rowmax %{{.*}} : !tile.tile<U32, 4x32> -> !tile.tile<U32, 4x1>
// CHECK-NEXT:  %{{.*}} = tile.shrs %{{.*}}, 23 : !tile.tile<U32, 4x1>
// CHECK-NEXT:  %{{.*}} = tile.maxs %{{.*}}, 8 : !tile.tile<U32, 4x1>
// CHECK-NEXT:  %{{.*}} = tile.subs %{{.*}}, 8 : !tile.tile<U32, 4x1>
// CHECK-NEXT:  %{{.*}} = tile.cmps le %{{.*}}, 2139095040 : !tile.tile<U32, 4x1> -> !tile.tile<PRED, 4x1>
// CHECK-NEXT:  %{{.*}} = tile.sels %{{.*}}, %{{.*}}, 255 : !tile.tile<PRED, 4x1>, !tile.tile<U32, 4x1>
// CHECK-NEXT:  %{{.*}} = tile.view %{{.*}} via %ptoc_scratch : !tile.tile<U32, 4x1>, !tile.tensor<U8, 1x512> -> !tile.tile<FP32, 4x1>
// CHECK-NEXT:  %a = tile.sels %{{.*}}, %{{.*}}, nan : !tile.tile<PRED, 4x1>, !tile.tile<FP32, 4x1>
// CHECK-NEXT:  %{{.*}} = tile.cvt %{{.*}} : !tile.tile<U32, 4x1> -> !tile.tile<U8, 4x1>
// CHECK-NEXT:  %s = tile.view %{{.*}} via %ptoc_scratch : !tile.tile<U8, 4x1>, !tile.tensor<U8, 1x512> -> !tile.tile<E8M0, 4x1>
// CHECK-NEXT:  %{{.*}} = tile.cvt %s : !tile.tile<E8M0, 4x1> -> !tile.tile<FP32, 4x1>
// CHECK-NEXT:  %g = tile.recip %{{.*}} : !tile.tile<FP32, 4x1>
// CHECK-NEXT:  %{{.*}} = tile.rowexpandmul %t, %g : !tile.tile<FP32, 4x32>, !tile.tile<FP32, 4x1>
// CHECK-NEXT:  %e = tile.cvt %{{.*}} rmode rne sat : !tile.tile<FP32, 4x32> -> !tile.tile<E4M3, 4x32>
// CHECK-NEXT:  %{{.*}} = tile.cvt %e : !tile.tile<E4M3, 4x32> -> !tile.tile<FP32, 4x32>
// CHECK-NEXT:  %{{.*}} = tile.cvt %s : !tile.tile<E8M0, 4x1> -> !tile.tile<FP32, 4x1>
// CHECK-NEXT:  %y = tile.rowexpandmul %{{.*}}, %{{.*}} : !tile.tile<FP32, 4x32>, !tile.tile<FP32, 4x1>
// CHECK-NEXT:  func.return

// -----

// Partial max where neither source covers: a TPARTMAX band, a copied band, stacked.
func.func @partial(%x: !tile.tensor<FP32, 6x8>) {
  %a = tile.load %x[0, 0] : !tile.tensor<FP32, 6x8> -> !tile.tile<FP32, 4x8>
  %b = tile.load %x[0, 0] : !tile.tensor<FP32, 6x8> -> !tile.tile<FP32, 6x5>
  %r = tile.partial max %a, %b : (!tile.tile<FP32, 4x8>, !tile.tile<FP32, 6x5>) -> !tile.tile<FP32, 6x8>
  %e = tile.partial add %a, empty : (!tile.tile<FP32, 4x8>) -> !tile.tile<FP32, 4x8>
  func.return
}
// CHECK-LABEL: func.func @partial
// CHECK-NEXT:  %a = tile.load %x[0, 0] : !tile.tensor<FP32, 6x8> -> !tile.tile<FP32, 4x8>
// CHECK-NEXT:  %b = tile.load %x[0, 0] : !tile.tensor<FP32, 6x8> -> !tile.tile<FP32, 6x5>
// CHECK-NEXT:  %{{.*}} = tile.extract %b[0, 0] : !tile.tile<FP32, 6x5> -> !tile.tile<FP32, 4x5>
// CHECK-NEXT:  %{{.*}} = tile.partmax %a, %{{.*}} : !tile.tile<FP32, 4x8>, !tile.tile<FP32, 4x5> -> !tile.tile<FP32, 4x8>
// CHECK-NEXT:  %{{.*}} = tile.extract %b[4, 0] : !tile.tile<FP32, 6x5> -> !tile.tile<FP32, 2x5>
// CHECK-NEXT:  %{{.*}} = tile.full -inf : !tile.tile<FP32, 2x3>
// CHECK-NEXT:  %{{.*}} = tile.concat %{{.*}}, %{{.*}} : !tile.tile<FP32, 2x5>, !tile.tile<FP32, 2x3> -> !tile.tile<FP32, 2x8>
// CHECK-NEXT:  %{{.*}} = tile.trans %{{.*}} : !tile.tile<FP32, 4x8> -> !tile.tile<FP32, 8x4>
// CHECK-NEXT:  %{{.*}} = tile.trans %{{.*}} : !tile.tile<FP32, 2x8> -> !tile.tile<FP32, 8x2>
// CHECK-NEXT:  %{{.*}} = tile.concat %{{.*}}, %{{.*}} : !tile.tile<FP32, 8x4>, !tile.tile<FP32, 8x2> -> !tile.tile<FP32, 8x6>
// CHECK-NEXT:  %r = tile.trans %{{.*}} : !tile.tile<FP32, 8x6> -> !tile.tile<FP32, 6x8>
// CHECK-NEXT:  func.return

// -----

// Records to pto-isa's interleaved bytes and back: GM views only.
func.func @records(%x: !tile.tensor<FP32, 2x4>, %y: !tile.tensor<U32, 2x4>) {
  %v = tile.load %x[0, 0] : !tile.tensor<FP32, 2x4> -> !tile.tile<FP32, 2x4>
  %p = tile.load %y[0, 0] : !tile.tensor<U32, 2x4> -> !tile.tile<U32, 2x4>
  %r = tile.pack_records %v, %p : (!tile.tile<FP32, 2x4>, !tile.tile<U32, 2x4>) -> !tile.tile<U32, 2x8>
  %uv, %up = tile.unpack_records %r : (!tile.tile<U32, 2x8>) -> (!tile.tile<FP32, 2x4>, !tile.tile<U32, 2x4>)
  func.return
}
// CHECK-LABEL: func.func @records
// CHECK-NEXT:  %v = tile.load %x[0, 0] : !tile.tensor<FP32, 2x4> -> !tile.tile<FP32, 2x4>
// CHECK-NEXT:  %p = tile.load %y[0, 0] : !tile.tensor<U32, 2x4> -> !tile.tile<U32, 2x4>
// CHECK-NEXT:  %{{.*}} = tile.view %v via %ptoc_scratch : !tile.tile<FP32, 2x4>, !tile.tensor<U8, 1x64> -> !tile.tile<U32, 8x1>
// CHECK-NEXT:  %{{.*}} = tile.view %p via %ptoc_scratch : !tile.tile<U32, 2x4>, !tile.tensor<U8, 1x64> -> !tile.tile<U32, 8x1>
// CHECK-NEXT:  %{{.*}} = tile.concat %{{.*}}, %{{.*}} : !tile.tile<U32, 8x1>, !tile.tile<U32, 8x1> -> !tile.tile<U32, 8x2>
// CHECK-NEXT:  %r = tile.view %{{.*}} via %ptoc_scratch : !tile.tile<U32, 8x2>, !tile.tensor<U8, 1x64> -> !tile.tile<U32, 2x8>
// CHECK-NEXT:  %{{.*}} = tile.view %r via %ptoc_scratch stride 8 : !tile.tile<U32, 2x8>, !tile.tensor<U8, 1x64> -> !tile.tile<FP32, 8x1>
// CHECK-NEXT:  %uv = tile.view %{{.*}} via %ptoc_scratch : !tile.tile<FP32, 8x1>, !tile.tensor<U8, 1x64> -> !tile.tile<FP32, 2x4>
// CHECK-NEXT:  %{{.*}} = tile.view %r via %ptoc_scratch offset 4 stride 8 : !tile.tile<U32, 2x8>, !tile.tensor<U8, 1x64> -> !tile.tile<U32, 8x1>
// CHECK-NEXT:  %up = tile.view %{{.*}} via %ptoc_scratch : !tile.tile<U32, 8x1>, !tile.tensor<U8, 1x64> -> !tile.tile<U32, 2x4>
// CHECK-NEXT:  func.return
