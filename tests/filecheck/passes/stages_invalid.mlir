// Each pass checks that its input is the stage it expects and says so in one line.
// RUN: xdsl-opt %s -p ptoc-emit --split-input-file --verify-diagnostics | filecheck %s --check-prefix=EMIT
// RUN: xdsl-opt %s -p ptoc-allocate --split-input-file --verify-diagnostics | filecheck %s --check-prefix=ALLOC
// RUN: xdsl-opt %s -p ptoc-legalize,ptoc-legalize --split-input-file --verify-diagnostics | filecheck %s --check-prefix=TWICE
// RUN: xdsl-opt %s -p ptoc-legalize,ptoc-allocate,ptoc-allocate --split-input-file --verify-diagnostics | filecheck %s --check-prefix=REALLOC
// RUN: xdsl-opt %s -p ptoc-legalize,ptoc-lower-compound --split-input-file --verify-diagnostics | filecheck %s --check-prefix=LATE
// RUN: xdsl-opt %s -p ptoc-legalize,ptoc-allocate,ptoc-emit,ptoc-emit --split-input-file --verify-diagnostics | filecheck %s --check-prefix=DONE
// RUN: xdsl-opt %s -p ptoc-legalize -t ptoc-asm --split-input-file --verify-diagnostics | filecheck %s --check-prefix=ASM

func.func @k(%x: !tile.tensor<FP32, 8x64>, %o: !tile.tensor<FP32, 8x64>) {
  %t = tile.load %x[0, 0] : !tile.tensor<FP32, 8x64> -> !tile.tile<FP32, 8x64>
  tile.store %t, %o[0, 0] : !tile.tile<FP32, 8x64>, !tile.tensor<FP32, 8x64>
  func.return
}
// EMIT: ptoc-emit: @k is tile IR, not allocated pto IR: run ptoc-legalize and ptoc-allocate first
// ALLOC: ptoc-allocate: @k is tile IR, not legalized pto IR: run ptoc-legalize first
// TWICE: ptoc-legalize: @k is already legalized (pto IR); ptoc-legalize takes tile IR
// REALLOC: ptoc-allocate: @k is already allocated; ptoc-allocate takes legalized pto IR
// LATE: ptoc-lower-compound: @k is already legalized (pto IR); ptoc-lower-compound takes tile IR
// DONE: ptoc-emit: the module holds emitted programs (pto.program), no kernel
// ASM: ptoc-asm: the module holds a kernel that is not emitted: run ptoc-emit (after ptoc-legalize and ptoc-allocate) first
