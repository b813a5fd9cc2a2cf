# The seeds' one-line form is accepted too: a per-tensor TQUANT with the
# omitted-B.IOR defaults (multiplier 1.0, zero point 0), saturating to S8.
# a0 = &x (4x32 FP32, dense rows of 128 bytes), a1 = &q (4x32 S8, rows of 32 bytes).
BSTART.STD FALL; addi zero, 128, ->a2; addi zero, 32, ->a3; BSTOP
BSTART.TLOAD FP32; B.DIM zero, 32, ->LB0; B.DIM zero, 4, ->LB1; B.IOR a0, a2; B.IOT mask=1111, last, ->T<512B>; BSTOP
BSTART.SFU TQUANT, FP32; B.DATR {NORM, S8, Zero, EQ, RNE, 1, 0}; C.B.DIMI 32, ->LB0; C.B.DIMI 4, ->LB1; B.IOT T#1, mask=1111, last, ->U<128B>; BSTOP
BSTART.TSTORE S8; B.IOR a1, a3; B.IOT U#1, mask=1111, last; BSTOP
