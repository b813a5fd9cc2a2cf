// RUN: xdsl-opt %s --split-input-file --verify-diagnostics | filecheck %s

// The pto verifier is the catalog row's legality.

%t = "test.op"() : () -> !pto.tile<FP32, valid 8x64, phys 8x64, 2KB>
%u = pto.tadd FP32 %t dims [64, 8, -1] mask 15 : (!pto.tile<FP32, valid 8x64, phys 8x64, 2KB>) -> !pto.tile<FP32, valid 8x64, phys 8x64, 2KB>
// CHECK: pto.tadd binds 2 Local source(s) (ordered left Local source, ordered right Local source), not 1

// -----

%t = "test.op"() : () -> !pto.tile<FP32, valid 8x64, phys 8x64, 2KB>
%u = pto.tand FP32 %t, %t dims [64, 8, -1] mask 15 : (!pto.tile<FP32, valid 8x64, phys 8x64, 2KB>, !pto.tile<FP32, valid 8x64, phys 8x64, 2KB>) -> !pto.tile<FP32, valid 8x64, phys 8x64, 2KB>
// CHECK: pto.tand does not accept DataType FP32 (legal: S16, S32, S64, S8, U16, U32, U64, U8)

// -----

%t = "test.op"() : () -> !pto.tile<FP32, valid 8x64, phys 8x64, 2KB>
%u = pto.texp FP32 %t dims [-1, 8, -1] mask 15 : (!pto.tile<FP32, valid 8x64, phys 8x64, 2KB>) -> !pto.tile<FP32, valid 8x64, phys 8x64, 2KB>
// CHECK: pto.texp requires LB0 (ValidCol)

// -----

%t = "test.op"() : () -> !pto.tile<FP32, valid 8x64, phys 8x64, 2KB>
%u = pto.texp FP32 %t dims [64, 0, -1] mask 15 : (!pto.tile<FP32, valid 8x64, phys 8x64, 2KB>) -> !pto.tile<FP32, valid 8x64, phys 8x64, 2KB>
// CHECK: pto.texp LB1 (ValidRow) = 0 is illegal

// -----

%a = "test.op"() : () -> !pto.tile<FP32, valid 1x8, phys 4x32, 512B>
%m = pto.tmrgsort FP32 %a, %a dims [16, -1, -1] mask 15 : (!pto.tile<FP32, valid 1x8, phys 4x32, 512B>, !pto.tile<FP32, valid 1x8, phys 4x32, 512B>) -> !pto.tile<FP32, valid 1x16, phys 8x16, 512B>
// CHECK: pto.tmrgsort takes no B.DIM LB0

// -----

%t = "test.op"() : () -> !pto.tile<FP32, valid 8x64, phys 8x64, 2KB>
%u = pto.tadd FP32 %t, %t dims [64, 8, -1] datr <rmode = RNE> mask 15 : (!pto.tile<FP32, valid 8x64, phys 8x64, 2KB>, !pto.tile<FP32, valid 8x64, phys 8x64, 2KB>) -> !pto.tile<FP32, valid 8x64, phys 8x64, 2KB>
// CHECK: pto.tadd B.DATR field RMode must be zero

// -----

%t = "test.op"() : () -> !pto.tile<FP32, valid 8x64, phys 8x64, 2KB>
%q = pto.tquant FP32 %t dims [64, 8, -1] mask 15 : (!pto.tile<FP32, valid 8x64, phys 8x64, 2KB>) -> !pto.tile<S8, valid 8x64, phys 8x64, 512B>
// CHECK: pto.tquant requires a B.DATR

// -----

%t = "test.op"() : () -> !pto.tile<FP32, valid 8x64, phys 8x64, 2KB>
%q = pto.tquant FP32 %t dims [64, 8, -1] datr <dtype = S16> mask 15 : (!pto.tile<FP32, valid 8x64, phys 8x64, 2KB>) -> !pto.tile<S16, valid 8x64, phys 8x64, 1KB>
// CHECK: pto.tquant destination DataType S16 is not one of S8, U8

// -----

%t = "test.op"() : () -> !pto.tile<FP32, valid 8x64, phys 8x64, 2KB>
%c = pto.const 1
%u = pto.tadd FP32 %t, %t gpr(%c) dims [64, 8, -1] mask 15 : (!pto.tile<FP32, valid 8x64, phys 8x64, 2KB>, !pto.tile<FP32, valid 8x64, phys 8x64, 2KB>) -> !pto.tile<FP32, valid 8x64, phys 8x64, 2KB>
// CHECK: pto.tadd takes no B.IOR

// -----

%t = "test.op"() : () -> !pto.tile<FP32, valid 8x64, phys 8x64, 2KB>
%c = pto.const 1
%u = pto.tadds FP32 %t gpr(%c, %c) dims [64, 8, -1] mask 15 : (!pto.tile<FP32, valid 8x64, phys 8x64, 2KB>) -> !pto.tile<FP32, valid 8x64, phys 8x64, 2KB>
// CHECK: pto.tadds consumes 1 B.IOR slot(s), not 2

// -----

%v = "test.op"() : () -> !pto.tile<FP16, valid 8x64, phys 8x64, 1KB>
%i = "test.op"() : () -> !pto.tile<S32, valid 8x64, phys 8x64, 2KB>
%s = pto.tscatter FP16 %v, %i dims [64, 8, -1] mask 15 : (!pto.tile<FP16, valid 8x64, phys 8x64, 1KB>, !pto.tile<S32, valid 8x64, phys 8x64, 2KB>) -> !pto.tile<FP16, valid 8x64, phys 8x64, 1KB>
// CHECK: pto.tscatter index DataType S32 does not pair with FP16

// -----

%t = "test.op"() : () -> !pto.tile<FP32, valid 8x64, phys 8x64, 2KB>
%u = pto.texp FP32 %t dims [64, 8, -1] mask 9 : (!pto.tile<FP32, valid 8x64, phys 8x64, 2KB>) -> !pto.tile<FP32, valid 8x64, phys 8x64, 2KB>
// CHECK: pto.texp mask 1001 has no PEMode

