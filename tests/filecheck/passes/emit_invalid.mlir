// RUN: xdsl-opt %s -p ptoc-legalize,ptoc-emit --split-input-file --verify-diagnostics | filecheck %s

// emit needs the allocation: hands, references and GPRs.
func.func @k(%x: !tile.tensor<FP32, 8x64>, %o: !tile.tensor<FP32, 8x64>) {
  %t = tile.load %x[0, 0] : !tile.tensor<FP32, 8x64> -> !tile.tile<FP32, 8x64>
  tile.store %t, %o[0, 0] : !tile.tile<FP32, 8x64>, !tile.tensor<FP32, 8x64>
  func.return
}
// CHECK: ptoc-emit: @k is legalized pto IR, not allocated pto IR: run ptoc-allocate first
