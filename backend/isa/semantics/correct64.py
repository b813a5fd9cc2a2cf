"""Correctly rounded FP64 exp, log and rsqrt (DECISIONS D9 at the FP64 element type).

The reference profile evaluates TEXP, TLOG and TRSQRT in FP64 and rounds that once to
the element type (D5). At FP64 itself the FP64 evaluation *is* the result, and D9 asks
for the exact result rounded once, so these functions return the correctly rounded
binary64 value of every ordinary operand (finite; nonzero for exp, positive for log and
rsqrt), independent of the platform's libm:

* rsqrt is exact integer arithmetic: ``floor(2**k / sqrt(M))`` by ``math.isqrt`` with
  the remainder as sticky bit.
* exp and log use :mod:`decimal`, whose ``exp`` and ``ln`` are correctly rounded at the
  context precision: the true value lies within half a decimal unit of the result, so
  both ends of that interval are rounded. When they agree, that is the answer (the
  true value, irrational, lies strictly between them); otherwise the value is too close
  to a rounding boundary for the precision (24 digits, about once in 10**8 operands) and
  it is evaluated again with twice as many digits.

The results come back as exact *parts* for :func:`.floatfmt.encode_parts`, which applies
the rounding mode, overflow, after-rounding tininess and NX exactly as for every other
operation.
"""

from __future__ import annotations

import math
from decimal import Context, Decimal

import numpy as np

from ..datatypes import DataType
from .floatfmt import RNE, encode_parts

__all__ = ["exp_log64", "rsqrt64"]

_Parts = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]

#: beyond these operands exp is certain to overflow / to round below half the smallest
#: subnormal (exp(709.79) ~ 2**1024, exp(-745.14) ~ 2**-1075): decimal is not needed
_EXP_OVER, _EXP_UNDER = 710.0, -746.0


def _parts(neg: bool, num: int, den: int, sticky: bool) -> tuple[bool, int, int, bool]:
    """(neg, M, E, sticky) of the nonzero rational num/den: (M + s) * 2**E, M of 62 bits."""
    k = 62 - (num.bit_length() - den.bit_length())
    num, den = num << max(k, 0), den << max(-k, 0)
    q, r = divmod(num, den)
    while q.bit_length() > 63:
        r, q, k = r + (q & 1) * den, q >> 1, k - 1
    return neg, q, -k, sticky or r != 0


def _pack(rows: list[tuple[bool, int, int, bool]]) -> _Parts:
    neg, m, e, s = zip(*rows, strict=True) if rows else ((), (), (), ())
    return (
        np.array(neg, bool),
        np.array(m, np.uint64),
        np.array(e, np.int64),
        np.array(s, bool),
    )


def _decimal(op: str, x: float, prec: int) -> tuple[tuple[bool, int, int, bool], ...]:
    """Parts of both ends of an interval holding exp(x) or log(x): the correctly
    rounded ``prec``-digit decimal value C * 10**X plus or minus half its last unit."""
    ctx = Context(prec=prec)
    d = ctx.exp(Decimal(x)) if op == "exp" else ctx.ln(Decimal(x))
    sign, digits, exp = d.as_tuple()
    c = int("".join(map(str, digits)))
    assert isinstance(exp, int) and c > 0
    scale, den = (10**exp, 2) if exp >= 0 else (1, 2 * 10**-exp)
    return tuple(_parts(bool(sign), (2 * c + h) * scale, den, True) for h in (-1, 1))


def exp_log64(op: str, x: np.ndarray, rmode: int = RNE) -> tuple[np.ndarray, np.ndarray]:
    """Correctly rounded FP64 ``exp`` or ``log`` of ordinary float64 operands: (bits,
    flags) per element. ``x`` must be finite (and positive for log, nonzero for exp:
    their special values are the caller's)."""
    flat = np.asarray(x, np.float64).reshape(-1).tolist()
    bits = np.zeros(len(flat), np.uint64)
    flags = np.zeros(len(flat), np.uint8)
    todo = list(range(len(flat)))
    prec = 24
    while todo:
        lo, hi = [], []
        for i in todo:
            v = flat[i]
            if op == "exp" and v > _EXP_OVER:
                a = b = (False, 1, 2000, True)  # far beyond the largest finite value
            elif op == "exp" and v < _EXP_UNDER:
                a = b = (False, 1, -1100, True)  # far below the smallest subnormal
            else:
                a, b = _decimal(op, v, prec)
            lo.append(a)
            hi.append(b)
        b_lo, f_lo = encode_parts(DataType.FP64, *_pack(lo), rmode)
        b_hi, f_hi = encode_parts(DataType.FP64, *_pack(hi), rmode)
        agree = (b_lo == b_hi) & (f_lo == f_hi)
        idx = np.array(todo)
        bits[idx[agree]], flags[idx[agree]] = b_lo[agree], f_lo[agree]
        todo = idx[~agree].tolist()
        prec *= 2
    return bits.reshape(np.shape(x)), flags.reshape(np.shape(x))


def rsqrt64(x: np.ndarray, rmode: int = RNE) -> tuple[np.ndarray, np.ndarray]:
    """Correctly rounded FP64 ``1/sqrt(x)`` of finite positive float64 operands:
    (bits, flags) per element (exact, so 4**k gives no NX)."""
    flat = np.asarray(x, np.float64).reshape(-1)
    rows = []
    for v in flat.tolist():
        m, e = v.as_integer_ratio()  # e is a power of two: v = n * 2**t exactly
        n, t = m, -(e.bit_length() - 1)
        if t % 2:
            n, t = n * 2, t - 1
        # 1/sqrt(n * 2**t) = 2**(-t/2) / sqrt(n); q = floor(2**(2k) / n) under a square root
        k = 64 + (n.bit_length() + 1) // 2
        num = 1 << (2 * k)
        q = math.isqrt(num // n)
        exact = q * q * n == num
        # q / 2**k * 2**(-t/2), t even: scale by shifting numerator or denominator
        shift = -t // 2 - k
        num, den = (q << shift, 1) if shift >= 0 else (q, 1 << -shift)
        rows.append(_parts(False, num, den, not exact))
    b, f = encode_parts(DataType.FP64, *_pack(rows), rmode)
    return b.reshape(np.shape(x)), f.reshape(np.shape(x))
