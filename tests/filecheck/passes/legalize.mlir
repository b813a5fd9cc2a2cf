// RUN: xdsl-opt %s -p ptoc-legalize --split-input-file | filecheck %s

// Row softmax on 4 PEs: every PE loads its 8 rows through a per-PE base (pe_step).
func.func @softmax(%x: !tile.tensor<FP32, 32x64>, %out: !tile.tensor<FP32, 32x64>) attributes {"tile.pes" = 4 : i64} {
  %t = tile.load %x[0, 0] pe [8, 0] : !tile.tensor<FP32, 32x64> -> !tile.tile<FP32, 8x64>
  %m = tile.rowmax %t : !tile.tile<FP32, 8x64> -> !tile.tile<FP32, 8x1>
  %s = tile.rowexpandsub %t, %m : !tile.tile<FP32, 8x64>, !tile.tile<FP32, 8x1>
  %e = tile.exp %s : !tile.tile<FP32, 8x64>
  %z = tile.rowsum %e : !tile.tile<FP32, 8x64> -> !tile.tile<FP32, 8x1>
  %r = tile.rowexpanddiv %e, %z : !tile.tile<FP32, 8x64>, !tile.tile<FP32, 8x1>
  tile.store %r, %out[0, 0] pe [8, 0] : !tile.tile<FP32, 8x64>, !tile.tensor<FP32, 32x64>
  func.return
}
// CHECK-LABEL: func.func @softmax
// CHECK-NEXT:  %[[A:.*]] = pto.addr %x offset 0 pe_step 2048 : !tile.tensor<FP32, 32x64>
// CHECK-NEXT:  %[[S:.*]] = pto.const 256
// CHECK-NEXT:  %t = pto.tload FP32 gpr(%[[A]], %[[S]]) dims [64, 8, -1] mask 15 : () -> !pto.tile<FP32, valid 8x64, phys 8x64, 2KB>
// CHECK-NEXT:  %m = pto.trowmax FP32 %t dims [64, 8, -1] mask 15 : ({{.*}}) -> !pto.tile<FP32, valid 8x1, phys 128x1, 512B>
// CHECK-NEXT:  %s = pto.trowexpandsub FP32 %t, %m dims [64, 8, -1] mask 15
// CHECK-NEXT:  %e = pto.texp FP32 %s dims [64, 8, -1] mask 15
// CHECK-NEXT:  %z = pto.trowsum FP32 %e dims [64, 8, -1] mask 15
// CHECK-NEXT:  %r = pto.trowexpanddiv FP32 %e, %z dims [64, 8, -1] mask 15
// CHECK-NEXT:  %[[O:.*]] = pto.addr %out offset 0 pe_step 2048
// CHECK-NEXT:  pto.tstore FP32 %r gpr(%[[O]], %[[S]]) dims [-1, -1, -1] mask 15 : (!pto.tile<FP32, valid 8x64, phys 8x64, 2KB>) -> ()

// -----

// Scalars become GPR operands (the element's raw bits, sign-extended); conversions,
// comparisons and quantization carry an explicit B.DATR.
func.func @fields(%x: !tile.tensor<FP32, 8x32>) {
  %t = tile.load %x[0, 0] : !tile.tensor<FP32, 8x32> -> !tile.tile<FP32, 8x32>
  %a = tile.adds %t, 1.0 : !tile.tile<FP32, 8x32>
  %b = tile.muls %a, -2.0 : !tile.tile<FP32, 8x32>
  %c = tile.cvt %b rmode rtz sat : !tile.tile<FP32, 8x32> -> !tile.tile<S16, 8x32>
  %d = tile.cmps gt %t, 0.0 : !tile.tile<FP32, 8x32> -> !tile.tile<PRED, 8x32>
  %q = tile.quant %t mult 0.5 zp -1 sat : !tile.tile<FP32, 8x32> -> !tile.tile<S8, 8x32>
  %r = tile.quant %t : !tile.tile<FP32, 8x32> -> !tile.tile<U8, 8x32>
  %v, %i = tile.sort %t width 8 descending : !tile.tile<FP32, 8x32> -> !tile.tile<FP32, 8x32>, !tile.tile<U32, 8x32>
  func.return
}
// CHECK-LABEL: func.func @fields
// CHECK:       %[[ONE:.*]] = pto.const 1065353216
// CHECK-NEXT:  %a = pto.tadds FP32 %t gpr(%[[ONE]]) dims [32, 8, -1] mask 8
// CHECK-NEXT:  %[[M2:.*]] = pto.const -1073741824
// CHECK-NEXT:  %b = pto.tmuls FP32 %a gpr(%[[M2]]) dims [32, 8, -1] mask 8
// CHECK-NEXT:  %c = pto.tcvt FP32 %b dims [32, 8, -1] datr <dtype = S16, rmode = RTZ, sat = 1> mask 8 : ({{.*}}) -> !pto.tile<S16, valid 8x32, phys 8x32, 512B>
// CHECK-NEXT:  %[[ZERO:.*]] = pto.const 0
// CHECK-NEXT:  %d = pto.tcmps FP32 %t gpr(%[[ZERO]]) dims [32, 8, -1] datr <cmode = GT> mask 8 : ({{.*}}) -> !pto.tile<PRED, valid 8x32, {{.*}}, 128B>
// CHECK-NEXT:  %[[HALF:.*]] = pto.const 1056964608
// CHECK-NEXT:  %[[NEG1:.*]] = pto.const -1
// CHECK-NEXT:  %q = pto.tquant FP32 %t gpr(%[[HALF]], %[[NEG1]]) dims [32, 8, -1] datr <dtype = S8, sat = 1> mask 8
// CHECK-NEXT:  %r = pto.tquant FP32 %t dims [32, 8, -1] datr <dtype = U8> mask 8
// CHECK-NEXT:  %[[DESC:.*]] = pto.const 1
// CHECK-NEXT:  %v, %i = pto.tsort FP32 %t gpr(%[[DESC]]) dims [8, -1, -1] mask 8 : ({{.*}}) -> (!pto.tile<FP32, valid 8x32, phys 8x32, 1KB>, !pto.tile<U32, valid 8x32, phys 8x32, 1KB>)

