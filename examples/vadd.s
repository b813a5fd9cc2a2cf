# Vector add: out = x + y on an 8x64 FP32 tile, on all four PEs.
# Kernel ABI (DECISIONS D7): a0 = &x, a1 = &y, a2 = &out, per PE.
# A present B.IOR reads every selector it encodes, so the byte row stride (64 * 4 = 256)
# must be in a register: an encoded `zero` would be a real stride of 0.
BSTART.STD FALL
addi zero, 256, ->a3
BSTOP
BSTART.TLOAD FP32
B.DIM zero, 64, ->LB0
B.DIM zero, 8, ->LB1
B.IOR a0, a3
B.IOT mask=1111, last, ->T<2KB>
BSTOP
BSTART.TLOAD FP32
B.DIM zero, 64, ->LB0
B.DIM zero, 8, ->LB1
B.IOR a1, a3
B.IOT mask=1111, last, ->T<2KB>
BSTOP
# T#2 is x (older), T#1 is y (newest)
BSTART.VEC TADD, FP32
B.DIM zero, 64, ->LB0
B.DIM zero, 8, ->LB1
B.IOT T#2, T#1, mask=1111, last, ->U<2KB>
BSTOP
BSTART.TSTORE FP32
B.IOR a2, a3
B.IOT U#1, mask=1111, last
BSTOP
