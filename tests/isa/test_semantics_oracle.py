"""Independent oracles for the semantics tests, plus self-checks of the oracles.

Nothing here imports ``ptoc``: values come from numpy/ml_dtypes casts (exact for every
finite value) and ``fractions.Fraction``; rounding is a from-scratch Fraction routine
written from the format parameters of ``asl/arch/data-types/formats/*.asl``.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import ml_dtypes
import numpy as np
from hypothesis import given
from hypothesis import strategies as st

RNE, RTZ, RTM, RTP, RNA, RTO, RHB = 1, 2, 3, 4, 5, 6, 7
INF = "inf"
NINF = "-inf"


@dataclass(frozen=True)
class Fmt:
    """Precision p (with hidden bit), minimum normal exponent, largest finite value."""

    p: int
    emin: int
    max: Fraction
    has_inf: bool


def _mx(p: int, e: int, frac_units: int | None = None) -> Fraction:
    units = (1 << p) - 1 if frac_units is None else frac_units
    return Fraction(units) * Fraction(2) ** (e - p + 1)


FMTS: dict[str, Fmt] = {
    "FP64": Fmt(53, -1022, _mx(53, 1023), True),
    "FP32": Fmt(24, -126, _mx(24, 127), True),
    "TF32": Fmt(11, -126, _mx(11, 127), True),
    "HF32": Fmt(12, -126, _mx(12, 127), True),
    "FP16": Fmt(11, -14, Fraction(65504), True),
    "BF16": Fmt(8, -126, _mx(8, 127), True),
    "E4M3": Fmt(4, -6, Fraction(448), False),
    "E5M2": Fmt(3, -14, Fraction(57344), True),
    "E3M2": Fmt(3, -2, Fraction(28), False),
    "E2M3": Fmt(4, 0, Fraction(15, 2), False),
    "E2M1X2": Fmt(2, 0, Fraction(6), False),
    "E1M2X2": Fmt(3, 0, Fraction(7, 4), False),
}


def ilog2(a: Fraction) -> int:
    """floor(log2(a)) for a > 0."""
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    return e


def ref_round(v: Fraction, fmt: Fmt, mode: int = RNE, sat: bool = False) -> Fraction | str:
    """Round an exact rational to ``fmt``; returns a Fraction or "inf"/"-inf"."""
    if v == 0:
        return Fraction(0)
    neg = v < 0
    a = -v if neg else v
    e = max(ilog2(a), fmt.emin)
    q = Fraction(2) ** (e - fmt.p + 1)
    n = a / q
    lo = n.numerator // n.denominator
    rem = n - lo
    half = Fraction(1, 2)
    if rem == 0:
        r = lo
    elif mode == RNE:
        r = lo + (rem > half or (rem == half and lo % 2 == 1))
    elif mode == RNA:
        r = lo + (rem >= half)
    elif mode == RHB:
        r = lo + (rem > half or (rem == half and not neg))
    elif mode == RTZ:
        r = lo
    elif mode == RTP:
        r = lo + (not neg)
    elif mode == RTM:
        r = lo + neg
    elif mode == RTO:
        r = lo if lo % 2 == 1 else lo + 1
    else:
        raise ValueError(mode)
    val = r * q
    if val > fmt.max:
        to_inf = {RNE: True, RNA: True, RHB: True, RTZ: False, RTO: False, RTP: not neg}
        to_inf[RTM] = neg
        if sat or not to_inf[mode]:
            val = fmt.max
        else:
            return NINF if neg else INF
    return -val if neg else val


def overflows(v: Fraction, fmt: Fmt, mode: int = RNE) -> bool:
    """IEEE overflow: the result rounded with an unbounded exponent exceeds the maximum."""
    r = ref_round(v, Fmt(fmt.p, fmt.emin, fmt.max * 2**4096, True), mode)
    assert isinstance(r, Fraction)
    return abs(r) > fmt.max


def frac(x: float) -> Fraction | str:
    """Fraction of a finite float; "inf"/"-inf"/"nan" otherwise."""
    if np.isnan(x):
        return "nan"
    if np.isinf(x):
        return INF if x > 0 else NINF
    return Fraction(float(x))


def hif8_value_asl(code: int) -> float:
    """``ReferenceFP8FiniteValue`` for HiF8 transcribed literally (matrix-quantization.asl)."""
    neg = code & 0x80
    body = code & 0x7F
    if body <= 7:
        mag = 0.0 if body == 0 else 2.0 ** (body - 23)
    elif body <= 15:
        mag = 1.0 + (body - 8) / 8.0
    elif body <= 31:
        ex = 1 if ((code >> 3) & 1) == 0 else -1
        mag = (1.0 + (code & 7) / 8.0) * 2.0**ex
    elif body <= 63:
        ec = (code >> 3) & 3
        ab = 2 + ((code >> 3) & 1)
        mag = (1.0 + (code & 7) / 8.0) * 2.0 ** (ab if ec < 2 else -ab)
    elif body <= 95:
        ec = (code >> 2) & 7
        ab = 4 + ((code >> 2) & 3)
        mag = (1.0 + (code & 3) / 4.0) * 2.0 ** (ab if ec < 4 else -ab)
    else:
        ec = (code >> 1) & 15
        ab = 8 + ((code >> 1) & 7)
        mag = (1.0 + (code & 1) / 2.0) * 2.0 ** (ab if ec < 8 else -ab)
    return -mag if neg else mag


def hif8_encode_asl(value: Fraction, mode: int, sat: bool) -> tuple[int, int]:
    """``ReferenceFP8Encoding`` for HiF8 transcribed literally: (code, flags)."""
    if value == 0:
        return 0, 0
    neg = value < 0
    mag = -value if neg else value
    if mag > 32768:
        code = (0xEE if neg else 0x6E) if sat else (0xEF if neg else 0x6F)
        return code, 0x14
    best = None
    for code in range(256):
        if code in (0x80, 0x6F, 0xEF):
            continue
        cand = Fraction(hif8_value_asl(code))
        if mode == RTP:
            ok = cand >= value
        elif mode == RTM:
            ok = cand <= value
        elif mode in (RTZ, RTO):
            ok = (value <= cand <= 0) if neg else (0 <= cand <= value)
        else:
            ok = True
        if not ok:
            continue
        if best is None:
            best = (code, cand)
            continue
        bcode, bval = best
        if mode == RTP:
            better = cand < bval
        elif mode == RTM:
            better = cand > bval
        elif mode in (RTZ, RTO):
            better = cand < bval if neg else cand > bval
        else:
            cd, bd = abs(cand - value), abs(bval - value)
            if cd != bd:
                better = cd < bd
            elif mode == RNE:
                better = code % 2 == 0 and bcode % 2 != 0
            elif mode == RNA:
                better = abs(cand) > abs(bval)
            else:
                better = cand > bval
        if better:
            best = (code, cand)
    assert best is not None
    code, bval = best
    if mode == RTO and bval != value and code % 2 == 0:
        odd = None
        for c in range(1, 256, 2):
            if c in (0x6F, 0xEF):
                continue
            cand = Fraction(hif8_value_asl(c))
            away = cand < bval if neg else cand > bval
            if away and (odd is None or (cand > odd[1] if neg else cand < odd[1])):
                odd = (c, cand)
        if odd is not None:
            code, bval = odd
    inexact = bval != value
    flags = (0x18 if mag < Fraction(1, 1 << 15) else 0x10) if inexact else 0
    return code, flags


# ---------------------------------------------------------------- oracle self-checks


@given(st.integers(0, 2**32 - 1))
def test_ref_round_matches_numpy_fp16_and_ml_dtypes(bits: int) -> None:
    """The Fraction oracle agrees with numpy/ml_dtypes RNE casts from float32."""
    x = np.array([bits], np.uint32).view(np.float32)
    if not np.isfinite(x[0]):
        return
    v = Fraction(float(x[0]))
    for name, t in (("FP16", np.float16), ("BF16", ml_dtypes.bfloat16)):
        with np.errstate(over="ignore"):
            got = frac(float(x.astype(t)[0]))
        assert got == ref_round(v, FMTS[name]), name
    got = frac(float(x.astype(ml_dtypes.float8_e5m2)[0]))
    assert got == ref_round(v, FMTS["E5M2"]) or (got == "nan")


def test_hif8_table_oracle_is_monotone_within_sign() -> None:
    """The literal ASL HiF8 decoder produces 126 distinct positive finite magnitudes."""
    vals = {hif8_value_asl(c) for c in range(1, 0x80) if c != 0x6F}
    assert len(vals) == 126
    assert max(vals) == 32768.0 and min(vals) == 2.0**-22
