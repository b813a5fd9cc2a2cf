"""The FSU scalar forms against references written here.

Each instruction runs in a ``BSTART.STD FALL`` block on all four PEs. Arithmetic is
checked against exact rational arithmetic (``fractions``) rounded by a rounding routine
of this file; compares, FMIN/FMAX and FABS against the ASL's definitions
(``ScalarFPEncodingCompare``, ``ScalarFPMinMax``) spelled on Python floats; conversions
against Python integers.
"""

from __future__ import annotations

import math
import struct
from fractions import Fraction

import numpy as np
import pytest
from conftest import examples
from hypothesis import given
from hypothesis import strategies as st

from ptoc.backend.program import Program
from ptoc.runtime import Machine
from ptoc.runtime.faults import IllegalInstructionFault

NV, DZ, OF, UF, NX = 1, 2, 4, 8, 16
M64 = (1 << 64) - 1

# ------------------------------------------------------------------ FP32 operands

F32_EDGES = [
    0x00000000, 0x80000000, 0x7F800000, 0xFF800000,  # +-0, +-inf
    0x7FC00000, 0xFFC00001, 0x7F800001, 0x7FA00005,  # quiet and signalling NaN payloads
    0x00000001, 0x80000001, 0x007FFFFF, 0x00800000,  # subnormals, smallest normal
    0x7F7FFFFF, 0xFF7FFFFF, 0x7F000000, 0x3F800000,  # top binade, 1
    0x3F800001, 0xBF7FFFFF, 0x4B000001, 0x33800000,  # near ties
]  # fmt: skip
f32_words = st.one_of(st.sampled_from(F32_EDGES), st.integers(0, 0xFFFFFFFF))
#: the upper word of an FP32 operand is ignored (NormalizeScalarFPSource)
junk = st.sampled_from([0, 0xFFFFFFFF00000000, 0x1234567800000000])


def f32_nan(w: int) -> bool:
    return (w >> 23) & 0xFF == 0xFF and w & 0x7FFFFF != 0


def f32_snan(w: int) -> bool:
    return f32_nan(w) and not (w >> 22) & 1


def f32_value(w: int) -> float:
    return struct.unpack("<f", struct.pack("<I", w))[0]


def f32_fraction(w: int) -> Fraction:
    return Fraction(f32_value(w))


# ------------------------------------------------------------------ reference rounding

RNE, RTM, RTP, RTZ = "rne", "rtm", "rtp", "rtz"
CORE_STATE_CODE = {RNE: 0, RTM: 1, RTP: 2, RTZ: 3}


def round_fp32(v: Fraction, mode: str) -> tuple[int, int]:
    """IEEE binary32 rounding of an exact nonzero rational: (bits, flags), tininess after
    rounding."""
    sign = 0x80000000 if v < 0 else 0
    a = abs(v)
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    q = max(e, -126) - 23  # quantum exponent

    def rnd(quantum: int) -> tuple[int, bool]:
        scaled = a / Fraction(2) ** quantum
        lo = math.floor(scaled)
        rest = scaled - lo
        if rest == 0:
            return lo, False
        up = {
            RNE: rest > Fraction(1, 2) or (rest == Fraction(1, 2) and lo % 2 == 1),
            RTZ: False,
            RTP: sign == 0,
            RTM: sign != 0,
        }[mode]
        return lo + up, True

    n, inexact = rnd(q)
    if n == 1 << 24:  # carried into the next binade
        n, q = n >> 1, q + 1
    flags = NX if inexact else 0
    # tininess after rounding: the value rounded with unbounded exponent range is < 2**-126
    n2, _ = rnd(e - 23)
    tiny = e < -126 and not (e == -127 and n2 == 1 << 24)
    if tiny and inexact:
        flags |= UF
    if n >= 1 << 23:
        biased = q + 23 + 127
        if biased >= 255:
            to_inf = mode == RNE or (mode == RTP and not sign) or (mode == RTM and sign)
            return sign | (0x7F800000 if to_inf else 0x7F7FFFFF), OF | NX
        return sign | (biased << 23) | (n - (1 << 23)), flags
    return sign | n, flags  # subnormal (or zero after rounding)


