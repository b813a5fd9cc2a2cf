"""B.FPATR matrix post-processing and RowMax/GroupMax against an exact per-element oracle.

The oracle follows the reference profile of ``asl/arch/profile/matrix-postprocess.asl`` and
``matrix-quantization.asl`` one element at a time with Python integers and Fractions: its
own FP19 decoding, the three reference encoders (FP32, binary16, and the FP8 nearest-
candidate search over all 256 codes) and the intermediate/offset integer path. It shares no
code with ``ptoc.backend.isa.semantics``.
"""

from __future__ import annotations

import math
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ptoc.backend.isa.datatypes import DataType
from ptoc.backend.isa.semantics.core import NV, NX, OF, UF, SemanticError, from_bits
from ptoc.backend.isa.semantics.fpatr import (
    PRE_QUANT,
    Fpatr,
    datr_legal,
    encode_float,
    fields_legal,
    group_max,
    postprocess,
    quant_param,
    quant_param_legal,
    relu_param_legal,
    round_to_integer,
    row_max,
    shift_param,
)
from ptoc.backend.isa.semantics.matmul import matmul

D = DataType
RNE, RTZ, RTM, RTP, RNA, RTO, RHB = 1, 2, 3, 4, 5, 6, 7
P2 = Fraction(2)

# ---------------------------------------------------------------- oracle pieces


def fp19(bits: int) -> Fraction:
    e, f = (bits >> 10) & 0xFF, bits & 0x3FF
    mag = f * P2**-136 if e == 0 else (1 + Fraction(f, 1024)) * P2 ** (e - 127)
    return -mag if bits >> 18 & 1 else mag


def to_integer(v: Fraction, mode: int) -> int:
    """``FloatingToInteger`` on a signed rational."""
    lower = math.floor(v)
    frac = v - lower
    half = Fraction(1, 2)
    if mode == RNE:
        return lower + (frac > half or (frac == half and lower % 2 == 1))
    if mode == RTP:
        return math.ceil(v)
    if mode == RTM:
        return lower
    if mode == RTZ:
        return math.trunc(v)
    if mode == RNA:
        return lower + (frac > half or (frac == half and v >= 0))
    if mode == RTO:
        return lower if frac == 0 or lower % 2 != 0 else lower + 1
    return lower + (frac >= half)  # RHB


def round_magnitude(v: Fraction, mode: int, negative: bool) -> int:
    """``MatrixRoundMagnitude``: directed modes flip for negative values."""
    if negative and mode == RHB:
        lower = math.floor(v)
        return lower if v - lower <= Fraction(1, 2) else lower + 1
    if negative and mode in (RTP, RTM):
        mode = RTM if mode == RTP else RTP
    return to_integer(v, mode)


def normalize(mag: Fraction, lo: int, hi: int) -> tuple[Fraction, int]:
    e = 0
    while mag >= 2 and e < hi:
        mag, e = mag / 2, e + 1
    while mag < 1 and e > lo:
        mag, e = mag * 2, e - 1
    return mag, e


def enc_fp32(v: Fraction, mode: int, sat: bool) -> tuple[int, int]:
    if v == 0:
        return 0, 0
    neg = v < 0
    norm, e = normalize(abs(v), -149, 128)
    sign = 0x80000000 if neg else 0
    if e > 127:
        bits, flags = sign | 0x7F800000, OF | NX
    elif e < -126:
        scaled = v / P2**-149
        mag = abs(to_integer(scaled, mode))
        flags = UF | NX if mag == 0 or mag != abs(scaled) else 0
        bits = sign | mag
    else:
        scaled = (-norm if neg else norm) * 2**23
        rounded = to_integer(scaled, mode)
        mag, exp = abs(rounded), e + 127
        if mag == 2**24:
            mag, exp = 2**23, exp + 1
        if exp >= 255:
            bits, flags = sign | 0x7F800000, OF | NX
        else:
            bits = sign | exp << 23 | (mag - 2**23)
            flags = NX if rounded != scaled else 0
    if sat and flags & OF:
        bits = sign | 0x7F7FFFFF
    return bits, flags


