"""A second, independent oracle for the compound reference semantics.

Written from docs/compound.md with plain Python loops, exact ``Fraction`` arithmetic and
explicit rounding, sharing no code with ``ptoc.dialects.compound_ref``. Slow on purpose.
"""

from __future__ import annotations

import bisect
import math
import struct
from fractions import Fraction

import ml_dtypes
import numpy as np

NAN = float("nan")
INF = float("inf")

# (significand bits incl. the hidden one, min normal exponent, max exponent)
FORMATS = {
    np.dtype(np.float32): (24, -126, 127),
    np.dtype(np.float16): (11, -14, 15),
    np.dtype(ml_dtypes.bfloat16): (8, -126, 127),
}
CANON = {
    np.dtype(np.float32): 0x7FC00000,
    np.dtype(np.float16): 0x7E00,
    np.dtype(ml_dtypes.bfloat16): 0x7FC0,
}
UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def raw(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    return a.view(UINT[a.dtype.itemsize])


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(raw(a), raw(b))


def scalar(dt, value_or_bits, *, is_bits=False):
    """A 0-d array of dtype dt from a Python float or from raw bits."""
    dt = np.dtype(dt)
    if is_bits:
        return np.array(value_or_bits, UINT[dt.itemsize]).view(dt)
    return np.array(value_or_bits, dt)


# ---------------------------------------------------------------- exact rounding


def _floor_log2(a: Fraction) -> int:
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    elif Fraction(2) ** (e + 1) <= a:
        e += 1
    return e


def round_fraction(q: Fraction, dt, negative_zero: bool = False) -> float:
    """Round the exact rational q to dt (FP32/FP16/BF16) with RNE; overflow gives inf."""
    p, emin, emax = FORMATS[np.dtype(dt)]
    if q == 0:
        return -0.0 if negative_zero else 0.0
    sign = -1.0 if q < 0 else 1.0
    a = abs(q)
    e = max(_floor_log2(a), emin)
    quantum = Fraction(2) ** (e - p + 1)
    r = round(a / quantum) * quantum  # Fraction.__round__ ties to even
    max_finite = (2 - Fraction(2) ** (1 - p)) * Fraction(2) ** emax
    if r > max_finite:
        return sign * INF
    if r == 0:
        return sign * 0.0
    return sign * float(r)


def fl_op(op: str, x: float, y: float, dt) -> float:
    """IEEE x op y for op in add/sub/mul, rounded once to dt; NaN results are NaN."""
    if math.isnan(x) or math.isnan(y):
        return NAN
    if op == "sub":
        op, y = "add", -y
    if op == "add":
        if math.isinf(x) or math.isinf(y):
            if math.isinf(x) and math.isinf(y) and (x > 0) != (y > 0):
                return NAN
            return x if math.isinf(x) else y
        q = Fraction(x) + Fraction(y)
        both_neg_zero = q == 0 and math.copysign(1, x) < 0 and math.copysign(1, y) < 0
        return round_fraction(q, dt, negative_zero=both_neg_zero)
    if op == "mul":
        neg = (math.copysign(1, x) < 0) != (math.copysign(1, y) < 0)
        if math.isinf(x) or math.isinf(y):
            if x == 0 or y == 0:
                return NAN
            return -INF if neg else INF
        return round_fraction(Fraction(x) * Fraction(y), dt, negative_zero=neg)
    raise ValueError(op)


def to_carrier(v: float, dt) -> np.ndarray:
    """A Python float (exactly representable in dt, or NaN) as a dt scalar; NaN canonical."""
    dt = np.dtype(dt)
    if math.isnan(v):
        return scalar(dt, CANON[dt], is_bits=True)
    return np.array(v, dt)


# ---------------------------------------------------------------- ordering


def precedes(x: float, y: float, descending: bool) -> bool:
    """x strictly precedes y in the seed order (numbers first, NaN last, +-0 equal)."""
    if math.isnan(x):
        return False
    if math.isnan(y):
        return True
    return x > y if descending else x < y


def insertion_sort(items: list, descending: bool) -> list:
    """Stable insertion sort of (value, payload...) tuples by the seed order."""
    out: list = []
    for it in items:
        k = len(out)
        while k > 0 and precedes(it[0], out[k - 1][0], descending):
            k -= 1
        out.insert(k, it)
    return out


def sort32(t: np.ndarray, payload: np.ndarray):
    rows, cols = t.shape
    vals = np.empty_like(t)
    pays = np.empty((rows, cols), np.uint32)
    for r in range(rows):
        for g in range(0, cols, 32):
            items = [
                (float(t[r, c]), int(raw(t)[r, c]), int(payload[r, c]))
                for c in range(g, min(g + 32, cols))
            ]
            for k, (_, b, p) in enumerate(insertion_sort(items, True)):
                raw(vals)[r, g + k] = b
                pays[r, g + k] = p
    return vals, pays


def merge(lists: list[list[tuple]], descending=True, top_k=None, exhausted=False):
    """k-way merge loop of (value, bits, payload) records; returns (records, counts)."""
    heads = [0] * len(lists)
    out: list = []
    counts = [0] * len(lists)
    total = sum(len(x) for x in lists)
    while len(out) < total:
        best = None
        for i, lst in enumerate(lists):
            if heads[i] == len(lst):
                continue
            if best is None or precedes(
                lst[heads[i]][0], lists[best][heads[best]][0], descending
            ):
                best = i
        out.append(lists[best][heads[best]])
        heads[best] += 1
        counts[best] += 1
        if top_k is not None and len(out) == top_k:
            break
        if exhausted and heads[best] == len(lists[best]):
            break
    return out, counts


def is_sorted(values: list[float], descending: bool) -> bool:
    return all(
        not precedes(values[i + 1], values[i], descending) for i in range(len(values) - 1)
    )


# ---------------------------------------------------------------- quantization


def quantize_rows(t, scale, offset, lo, hi):
    rows, cols = t.shape
    out = np.zeros((rows, cols), np.int64)
    for r in range(rows):
        for c in range(cols):
            y = fl_op("mul", float(t[r, c]), float(scale[r, 0]), np.float32)
            if offset is not None:
                y = fl_op("add", y, float(offset[r, 0]), np.float32)
            if math.isnan(y):
                q = 0
            elif math.isinf(y):
                q = hi if y > 0 else lo
            else:
                q = min(max(round(Fraction(y)), lo), hi)
            out[r, c] = q
    return out


def dequantize_rows(q, scale, offset):
    rows, cols = q.shape
    out = np.zeros((rows, cols), np.float32)
    for r in range(rows):
        for c in range(cols):
            y = float(q[r, c])
            if offset is not None:
                y = fl_op("sub", y, float(offset[r, 0]), np.float32)
            y = fl_op("mul", y, float(scale[r, 0]), np.float32)
            out[r, c] = to_carrier(y, np.float32)
    return out


E4M3_TABLE = [
    (float(np.array(b, np.uint8).view(ml_dtypes.float8_e4m3fn)), b) for b in range(0x7F)
]  # the 127 non-negative finite codes 0x00..0x7E, increasing


def e4m3_code(v: float, negative: bool) -> int:
    """RNE to E4M3 with saturation at 448; v >= 0 is the exact magnitude (a float)."""
    if v >= 448:
        return 0x7E | (0x80 if negative else 0)
    vals = [val for val, _ in E4M3_TABLE]
    k = bisect.bisect_left(vals, v)  # vals[k-1] < v <= vals[k]
    if vals[k] == v:
        code = k
    else:
        lo, hi = vals[k - 1], vals[k]
        mid = (lo + hi) / 2  # exact in float64
        code = k - 1 if v < mid or (v == mid and (k - 1) % 2 == 0) else k
    return code | (0x80 if negative else 0)


def quantize_mx(t):
    """(element codes, scale codes, amax floats, scaling floats) by the documented rules."""
    rows, cols = t.shape
    x = t.astype(np.float32)
    elem = np.zeros((rows, cols), np.uint8)
    scales = np.zeros((rows, cols // 32), np.uint8)
    amaxes = np.zeros((rows, cols // 32))
    scalings = np.zeros((rows, cols // 32))
    for r in range(rows):
        for g in range(cols // 32):
            grp = [float(v) for v in x[r, 32 * g : 32 * g + 32]]
            if any(math.isnan(v) for v in grp):
                scales[r, g] = 0xFF
                amaxes[r, g] = scalings[r, g] = NAN
                elem[r, 32 * g : 32 * g + 32] = 0x7F
                continue
            amax = max(abs(v) for v in grp)
            if math.isinf(amax):
                biased = 255
            elif amax < 2.0**-126:
                biased = 0
            else:
                biased = _floor_log2(Fraction(amax)) + 127
            e8m0 = max(biased - 8, 0)
            scales[r, g] = e8m0
            amaxes[r, g] = amax
            scalings[r, g] = 2.0 ** (127 - e8m0)
            for k, v in enumerate(grp):
                neg = math.copysign(1, v) < 0
                mag = abs(v) * 2.0 ** (127 - e8m0)  # exact: a power-of-two scaling of an FP32
                elem[r, 32 * g + k] = (
                    (0x7E | (0x80 if neg else 0)) if mag == INF else e4m3_code(mag, neg)
                )
    return elem, scales, amaxes, scalings


def dequantize_mx(elem_codes, scale_codes):
    rows, cols = elem_codes.shape
    out = np.zeros((rows, cols), np.float32)
    for r in range(rows):
        for c in range(cols):
            s = int(scale_codes[r, c // 32])
            e = int(elem_codes[r, c])
            if s == 0xFF or (e & 0x7F) == 0x7F:
                y = NAN
            else:
                v = float(np.array(e, np.uint8).view(ml_dtypes.float8_e4m3fn))
                y = round_fraction(
                    Fraction(v) * Fraction(2) ** (s - 127), np.float32, math.copysign(1, v) < 0
                )
            out[r, c] = to_carrier(y, np.float32)
    return out


# ---------------------------------------------------------------- gathers / scatter


def gather_pattern(t, keep):
    rows, cols = t.shape
    out = [[raw(t)[r, c] for c in range(cols) if keep(c)] for r in range(rows)]
    return np.array(out, raw(t).dtype).view(t.dtype)


def gather_flat(t, offsets):
    flat = list(raw(t).reshape(-1))
    out = np.zeros(offsets.shape, raw(t).dtype)
    for r in range(offsets.shape[0]):
        for c in range(offsets.shape[1]):
            out[r, c] = flat[int(offsets[r, c])]
    return out.view(t.dtype)


def gather_blocks(t, offs):
    data = np.ascontiguousarray(t).tobytes()
    rows = []
    for r in range(offs.shape[0]):
        row = b"".join(data[int(o) : int(o) + 32] for o in offs[r])
        rows.append(np.frombuffer(row, t.dtype))
    return np.array(rows)


def scatter_flat(t, offsets, shape, into):
    out = np.zeros(shape, t.dtype) if into is None else into.copy()
    ro, rt = raw(out).reshape(-1), raw(t)
    for r in range(t.shape[0]):
        for c in range(t.shape[1]):
            ro[int(offsets[r, c])] = rt[r, c]
    return out


def pack_records(values, payload):
    rows, cols = values.shape
    out = []
    for r in range(rows):
        b = b""
        for c in range(cols):
            if values.dtype == np.float32:
                b += struct.pack("<II", int(raw(values)[r, c]), int(payload[r, c]))
            else:
                b += struct.pack("<HHI", int(raw(values)[r, c]), 0, int(payload[r, c]))
        out.append(b)
    return out  # list of row byte strings


# ---------------------------------------------------------------- partial ops


def _int_wrap(v: int, dt) -> int:
    info = np.iinfo(dt)
    m = 1 << (8 * np.dtype(dt).itemsize)
    v %= m
    if info.min < 0 and v > info.max:
        v -= m
    return v


def combine(op: str, x, y, dt):
    """Typed op of two dt scalars (0-d arrays) -> 0-d array of dt."""
    dt = np.dtype(dt)
    if dt.kind in "iu":
        a, b = int(x), int(y)
        v = {"add": a + b, "mul": a * b, "max": max(a, b), "min": min(a, b)}[op]
        return np.array(_int_wrap(v, dt), dt)
    a, b = float(x), float(y)
    if op in ("max", "min"):
        if math.isnan(a) and math.isnan(b):
            return to_carrier(NAN, dt)
        if math.isnan(a):
            return y.copy()
        if math.isnan(b):
            return x.copy()
        if a == 0 and b == 0:
            na, nb = math.copysign(1, a) < 0, math.copysign(1, b) < 0
            neg = (na and nb) if op == "max" else (na or nb)
            return np.array(-0.0 if neg else 0.0, dt)
        pick = (a >= b) if op == "max" else (a <= b)
        return (x if pick else y).copy()
    return to_carrier(fl_op(op, a, b, dt), dt)


def partial(op, a, b, shape, pad):
    rows, cols = shape
    out = np.zeros(shape, a.dtype)
    for r in range(rows):
        for c in range(cols):
            in_a = r < a.shape[0] and c < a.shape[1]
            in_b = r < b.shape[0] and c < b.shape[1]
            if in_a and in_b:
                v = combine(op, a[r, c], b[r, c], a.dtype)
            elif in_a:
                v = a[r, c]
            elif in_b:
                v = b[r, c]
            else:
                v = np.array(pad, a.dtype)
            raw(out)[r, c] = raw(np.array(v).reshape(1))[0]
    return out
