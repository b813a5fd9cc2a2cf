// RUN: xdsl-opt %s --split-input-file -p ptoc-legalize,ptoc-allocate{depth=4},ptoc-emit -t ptoc-asm | filecheck %s

// A run-time loop over 8-row blocks, its trip count a scalar parameter: the index starts
// at 0, a guard skips the body when it is not below %n, each moved window is checked
// (a branch into its own block faults) and addressed, and the latch steps the index and
// branches back while it is below %n.
func.func @rows(%x: !tile.tensor<FP32, 64x32>, %out: !tile.tensor<FP32, 64x32>, %n: i64) {
  %0 = arith.constant 0 : i64
  %1 = arith.constant 8 : i64
  scf.for %i = %0 to %n step %1 : i64 {
    %t = tile.load %x[0, 0] plus [0](%i) : !tile.tensor<FP32, 64x32> -> !tile.tile<FP32, 8x32>
    %e = tile.exp %t : !tile.tile<FP32, 8x32>
    tile.store %e, %out[0, 0] plus [0](%i) : !tile.tile<FP32, 8x32>, !tile.tensor<FP32, 64x32>
  }
  func.return
}

// CHECK:      # @rows, allocated for hands=4,depth=4
// CHECK:      # a2 = scalar n
// The body's entry state is set up once: four fillers fill hand T (depth 4).
// CHECK-COUNT-4: BSTART.VEC TEXPANDS, U8
// The loop's constants are written right before it (their registers are free before).
// CHECK:      BSTART.STD FALL
// CHECK-NEXT: c.movi 0, ->[[LB:[a-z0-9]+]]
// CHECK-NEXT: c.movi 8,
// CHECK-NEXT: add [[LB]], zero, ->[[I:[a-z0-9]+]]
// CHECK-NEXT: BSTOP
// CHECK-NEXT: BSTART.STD COND, [[EXIT:L[0-9]+]]
// CHECK-NEXT: setc.ge [[I]], a2.t3
// CHECK-NEXT: BSTOP
// CHECK-NEXT: [[BODY:L[0-9]+]]:
// CHECK-NEXT: BSTART.STD COND, [[TRAP:L[0-9]+]]
// CHECK-NEXT: [[TRAP]]:
// CHECK:      setc.geu [[I]],
// CHECK:      BSTART.TLOAD FP32
// CHECK:      BSTART.SFU TEXP, FP32
// CHECK:      BSTART.TSTORE FP32
// CHECK:      BSTART.STD COND, [[BODY]]
// CHECK-NEXT: addi [[I]], 8, ->[[I]]
// CHECK-NEXT: setc.lt [[I]], a2.t3
// CHECK-NEXT: BSTOP
// CHECK-NEXT: [[EXIT]]:

// -----

// A ragged tail: the load reads min(%n - %i, 8) rows, and every bundle on the tile runs
// with that count in a register (B.DIM's register form), the store writing those rows.
func.func @tail(%x: !tile.tensor<FP32, 64x32>, %out: !tile.tensor<FP32, 64x32>, %n: i64) {
  %0 = arith.constant 0 : i64
  %1 = arith.constant 8 : i64
  scf.for %i = %0 to %n step %1 : i64 {
    %k = arith.subi %n, %i : i64
    %c = arith.minsi %k, %1 : i64
    %t = tile.load %x[0, 0] plus [0](%i) valid [0](%c) : !tile.tensor<FP32, 64x32> -> !tile.tile<FP32, 8x32>
    %e = tile.exp %t : !tile.tile<FP32, 8x32>
    tile.store %e, %out[0, 0] plus [0](%i) : !tile.tile<FP32, 8x32>, !tile.tensor<FP32, 64x32>
  }
  func.return
}

// CHECK:      # @tail, allocated for hands=4,depth=4
// CHECK:      sub a2, [[I2:[a-z0-9]+]], ->[[K:[a-z0-9]+]]
// CHECK:      min [[K]], {{[a-z0-9]+}}, ->[[C:[a-z0-9]+]]
// CHECK:      BSTART.TLOAD FP32
// CHECK-NEXT: C.B.DIMI 32, ->LB0
// CHECK-NEXT: B.DIM [[C]], 0, ->LB1
// CHECK:      BSTART.SFU TEXP, FP32
// CHECK-NEXT: C.B.DIMI 32, ->LB0
// CHECK-NEXT: B.DIM [[C]], 0, ->LB1
// CHECK:      BSTART.TSTORE FP32
// CHECK-NOT:  B.DIM
// CHECK:      B.IOT