def enc_b16(v: Fraction, bf16: bool, mode: int, sat: bool) -> tuple[int, int]:
    if v == 0:
        return 0, 0
    neg = v < 0
    norm, e = normalize(abs(v), -149, 128)
    fb, bias = (7, 127) if bf16 else (10, 15)
    scale = 1 << fb
    min_e, min_sub = (-126, -133) if bf16 else (-14, -24)
    sign = 0x8000 if neg else 0
    over = sign | ((0x7F7F if bf16 else 0x7BFF) if sat else (0x7F80 if bf16 else 0x7C00))
    if e > bias:
        return over, OF | NX
    if e < min_e:
        scaled = abs(v) / P2**min_sub
        r = max(round_magnitude(scaled, mode, neg), 0)
        flags = 0 if r == scaled else UF | NX
        return sign | min(r, scale), flags
    scaled = norm * scale
    r = round_magnitude(scaled, mode, neg)
    exp = e + bias
    if r == 2 * scale:
        r, exp = scale, exp + 1
    if exp >= 2 * bias + 1:
        return over, OF | NX
    return sign | exp * scale | (r - scale), 0 if r == scaled else NX


def hif8(code: int):
    if code == 0x80:
        return None
    body = code & 0x7F
    if body == 0x6F:
        return None
    if body <= 7:
        mag = Fraction(0) if body == 0 else P2 ** (body - 23)
    elif body <= 15:
        mag = 1 + Fraction(body - 8, 8)
    elif body <= 31:
        mag = (1 + Fraction(code & 7, 8)) * P2 ** (1 if (code >> 3) & 1 == 0 else -1)
    elif body <= 63:
        a = 2 + ((code >> 3) & 1)
        mag = (1 + Fraction(code & 7, 8)) * P2 ** (a if ((code >> 3) & 3) < 2 else -a)
    elif body <= 95:
        a = 4 + ((code >> 2) & 3)
        mag = (1 + Fraction(code & 3, 4)) * P2 ** (a if ((code >> 2) & 7) < 4 else -a)
    else:
        a = 8 + ((code >> 1) & 7)
        mag = (1 + Fraction(code & 1, 2)) * P2 ** (a if ((code >> 1) & 15) < 8 else -a)
    return -mag if code & 0x80 else mag


def e4m3(code: int):
    f = float(np.array([code], np.uint8).view(ml_dtypes.float8_e4m3fn)[0])
    return None if np.isnan(f) else Fraction(f)


FP8_VALUES = {D.E4M3: [e4m3(c) for c in range(256)], D.HiF8: [hif8(c) for c in range(256)]}


def enc_fp8(v: Fraction, dt: DataType, mode: int, sat: bool) -> tuple[int, int]:
    """``ReferenceFP8Encoding``: nearest-candidate search in code order."""
    if v == 0:
        return 0, 0
    neg = v < 0
    mag = abs(v)
    hif = dt == D.HiF8
    if mag > (32768 if hif else 448):
        if sat:
            code = (0xEE if neg else 0x6E) if hif else (0xFE if neg else 0x7E)
        else:
            code = (0xEF if neg else 0x6F) if hif else 0x7F
        return code, OF | NX
    best = None
    for code, cand in enumerate(FP8_VALUES[dt]):
        if cand is None:
            continue
        if (mode == RTP and cand < v) or (mode == RTM and cand > v):
            continue
        if mode in (RTZ, RTO) and not (cand <= 0 and cand >= v if neg else 0 <= cand <= v):
            continue
        if best is None:
            best = (code, cand)
            continue
        bc, bv = best
        if mode == RTP:
            better = cand < bv
        elif mode == RTM:
            better = cand > bv
        elif mode in (RTZ, RTO):
            better = cand < bv if neg else cand > bv
        else:
            dc, db = abs(cand - v), abs(bv - v)
            if dc != db:
                better = dc < db
            elif mode == RNE:
                better = code % 2 == 0 and bc % 2 != 0
            elif mode == RNA:
                better = abs(cand) > abs(bv)
            else:
                better = cand > bv
        if better:
            best = (code, cand)
    assert best is not None
    code, val = best
    if mode == RTO and val != v and code % 2 == 0:
        odd = None
        for c, cand in enumerate(FP8_VALUES[dt]):
            away = cand is not None and (cand < val if neg else cand > val)
            if (
                c % 2 == 1
                and away
                and (odd is None or (cand > odd[1] if neg else cand < odd[1]))
            ):
                odd = (c, cand)
        if odd is not None:
            code, val = odd
    inexact = val != v
    tiny = mag < (P2**-15 if hif else P2**-6)
    return code, (UF | NX if inexact and tiny else NX if inexact else 0)