def run(text: str, regs: dict[str, list[int]], rounding: int = 0) -> Machine:
    m = Machine("gm_size=4096")
    m.state.fp_rounding = rounding
    for name, values in regs.items():
        for pe, v in enumerate(values):
            m.set_gpr(name, v, pe=pe)
    m.run(Program.parse(f"BSTART.STD FALL\n{text}\nBSTOP\n"))
    return m


def per_pe(m: Machine, reg: str) -> list[int]:
    return [m.gpr(reg, pe) for pe in range(4)]


QNAN32 = 0x7FC00000
quads = st.lists(f32_words, min_size=4, max_size=4)
modes = st.sampled_from([RNE, RTM, RTP, RTZ])


def ref_binary(op: str, a: int, b: int, mode: str) -> tuple[int, int]:
    """FADD/FSUB/FMUL/FDIV at FP32: IEEE 754 special cases, exact value, one rounding."""
    if f32_nan(a) or f32_nan(b):
        return QNAN32, NV if f32_snan(a) or f32_snan(b) else 0
    x, y = f32_value(a), f32_value(b)
    if op == "sub":
        y, b, op = -y, b ^ 0x80000000, "add"
    inf_x, inf_y = math.isinf(x), math.isinf(y)
    neg = math.copysign(1, x) * math.copysign(1, y) < 0
    if op == "add":
        if inf_x and inf_y and (x > 0) != (y > 0):
            return QNAN32, NV
        if inf_x or inf_y:
            return (a if inf_x else b), 0
        exact = Fraction(x) + Fraction(y)
        if exact == 0:
            sx, sy = math.copysign(1, x) < 0, math.copysign(1, y) < 0
            zero_neg = sx if sx == sy else mode == RTM
            return (0x80000000 if zero_neg else 0), 0
    elif op == "mul":
        if (inf_x and y == 0) or (inf_y and x == 0):
            return QNAN32, NV
        if inf_x or inf_y:
            return (0xFF800000 if neg else 0x7F800000), 0
        exact = Fraction(x) * Fraction(y)
        if exact == 0:
            return (0x80000000 if neg else 0), 0
    else:
        if (inf_x and inf_y) or (x == 0 and y == 0):
            return QNAN32, NV
        if inf_x:
            return (0xFF800000 if neg else 0x7F800000), 0
        if inf_y:
            return (0x80000000 if neg else 0), 0
        if y == 0:
            return (0xFF800000 if neg else 0x7F800000), DZ
        exact = Fraction(x) / Fraction(y)
        if exact == 0:
            return (0x80000000 if neg else 0), 0
    return round_fp32(exact, mode)


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div"])
@examples(60)
@given(a=quads, b=quads, hi=junk, mode=modes)
def test_fp32_arithmetic(op: str, a: list[int], b: list[int], hi: int, mode: str) -> None:
    m = run(
        f"f{op}.fs a0, a1, ->a2",
        {"a0": [v | hi for v in a], "a1": b},
        CORE_STATE_CODE[mode],
    )
    expect = [ref_binary(op, x, y, mode) for x, y in zip(a, b, strict=True)]
    assert per_pe(m, "a2") == [r for r, _ in expect]  # zero-extended FP32 results
    assert list(m.status) == [f for _, f in expect]


def test_fp32_ties_and_top_binade() -> None:
    """1 + 2**-24 is a tie (to even: 1); MAX + MAX overflows; 2**-126 * 2**-1 is exact."""
    cases = [
        ("fadd", 0x3F800000, 0x33800000, RNE, 0x3F800000, NX),
        ("fadd", 0x3F800000, 0x33800000, RTP, 0x3F800001, NX),
        ("fadd", 0x7F7FFFFF, 0x7F7FFFFF, RNE, 0x7F800000, OF | NX),
        ("fadd", 0x7F7FFFFF, 0x7F7FFFFF, RTZ, 0x7F7FFFFF, OF | NX),
        ("fmul", 0x00800000, 0x3F000000, RNE, 0x00400000, 0),
        ("fsub", 0x3F800000, 0x3F800000, RTM, 0x80000000, 0),
        ("fsub", 0x3F800000, 0x3F800000, RNE, 0x00000000, 0),
    ]
    for mnem, a, b, mode, want, flags in cases:
        regs = {"a0": [a] * 4, "a1": [b] * 4}
        m = run(f"{mnem}.fs a0, a1, ->a2", regs, CORE_STATE_CODE[mode])
        assert per_pe(m, "a2") == [want] * 4, (mnem, hex(a), hex(b), mode)
        assert list(m.status) == [flags] * 4


