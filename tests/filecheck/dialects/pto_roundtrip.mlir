// RUN: xdsl-opt %s | filecheck %s
// RUN: xdsl-opt %s --print-op-generic | xdsl-opt | filecheck %s

// CHECK-LABEL: func.func @k
func.func @k(%x: !tile.tensor<FP32, 32x64>, %out: !tile.tensor<S8, 32x64>) {
  // CHECK-NEXT: %a = pto.addr %x offset 0 pe_step 2048 : !tile.tensor<FP32, 32x64>
  %a = pto.addr %x offset 0 pe_step 2048 : !tile.tensor<FP32, 32x64>
  // CHECK-NEXT: %s = pto.const 256
  %s = pto.const 256
  // CHECK-NEXT: %sc = pto.scratch offset 128
  %sc = pto.scratch offset 128
  // CHECK-NEXT: pto.materialize %s gpr "s0"
  pto.materialize %s gpr "s0"
  // CHECK-NEXT: %t = pto.tload FP32 gpr(%a, %s) dims [64, 8, -1] mask 15 hands ["T"] gprs ["a0", "s0"] : () -> !pto.tile<FP32, valid 8x64, phys 8x64, 2KB>
  %t = pto.tload FP32 gpr(%a, %s) dims [64, 8, -1] mask 15 hands ["T"] gprs ["a0", "s0"] : () -> !pto.tile<FP32, valid 8x64, phys 8x64, 2KB>
  // CHECK-NEXT: %m = pto.trowmax FP32 %t dims [64, 8, -1] datr <pad = Max> mask 15 refs ["T#1"] hands ["U"] : (!pto.tile<FP32, valid 8x64, phys 8x64, 2KB>) -> !pto.tile<FP32, valid 8x1, phys 128x1, 512B>
  %m = pto.trowmax FP32 %t dims [64, 8, -1] datr <pad = Max> mask 15 refs ["T#1"] hands ["U"] : (!pto.tile<FP32, valid 8x64, phys 8x64, 2KB>) -> !pto.tile<FP32, valid 8x1, phys 128x1, 512B>
  // CHECK-NEXT: %q = pto.tquant FP32 %t dims [64, 8, -1] datr <dtype = S8, rmode = RNE, sat = 1> mask 15 : (!pto.tile<FP32, valid 8x64, phys 8x64, 2KB>) -> !pto.tile<S8, valid 8x64, phys 8x64, 512B>
  %q = pto.tquant FP32 %t dims [64, 8, -1] datr <dtype = S8, rmode = RNE, sat = 1> mask 15 : (!pto.tile<FP32, valid 8x64, phys 8x64, 2KB>) -> !pto.tile<S8, valid 8x64, phys 8x64, 512B>
  // CHECK-NEXT: %v, %i = pto.tsort FP32 %t dims [32, -1, -1] mask 8 : (!pto.tile<FP32, valid 8x64, phys 8x64, 2KB>) -> (!pto.tile<FP32, valid 8x64, phys 8x64, 2KB>, !pto.tile<U32, valid 8x64, phys 8x64, 2KB>)
  %v, %i = pto.tsort FP32 %t dims [32, -1, -1] mask 8 : (!pto.tile<FP32, valid 8x64, phys 8x64, 2KB>) -> (!pto.tile<FP32, valid 8x64, phys 8x64, 2KB>, !pto.tile<U32, valid 8x64, phys 8x64, 2KB>)
  // CHECK-NEXT: %r = pto.tmov FP32 %t dims [64, 8, -1] mask 15 refs ["T#1"] hands ["T"] role "refresh" : (!pto.tile<FP32, valid 8x64, phys 8x64, 2KB>) -> !pto.tile<FP32, valid 8x64, phys 8x64, 2KB>
  %r = pto.tmov FP32 %t dims [64, 8, -1] mask 15 refs ["T#1"] hands ["T"] role "refresh" : (!pto.tile<FP32, valid 8x64, phys 8x64, 2KB>) -> !pto.tile<FP32, valid 8x64, phys 8x64, 2KB>
  // CHECK-NEXT: pto.tstore S8 %q gpr(%a, %s) dims [-1, -1, -1] mask 15 : (!pto.tile<S8, valid 8x64, phys 8x64, 512B>) -> ()
  pto.tstore S8 %q gpr(%a, %s) dims [-1, -1, -1] mask 15 : (!pto.tile<S8, valid 8x64, phys 8x64, 512B>) -> ()
  func.return
}

// CHECK: pto.program "k" [
// CHECK-NEXT: "BSTART.VEC TADD, FP32",
// CHECK-NEXT: "BSTOP"
// CHECK-NEXT: ]
pto.program "k" ["BSTART.VEC TADD, FP32", "BSTOP"]