// -----

// Strided access: row offset 1, every second row, a padded tensor (80-element rows).
func.func @strided(%x: !tile.tensor<S16, 32x48, stride 80>) {
  %t = tile.load %x[1, 4] step 2 : !tile.tensor<S16, 32x48, stride 80> -> !tile.tile<S16, 8x16>
  %u = tile.load %x[3, 0] : !tile.tensor<S16, 32x48, stride 80> -> !tile.tile<S16, 1x48>
  func.return
}
// CHECK-LABEL: func.func @strided
// CHECK-NEXT:  %[[A:.*]] = pto.addr %x offset 168 : !tile.tensor<S16, 32x48, stride 80>
// CHECK-NEXT:  %[[S:.*]] = pto.const 320
// CHECK-NEXT:  %t = pto.tload S16 gpr(%[[A]], %[[S]]) dims [16, 8, -1] mask 8 : () -> !pto.tile<S16, valid 8x16, phys 8x16, 256B>
// CHECK-NEXT:  %[[B:.*]] = pto.addr %x offset 480
// CHECK-NEXT:  %u = pto.tload S16 gpr(%[[B]]) dims [48, -1, 64] mask 8 : () -> !pto.tile<S16, valid 1x48, phys 2x64, 256B>

// -----

// A tile over one allocation is cut into row pieces; row-separable ops run per piece
// and a column max folds the pieces' partial maxima with TMAX.
func.func @split(%x: !tile.tensor<FP32, 512x64>, %o: !tile.tensor<FP32, 1x64>) {
  %t = tile.load %x[0, 0] : !tile.tensor<FP32, 512x64> -> !tile.tile<FP32, 512x64>
  %e = tile.exp %t : !tile.tile<FP32, 512x64>
  %m = tile.colmax %e : !tile.tile<FP32, 512x64> -> !tile.tile<FP32, 1x64>
  tile.store %m, %o[0, 0] : !tile.tile<FP32, 1x64>, !tile.tensor<FP32, 1x64>
  func.return
}
// CHECK-LABEL: func.func @split
// CHECK:       %t = pto.tload FP32 gpr({{.*}}) dims [64, 256, -1] mask 8 : () -> !pto.tile<FP32, valid 256x64, phys 256x64, 64KB>
// CHECK:       %[[A2:.*]] = pto.addr %x offset 65536
// CHECK:       %t_1 = pto.tload FP32 gpr(%[[A2]], {{.*}}) dims [64, 256, -1]
// CHECK-NEXT:  %e = pto.texp FP32 %t dims [64, 256, -1]
// CHECK-NEXT:  %e_1 = pto.texp FP32 %t_1 dims [64, 256, -1]
// CHECK-NEXT:  %[[M1:.*]] = pto.tcolmax FP32 %e dims [64, 256, -1] mask 8 : ({{.*}}) -> !pto.tile<FP32, valid 1x64, phys 2x64, 512B>
// CHECK-NEXT:  %[[M2:.*]] = pto.tcolmax FP32 %e_1 dims [64, 256, -1]
// CHECK-NEXT:  %[[M:.*]] = pto.tmax FP32 %[[M1]], %[[M2]] dims [64, -1, -1]
// CHECK:       pto.tstore FP32 %[[M]]
