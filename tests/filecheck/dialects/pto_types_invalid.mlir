// RUN: xdsl-opt %s --split-input-file --parsing-diagnostics --verify-diagnostics | filecheck %s

// Descriptor types: Rows are derived from the SizeCode, Col and the element width.

%t = "test.op"() : () -> !pto.tile<FP32, valid 8x64, phys 16x64, 2KB>
// CHECK: physical rows of a 2KB tile with 64 columns are 8

// -----

%t = "test.op"() : () -> !pto.tile<FP32, valid 9x64, phys 8x64, 2KB>
// CHECK: valid 9x64 does not fit the physical 8x64 tile

// -----

%t = "test.op"() : () -> !pto.tile<FP32, valid 8x48, phys 8x48, 2KB>
// CHECK: physical Col 48 is not a power of two
