// RUN: xdsl-opt %s -p ptoc-legalize,ptoc-allocate,ptoc-emit | filecheck %s

// TFMA binds (L, R) then (Addend, last, ->Dst); TSEL (Predicate, SrcTrue) then
// (SrcFalse, last, ->Dst); TSORT pushes its values then its indices. Dimensions below 256
// use the 16-bit C.B.DIMI form. Scalars are materialized once, up front.
func.func @emit(%x: !tile.tensor<FP32, 8x512>, %o: !tile.tensor<FP32, 8x512>, %q: !tile.tensor<S8, 8x512>, %i: !tile.tensor<U32, 8x512>) attributes {"tile.pes" = 2 : i64} {
  %a = tile.load %x[0, 0] pe [4, 0] : !tile.tensor<FP32, 8x512> -> !tile.tile<FP32, 4x512>
  %b = tile.adds %a, 1.5 : !tile.tile<FP32, 4x512>
  %f = tile.fma %a, %b, %a : !tile.tile<FP32, 4x512>
  %p = tile.cmp gt %f, %a : !tile.tile<FP32, 4x512> -> !tile.tile<PRED, 4x512>
  %s = tile.sel %p, %f, %b : !tile.tile<PRED, 4x512>, !tile.tile<FP32, 4x512>
  %v, %k = tile.sort %s width 64 : !tile.tile<FP32, 4x512> -> !tile.tile<FP32, 4x512>, !tile.tile<U32, 4x512>
  %z = tile.quant %v mult 2.0 zp -100 sat : !tile.tile<FP32, 4x512> -> !tile.tile<S8, 4x512>
  tile.store %v, %o[0, 0] pe [4, 0] : !tile.tile<FP32, 4x512>, !tile.tensor<FP32, 8x512>
  tile.store %k, %i[0, 0] pe [4, 0] : !tile.tile<U32, 4x512>, !tile.tensor<U32, 8x512>
  func.return
}
func.func @consts(%x: !tile.tensor<S64, 2x16>, %o: !tile.tensor<S64, 2x16>, %y: !tile.tensor<S32, 2x16>, %p: !tile.tensor<S32, 2x16>) {
  %a = tile.load %x[0, 0] : !tile.tensor<S64, 2x16> -> !tile.tile<S64, 2x16>
  %b = tile.full 20015998343868 : !tile.tile<S64, 2x16>
  %c = tile.add %a, %b : !tile.tile<S64, 2x16>
  tile.store %c, %o[0, 0] : !tile.tile<S64, 2x16>, !tile.tensor<S64, 2x16>
  %d = tile.load %y[0, 0] : !tile.tensor<S32, 2x16> -> !tile.tile<S32, 2x16>
  %e = tile.adds %d, 123456789 : !tile.tile<S32, 2x16>
  %f = tile.subs %e, -5 : !tile.tile<S32, 2x16>
  tile.store %f, %p[0, 0] : !tile.tile<S32, 2x16>, !tile.tensor<S32, 2x16>
  func.return
}

// The program text starts with a comment header: the machine it was allocated for and
// the ABI registers (what `ptoc run` needs to be given).
// CHECK:      pto.program "emit" [
// CHECK-NEXT:   "# @emit, allocated for hands=4,depth=16,capacity=262144,pes=4,gm_size=67108864",
// CHECK-NEXT:   "# a0 = base of tensor x + 8192 bytes per PE",
// CHECK-NEXT:   "# a1 = base of tensor o + 8192 bytes per PE",
// CHECK-NEXT:   "# a2 = base of tensor i + 8192 bytes per PE",
// CHECK-NEXT:   "BSTART.STD FALL",
// CHECK-NEXT:   "addi zero, 2048, ->s0",
// CHECK-NEXT:   "lui 0x3fc00, ->s1",
// CHECK-NEXT:   "BSTOP",
// CHECK-NEXT:   "BSTART.TLOAD FP32",
// CHECK-NEXT:   "B.DIM zero, 512, ->LB0",
// CHECK-NEXT:   "C.B.DIMI 4, ->LB1",
// CHECK-NEXT:   "B.IOR a0, s0",
// CHECK-NEXT:   "B.IOT mask=1100, last, ->T<8KB>",
// CHECK-NEXT:   "BSTOP",
// CHECK-NEXT:   "BSTART.VEC TADDS, FP32",
// CHECK:        "B.IOR s1",
// CHECK-NEXT:   "B.IOT T#1, mask=1100, last, ->T<8KB>",
// CHECK:        "BSTART.VEC TFMA, FP32",
// CHECK:        "B.IOT T#2, T#1, mask=1100",
// CHECK-NEXT:   "B.IOT T#2, mask=1100, last, ->T<8KB>",
// CHECK:        "BSTART.VEC TCMP, FP32",
// CHECK-NEXT:   "B.DATR {NORM, FP64, Zero, GT, Default, 0, 0}",
// CHECK:        "B.IOT T#1, T#3, mask=1100, last, ->T<256B>",
// CHECK:        "BSTART.VEC TSEL, FP32",
// CHECK:        "B.IOT T#1, T#2, mask=1100",
// CHECK-NEXT:   "B.IOT T#3, mask=1100, last, ->T<8KB>",
// CHECK:        "BSTART.SFU TSORT, FP32",
// CHECK-NEXT:   "C.B.DIMI 64, ->LB0",
// CHECK-NEXT:   "B.IOT T#1, mask=1100, ->T<8KB>",
// CHECK-NEXT:   "B.IOT mask=1100, last, ->T<8KB>",
// CHECK:        "BSTART.TSTORE FP32",
// CHECK-NEXT:   "B.IOR a1, s0",
// CHECK-NEXT:   "B.IOT T#2, mask=1100, last",
// CHECK:        "BSTART.TSTORE U32",
// CHECK-NEXT:   "B.IOR a2, s0",
// CHECK-NEXT:   "B.IOT T#1, mask=1100, last",
// CHECK-NEXT:   "BSTOP"
// CHECK-NEXT: ]

// Constants: c.movi (5 bits), lui + addi (32 bits), and the 64-bit build-up.
// CHECK:      pto.program "consts" [
// CHECK-NEXT:   "# @consts, allocated for hands=4,depth=16,capacity=262144,pes=4,gm_size=67108864",
// CHECK-NEXT:   "# a0 = base of tensor x",
// CHECK-NEXT:   "# a1 = base of tensor o",
// CHECK-NEXT:   "# a2 = base of tensor y",
// CHECK-NEXT:   "# a3 = base of tensor p",
// CHECK-NEXT:   "BSTART.STD FALL",
// CHECK-NEXT:   "addi zero, 64, ->s0",
// CHECK-NEXT:   "lui 0x75bc, ->s1",
// CHECK-NEXT:   "addi s1, 3349, ->s1",
// CHECK-NEXT:   "c.movi -5, ->s2",
// CHECK-NEXT:   "addi zero, 128, ->s3",
// CHECK-NEXT:   "lui 0x1, ->s4",
// CHECK-NEXT:   "addi s4, 564, ->s4",
// CHECK-NEXT:   "slli s4, 12, ->s4",
// CHECK-NEXT:   "addi s4, 1383, ->s4",
// CHECK-NEXT:   "slli s4, 12, ->s4",
// CHECK-NEXT:   "addi s4, 2202, ->s4",
// CHECK-NEXT:   "slli s4, 8, ->s4",
// CHECK-NEXT:   "addi s4, 188, ->s4",
// CHECK-NEXT:   "BSTOP",
// CHECK:        "BSTART.VEC TEXPANDS, S64",
// CHECK:        "B.IOR s4",