INT_RANGE = {
    D.S8: (-128, 127),
    D.S16: (-32768, 32767),
    D.S4X2: (-8, 7),
    D.S32: (-(2**31), 2**31 - 1),
    D.U32: (0, 2**32 - 1),
}
WIDTH = {D.S8: 8, D.S16: 16, D.S4X2: 4, D.S32: 32, D.U32: 32}


def enc_int(v: Fraction, dt: DataType, mode: int, sat: bool) -> tuple[int, int]:
    r = to_integer(v, mode)
    lo, hi = INT_RANGE[dt]
    over = r < lo or r > hi
    sel = min(max(r, lo), hi) if sat and over else r
    return sel % (1 << WIDTH[dt]), OF | NX if over else (NX if r != v else 0)


def encode(v: Fraction, dt: DataType, mode: int, sat: bool) -> tuple[int, int]:
    if dt in INT_RANGE:
        return enc_int(v, dt, mode, sat)
    if dt == D.FP32:
        return enc_fp32(v, mode, sat)
    if dt in (D.FP16, D.BF16):
        return enc_b16(v, dt == D.BF16, mode, sat)
    return enc_fp8(v, dt, mode, sat)


NAN = {D.FP32: 0x7FC00000, D.FP16: 0x7E00, D.BF16: 0x7FC0, D.HiF8: 0x80, D.E4M3: 0x7F}
LARGEST = {D.FP32: 0x7F7FFFFF, D.FP16: 0x7BFF, D.BF16: 0x7F7F, D.E4M3: 0x7E, D.HiF8: 0x6E}
SIGN = {D.FP32: 0x80000000, D.FP16: 0x8000, D.BF16: 0x8000, D.E4M3: 0x80, D.HiF8: 0x80}
INF = {D.FP32: 0x7F800000, D.FP16: 0x7C00, D.BF16: 0x7F80, D.HiF8: 0x6F}


def oracle_element(raw: int, acc: DataType, f: Fpatr, q: int, r: int, mode: int, sat: bool):
    """``MatrixPostQuantBaseWithFlags`` on one raw accumulator element: (code, flags)."""
    pq = PRE_QUANT[f.pre_quant_mode]
    out = acc if pq.code == 0 else pq.output
    if pq.code == 0 and f.relu_mode == 0:
        return raw, 0
    if pq.rounding is not None:
        mode = pq.rounding
    if pq.shift:
        v = (raw % 2**32) - (2**32 if raw % 2**32 >= 2**31 else 0)
        s = v >> (((q >> 32) & 0xF) + 1)
        if s < -32768 or s > 32767:
            return (max(min(s, 32767), -32768)) % 2**16, OF | NX
        return s % 2**16, 0
    src = acc if pq.code == 0 else next(iter(pq.accumulator))
    kind = "fin"
    if src == D.FP32:
        e, frac, neg = (raw >> 23) & 0xFF, raw & 0x7FFFFF, bool(raw >> 31)
        if e == 0xFF:
            kind = "nan" if frac else "inf"
        val = (
            Fraction(float(np.array([raw], np.uint32).view(np.float32)[0]))
            if kind == "fin"
            else 0
        )
        negative = neg and kind != "nan"
        negzero = kind == "fin" and val == 0 and neg
    elif src == D.S32:
        val = Fraction((raw % 2**32) - (2**32 if raw % 2**32 >= 2**31 else 0))
        negative, negzero = val < 0, False
    else:
        val, negative, negzero = Fraction(raw % 2**32), False, False
    scale = fp19((q >> 13) & 0x7FFFF) if pq.parameter else Fraction(1)
    if not negative or f.relu_mode == 0:
        mult = scale
    elif f.relu_mode == 1:
        mult = Fraction(0)
    else:
        mult = fp19(r & 0x7FFFF)
    if kind != "fin" and not (kind == "inf" and neg and mult == 0):
        if out in INT_RANGE:
            lo, hi = INT_RANGE[out]
            if kind == "nan":
                return (0 if sat else lo % (1 << WIDTH[out])), NV
            if not sat:
                return lo % (1 << WIDTH[out]), NV
            return (lo if neg else hi) % (1 << WIDTH[out]), OF | NX
        if kind == "nan":
            quiet = (raw >> 22) & 1
            return (0 if sat else NAN[out]), (0 if quiet else NV)
        if sat:
            return (SIGN[out] if neg else 0) | LARGEST[out], OF | NX
        if out == D.E4M3:
            return NAN[out], OF | NX
        return (SIGN[out] if neg and out != D.HiF8 else 0) | INF[out] | (
            0x80 if neg and out == D.HiF8 else 0
        ), 0
    activated = (Fraction(0) if kind == "inf" else val) * mult
    width = pq.offset_bits
    offset = 0
    if width:
        offset = (q >> 37) & ((1 << width) - 1)
        offset -= (1 << width) if offset >= 1 << (width - 1) else 0
    if negzero and mult != 0 and offset == 0 and out not in INT_RANGE:
        return (0 if out == D.HiF8 else SIGN[out]), 0
    if width:
        rr = to_integer(activated, mode)
        lo, hi = -(1 << (width - 1)), (1 << (width - 1)) - 1
        f1 = OF | NX if rr < lo or rr > hi else (NX if rr != activated else 0)
        inter = min(max(rr, lo), hi)
        code, f2 = enc_int(Fraction(inter + offset), out, mode, sat)
        return code, f1 | f2
    return encode(activated + offset, out, mode, sat)