def test_fp64_arithmetic_edges() -> None:
    """The FP64 carrier is the whole GPR; exact-rational reference at the top binade."""
    big = struct.unpack("<Q", struct.pack("<d", 1.7976931348623157e308))[0]
    one = struct.unpack("<Q", struct.pack("<d", 1.0))[0]
    tiny = 1  # the smallest subnormal
    m = run(
        "fadd.fd a0, a1, ->a2\nfmul.fd a1, a1, ->a3\nfdiv.fd a3, a0, ->a4",
        {"a0": [big, one, tiny, one], "a1": [big, tiny, tiny, 0]},
    )
    assert per_pe(m, "a2") == [0x7FF0000000000000, one, 2, one]
    assert per_pe(m, "a3")[1] == 0 and per_pe(m, "a3")[0] == 0x7FF0000000000000
    assert list(m.status) == [OF | NX, NX | UF, NX | UF, 0]


def ref_fma(a: int, b: int, c: int, mode: str) -> tuple[int, int]:
    if f32_nan(a) or f32_nan(b) or f32_nan(c):
        snan = f32_snan(a) or f32_snan(b) or f32_snan(c)
        x, y = f32_value(a), f32_value(b)
        invalid = (math.isinf(x) and y == 0) or (math.isinf(y) and x == 0)
        return QNAN32, NV if snan or (invalid and not (f32_nan(a) or f32_nan(b))) else 0
    x, y, z = f32_value(a), f32_value(b), f32_value(c)
    if (math.isinf(x) and y == 0) or (math.isinf(y) and x == 0):
        return QNAN32, NV
    pneg = (math.copysign(1, x) * math.copysign(1, y)) < 0
    if math.isinf(x) or math.isinf(y):
        if math.isinf(z) and (z < 0) != pneg:
            return QNAN32, NV
        return (0xFF800000 if pneg else 0x7F800000), 0
    if math.isinf(z):
        return c, 0
    exact = Fraction(x) * Fraction(y) + Fraction(z)
    if exact == 0:
        zneg = math.copysign(1, z) < 0
        neg = pneg if pneg == zneg else mode == RTM
        return (0x80000000 if neg else 0), 0
    return round_fp32(exact, mode)


@examples(60)
@given(a=quads, b=quads, c=quads, mode=modes)
def test_fp32_fused(a: list[int], b: list[int], c: list[int], mode: str) -> None:
    """FMADD L*R + A and FNMSUB -(L*R - A) = -L*R + A, each with one rounding."""
    m = run(
        "fmadd.fs a0, a1, a2, ->a3\nfnmsub.fs a0, a1, a2, ->a4",
        {"a0": a, "a1": b, "a2": c},
        CORE_STATE_CODE[mode],
    )
    madd = [ref_fma(x, y, z, mode) for x, y, z in zip(a, b, c, strict=True)]
    nmsub = [ref_fma(x ^ 0x80000000, y, z, mode) for x, y, z in zip(a, b, c, strict=True)]
    assert per_pe(m, "a3") == [r for r, _ in madd]
    assert per_pe(m, "a4") == [r for r, _ in nmsub]
    assert list(m.status) == [f | g for (_, f), (_, g) in zip(madd, nmsub, strict=True)]


# ------------------------------------------------------------------ ASL-defined forms


def asl_less(a: int, b: int) -> bool:
    x, y = f32_value(a), f32_value(b)
    return x < y


