// RUN: xdsl-opt %s --split-input-file --verify-diagnostics | filecheck %s

// The pto verifier is the catalog row's legality.

%t = "test.op"() : () -> !pto.tile<FP32, valid 8x64, phys 8x64, 2KB>
%u = pto.tadd FP32 %t dims [64, 8, -1] mask 15 : (!pto.tile<FP32, valid 8x64, phys 8x64, 2KB>) -> !pto.tile<FP32, valid 8x64, phys 8x64, 2KB>
// CHECK: TADD binds 2 Local source(s) and 1 destination(s) in its binding stream, not 1 and 1

// -----

%t = "test.op"() : () -> !pto.tile<FP32, valid 8x64, phys 8x64, 2KB>
%u = pto.tand FP32 %t, %t dims [64, 8, -1] mask 15 : (!pto.tile<FP32, valid 8x64, phys 8x64, 2KB>, !pto.tile<FP32, valid 8x64, phys 8x64, 2KB>) -> !pto.tile<FP32, valid 8x64, phys 8x64, 2KB>
// CHECK: TAND does not support DataType FP32

// -----

%t = "test.op"() : () -> !pto.tile<FP32, valid 8x64, phys 8x64, 2KB>
%u = pto.texp FP32 %t dims [-1, 8, -1] mask 15 : (!pto.tile<FP32, valid 8x64, phys 8x64, 2KB>) -> !pto.tile<FP32, valid 8x64, phys 8x64, 2KB>
// CHECK: TEXP requires B.DIM LB0 (ValidCol)

// -----

%t = "test.op"() : () -> !pto.tile<FP32, valid 8x64, phys 8x64, 2KB>
%u = pto.texp FP32 %t dims [64, 0, -1] mask 15 : (!pto.tile<FP32, valid 8x64, phys 8x64, 2KB>) -> !pto.tile<FP32, valid 8x64, phys 8x64, 2KB>
// CHECK: an explicitly encoded zero LB1 (ValidRow) is illegal for TEXP

// -----

%a = "test.op"() : () -> !pto.tile<FP32, valid 1x8, phys 4x32, 512B>
%m = pto.tmrgsort FP32 %a, %a dims [16, -1, -1] mask 15 : (!pto.tile<FP32, valid 1x8, phys 4x32, 512B>, !pto.tile<FP32, valid 1x8, phys 4x32, 512B>) -> !pto.tile<FP32, valid 1x16, phys 8x16, 512B>
// CHECK: TMRGSORT takes no B.DIM LB0

// -----

%t = "test.op"() : () -> !pto.tile<FP32, valid 8x64, phys 8x64, 2KB>
%u = pto.tadd FP32 %t, %t dims [64, 8, -1] datr <rmode = RNE> mask 15 : (!pto.tile<FP32, valid 8x64, phys 8x64, 2KB>, !pto.tile<FP32, valid 8x64, phys 8x64, 2KB>) -> !pto.tile<FP32, valid 8x64, phys 8x64, 2KB>
// CHECK: B.DATR.RMode=1 is inapplicable to TADD (applicable: PadValueOrByteId)

// -----

%t = "test.op"() : () -> !pto.tile<FP32, valid 8x64, phys 8x64, 2KB>
%q = pto.tquant FP32 %t dims [64, 8, -1] mask 15 : (!pto.tile<FP32, valid 8x64, phys 8x64, 2KB>) -> !pto.tile<S8, valid 8x64, phys 8x64, 512B>
// CHECK: TQUANT requires a B.DATR

// -----

%t = "test.op"() : () -> !pto.tile<FP32, valid 8x64, phys 8x64, 2KB>
%q = pto.tquant FP32 %t dims [64, 8, -1] datr <dtype = S16> mask 15 : (!pto.tile<FP32, valid 8x64, phys 8x64, 2KB>) -> !pto.tile<S16, valid 8x64, phys 8x64, 1KB>
// CHECK: TQUANT needs B.DATR.DataType S8 or U8 for its destination, not S16

// -----

%t = "test.op"() : () -> !pto.tile<FP32, valid 8x64, phys 8x64, 2KB>
%c = pto.const 1
%u = pto.tadd FP32 %t, %t gpr(%c) dims [64, 8, -1] mask 15 : (!pto.tile<FP32, valid 8x64, phys 8x64, 2KB>, !pto.tile<FP32, valid 8x64, phys 8x64, 2KB>) -> !pto.tile<FP32, valid 8x64, phys 8x64, 2KB>
// CHECK: B.IOR is illegal for TADD

// -----

%t = "test.op"() : () -> !pto.tile<FP32, valid 8x64, phys 8x64, 2KB>
%c = pto.const 1
%u = pto.tadds FP32 %t gpr(%c, %c) dims [64, 8, -1] mask 15 : (!pto.tile<FP32, valid 8x64, phys 8x64, 2KB>) -> !pto.tile<FP32, valid 8x64, phys 8x64, 2KB>
// CHECK: B.IOR RegSrc1 is unused by TADDS and must be zero

// -----

%v = "test.op"() : () -> !pto.tile<FP16, valid 8x64, phys 8x64, 1KB>
%i = "test.op"() : () -> !pto.tile<S32, valid 8x64, phys 8x64, 2KB>
%s = pto.tscatter FP16 %v, %i dims [64, 8, -1] mask 15 : (!pto.tile<FP16, valid 8x64, phys 8x64, 1KB>, !pto.tile<S32, valid 8x64, phys 8x64, 2KB>) -> !pto.tile<FP16, valid 8x64, phys 8x64, 1KB>
// CHECK: pto.tscatter index DataType S32 does not pair with FP16

// -----

%t = "test.op"() : () -> !pto.tile<FP32, valid 8x64, phys 8x64, 2KB>
%u = pto.texp FP32 %t dims [64, 8, -1] mask 9 : (!pto.tile<FP32, valid 8x64, phys 8x64, 2KB>) -> !pto.tile<FP32, valid 8x64, phys 8x64, 2KB>
// CHECK: pto.texp mask 1001 has no PEMode