# ---------------------------------------------------------------- strategies

FP32_SPECIAL = [0, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0x7F800001, 0xFFC00001]


def fp32_words() -> st.SearchStrategy[int]:
    window = st.integers(0x30000000, 0x4C000000).flatmap(
        lambda c: st.sampled_from([c, c | 0x80000000])
    )
    return st.one_of(st.integers(0, 2**32 - 1), st.sampled_from(FP32_SPECIAL), window)


def s32_words() -> st.SearchStrategy[int]:
    small = st.integers(-70000, 70000) | st.integers(-300, 300)
    return st.one_of(
        st.integers(-(2**31), 2**31 - 1), small, st.sampled_from([-(2**31), 2**31 - 1, 0, -1])
    ).map(lambda v: v % 2**32)


def fp19_positive_normal() -> st.SearchStrategy[int]:
    exp = st.one_of(st.integers(1, 254), st.integers(112, 136), st.integers(123, 128))
    return st.tuples(exp, st.integers(0, 1023)).map(lambda t: t[0] << 10 | t[1])


def relu_words() -> st.SearchStrategy[int]:
    return st.one_of(st.just(0), fp19_positive_normal())


def quant_words(mode: int) -> st.SearchStrategy[int]:
    pq = PRE_QUANT[mode]
    if pq.shift:
        return st.integers(0, 15).map(shift_param)
    width = pq.offset_bits
    off = st.integers(-(1 << (width - 1)), (1 << (width - 1)) - 1) if width else st.just(0)
    return st.tuples(fp19_positive_normal(), off).map(lambda t: quant_param(t[0], t[1], width))


@st.composite
def cases(draw):
    code = draw(st.sampled_from(sorted(PRE_QUANT)))
    pq = PRE_QUANT[code]
    acc = draw(st.sampled_from(sorted(pq.accumulator)))
    relu = draw(st.sampled_from([0, 1, 2, 3]))
    m, n = draw(st.integers(1, 3)), draw(st.integers(1, 4))
    word = (
        fp32_words()
        if acc == D.FP32
        else s32_words()
        if acc == D.S32
        else st.integers(0, 2**32 - 1)
    )
    raw = [[draw(word) for _ in range(n)] for _ in range(m)]
    quant = None
    if pq.parameter == "scalar":
        quant = draw(quant_words(code))
    elif pq.parameter == "vector":
        quant = [draw(quant_words(code)) for _ in range(n)]
    relu_p = None
    if relu == 2:
        relu_p = draw(relu_words())
    elif relu == 3:
        relu_p = [draw(relu_words()) for _ in range(n)]
    f = Fpatr(pre_quant_mode=code, relu_mode=relu)
    programmable = pq.code != 0 and not pq.shift
    mode = (
        draw(st.sampled_from([0, 1, 2, 3, 4, 5, 6, 7]))
        if programmable and pq.rounding is None
        else 0
    )
    sat = draw(st.booleans()) if programmable else False
    assert datr_legal(f, mode, sat)
    return f, acc, raw, quant, relu_p, mode, sat