def asl_minmax(op: str, a: int, b: int) -> int:
    """``ScalarFPMinMax`` at FP32."""
    if f32_nan(a) and f32_nan(b):
        return QNAN32
    if f32_nan(a):
        return b
    if f32_nan(b):
        return a
    if a & 0x7FFFFFFF == 0 and b & 0x7FFFFFFF == 0:
        if op == "max":
            return 0x80000000 if a >> 31 and b >> 31 else 0
        return 0x80000000 if a >> 31 or b >> 31 else 0
    less = asl_less(a, b)
    if op == "min":
        return a if less else b
    return b if less else a


@examples(80)
@given(a=quads, b=quads)
def test_fp32_min_max_abs(a: list[int], b: list[int]) -> None:
    m = run(
        "fmin.fs a0, a1, ->a2\nfmax.fs a0, a1, ->a3\nfabs.fs a0, ->a4",
        {"a0": a, "a1": b},
    )
    assert per_pe(m, "a2") == [asl_minmax("min", x, y) for x, y in zip(a, b, strict=True)]
    assert per_pe(m, "a3") == [asl_minmax("max", x, y) for x, y in zip(a, b, strict=True)]
    assert per_pe(m, "a4") == [x & 0x7FFFFFFF for x in a]  # NaN payloads kept
    assert list(m.status) == [
        NV if f32_snan(x) or f32_snan(y) else 0 for x, y in zip(a, b, strict=True)
    ]


@pytest.mark.parametrize("cond", ["eq", "ne", "lt", "ge"])
@pytest.mark.parametrize("signalling", [False, True])
@examples(60)
@given(a=quads, b=quads)
def test_fp32_compares(cond: str, signalling: bool, a: list[int], b: list[int]) -> None:
    """``ScalarFPEncodingCompare``: false whenever a NaN is involved (NE too); NV on a
    signalling NaN, and on any NaN for the ...S forms."""
    s = "s" if signalling else ""
    m = run(f"f{cond}{s}.fs a0, a1, ->a2", {"a0": a, "a1": b})
    want, flags = [], []
    for x, y in zip(a, b, strict=True):
        nan = f32_nan(x) or f32_nan(y)
        fx, fy = f32_value(x), f32_value(y)
        rel = {"eq": fx == fy, "ne": fx != fy, "lt": fx < fy, "ge": fx >= fy}[cond]
        want.append(int(rel and not nan))
        flags.append(NV if (signalling and nan) or f32_snan(x) or f32_snan(y) else 0)
    assert per_pe(m, "a2") == want
    assert list(m.status) == flags


# ------------------------------------------------------------------ conversions


def ref_to_int(w: int, mode: str, bits: int, signed: bool) -> tuple[int, int]:
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    if f32_nan(w):
        return 0, NV
    x = f32_value(w)
    if math.isinf(x):
        return (lo if x < 0 else hi) & M64, NV
    v = Fraction(x)
    fl = math.floor(v)
    rest = v - fl
    if mode == "rna":
        n = fl + (rest >= Fraction(1, 2)) if v >= 0 else -math.floor(-v + Fraction(1, 2))
        if v < 0:
            n = -(math.floor(-v) + (((-v) - math.floor(-v)) >= Fraction(1, 2)))
    elif mode == RNE:
        n = fl + (rest > Fraction(1, 2) or (rest == Fraction(1, 2) and fl % 2 == 1))
    elif mode == RTM:
        n = fl
    elif mode == RTP:
        n = math.ceil(v)
    else:
        n = math.trunc(v)
    if not lo <= n <= hi:
        return min(max(n, lo), hi) & M64, NV
    return n & M64, NX if n != v else 0


@pytest.mark.parametrize(
    "mnemonic,mode", [("fcvta", "rna"), ("fcvtm", RTM), ("fcvtn", RNE), ("fcvtp", RTP),
                      ("fcvtz", RTZ)]
)  # fmt: skip
@examples(40)
@given(a=st.lists(st.one_of(f32_words, st.sampled_from([0x3FC00000, 0xC0200000, 0x4F000000,
                                                         0xCF000000, 0x5F800000])),
                  min_size=4, max_size=4))  # fmt: skip
