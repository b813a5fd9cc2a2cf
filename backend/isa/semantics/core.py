"""Typed element arithmetic shared by every tile operation (the package's core API).

Arrays are ``(P, R, C)`` in the DataType's carrier dtype; status vectors are ``uint8``
``(P,)`` with the sticky bits NV, DZ, OF, UF, NX (``asl/arch/state/numeric-status.asl``).
Integer semantics follow ``asl/tile/model/execution/elementwise.asl`` and ``unary.asl``;
floating semantics are the reference profile of DECISIONS D5 (IEEE-style, correctly
rounded, RNE), implemented in :mod:`.floatarith` on top of :mod:`.floatfmt`.
"""

from __future__ import annotations

from functools import cache

import numpy as np

from ..datatypes import DataType, bits_dtype, info
from . import fastpath as _fp
from . import floatarith as _fa
from .floatfmt import (
    CANONICAL_NAN,
    DZ,
    NV,
    NX,
    OF,
    RNE,
    UF,
    classify,
    decode,
    encode_parts,
    max_finite_bits,
    parts_of,
    width_mask,
)

__all__ = [
    "DZ",
    "NV",
    "NX",
    "OF",
    "UF",
    "BundleControlSemanticError",
    "SemanticError",
    "binary",
    "canonical_nan",
    "compare",
    "encode_exact",
    "float_parts",
    "fold_flags",
    "fold_status",
    "from_bits",
    "is_float",
    "no_status",
    "pad_value",
    "round_float",
    "scalar_operand",
    "to_bits",
    "to_f64",
    "unary",
]


class SemanticError(Exception):
    """A data-dependent illegality found before any result exists (Fault_TileLegality)."""

    def __init__(self, rule: str) -> None:
        super().__init__(rule)
        #: one sentence naming the broken rule
        self.rule = rule


class BundleControlSemanticError(SemanticError):
    """An illegality the contract calls "Illegal Block Exception" (Fault_BundleControl)."""


# ---------------------------------------------------------------- status helpers


def no_status(p: int) -> np.ndarray:
    """An all-clear status vector for ``p`` PEs."""
    return np.zeros(p, np.uint8)


def fold_status(flags_bool: np.ndarray, bit: int) -> np.ndarray:
    """(P, ...) bool -> (P,) uint8 carrying ``bit`` for every PE with any True element."""
    f = np.asarray(flags_bool, bool)
    anyf = f.reshape(f.shape[0], -1).any(axis=1)
    return np.where(anyf, bit, 0).astype(np.uint8)


def fold_flags(flags: np.ndarray) -> np.ndarray:
    """(P, ...) per-element uint8 status bits -> (P,) OR over each PE's elements."""
    f = np.asarray(flags, np.uint8)
    return np.bitwise_or.reduce(f.reshape(f.shape[0], -1), axis=1).astype(np.uint8)


# ---------------------------------------------------------------- bits and values


def is_float(dt: DataType) -> bool:
    """True for floating DataTypes (including packed 4-bit floats)."""
    return _is_float(dt)


@cache
def _is_float(dt: DataType) -> bool:
    return info(dt).is_float


def _container(dt: DataType) -> np.dtype:
    return bits_dtype(info(dt).carrier.itemsize * 8)


def to_bits(a: np.ndarray) -> np.ndarray:
    """The raw bits of a carrier array as the unsigned integer of the same width."""
    a = np.asarray(a)
    if not a.flags.c_contiguous:
        a = a.copy(order="C")
    return a.view(bits_dtype(a.dtype.itemsize * 8))


def from_bits(bits: np.ndarray, dt: DataType) -> np.ndarray:
    """Carrier array of ``dt`` holding ``bits`` (truncated to the container width)."""
    b = np.asarray(bits)
    if b.dtype.kind == "i":
        b = b.view(bits_dtype(b.dtype.itemsize * 8))
    return b.astype(_container(dt), order="C").view(info(dt).carrier)


def canonical_nan(dt: DataType) -> int:
    """Raw bits of the canonical quiet NaN of ``dt`` (formats with a NaN only)."""
    try:
        return CANONICAL_NAN[DataType(dt)]
    except KeyError:
        raise ValueError(f"{DataType(dt).name} has no NaN encoding") from None