def acc_carrier(acc: DataType, raw) -> np.ndarray:
    return from_bits(np.array(raw, np.uint64), acc)


# ---------------------------------------------------------------- tests


@given(cases())
@settings(max_examples=300)
def test_postprocess_matches_the_reference_profile(case) -> None:
    f, acc, raw, quant, relu_p, mode, sat = case
    q_arr = (
        None
        if quant is None
        else (quant if np.ndim(quant) == 0 else np.array(quant, np.uint64))
    )
    r_arr = (
        None
        if relu_p is None
        else (relu_p if np.ndim(relu_p) == 0 else np.array(relu_p, np.uint64))
    )
    got, status = postprocess(acc_carrier(acc, raw), acc, f, q_arr, r_arr, mode, sat)
    out = acc if f.pre_quant_mode == 0 else PRE_QUANT[f.pre_quant_mode].output
    assert got.dtype == from_bits(np.zeros(1, np.uint64), out).dtype
    bits = got.view(np.dtype(f"u{got.dtype.itemsize}")).astype(np.uint64)
    want_status = 0
    for i, row in enumerate(raw):
        for j, value in enumerate(row):
            qw = quant if not isinstance(quant, list) else quant[j]
            rw = relu_p if not isinstance(relu_p, list) else relu_p[j]
            code, flags = oracle_element(value, acc, f, qw or 1, rw or 0, mode or RNE, sat)
            width = {D.S4X2: 4, D.E4M3: 8, D.HiF8: 8, D.S8: 8}.get(out, 8 * got.dtype.itemsize)
            assert int(bits[i, j]) & ((1 << width) - 1) == code, (
                i,
                j,
                hex(value),
                f,
                mode,
                sat,
            )
            want_status |= flags
    assert status == want_status


@pytest.mark.parametrize("mode", [RNE, RTZ, RTM, RTP, RNA, RTO, RHB])
def test_floating_to_integer_rounds_ties_and_negatives_by_mode(mode: int) -> None:
    xs = [Fraction(i, 4) for i in range(-20, 21)]
    got = round_to_integer(np.array([float(x) for x in xs]), mode)
    assert [int(v) for v in got] == [to_integer(x, mode) for x in xs]


def test_reference_encoders_detect_tininess_before_rounding() -> None:
    # just below the smallest normal, rounding up to it: UF|NX (IEEE after-rounding: NX)
    for dt, emin, bits in [
        (D.FP32, -126, 0x00800000),
        (D.FP16, -14, 0x0400),
        (D.BF16, -126, 0x0080),
    ]:
        x = np.array([2.0**emin - 2.0 ** (emin - 26)])
        got, flags = encode_float(x, dt, RNE, False)
        assert int(got[0]) == bits and int(flags[0]) == UF | NX


def test_relu_clears_negative_zero_and_no_op_keeps_it() -> None:
    v = np.array([[-0.0, -2.0, 3.0]], np.float32)
    same, status = postprocess(v, D.FP32, Fpatr())
    assert same.view(np.uint32).tolist() == v.view(np.uint32).tolist() and status == 0
    relu, status = postprocess(v, D.FP32, Fpatr(relu_mode=1))
    assert relu.view(np.uint32).tolist() == [[0, 0, 0x40400000]] and status == 0


def test_e4m3_overflows_above_448_before_rounding() -> None:
    one = quant_param(127 << 10)  # FP19 1.0
    v = np.array([[449.0, -449.0, 448.0]], np.float32)
    r, status = postprocess(v, D.FP32, Fpatr(pre_quant_mode=26), one)
    assert r.view(np.uint8).tolist() == [[0x7F, 0x7F, 0x7E]] and status == OF | NX
    r, _ = postprocess(v, D.FP32, Fpatr(pre_quant_mode=26), one, sat=True)
    assert r.view(np.uint8).tolist() == [[0x7E, 0xFE, 0x7E]]