def test_fp32_to_int(mnemonic: str, mode: str, a: list[int]) -> None:
    """Fixed rounding, saturation with NV, NaN -> 0 with NV; sw sign-extends, ub is 8
    bits unsigned."""
    m = run(f"{mnemonic}.fs2sw a0, ->a2\n{mnemonic}.fs2ub a0, ->a3", {"a0": a})
    sw = [ref_to_int(x, mode, 32, True) for x in a]
    ub = [ref_to_int(x, mode, 8, False) for x in a]
    assert per_pe(m, "a2") == [r for r, _ in sw]
    assert per_pe(m, "a3") == [r for r, _ in ub]
    assert list(m.status) == [f | g for (_, f), (_, g) in zip(sw, ub, strict=True)]


ints = st.one_of(st.sampled_from([0, 1, M64, 1 << 63, (1 << 24) + 1, (1 << 25) + 3, 0x7FFFFFFF,
                                  0x80000000, 0xFFFFFFFF]), st.integers(0, M64))  # fmt: skip


@examples(60)
@given(a=st.lists(ints, min_size=4, max_size=4), mode=modes)
def test_int_to_fp32(a: list[int], mode: str) -> None:
    """SCVTF .sw sign-extends the low word, UCVTF .ud takes the whole word unsigned."""
    m = run("scvtf.sw2fs a0, ->a2\nucvtf.ud2fs a0, ->a3", {"a0": a}, CORE_STATE_CODE[mode])
    for pe, w in enumerate(a):
        low = w & 0xFFFFFFFF
        s = low - (1 << 32) if low >> 31 else low
        for reg, v in (("a2", s), ("a3", w)):
            want = round_fp32(Fraction(v), mode)[0] if v else 0
            assert m.gpr(reg, pe) == want, (reg, hex(w), mode)


def test_fcvt_between_fp32_and_fp64() -> None:
    """FD2FS rounds once (NX, overflow, sNaN -> canonical NaN with NV); FS2FD is exact."""
    d = lambda x: struct.unpack("<Q", struct.pack("<d", x))[0]  # noqa: E731
    src = [d(0.1), d(1e300), 0x7FF0000000000001, d(-0.0)]
    m = run("fcvt.fd2fs a0, ->a2", {"a0": src})
    assert per_pe(m, "a2") == [0x3DCCCCCD, 0x7F800000, QNAN32, 0x80000000]
    assert list(m.status) == [NX, OF | NX, NV, 0]
    m = run("fcvt.fs2fd a0, ->a2", {"a0": [0x00000001, 0xFF800000, 0x7FC00001, 0x3F800000]})
    assert per_pe(m, "a2") == [d(2.0**-149), d(-math.inf), 0x7FF8000000000000, d(1.0)]
    assert list(m.status) == [0, 0, 0, 0]


# ------------------------------------------------------------------ faults, queues


@pytest.mark.parametrize(
    "word",
    [
        0x0231024B | (2 << 25),  # fadd SrcType=2
        0x0231024B | (3 << 25),  # fadd SrcType=3
        0x080101EB | (15 << 27),  # fcvt DstType=15
        0x4A0151EB | (31 << 27),  # fcvtz DstType=31
    ],
)
def test_reserved_types_fault_without_effect(word: int) -> None:
    """A reserved SrcType/DstType is Fault_IllegalInstruction; the block publishes
    nothing (its earlier GPR write and flags included)."""
    m = Machine("gm_size=4096")
    m.set_gpr("a0", 0x7F800001)  # a signalling NaN: the first instruction raises NV
    before = (m.state.gpr.copy(), m.status.copy())
    prog = Program.parse(f"BSTART.STD FALL\nfadd.fs a0, a0, ->a3\n.word 0x{word:08x}\nBSTOP\n")
    with pytest.raises(IllegalInstructionFault):
        m.run(prog)
    assert np.array_equal(m.state.gpr, before[0])
    assert np.array_equal(m.status, before[1])


def test_queue_sources_and_destinations() -> None:
    """Sources are read before the push: ``fadd r31 <- T#1 + T#1`` doubles the old T#1."""
    one = 0x3F800000
    m = run("fadd.fs a0, a0, ->r31\nfadd.fs r24, r24, ->r31\nfadd.fs r24, r25, ->a2",
            {"a0": [one] * 4})  # fmt: skip
    assert per_pe(m, "a2") == [0x40C00000] * 4  # 4 + 2