_PAD_FLOATS = frozenset(
    {DataType.FP64, DataType.FP32, DataType.TF32, DataType.HF32}
    | {DataType.FP16, DataType.BF16, DataType.E4M3, DataType.E5M2}
)


def pad_value(dt: DataType, pad: int) -> np.ndarray:
    """The carrier scalar of PadValue 0 Zero, 1 Max, 2 Min (``TilePadValueForDataType``).

    Max is the largest finite value and Min the most negative finite value (0 for
    unsigned). Types the ASL table does not list (HiF8, E3M2, E2M3, E2M1X2, E1M2X2,
    E8M0, HiF4X2, S4X2) take its ``otherwise`` arms truncated to the element width:
    Max = all ones, Min = 0 (S4X2 Max is therefore 0xF, i.e. -1, exactly as the ASL).
    """
    dt = DataType(dt)
    width = info(dt).bits
    listed_float = dt in _PAD_FLOATS
    signed = dt in (DataType.S8, DataType.S16, DataType.S32, DataType.S64)
    if pad == 0:
        raw = 0
    elif pad == 1:
        if listed_float:
            raw = int(max_finite_bits(dt))
        else:
            raw = (1 << (width - 1)) - 1 if signed else (1 << 64) - 1
    elif pad == 2:
        if listed_float:
            raw = int(max_finite_bits(dt)) | (1 << (width - 1))
        elif signed:
            raw = 1 << (width - 1)
        else:  # unsigned types are listed as 0; the otherwise arm truncates to 0 too
            raw = 0 if info(dt).type_class.name == "UNSIGNED" else 1 << 63
    else:
        raise ValueError(f"PadValue {pad} has no value (3 is Null)")
    raw &= width_mask(dt)
    return from_bits(np.array(raw, np.uint64), dt)[()]


def to_f64(dt: DataType, a: np.ndarray) -> np.ndarray:
    """Exact float64 values of a floating carrier array (NaN for every NaN)."""
    return decode(DataType(dt), to_bits(a))


def round_float(
    dt: DataType,
    x: np.ndarray,
    rmode: int = RNE,
    *,
    sat: bool = False,
    tininess_before: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """Round exact float64 values to floating ``dt``: (carrier array, per-element flags).

    ``rmode`` is the B.DATR code (0 and 1 RNE, 2 RTZ, 3 RTM, 4 RTP, 5 RNA, 6 RTO,
    7 RHB). Flags are OF/UF/NX from the rounding, NV for a signalling float64 NaN or a
    NaN/zero/negative into E8M0. Special inputs: NaN -> canonical NaN (+0 and NV for
    formats without NaN); Inf -> Inf, or for Inf-less formats the overflow rule
    (``sat``: signed maximum, else canonical NaN or signed maximum) with OF|NX; E8M0
    follows ``ReferenceFloatToE8M0``. UF uses after-rounding tininess unless
    ``tininess_before`` (the matrix/quantization reference encoders detect before).
    """
    dt = DataType(dt)
    x = np.asarray(x, np.float64)
    bits, flags = _fa.round_f64(dt, x, rmode or RNE, sat, tininess_before)
    return from_bits(bits, dt), flags


# ---------------------------------------------------------------- integer helpers


@cache
def _int_facts(dt: DataType) -> tuple[int, bool, np.dtype]:
    """(width, signed, the dtype integer arithmetic runs in) of an integer DataType:
    the carrier, or int8/uint8 for packed 4-bit lanes."""
    i = info(dt)
    work = np.dtype(np.int8 if i.is_signed else np.uint8) if i.bits == 4 else i.carrier
    return i.bits, i.is_signed, work


def _int_info(dt: DataType) -> tuple[int, bool]:
    width, signed, _ = _int_facts(dt)
    return width, signed


def _native(dt: DataType, a: np.ndarray) -> np.ndarray:
    """The integer carrier, widened to int8/uint8 for packed 4-bit lanes."""
    width, _, work = _int_facts(dt)
    if width == 4:
        return np.asarray(a).astype(work)
    if isinstance(a, np.ndarray) and a.dtype == work:
        return a
    return np.asarray(a).astype(work, copy=False)


def _narrow(dt: DataType, r: np.ndarray) -> np.ndarray:
    """Back to the carrier; 4-bit lanes wrap modulo 16 first (NormalizeTileInteger)."""
    width, signed, _ = _int_facts(dt)
    if width == 4:
        u = r.astype(np.int64) & 0xF
        if signed:
            u = np.where(u >= 8, u - 16, u)
        return u.astype(info(dt).carrier)
    return r


_WRAPPING = {"add": np.add, "sub": np.subtract, "mul": np.multiply}
_BITWISE = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}