def test_hif8_modes_round_half_toward_positive_infinity() -> None:
    # 1.0625 is halfway between HiF8 1.0 (0x08, even) and 1.125 (0x09): RHB picks 0x09;
    # -1.0625 goes toward +Inf as well, to -1.0 (0x88)
    one = quant_param(127 << 10)
    v = np.array([[1.0625, -1.0625]], np.float32)
    for mode, word in ((25, one), (28, np.array([one, one], np.uint64))):
        r, status = postprocess(v, D.FP32, Fpatr(pre_quant_mode=mode), word)
        assert r.view(np.uint8).tolist() == [[0x09, 0x88]] and status == NX


def test_binary16_overflow_is_infinity_in_every_rounding_mode() -> None:
    v = np.array([[70000, -70000]], np.int32)
    one = quant_param(127 << 10)
    r, status = postprocess(v, D.S32, Fpatr(pre_quant_mode=5), one, rmode=RTZ)
    assert r.view(np.uint16).tolist() == [[0x7C00, 0xFC00]] and status == OF | NX
    r, _ = postprocess(v, D.S32, Fpatr(pre_quant_mode=5), one, rmode=RTZ, sat=True)
    assert r.view(np.uint16).tolist() == [[0x7BFF, 0xFBFF]]


def test_s8_quantization_rounds_at_s9_then_adds_the_offset() -> None:
    # x * 0.5 rounds and saturates at S9, then the offset -100 is added and encoded at S8:
    # 300 -> 150 -> 50; 700 -> 350 saturates to 255 -> 155 wraps to -101; 3 -> 1.5 -> 2 -> -98
    word = quant_param(126 << 10, -100, 9)
    v = np.array([[300, 700, 3]], np.int32)
    r, status = postprocess(v, D.S32, Fpatr(pre_quant_mode=3), word)
    assert r.dtype == np.int8 and r.tolist() == [[50, -101, -98]] and status == OF | NX
    r, _ = postprocess(v, D.S32, Fpatr(pre_quant_mode=3), word, sat=True)
    assert r.tolist() == [[50, 127, -98]]


def test_shift_modes_saturate_to_s16_and_ignore_relu() -> None:
    v = np.array([[-5, 2**20, -(2**31)]], np.int32)
    r, status = postprocess(v, D.S32, Fpatr(pre_quant_mode=13, relu_mode=1), shift_param(0))
    assert r.tolist() == [[-3, 32767, -32768]] and status == OF | NX


def test_descriptor_and_parameter_rules() -> None:
    assert fields_legal(Fpatr())
    assert not fields_legal(Fpatr(row_max_init=True))
    assert not fields_legal(Fpatr(group_max=True))
    assert not fields_legal(Fpatr(group_n_code=2))
    assert not fields_legal(Fpatr(max_abs=True))
    assert not fields_legal(Fpatr(pre_quant_mode=6))
    assert fields_legal(Fpatr(group_max=True, group_n_code=2, max_abs=True))
    assert not datr_legal(Fpatr(), 1, False) and not datr_legal(Fpatr(), 0, True)
    assert not datr_legal(Fpatr(pre_quant_mode=1), 2, False)
    assert datr_legal(Fpatr(pre_quant_mode=1), 0, True)
    assert datr_legal(Fpatr(pre_quant_mode=3), 5, True)
    assert not datr_legal(Fpatr(pre_quant_mode=12), 0, True)
    good = quant_param(127 << 10, -3, 9)
    assert quant_param_legal(3, np.array([good]))[0]
    assert not quant_param_legal(3, np.array([good | 1]))[0]  # reserved low bits
    assert not quant_param_legal(1, np.array([good]))[0]  # mode 1 takes no parameter
    assert not quant_param_legal(32, np.array([good]))[0]  # no offset field in mode 32
    assert not quant_param_legal(27, np.array([quant_param(0)]))[0]  # zero scale
    assert not quant_param_legal(27, np.array([quant_param(1 << 18 | 127 << 10)]))[0]
    assert quant_param_legal(12, np.array([shift_param(15)]))[0]
    assert relu_param_legal(np.array([0, 127 << 10]))[:].all()
    assert not relu_param_legal(np.array([1, 1 << 19 | 127 << 10])).any()
    with pytest.raises(SemanticError, match="BundleFPATRQuantParameterWordLegal"):
        postprocess(np.zeros((1, 1), np.int32), D.S32, Fpatr(pre_quant_mode=3), 1)
    with pytest.raises(SemanticError, match="BundleFPATRAccumulatorTypeLegal"):
        postprocess(np.zeros((1, 1), np.float32), D.FP32, Fpatr(pre_quant_mode=3), good)


# ---------------------------------------------------------------- RowMax / GroupMax


def max_oracle(acc: DataType, cur: int, cand: int, max_abs: bool) -> tuple[int, int]:
    flags = 0
    if max_abs:
        if acc == D.FP32:
            cur, cand = cur & 0x7FFFFFFF, cand & 0x7FFFFFFF
        elif acc == D.S32:
            out = []
            for v in (cur, cand):
                s = v - 2**32 if v >= 2**31 else v
                if s == -(2**31):
                    out.append(0x7FFFFFFF)
                    flags |= OF
                else:
                    out.append(abs(s))
            cur, cand = out
    if acc == D.S32:
        sc, sd = ((v - 2**32 if v >= 2**31 else v) for v in (cur, cand))
        return (cur if sc >= sd else cand) % 2**32, flags
    if acc == D.U32:
        return max(cur, cand), flags
    nan_c = (cur >> 23) & 0xFF == 0xFF and cur & 0x7FFFFF
    nan_d = (cand >> 23) & 0xFF == 0xFF and cand & 0x7FFFFF
    snan = (nan_c and not (cur >> 22) & 1) or (nan_d and not (cand >> 22) & 1)
    flags |= NV if snan else 0
    if nan_c and nan_d:
        return 0x7FC00000, flags
    if nan_c:
        return cand, flags
    if nan_d:
        return cur, flags
    x, y = (float(np.array([v], np.uint32).view(np.float32)[0]) for v in (cur, cand))
    if x == 0 and y == 0:
        return (0x80000000 if cur >> 31 and cand >> 31 else 0), flags
    return (cur if x >= y else cand), flags


def fold_max(acc: DataType, xs: list[int], max_abs: bool, init: int | None):
    v, flags = xs[0], 0
    if max_abs:
        v, f = max_oracle(acc, v, v, True)
        flags |= f
    for x in xs[1:]:
        v, f = max_oracle(acc, v, x, max_abs)
        flags |= f
    if init is not None:
        v, f = max_oracle(acc, init, v, max_abs)
        flags |= f
    return v, flags


@given(
    st.sampled_from([D.FP32, D.S32, D.U32]),
    st.integers(1, 3),
    st.integers(1, 20),
    st.booleans(),
    st.booleans(),
    st.sampled_from([8, 16]),
    st.data(),
)
def test_row_and_group_max_fold_the_raw_accumulator(acc, m, n, max_abs, init, gn, data) -> None:
    word = (
        fp32_words()
        if acc == D.FP32
        else s32_words()
        if acc == D.S32
        else st.integers(0, 2**32 - 1)
    )
    raw = [[data.draw(word) for _ in range(n)] for _ in range(m)]
    init_raw = [data.draw(word) for _ in range(m)]
    tile = acc_carrier(acc, raw)
    got, status = row_max(
        tile, acc, max_abs, acc_carrier(acc, [[v] for v in init_raw]) if init else None
    )
    want_status = 0
    for i in range(m):
        v, f = fold_max(acc, raw[i], max_abs, init_raw[i] if init else None)
        assert int(got.view(np.uint32)[i, 0]) == v
        want_status |= f
    assert status == want_status
    got, status = group_max(tile, acc, gn, max_abs)
    want_status = 0
    groups = (n + gn - 1) // gn
    assert got.shape == (m, groups)
    for i in range(m):
        for g in range(groups):
            v, f = fold_max(acc, raw[i][g * gn : (g + 1) * gn], max_abs, None)
            assert int(got.view(np.uint32)[i, g]) == v
            want_status |= f
    assert status == want_status