def _int_binary(op: str, dt: DataType, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``TileIntegerBinaryValue`` / ``TileIntegerDivRemValue`` at the element width."""
    width, signed = _int_info(dt)
    # same-dtype operands broadcast in the ufuncs themselves (a scalar operand is
    # (P, 1, 1)); the result has the broadcast shape
    a, b = _native(dt, a), _native(dt, b)
    ut = bits_dtype(a.dtype.itemsize * 8)
    au, bu = a.view(ut), b.view(ut)
    if op in ("add", "sub", "mul"):
        # unsigned numpy array arithmetic wraps modulo the container width (D5)
        r = _WRAPPING[op](au, bu).view(a.dtype)
    elif op == "max":  # integers: np.maximum/minimum are the ordered selection
        r = np.maximum(a, b)
    elif op == "min":
        r = np.minimum(a, b)
    elif op in ("and", "or", "xor"):
        r = _BITWISE[op](au, bu).view(a.dtype)
    elif op in ("shl", "shr"):
        # TileIntegerShiftAmount: the low log2(width) bits of the raw count
        cnt = (bu & ut.type(width - 1)).astype(ut)
        if op == "shl":
            r = (au << cnt).astype(ut).view(a.dtype)
        else:
            r = (a >> cnt.astype(a.dtype)).astype(a.dtype)  # arithmetic iff signed
    elif op in ("div", "rem"):
        r = _int_divrem(op, a, b, signed, ut)
    else:
        raise ValueError(f"unknown integer binary op {op!r}")
    return _narrow(dt, r)


def _int_divrem(
    op: str, a: np.ndarray, b: np.ndarray, signed: bool, ut: np.dtype
) -> np.ndarray:
    """``TileIntegerDivRemValue``: truncating division, floor modulo for signed TREM."""
    if np.any(b == 0):
        raise SemanticError(f"T{op.upper()} has an integer zero divisor")
    if not signed:
        return (a // b) if op == "div" else (a % b)
    if not (b == -1).any():
        # without a -1 divisor nothing overflows: fmod is the truncated remainder, so
        # (a - fmod) / b is exact and floor division gives the truncated quotient;
        # np.remainder is the floor modulo (the divisor's sign)
        if op == "div":
            return (a - np.fmod(a, b)) // b
        return np.remainder(a, b)
    u64 = np.uint64
    a64, b64 = a.astype(np.int64).view(u64), b.astype(np.int64).view(u64)
    an, bn = a < 0, b < 0
    qm = np.where(an, u64(0) - a64, a64) // np.where(bn, u64(0) - b64, b64)
    # ScalarDivideSigned on XLEN words, then the element width: INT_MIN / -1 wraps
    q = np.where(an != bn, u64(0) - qm, qm).astype(ut).view(a.dtype)
    if op == "div":
        return q
    r = (a.view(ut) - q.view(ut) * b.view(ut)).astype(ut).view(a.dtype)
    fix = (r != 0) & ((r < 0) != bn)  # TileSignedModulo: take the divisor's sign
    return np.where(fix, (r.view(ut) + b.view(ut)).astype(ut).view(a.dtype), r)


def _int_unary(op: str, dt: DataType, a: np.ndarray) -> np.ndarray:
    """``TileIntegerUnaryValue``: abs and neg wrap, not is bitwise, relu clamps at 0."""
    _, signed = _int_info(dt)
    x = _native(dt, a)
    ut = bits_dtype(x.dtype.itemsize * 8)
    xu = x.view(ut)
    neg = (ut.type(0) - xu).astype(ut).view(x.dtype)
    if op == "not":
        r = (~xu).view(x.dtype)
    elif op == "neg":
        r = neg
    elif op == "abs":
        r = np.where(x < 0, neg, x) if signed else x
    elif op == "relu":
        r = np.where(x < 0, x.dtype.type(0), x) if signed else x
    else:
        raise ValueError(f"{op} is floating-only")
    return _narrow(dt, np.asarray(r, x.dtype))


# ---------------------------------------------------------------- public operations

_BINARY_OPS = frozenset(
    {"add", "sub", "mul", "div", "rem", "max", "min", "and", "or", "xor", "shl", "shr"}
)


def binary(
    op: str, dt: DataType, a: np.ndarray, b: np.ndarray, *, exact: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """Typed elementwise ``a op b`` at the element type: (result, status (P,)).

    Integers: add/sub/mul wrap, div truncates (INT_MIN/-1 wraps), signed rem is floor
    modulo, shifts use the low log2(width) count bits, a zero divisor raises
    :class:`SemanticError`. Floats: see :func:`.floatarith.float_binary`; and/or/xor
    on a floating type act on the raw bits (``TileCarrierBinaryValue``).

    FP64/FP32/FP16/BF16 add, sub, mul, div, max and min take the bit-identical native
    fast path of :mod:`.fastpath` unless ``exact`` (or :func:`.fastpath.exact_only`)
    asks for the exact engine itself.
    """
    if not exact and _fp._enabled:
        fast = _fp.binary(op, dt, a, b)
        if fast is not None:
            return fast
    if op not in _BINARY_OPS:
        raise ValueError(f"unknown binary op {op!r}")
    a = np.asarray(a)
    b = np.asarray(b)
    p = a.shape[0] if a.ndim else 1
    if _is_float(dt):
        dt = DataType(dt)
        if op in ("and", "or", "xor"):
            ab, bb = np.broadcast_arrays(to_bits(a), to_bits(b))
            f = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[op]
            return from_bits(f(ab, bb), dt), no_status(p)
        if op in ("shl", "shr"):
            raise ValueError(f"{op} is integer-only")
        r, flags = _fa.float_binary(op, dt, a, b)
        return r, fold_flags(flags)
    return _int_binary(op, dt, a, b), no_status(p)


_UNARY_OPS = frozenset({"abs", "neg", "not", "exp", "log", "recip", "sqrt", "rsqrt", "relu"})


def unary(
    op: str, dt: DataType, a: np.ndarray, *, exact: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """Typed elementwise unary op: (result, status (P,)).

    Integers (``TileIntegerUnaryValue``): abs and neg wrap, not is bitwise, relu clamps
    negatives to 0. Floats: abs/neg act on the sign bit only (no status), relu gives +0
    for negatives and -0, the canonical NaN for NaN (NV if signalling); the SFU ops
    follow ``TileSFUUnarySpecialValue`` then the D5 profile (:mod:`.floatarith`).

    FP64/FP32/FP16/BF16 sqrt, recip and relu and FP32/FP16/BF16 exp, log and rsqrt take
    the bit-identical fast path of :mod:`.fastpath` unless ``exact`` (or
    :func:`.fastpath.exact_only`); FP64 exp, log and rsqrt are correctly rounded
    (:mod:`.correct64`).
    """
    if not exact and _fp._enabled:
        fast = _fp.unary(op, dt, a)
        if fast is not None:
            return fast
    dt = DataType(dt)
    if op not in _UNARY_OPS:
        raise ValueError(f"unknown unary op {op!r}")
    a = np.asarray(a)
    p = a.shape[0] if a.ndim else 1
    if not is_float(dt):
        return _int_unary(op, dt, a), no_status(p)
    bits = to_bits(a).astype(np.uint64)
    if op in ("abs", "neg"):
        if dt == DataType.E8M0:
            return a.copy(), no_status(p)
        sign = np.uint64(1 << (FORMAT_SIGN_BIT[dt]))
        r = bits & ~sign if op == "abs" else bits ^ sign
        return from_bits(r, dt), no_status(p)
    if op == "not":
        raise ValueError("not is integer-only")
    if op == "relu":
        c = classify(dt, bits)
        val = decode(dt, bits)
        r = np.where(c.neg | c.zero | (val <= 0), np.uint64(0), bits)
        r = np.where(c.nan, np.uint64(canonical_nan(dt)), r)
        return from_bits(r, dt), fold_status(c.snan, NV)
    r, flags = _fa.float_unary(op, dt, a)
    return r, fold_flags(flags)


FORMAT_SIGN_BIT: dict[DataType, int] = {
    dt: info(dt).bits - 1 if dt not in (DataType.E3M2, DataType.E2M3) else 5
    for dt in DataType
    if info(dt).is_float
}

_CMODES = {0: "EQ", 1: "NE", 2: "LT", 3: "GT", 4: "LE", 5: "GE"}


def compare(
    cmode: int, dt: DataType, a: np.ndarray, b: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Typed comparison ``a CMODE b`` (0 EQ, 1 NE, 2 LT, 3 GT, 4 LE, 5 GE).

    Floats (``TileProfileFloatingCompare``): a NaN operand makes every relation false
    except NE, a signalling NaN sets NV, and +0 equals -0. Returns (bool array, status).
    """
    if _fp._enabled and cmode in _CMODES:
        fast = _fp.compare(cmode, dt, a, b)
        if fast is not None:
            return fast
    dt = DataType(dt)
    if cmode not in _CMODES:
        raise ValueError(f"CMode {cmode} is reserved")
    a = np.asarray(a)
    b = np.asarray(b)
    p = a.shape[0] if a.ndim else 1
    if is_float(dt):
        ab, bb = np.broadcast_arrays(to_bits(a), to_bits(b))
        ca, cb = classify(dt, ab), classify(dt, bb)
        x, y = decode(dt, ab), decode(dt, bb)
        status = fold_status(ca.snan | cb.snan, NV)
        unordered = ca.nan | cb.nan
    else:
        x, y = np.broadcast_arrays(a, b)
        status = no_status(p)
        unordered = np.zeros(x.shape, bool)
    with np.errstate(invalid="ignore"):
        fn = (np.equal, np.not_equal, np.less, np.greater, np.less_equal, np.greater_equal)
        rel = fn[cmode](x, y)
    rel = np.where(unordered, cmode == 1, rel)
    return np.asarray(rel, bool), status


def scalar_operand(dt: DataType, gpr: np.ndarray) -> np.ndarray:
    """(P, 1, 1) carrier scalar from the low element-width raw bits of each PE's GPR.

    ``TileRawElementValue``: bits above the element width never participate (packed
    4-bit types keep the low nibble; 6-bit floats keep the low byte, whose two high bits
    are then an invalid encoding for the executor to reject). The result is read-only
    and shared between calls with the same values (a small table: GPR operands repeat).
    """
    g = np.asarray(gpr)
    if g.dtype.kind not in "ui":
        g = g.astype(np.uint64)
    key = (dt, g.dtype.kind, tuple(g.reshape(-1).tolist()))
    s = _SCALARS.get(key)
    if s is None:
        dt = DataType(dt)
        bits = info(dt).bits
        raw = g.astype(np.uint64).reshape(-1)
        raw = raw & np.uint64((1 << bits) - 1) if bits < 64 else raw
        s = np.ascontiguousarray(from_bits(raw, dt).reshape(-1, 1, 1))
        s.flags.writeable = False
        if len(_SCALARS) >= 4096:  # GPR values come and go: keep the table bounded
            _SCALARS.clear()
        _SCALARS[key] = s
    return s


#: (DataType, GPR kind, per-PE GPR values) -> the read-only scalar operand
_SCALARS: dict[tuple[object, str, tuple[int, ...]], np.ndarray] = {}


def float_parts(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(neg, M, E) with |x| = M * 2**E for finite float64 x (re-exported helper)."""
    return parts_of(x)


def encode_exact(
    dt: DataType,
    neg: np.ndarray,
    m: np.ndarray,
    e: np.ndarray,
    rmode: int = RNE,
    sat: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """Round the exact integer-scaled value (-1)**neg * M * 2**E to floating ``dt``."""
    bits, flags = encode_parts(dt, neg, m, e, np.zeros(np.shape(m), bool), rmode or RNE, sat)
    return from_bits(bits, dt), flags