def test_matmul_publishes_d_and_the_auxiliary_outputs_from_one_fold() -> None:
    a = np.array([[1, -2, 3], [4, 5, -6]], np.float16)
    b = np.eye(3, dtype=np.float16)
    f = Fpatr(
        pre_quant_mode=1,
        relu_mode=1,
        row_max=True,
        group_max=True,
        group_n_code=1,
        row_max_init=True,
        max_abs=True,
    )
    res = matmul(
        a,
        D.FP16,
        b,
        D.FP16,
        fpatr=f,
        bias=np.array([0.5, 0, 0], np.float32),
        row_max_in=np.array([[10.0], [-1.0]], np.float32),
    )
    # D: ReLU then FP16 of the biased product; maxima of |raw| (not of the converted D)
    assert res.d.dtype == np.float16
    assert res.d.tolist() == [[1.5, 0.0, 3.0], [4.5, 5.0, 0.0]]
    assert res.row_max.tolist() == [[10.0], [6.0]]
    assert res.group_max.tolist() == [[3.0], [6.0]]
    assert res.status == 0


def test_matmul_rejects_an_inconsistent_descriptor_before_folding() -> None:
    a = np.ones((1, 1), np.float16)
    with pytest.raises(SemanticError, match="BundleFPATRFieldsLegal"):
        matmul(a, D.FP16, a, D.FP16, fpatr=Fpatr(max_abs=True))
    with pytest.raises(SemanticError, match="BundleFPATRAccumulatorTypeLegal"):
        matmul(a, D.FP16, a, D.FP16, fpatr=Fpatr(pre_quant_mode=2))
    with pytest.raises(ValueError, match="RowMaxIn"):
        matmul(a, D.FP16, a, D.FP16, fpatr=Fpatr(row_max=True, row_max_init=True))


def _nearest_fp19(bits: int) -> int:
    """FP19 of FP32 ``bits`` by exhaustive search: the two FP19 neighbours of the exact
    value (same sign), nearest, ties to the even fraction; above the largest finite
    FP19 (exponent 254, fraction 1023) by at least half an ulp, infinity."""
    sign, exp, frac = bits >> 31, (bits >> 23) & 0xFF, bits & 0x7FFFFF
    if exp == 0xFF:
        return 0x3FF00 if frac else (sign << 18) | (0xFF << 10)
    value = Fraction(frac if exp == 0 else frac | 1 << 23) * Fraction(2) ** (max(exp, 1) - 150)

    def fp19(code: int) -> Fraction:  # a magnitude code (no sign)
        e, f = code >> 10, code & 0x3FF
        return Fraction(f if e == 0 else f | 1 << 10) * Fraction(2) ** (max(e, 1) - 137)

    lo = max(c for c in (frac >> 13 | exp << 10, (frac >> 13 | exp << 10) - 1) if c >= 0
             and fp19(c) <= value)  # fmt: skip
    hi = lo + 1
    if hi >> 10 == 0xFF:  # the next step is infinity: it is taken at or past the midpoint
        mid = fp19(lo) + Fraction(2) ** (254 - 137) / 2
        code = hi if value >= mid else lo
    else:
        d_lo, d_hi = value - fp19(lo), fp19(hi) - value
        code = lo if d_lo < d_hi or (d_lo == d_hi and lo % 2 == 0) else hi
    return (sign << 18) | code


@settings(max_examples=400)
@given(st.integers(0, 0xFFFFFFFF))
def test_fp32_to_fp19_rounds_to_nearest_even(bits: int) -> None:
    from ptoc.backend.isa.semantics.fpatr import fp19_from_fp32

    assert fp19_from_fp32(bits) == _nearest_fp19(bits)


@pytest.mark.parametrize(
    "bits",
    [0, 0x80000000, 0x00000001, 0x00001000, 0x00001001, 0x00003000, 0x3F801000,
     0x3F803000, 0x7F7FF000, 0x7F7FEFFF, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFFFFFFF,
     0x7F800001],
)  # fmt: skip
def test_fp32_to_fp19_at_ties_carries_and_specials(bits: int) -> None:
    from ptoc.backend.isa.semantics.fpatr import fp19_from_fp32

    assert fp19_from_fp32(bits) == _nearest_fp19(bits)
