"""Fast paths of the floating semantics: native numpy arithmetic, certified per element.

The exact engine (:mod:`.floatarith` on :mod:`.floatfmt`) forms every result from an
exact parts representation and rounds it with integer arithmetic: correct for every
format and mode, but ~1,000 times slower than numpy. For FP64, FP32, FP16 and BF16 the
reference profile (DECISIONS D5: IEEE, round to nearest even, after-rounding tininess,
canonical NaNs) coincides with IEEE hardware arithmetic on every *ordinary* element, so
this module computes natively and proves, element by element, which elements are
ordinary; the few others (NaN/Inf operands or results, overflow, results near the
underflow threshold, ranges where a check would not be exact) are handed to the exact
engine as one 1-D subset. Results and status bits are identical to the engine's:
``tests/isa/test_semantics_fastpath.py`` compares them bit for bit.

Why the native values are the correctly rounded ones:

* FP32/FP64: numpy's ``+ - * /`` and ``sqrt`` are the IEEE operations of the carrier,
  rounded once to nearest even (the platform runs with default rounding, no FTZ/DAZ).
* FP16/BF16 are computed in float32 and narrowed with round to nearest even. The two
  operands are exact in float32, and the float32 result rounded again is the correctly
  rounded p-bit result: products are exact in float32 (at most 22 bits); for sums,
  quotients and square roots of p-bit numbers (p <= 11) the exact value is never within
  2**-24 relative of a p-bit rounding boundary unless it lies on it, so the first
  rounding cannot move it across one ("double rounding is innocuous" for 24 >= 2p + 2,
  Figueroa 1995; numpy's own float16 arithmetic relies on the same fact). Results whose
  float32 form could be subnormal are suspects (below).
* exp, log and rsqrt are *defined* by the engine as numpy's FP64 function rounded once
  to the element type; the fast path evaluates the very same numpy call on the same
  float64 operands and rounds it once with a correct float64 -> type conversion. (At
  FP64 the engine returns the correctly rounded value instead, :mod:`.correct64`; those
  three are not accelerated.)

Why the status bits are the engine's:

* The clean path (FP32 ``+ - * /``, FP64 ``+ -``): when both operands hold no NaN or
  infinity (:func:`_finite_operand`, remembered per immutable array, so a published tile
  is scanned once) and the native operation raised no IEEE overflow, underflow,
  divide-by-zero or invalid exception (:func:`_raising`: numpy reads the hardware flags
  once per call), no element can have NV, DZ, OF or UF and every result is finite. Only
  NX is left, decided exactly per PE: a few elements of each PE are tested as Python
  floats (:func:`_clean`), and PEs without an inexact one among them in full.
* Otherwise each element is classified: NaN/Inf operands or results, overflow, and
  results below twice the smallest normal are suspects. Small results of FP32/FP16
  products and quotients are settled natively (:func:`_tiny_band`: exact products in
  float64 decide inexactness and after-rounding tininess); all other suspects come from
  the engine, as one subset.
* The rest can only raise NX, decided exactly: for sums the Fast2Sum-based test
  ``(r - x != y) | (r - y != x)`` (if r = x + y exactly both differences are exact and
  equal; otherwise the difference taken from the operand of larger magnitude is exact,
  Sterbenz/Dekker, and differs); for products, quotients and square roots
  ``r*y == x``-style identities evaluated where the product is exact (float64 for FP32;
  for FP16/BF16 the equivalent test on the low float32 bits, see :func:`_low_bits`);
  FP64 products use Dekker's exact TwoProduct inside a safe exponent range.
* NX is a per-PE OR: a PE is settled by the first inexact element found in it, so the
  cost depends on the data (exact data is tested in full), never the answer.

Fast paths can be switched off (:func:`exact_only`) to obtain the engine's results.
"""

from __future__ import annotations

import importlib
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache, cached_property, partial
from typing import Any

import numpy as np

from ..datatypes import DataType, info
from . import floatarith as _fa
from .floatfmt import CANONICAL_NAN, NV, NX, OF, UF

Result = tuple[np.ndarray, np.ndarray]
_Check = Callable[..., np.ndarray]

__all__ = [
    "binary",
    "broadcast_minmax",
    "clean_kernel",
    "compare",
    "enabled",
    "exact_only",
    "finite",
    "fold",
    "known_finite",
    "probe_sample",
    "remember_finite",
    "unary",
]


def _ieee_native() -> bool:
    """Native float arithmetic rounds to nearest even and keeps subnormals (no FTZ/DAZ):
    the premise of every fast path. Checked once at import; otherwise fast paths stay
    off and the exact engine runs everything."""
    f32, f64 = np.float32, np.float64
    with np.errstate(all="ignore"):
        one = np.array([1.0, 1.0, -1.0], f32)
        got = one + np.array([2.0**-24, 3 * 2.0**-25, -3 * 2.0**-25], f32)
        rne = got.tolist() == [1.0, 1.0 + 2.0**-23, -1.0 - 2.0**-23]
        sub32 = np.array([2.0**-126, 2.0**-149], f32) * np.array([0.5, 2.0], f32)
        sub64 = np.array([2.0**-1022, 2.0**-1074], f64) * np.array([0.5, 2.0], f64)
    return (
        rne
        and sub32.tolist() == [2.0**-127, 2.0**-148]
        and sub64.tolist()
        == [
            2.0**-1023,
            2.0**-1073,
        ]
    )


_enabled = _ieee_native()


def enabled() -> bool:
    """Whether fast paths are in use (False inside :func:`exact_only`)."""
    return _enabled


@contextmanager
def exact_only() -> Iterator[None]:
    """Route every semantics call through the exact engine (for differential tests)."""
    global _enabled
    old, _enabled = _enabled, False
    try:
        yield
    finally:
        _enabled = old


# ---------------------------------------------------------------- quiet floating point

# numpy >= 2 keeps errstate in a context variable; setting it directly costs ~0.2 us,
# the errstate context manager ~1.7 us (which matters for 1x8 tiles)
try:
    _EXTOBJ: Any = importlib.import_module("numpy._core._ufunc_config")._extobj_contextvar
except (ImportError, AttributeError):  # pragma: no cover - numpy < 2
    _EXTOBJ = None
if _EXTOBJ is not None:
    with np.errstate(all="ignore"):
        _QUIET: Any = _EXTOBJ.get()
    with np.errstate(all="raise"):
        _RAISE: Any = _EXTOBJ.get()


def _quiet(fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)`` with numpy floating-point warnings off (overflow and invalid
    operations are expected here: they are the suspects, settled by the engine)."""
    if _EXTOBJ is None:  # pragma: no cover
        with np.errstate(all="ignore"):
            return fn(*args)
    token = _EXTOBJ.set(_QUIET)
    try:
        return fn(*args)
    finally:
        _EXTOBJ.reset(token)


def _raising(ufunc: np.ufunc, *args: np.ndarray) -> np.ndarray | None:
    """``ufunc(*args)``, or None when the operation raised an IEEE overflow, underflow
    (tiny and inexact), divide-by-zero or invalid exception on any element.

    numpy reads the hardware exception flags once after the whole loop, so this costs
    nothing per element. With finite operands, no flag means: every result is finite,
    no element overflowed, divided by zero, was invalid or underflowed inexactly.
    """
    if _EXTOBJ is None:  # pragma: no cover
        try:
            with np.errstate(all="raise"):
                return ufunc(*args)
        except FloatingPointError:
            return None
    token = _EXTOBJ.set(_RAISE)
    try:
        return ufunc(*args)
    except FloatingPointError:
        return None
    finally:
        _EXTOBJ.reset(token)


# ---------------------------------------------------------------- known-finite operands


class _Known:
    """What is known about one immutable operand: it is finite; its probe sample."""

    __slots__ = ("ref", "sample")

    def __init__(self, ref: weakref.ref[np.ndarray]) -> None:
        self.ref = ref
        self.sample: list[list[float]] | None = None


#: id -> facts about immutable arrays known to hold no NaN and no infinity
_FINITE: dict[int, _Known] = {}


def _forget(key: int, ref: weakref.ref[np.ndarray]) -> None:
    known = _FINITE.get(key)
    if known is not None and known.ref is ref:
        del _FINITE[key]


def _immutable(a: np.ndarray) -> bool:
    """True when ``a``'s elements can no longer change: ``a`` is read-only and owns its
    memory or views a read-only owner (the executor publishes every tile payload
    read-only and never makes it writeable again, and numpy refuses to make a view of a
    read-only array writeable)."""
    if a.flags.writeable:
        return False
    owner = a.base
    if owner is None:
        return True
    return isinstance(owner, np.ndarray) and owner.base is None and not owner.flags.writeable


def _finite_operand(a: np.ndarray) -> bool:
    """No element of ``a`` is NaN or infinite; remembered for immutable arrays, so a
    published tile is scanned once however often it is read (two SIMD reductions, a
    NaN propagates through both and an infinity is an extremum)."""
    key = id(a)
    known = _FINITE.get(key)
    if known is not None and known.ref() is a:
        return True
    if _NOT_FINITE.get(key, _dead)() is a:
        return False
    ok = bool(a.max() < np.inf) and bool(a.min() > -np.inf)
    if _immutable(a):
        if ok:
            _remember(key, a)
        else:  # remembered too: a tile of specials is read again and again
            if len(_NOT_FINITE) > 1024:
                for k in [k for k, v in _NOT_FINITE.items() if v() is None]:
                    del _NOT_FINITE[k]
            _NOT_FINITE[key] = weakref.ref(a)
    return ok


#: id -> immutable arrays known to hold a NaN or an infinity (dead references are only
#: dropped in bulk: a reused id then points at another array, which the check rejects)
_NOT_FINITE: dict[int, weakref.ref[np.ndarray]] = {}


def _dead() -> None:
    return None


def _remember(key: int, a: np.ndarray) -> None:
    if len(_FINITE) > 4096:  # only ever dead entries pile up
        for k in [k for k, v in _FINITE.items() if v.ref() is None]:
            del _FINITE[k]
    _FINITE[key] = _Known(weakref.ref(a, partial(_forget, key)))


def finite(a: np.ndarray) -> bool:
    """True when no element of ``a`` is NaN or infinite (scanned unless already known;
    remembered for immutable arrays)."""
    return _finite_operand(a)


def known_finite(a: np.ndarray) -> bool:
    """True when ``a`` is an immutable array already known to hold no NaN and no
    infinity (scanned before, or declared by :func:`remember_finite`); never scans."""
    known = _FINITE.get(id(a))
    return known is not None and known.ref() is a


def remember_finite(a: np.ndarray) -> None:
    """Declare that the immutable array ``a`` holds no NaN and no infinity, so operations
    reading it skip the scan. For callers that proved it without scanning, e.g. the
    executor publishing an IEEE sum of finite operands that raised no OF/NV/DZ (the only
    ways such a result can be infinite or NaN). A writable array is ignored (its
    elements could still change)."""
    if _immutable(a):
        _remember(id(a), a)


#: id -> (weak reference, whether every element is a non-zero number) of immutable
#: arrays: the min/max operand fact (see :func:`_nonzero_operand`)
_NONZERO: dict[int, tuple[weakref.ref[np.ndarray], bool]] = {}


def _forget_nonzero(key: int, ref: weakref.ref[np.ndarray]) -> None:
    known = _NONZERO.get(key)
    if known is not None and known[0] is ref:
        del _NONZERO[key]


def _nonzero_operand(a: np.ndarray) -> bool:
    """True when the immutable array ``a`` holds neither a NaN nor a zero (its smallest
    magnitude is positive; a NaN propagates through the reduction), scanned once per
    array and remembered either way. A writable array is never scanned: False."""
    key = id(a)
    known = _NONZERO.get(key)
    if known is not None and known[0]() is a:
        return known[1]
    if not _immutable(a):
        return False
    ok = bool(a.size) and bool(np.abs(a).min() > 0)
    if len(_NONZERO) > 4096:  # only ever dead entries pile up
        for k in [k for k, v in _NONZERO.items() if v[0]() is None]:
            del _NONZERO[k]
    _NONZERO[key] = (weakref.ref(a, partial(_forget_nonzero, key)), ok)
    return ok


# ---------------------------------------------------------------- formats


@cache
def _bf16() -> np.dtype:
    """The bfloat16 carrier (ml_dtypes is imported on first use, not with the ISA)."""
    return info(DataType.BF16).carrier


_F16, _F32, _F64 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)


def _same(a: np.ndarray) -> np.ndarray:
    return a


def _bf16_from_f64(y: np.ndarray) -> np.ndarray:
    """float64 -> BF16 rounded once to nearest even, for values in BF16's normal range.

    ``astype(bfloat16)`` goes through float32 (two roundings), so the rounding is done
    on the float64 bits: add half an ulp of bit 45 (minus one unless the kept lsb is
    odd), drop 45 bits, rebias the exponent (1023 - 127 = 896). Exact for zeros and for
    results in the normal range or overflowing to Inf; anything smaller becomes a zero
    (callers treat those elements as suspects).
    """
    u = np.ascontiguousarray(y, np.float64).view(np.uint64)
    sign = (u >> np.uint64(48)) & np.uint64(0x8000)
    mag = u & np.uint64(0x7FFFFFFFFFFFFFFF)
    mag = (
        mag + np.uint64(0xFFFFFFFFFFF) + ((mag >> np.uint64(45)) & np.uint64(1))
    ) >> np.uint64(45)
    normal = mag >= np.uint64(897 << 7)  # zero (and anything below the normal range) -> 0
    mag = np.minimum(mag - np.uint64(896 << 7), np.uint64(0x7F80)) * normal  # above: Inf
    return (sign | mag).astype(np.uint16).view(_bf16())


@dataclass(frozen=True, eq=False)
class _Fmt:
    """How one DataType is computed natively (``carrier`` resolved on first use)."""

    dt: DataType
    comp: np.dtype  # native compute type: the carrier, or float32 for FP16/BF16
    min_normal: float
    max_finite: float
    #: bits of the float32 fraction below the type's precision (0: carrier is comp)
    low_mask: int
    widen: Callable[[np.ndarray], np.ndarray]  # carrier -> comp, exact
    narrow: Callable[[np.ndarray], np.ndarray]  # comp -> carrier, RNE
    narrow64: Callable[[np.ndarray], np.ndarray]  # float64 -> carrier, RNE

    @property
    def same(self) -> bool:
        return self.low_mask == 0

    @cached_property
    def carrier(self) -> np.dtype:
        return info(self.dt).carrier


#: float32 value of every FP16 encoding: a table lookup widens FP16 about 2.5 times
#: faster than numpy's float16 -> float32 cast, which is scalar code on many builds
_F16_TO_F32 = np.arange(1 << 16, dtype=np.uint16).view(np.float16).astype(np.float32)


def _widen_f16(a: np.ndarray) -> np.ndarray:
    return np.take(_F16_TO_F32, a.view(np.uint16))


def _astype(dt: np.dtype | Callable[[], np.dtype]) -> Callable[[np.ndarray], np.ndarray]:
    """``a.astype(dt)``; ``dt`` may be a function giving the dtype on first use."""
    if isinstance(dt, np.dtype):

        def conv(a: np.ndarray) -> np.ndarray:
            return a.astype(dt)

        return conv

    def lazy(a: np.ndarray) -> np.ndarray:
        return a.astype(dt())

    return lazy


FORMATS: dict[DataType, _Fmt] = {
    DataType.FP64: _Fmt(DataType.FP64, _F64, 2.0**-1022,
                        float(np.finfo(np.float64).max), 0, _same, _same, _same),
    DataType.FP32: _Fmt(DataType.FP32, _F32, 2.0**-126,
                        float(np.finfo(np.float32).max), 0, _same, _same, _astype(_F32)),
    DataType.FP16: _Fmt(DataType.FP16, _F32, 2.0**-14, 65504.0, 0x1FFF,
                        _widen_f16, _astype(_F16), _astype(_F16)),
    # the largest bfloat16, (2 - 2**-7) * 2**127 (ml_dtypes.finfo(bfloat16).max)
    DataType.BF16: _Fmt(DataType.BF16, _F32, 2.0**-126, (2 - 2**-7) * 2.0**127, 0xFFFF,
                        _astype(_F32), _astype(_bf16), _bf16_from_f64),
}  # fmt: skip


# ---------------------------------------------------------------- shared machinery


def _to3(v: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """``v`` broadcast to ``shape`` and viewed as (P, R, C): always a view."""
    if v.shape != shape:
        v = np.broadcast_to(v, shape)
    if len(shape) == 3:
        return v
    if len(shape) == 2:
        return v[:, None, :]
    return v[:, None, None]


def _all_finite(w: np.ndarray) -> bool:
    """True when no element of ``w`` is NaN or infinite.

    Two SIMD reductions (a NaN propagates through both, an infinity is an extremum) are
    cheaper than ``isfinite().all()``, which writes a mask first. (A BLAS dot product
    with zeros would be one pass, but multithreaded BLAS can stall on a busy machine.)
    """
    return bool(w.max() < np.inf) and bool(w.min() > -np.inf)


def _low_bits(mask: int, w: np.ndarray) -> np.ndarray:
    """True where a float32 value has bits below the p-bit precision of FP16/BF16.

    For a normal-range result this is exactly "not representable", i.e. the correctly
    rounded result differs from ``w``. Used on exact products, on sums together with the
    Fast2Sum test, and on float32 quotients and square roots: an inexact quotient or
    square root of p-bit numbers is at least 2**(e - 2p) away from every p-bit number
    while float32 rounding moves it by at most 2**(e - 24), so its float32 value has low
    bits set exactly when the true result is not a p-bit number.
    """
    return (w.view(np.uint32) & np.uint32(mask)) != 0


_NX_SHIFT = np.uint8(NX.bit_length() - 1)


def _nx_bits(hit: Any) -> np.ndarray:
    """bool (P,) -> uint8 (P,) holding NX where True."""
    return np.left_shift(hit.view(np.uint8), _NX_SHIFT)


def _nx_status(
    check: _Check, args: tuple[np.ndarray, ...], sus: np.ndarray | None
) -> np.ndarray:
    """uint8 (P,) with NX for every PE where ``check`` finds an inexact element.

    ``args`` are (P, R, C) arrays; ``sus`` masks elements the engine settles (their
    check value is meaningless). Without suspects, the first row of every PE is
    checked first and only PEs still without an inexact element are checked in full.
    """
    hit: np.ndarray
    if sus is None:
        hit = np.asarray(check(*(v[:, 0] for v in args)).any(axis=1))
        if args[0].shape[1] > 1 and not hit.all():
            todo = np.flatnonzero(~hit)
            rest = check(*(v[todo, 1:] for v in args))
            hit[todo] = rest.reshape(len(todo), -1).any(axis=1)
    else:
        # a PE whose every element is a suspect has nothing left to check
        p = sus.shape[0]
        todo = np.flatnonzero(~sus.reshape(p, -1).all(axis=1))
        hit = np.zeros(p, bool)
        if todo.size == p:
            m = check(*args) & ~sus
            hit = m.reshape(p, -1).any(axis=1)
        elif todo.size:
            m = check(*(v[todo] for v in args)) & ~sus[todo]
            hit[todo] = m.reshape(todo.size, -1).any(axis=1)
    return _nx_bits(hit)


def _patch(
    exact: Callable[..., tuple[np.ndarray, np.ndarray]],
    sus: np.ndarray,
    r: np.ndarray,
    status: np.ndarray,
    *operands: np.ndarray,
) -> None:
    """Replace the suspect elements of ``r`` by the engine's results; OR their flags."""
    idx = np.nonzero(sus)
    res, flags = exact(*(o[idx] for o in operands))
    r[idx] = res
    np.bitwise_or.at(status, idx[0], flags)


# ---------------------------------------------------------------- exactness checks


def _add_check(x: np.ndarray, y: np.ndarray, s: np.ndarray) -> np.ndarray:
    return ((s - x) != y) | ((s - y) != x)


def _sub_check(x: np.ndarray, y: np.ndarray, s: np.ndarray) -> np.ndarray:
    # s = x - y = x + (-y): the add test with -y (negation is exact)
    return ((x - s) != y) | ((s + y) != x)


def _mul_check64(x: np.ndarray, y: np.ndarray, r: np.ndarray) -> np.ndarray:
    # FP32: the float64 product of two float32 values is exact (48 bits)
    return r.astype(np.float64) != x.astype(np.float64) * y


def _div_check64(x: np.ndarray, y: np.ndarray, r: np.ndarray) -> np.ndarray:
    # FP32: r = x / y exactly iff r * y == x, and r * y is exact in float64
    return r.astype(np.float64) * y != x


def _sqrt_check64(x: np.ndarray, r: np.ndarray) -> np.ndarray:
    r64 = r.astype(np.float64)
    return r64 * r64 != x


def _two_prod_ne(p: np.ndarray, q: np.ndarray, target: np.ndarray) -> np.ndarray:
    """FP64: p * q != target exactly (Dekker TwoProduct; callers keep the safe range)."""
    h, e = _fa.two_prod(p, q)
    return (h != target) | (e != 0)


def _fp64_mul_check(x: np.ndarray, y: np.ndarray, r: np.ndarray) -> np.ndarray:
    return _two_prod_ne(x, y, r)


def _fp64_div_check(x: np.ndarray, y: np.ndarray, r: np.ndarray) -> np.ndarray:
    return _two_prod_ne(r, y, x)


def _fp64_sqrt_check(x: np.ndarray, r: np.ndarray) -> np.ndarray:
    return _two_prod_ne(r, r, x)


#: FP64 TwoProduct is exact when both factors are below 2**995 (the Veltkamp split
#: does not overflow) and the product is at least 2**-960 (its error term is not lost)
_FP64_BIG, _FP64_SMALL = 2.0**995, 2.0**-960


# ---------------------------------------------------------------- binary operations


def _exact_binary(op: str, dt: DataType) -> Callable[..., tuple[np.ndarray, np.ndarray]]:
    def run(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return _fa.float_binary(op, dt, x, y)

    return run


class _Special:
    """What a sum needs to know about one immutable FP32/FP64 operand (P, R, C) that
    may hold NaNs and infinities (see :func:`_nonfinite_sums`)."""

    __slots__ = ("finite_any", "nan", "nan_count", "ref", "snan")

    def __init__(self, ref: weakref.ref[np.ndarray], f: _Fmt, a: np.ndarray) -> None:
        p = a.shape[0]
        self.ref = ref
        self.nan = np.isnan(a)
        self.nan_count = self.nan.reshape(p, -1).sum(axis=1)
        ub = np.dtype(f"u{f.carrier.itemsize}")
        quiet = ub.type(_QUIET_BIT[f.dt])
        self.snan = _any_per_pe(self.nan & ((a.view(ub) & quiet) == 0), p).astype(bool)
        self.finite_any = bool(np.isfinite(a).any())


#: id -> the :class:`_Special` facts of immutable sum operands
_SPECIAL: dict[int, _Special] = {}


def _forget_special(key: int, ref: weakref.ref[np.ndarray]) -> None:
    known = _SPECIAL.get(key)
    if known is not None and known.ref is ref:
        del _SPECIAL[key]


def _special_facts(f: _Fmt, a: np.ndarray) -> _Special | None:
    """The facts of ``a`` (computed once per immutable array), or None for a writable
    one."""
    key = id(a)
    known = _SPECIAL.get(key)
    if known is not None and known.ref() is a:
        return known
    if not _immutable(a):
        return None
    if len(_SPECIAL) > 1024:  # only ever dead entries pile up
        for k in [k for k, v in _SPECIAL.items() if v.ref() is None]:
            del _SPECIAL[k]
    known = _SPECIAL[key] = _Special(weakref.ref(a, partial(_forget_special, key)), f, a)
    return known


def _nonfinite_sums(f: _Fmt, fx: _Special, fy: _Special, s: np.ndarray, p: int) -> Result:
    """Sums (differences) ``s`` of two same-shape operands one of which holds no finite
    element: every element has an infinite or NaN operand, so no result is inexact or
    overflows (:func:`_special_sums`), and what is left is NaN handling. A NaN result
    is the canonical NaN; NV where an operand NaN signals, or where a NaN result has no
    NaN operand (Inf - Inf): a NaN operand always gives a NaN result, so a PE has one
    exactly when it holds more NaN results than elements with a NaN operand."""
    nan = np.isnan(s)
    x_nan, y_nan = bool(fx.nan_count.any()), bool(fy.nan_count.any())
    if x_nan and y_nan:
        operands = fx.nan | fy.nan
    else:
        operands = fx.nan if x_nan else fy.nan
    inf_inf = _any_per_pe(nan > operands, p).astype(bool)  # a NaN without NaN operand
    nv = inf_inf | fx.snan | fy.snan
    if x_nan or y_nan or inf_inf.any():
        ub = np.dtype(f"u{f.carrier.itemsize}")
        _blend(s.view(ub), nan, ub.type(CANONICAL_NAN[f.dt]))
    return s, nv.view(np.uint8) * np.uint8(NV)


def _addsub(op: str, f: _Fmt, a: np.ndarray, b: np.ndarray, p: int) -> Result:
    x, y = f.widen(a), f.widen(b)
    s = np.add(x, y) if op == "add" else np.subtract(x, y)
    if f.same and a.shape == b.shape == s.shape and a.ndim == 3:
        # published operands of which one has no finite element: NaN handling only
        fx = _special_facts(f, a) if not known_finite(a) else None
        fy = _special_facts(f, b) if fx is not None and not known_finite(b) else None
        if fx is not None and fy is not None and not (fx.finite_any and fy.finite_any):
            return _nonfinite_sums(f, fx, fy, s, p)
    # Sums never raise UF (a sum below the smallest normal is exact: both operands are
    # multiples of the smallest subnormal); NaN/Inf results are the only suspects.
    if f.same:
        ok = _all_finite(s)
        r = s
    else:
        # the comp-type sum may be finite while the narrowed one overflows
        ok = bool(np.abs(s).max() <= f.max_finite)
        r = f.narrow(s)
    base = _add_check if op == "add" else _sub_check
    if f.same:
        check: _Check = base
    else:

        def check(x: np.ndarray, y: np.ndarray, s: np.ndarray) -> np.ndarray:
            return base(x, y, s) | _low_bits(f.low_mask, s)

    if ok:
        return r, _nx_status(check, (x, y, s), None)
    sus = ~np.isfinite(s) if f.same else ~(np.abs(s) <= f.max_finite)
    status = _nx_status(check, (x, y, s), sus)
    _special_sums(f, sus, a, b, x, y, r, status)
    return r, status


def _special_sums(
    f: _Fmt,
    sus: np.ndarray,
    a: np.ndarray,
    b: np.ndarray,
    x: np.ndarray,
    y: np.ndarray,
    r: np.ndarray,
    status: np.ndarray,
) -> None:
    """Settle the sums (and differences) whose native result is a NaN, an infinity or
    beyond the largest finite value, natively, as ``floatarith.float_binary`` does:

    * a NaN operand gives the canonical NaN, with NV when either operand is signalling;
    * a NaN result of non-NaN operands is Inf - Inf: the canonical NaN with NV;
    * otherwise an infinite operand gives that (correctly signed) infinity exactly,
      which is the native result, without a flag;
    * finite operands overflowed: the exact sum is beyond the largest finite value, so
      it is inexact (NX), and with round to nearest even its rounded value is an
      infinity exactly when it overflows (OF). The native result is that rounding (the
      comp-type sum rounded again is innocuous, as in the module docstring).

    A tile full of infinities and NaNs so costs a few dense passes (masks over the
    whole tile are cheaper than gathering the suspects), not the exact engine.
    """
    p = status.shape[0]
    ub = np.dtype(f"u{f.carrier.itemsize}")
    quiet = ub.type(_QUIET_BIT[f.dt])
    nan = np.isnan(r)  # a NaN operand or Inf - Inf (only among the suspects)
    if nan.any():
        xnan, ynan = np.isnan(x), np.isnan(y)
        nv = nan & ~(xnan | ynan)  # Inf - Inf
        if xnan.any():
            nv |= xnan & ((a.view(ub) & quiet) == 0)
        if ynan.any():
            nv |= ynan & ((b.view(ub) & quiet) == 0)
        status |= _any_per_pe(nv, p) * np.uint8(NV)
        _blend(r.view(ub), nan, ub.type(CANONICAL_NAN[f.dt]))
        over = sus & ~nan
    else:
        over = sus.copy()
    over &= np.isfinite(x)
    over &= np.isfinite(y)  # finite operands whose sum overflowed
    if over.any():
        status |= _any_per_pe(over, p) * np.uint8(NX)
        status |= _any_per_pe(over & np.isinf(r), p) * np.uint8(OF)


def _blend(bits: np.ndarray, where: np.ndarray, value: np.unsignedinteger) -> None:
    """``bits[where] = value`` in place, as wrapping unsigned arithmetic: numpy's masked
    stores (``where``, ``copyto``, boolean indexing) branch per element and cost ten
    times more on a random mask."""
    d = value - bits
    d *= where.view(np.uint8)
    bits += d


def _any_per_pe(m: np.ndarray, p: int) -> np.ndarray:
    """bool (P, ...) -> uint8 (P,): 1 where the PE has a True element."""
    return np.asarray(m.reshape(p, -1).any(axis=1)).view(np.uint8)


def _muldiv(op: str, f: _Fmt, a: np.ndarray, b: np.ndarray, p: int) -> Result:
    """Products and quotients (recip is ``div`` with a broadcast 1).

    Suspects: NaN/Inf/overflow results (``|w| > max`` or NaN) and results below twice
    the smallest normal (possible UF), except zeros made exact by a zero operand (x*0,
    0*y, 0/y with y finite; x/Inf is a suspect). For FP32 and FP16 the small ones stay
    native (the "tiny band", :func:`_tiny_band`); the rest go to the engine.
    """
    x, y = f.widen(a), f.widen(b)
    w = np.multiply(x, y) if op == "mul" else np.divide(x, y)
    r = f.narrow(w)
    fp64 = f.dt == DataType.FP64
    lo = _FP64_SMALL if fp64 else 2.0 * f.min_normal
    ok = bool(w.max() <= f.max_finite) and bool(w.min() >= -f.max_finite)  # NaN: False
    if ok:
        t = np.abs(w)
        ok = bool(t.min() >= lo)
    unsafe = None
    if fp64:  # keep TwoProduct in its exact range (see _FP64_BIG)
        unsafe = (np.abs(x) > _FP64_BIG) | (np.abs(y) > _FP64_BIG) | (np.abs(w) > _FP64_BIG)
        if op == "div":  # the check multiplies r * y ~ x: x must not be tiny either
            unsafe |= (np.abs(x) < _FP64_SMALL) & (x != 0)
        ok = ok and not unsafe.any()
    if fp64:
        check: _Check = _fp64_mul_check if op == "mul" else _fp64_div_check
    elif f.same:
        check = _mul_check64 if op == "mul" else _div_check64
    else:

        def check(x: np.ndarray, y: np.ndarray, w: np.ndarray) -> np.ndarray:
            # products are exact in float32; quotients: see _low_bits
            return _low_bits(f.low_mask, w)

    if ok:
        return r, _nx_status(check, (x, y, w), None)
    t = np.abs(w)
    # (0/Inf = 0 is exact too, but its check r*y = 0*Inf would be NaN: a suspect)
    zero_ok = ((x == 0) | (y == 0)) if op == "mul" else ((x == 0) & np.isfinite(y))
    small = (t < lo) & ~((t == 0) & zero_ok)
    sus = ~(t <= f.max_finite) | small
    if unsafe is not None:
        sus |= unsafe
    status = _nx_status(check, (x, y, w), sus)
    if f.dt in _TINY_BAND and small.any():
        # small results of finite operands are settled natively (x/Inf is not)
        band = small & np.isfinite(x) & np.isfinite(y)
        _tiny_band(op, f, band, x, y, r, status)
        sus &= ~band
    if sus.any():
        _patch(_exact_binary(op, f.dt), sus, r, status, a, b)
    return r, status


#: p of the types whose tiny results are settled natively, and the after-rounding
#: tininess threshold T = (1 - 2**-(p+1)) * smallest normal: a value rounds, with
#: unbounded exponent, to below the smallest normal exactly when it is below T
_TINY_BAND = {DataType.FP32: 24, DataType.FP16: 11}


def _tiny_threshold(f: _Fmt) -> float:
    return f.min_normal * (1.0 - 2.0 ** -(_TINY_BAND[f.dt] + 1))


def _tiny_band(
    op: str,
    f: _Fmt,
    band: np.ndarray,
    x: np.ndarray,
    y: np.ndarray,
    r: np.ndarray,
    status: np.ndarray,
) -> None:
    """OR the flags of finite results below twice the smallest normal (FP32, FP16).

    Their native values are already right: FP32 is IEEE; an FP16 product is exact in
    float32 and rounded once, an FP16 quotient is rounded twice innocuously (the
    subnormal grid is coarser still). Exactness and tininess are decided in float64,
    where the products involved (at most 49 bits) are exact: a product is inexact iff
    r != x*y, a quotient iff r*y != x; tininess after rounding is |x*y| < T, resp.
    |x| < T*|y|. UF = tiny and inexact, NX = inexact (the engine's definition).
    """
    idx = np.nonzero(band)
    xs, ys = x[idx].astype(np.float64), y[idx].astype(np.float64)
    rs = f.widen(r[idx]).astype(np.float64)
    thr = _tiny_threshold(f)
    if op == "mul":
        exact = xs * ys
        inexact = rs != exact
        tiny = np.abs(exact) < thr
    else:
        inexact = rs * ys != xs
        tiny = np.abs(xs) < thr * np.abs(ys)
    flags = np.where(inexact, NX, 0) | np.where(inexact & tiny, UF, 0)
    np.bitwise_or.at(status, idx[0], flags.astype(np.uint8))


def _minmax(op: str, f: _Fmt, a: np.ndarray, b: np.ndarray, p: int) -> Result:
    """``HardwareNumericMinMaxSpecial``: ties keep the left operand, max(+0, -0) = +0,
    min(+0, -0) = -0; any NaN operand goes to the engine.

    FP32/FP64 first try one native ``np.minimum``/``np.maximum``: it is the exact result
    wherever the result is neither a NaN nor a zero (equal non-zero numbers share one
    encoding, so which operand a tie returns does not matter), and it propagates every
    NaN operand. The smallest magnitude of the result is positive exactly when the
    result holds neither (a NaN propagates through the reduction, and NaN > 0 is
    false); otherwise the general path below runs.
    """
    if f.same:
        r = (np.minimum if op == "min" else np.maximum)(a, b)
        if r.size and np.abs(r).min() > 0:
            return r, np.zeros(p, np.uint8)
    x, y = f.widen(a), f.widen(b)
    pick = (x >= y) if op == "max" else (x <= y)
    r = np.where(pick, a, b)
    status = np.zeros(p, np.uint8)
    nan = np.isnan(x) | np.isnan(y)
    zero = r == 0  # only where the result is a zero can the zero rule apply
    if zero.any():
        both = zero & (x == 0) & (y == 0)
        if both.any():
            ub = np.dtype(f"u{f.carrier.itemsize}")
            za, zb = a.view(ub), b.view(ub)
            zr = (za & zb) if op == "max" else (za | zb)  # zeros differ only in the sign
            r.view(ub)[both] = zr[both]
    if nan.any():
        _patch(_exact_binary(op, f.dt), nan, r, status, a, b)
    return r, status


def broadcast_minmax(op: str, dt: DataType, a: np.ndarray, b: np.ndarray) -> Result | None:
    """TMAX/TMIN of a (P, R, C) tile ``a`` with ``b`` broadcast along rows or columns
    ((P, R, 1) or (P, 1, C)), for the row/column expansions: the one native
    ``np.minimum``/``np.maximum`` of :func:`_minmax`, with numpy broadcasting ``b``
    itself (no broadcast view is built), accepted where no result is a NaN or a zero
    (there it is the engine's result, see :func:`_minmax`). None otherwise, or for other
    types: the caller takes :func:`binary`."""
    f = FORMATS.get(dt)
    if (
        not _enabled
        or f is None
        or not f.same
        or op not in ("max", "min")
        or a.dtype != f.carrier
        or b.dtype != f.carrier
        or a.ndim != 3
        or b.ndim != 3
        or a.size == 0
    ):
        return None
    r = _quiet(np.minimum if op == "min" else np.maximum, a, b)
    if r.shape != a.shape:
        return None
    # the min/max of two non-zero numbers is one of them: neither a NaN nor a zero
    # (published tiles are scanned for that once; otherwise the result is)
    if not (_nonzero_operand(a) and _nonzero_operand(b)) and not np.abs(r).min() > 0:
        return None
    return r, np.zeros(a.shape[0], np.uint8)


_BINARY: dict[str, Callable[[str, _Fmt, np.ndarray, np.ndarray, int], Result]] = {
    "add": _addsub,
    "sub": _addsub,
    "mul": _muldiv,
    "div": _muldiv,
    "max": _minmax,
    "min": _minmax,
}


# ---------------------------------------------------------------- clean arithmetic

#: the NX probe looks at the first 16 elements of every PE's first row
_PROBE_AT = (slice(None), 0, slice(None, 16))
#: uint8 (P,) statuses with NX on every PE, copied out (cheaper than building one)
_ALL_NX = {p: np.full(p, NX, np.uint8) for p in range(1, 5)}

_Rows = list[list[float]]
_Hits = Callable[[_Rows, _Rows, _Rows], list[bool]]


def _sample(x: np.ndarray) -> _Rows:
    """The probe sample of an operand as Python floats (kept for immutable operands)."""
    known = _FINITE.get(id(x))
    if known is not None and known.ref() is x:
        if known.sample is None:
            known.sample = x[_PROBE_AT].tolist()
        return known.sample
    return x[_PROBE_AT].tolist()


def _clean(
    clean: tuple[np.ufunc, _Hits, _Check], x: np.ndarray, y: np.ndarray, p: int
) -> Result | None:
    """The clean path (see :func:`binary`): the native result and its NX status, or None
    when the operation raised an IEEE exception.

    The probe ``hits`` tests the first 16 elements of every PE's first row exactly, in
    Python floats (IEEE binary64, which holds these operands and results exactly and
    makes the tests below exact), stopping at the first inexact element: ordinary data
    is inexact almost everywhere, and a few scalar tests cost less than the numpy calls
    of a vectorized probe. PEs where it finds nothing are tested in full by ``full``
    (True exactly at inexact elements).
    """
    ufunc, hits, full = clean
    w = _raising(ufunc, x, y)
    if w is None:
        return None
    hit = hits(_sample(x), _sample(y), w[_PROBE_AT].tolist())
    if all(hit):
        return w, (_ALL_NX[p].copy() if p in _ALL_NX else np.full(p, NX, np.uint8))
    todo = [pe for pe, h in enumerate(hit) if not h]
    found = full(x[todo], y[todo], w[todo]).reshape(len(todo), -1).any(axis=1)
    status = _nx_bits(np.array(hit))
    status[todo] = _nx_bits(found)
    return w, status


# The scalar probes, one per operation (a loop each: a call per element would cost more).
# FP64 sums use the Fast2Sum test of _add_check. FP32 values are binary64 numbers, so a
# binary64 sum that differs from the float32 result proves it inexact (an exact float32
# sum is the exact binary64 sum); products and quotients of two float32 values are
# checked exactly with the exact binary64 product.


def _hits_add32(xs: _Rows, ys: _Rows, ws: _Rows) -> list[bool]:
    out = []
    for xr, yr, wr in zip(xs, ys, ws):
        hit = False
        for a, b, c in zip(xr, yr, wr):
            if c != a + b:
                hit = True
                break
        out.append(hit)
    return out


def _hits_sub32(xs: _Rows, ys: _Rows, ws: _Rows) -> list[bool]:
    out = []
    for xr, yr, wr in zip(xs, ys, ws):
        hit = False
        for a, b, c in zip(xr, yr, wr):
            if c != a - b:
                hit = True
                break
        out.append(hit)
    return out


def _hits_add(xs: _Rows, ys: _Rows, ws: _Rows) -> list[bool]:
    out = []
    for xr, yr, wr in zip(xs, ys, ws):
        hit = False
        for a, b, c in zip(xr, yr, wr):
            if c - a != b or c - b != a:
                hit = True
                break
        out.append(hit)
    return out


def _hits_sub(xs: _Rows, ys: _Rows, ws: _Rows) -> list[bool]:
    out = []
    for xr, yr, wr in zip(xs, ys, ws):
        hit = False
        for a, b, c in zip(xr, yr, wr):
            if a - c != b or c + b != a:
                hit = True
                break
        out.append(hit)
    return out


def _hits_mul32(xs: _Rows, ys: _Rows, ws: _Rows) -> list[bool]:
    out = []
    for xr, yr, wr in zip(xs, ys, ws):
        hit = False
        for a, b, c in zip(xr, yr, wr):
            if c != a * b:
                hit = True
                break
        out.append(hit)
    return out


def _hits_div32(xs: _Rows, ys: _Rows, ws: _Rows) -> list[bool]:
    out = []
    for xr, yr, wr in zip(xs, ys, ws):
        hit = False
        for a, b, c in zip(xr, yr, wr):
            if c * b != a:
                hit = True
                break
        out.append(hit)
    return out


#: the "clean" path: FP32 (+ - * /) and FP64 (+ -) with finite operands whose native
#: operation raised no IEEE exception: (ufunc, scalar probe, vectorized NX test)
_CLEAN: dict[DataType, dict[str, tuple[np.ufunc, _Hits, _Check]]] = {
    DataType.FP32: {
        "add": (np.add, _hits_add32, _add_check),
        "sub": (np.subtract, _hits_sub32, _sub_check),
        "mul": (np.multiply, _hits_mul32, _mul_check64),
        "div": (np.divide, _hits_div32, _div_check64),
    },
    DataType.FP64: {
        "add": (np.add, _hits_add, _add_check),
        "sub": (np.subtract, _hits_sub, _sub_check),
    },
}


#: (DataType, op) -> (format, general path, clean path or None)
_BINARY_PLANS: dict[
    tuple[DataType, str],
    tuple[
        _Fmt,
        Callable[[str, _Fmt, np.ndarray, np.ndarray, int], Result],
        tuple[np.ufunc, _Hits, _Check] | None,
    ],
] = {
    (dt, op): (f, fn, _CLEAN.get(dt, {}).get(op))
    for dt, f in FORMATS.items()
    for op, fn in _BINARY.items()
}


#: a clean-path kernel: (x, y, probe sample of x, of y, out) -> (result, status) or None
CleanKernel = Callable[[np.ndarray, np.ndarray, _Rows, _Rows, np.ndarray | None], Result | None]


def probe_sample(x: np.ndarray) -> _Rows:
    """The first 16 elements of every PE's first row of a (P, R, C) operand as Python
    floats: the sample :func:`clean_kernel` probes (callers keep it with the operand,
    which must not change afterwards)."""
    rows: _Rows = x[_PROBE_AT].tolist()
    return rows


# The first-element tests of the _hits_* probes: every PE's sample row against the
# first result element of each PE.


def _first_add32(xs: _Rows, ys: _Rows, ws: list[float]) -> list[bool]:
    return [c != a[0] + b[0] for a, b, c in zip(xs, ys, ws)]


def _first_sub32(xs: _Rows, ys: _Rows, ws: list[float]) -> list[bool]:
    return [c != a[0] - b[0] for a, b, c in zip(xs, ys, ws)]


def _first_mul32(xs: _Rows, ys: _Rows, ws: list[float]) -> list[bool]:
    return [c != a[0] * b[0] for a, b, c in zip(xs, ys, ws)]


def _first_div32(xs: _Rows, ys: _Rows, ws: list[float]) -> list[bool]:
    return [c * b[0] != a[0] for a, b, c in zip(xs, ys, ws)]


def _first_add(xs: _Rows, ys: _Rows, ws: list[float]) -> list[bool]:
    return [c - a[0] != b[0] or c - b[0] != a[0] for a, b, c in zip(xs, ys, ws)]


def _first_sub(xs: _Rows, ys: _Rows, ws: list[float]) -> list[bool]:
    return [a[0] - c != b[0] or c + b[0] != a[0] for a, b, c in zip(xs, ys, ws)]


_First = Callable[[_Rows, _Rows, list[float]], list[bool]]
_FIRST: dict[DataType, dict[str, _First]] = {
    DataType.FP32: {"add": _first_add32, "sub": _first_sub32, "mul": _first_mul32,
                    "div": _first_div32},
    DataType.FP64: {"add": _first_add, "sub": _first_sub},
}  # fmt: skip


def clean_kernel(op: str, dt: DataType) -> CleanKernel | None:
    """The clean path of :func:`binary` as a kernel for callers that already know both
    operands finite, e.g. the executor, which records that fact on its tiles: the
    kernel skips the operand checks and the finiteness lookups of :func:`binary`.

    ``kernel(x, y, xs, ys, out)`` takes (P, R, C) carrier arrays of the same shape
    holding no NaN and no infinity, their :func:`probe_sample` and an optional output
    array of that shape; it returns ``(result, status)`` exactly as :func:`binary`
    would -- the result is finite -- or None when the native operation raised an IEEE
    exception (then ``out`` holds garbage and the caller takes :func:`binary`). Also
    None while :func:`exact_only` is in force. ``clean_kernel`` itself is None where
    :func:`binary` has no clean path (FP32 + - * /, FP64 + -).

    NX: the first element of every PE is tested exactly (ordinary data is inexact
    there); when a PE finds none, the 16-element
    probe of :func:`_clean` runs on every PE (each stops at its first inexact
    element), and the PEs still without one take the full test.
    """
    clean = _CLEAN.get(dt, {}).get(op)
    if clean is None or _EXTOBJ is None:
        return None
    ufunc, hits, full = clean
    first = _FIRST[dt][op]

    def kernel(
        x: np.ndarray, y: np.ndarray, xs: _Rows, ys: _Rows, out: np.ndarray | None
    ) -> Result | None:
        if not _enabled:
            return None
        token = _EXTOBJ.set(_RAISE)
        try:
            w = ufunc(x, y, out=out)
        except FloatingPointError:
            return None
        finally:
            _EXTOBJ.reset(token)
        p = len(xs)
        hit = first(xs, ys, w[:, 0, 0].tolist())
        if all(hit):
            return w, (_ALL_NX[p].copy() if p in _ALL_NX else np.full(p, NX, np.uint8))
        # every PE: each loop stops at its first inexact element
        hit = hits(xs, ys, w[_PROBE_AT].tolist())
        if all(hit):
            return w, (_ALL_NX[p].copy() if p in _ALL_NX else np.full(p, NX, np.uint8))
        todo = [pe for pe, h in enumerate(hit) if not h]
        status = _nx_bits(np.array(hit))
        found = _quiet(full, x[todo], y[todo], w[todo]).reshape(len(todo), -1).any(axis=1)
        status[todo] = _nx_bits(found)
        return w, status

    return kernel


def binary(op: str, dt: DataType, a: np.ndarray, b: np.ndarray) -> Result | None:
    """Fast ``core.binary`` for FP64/FP32/FP16/BF16 add, sub, mul, div, max, min.

    None when not applicable (other types or ops, non-carrier inputs, unusual shapes):
    the caller then uses the exact engine.

    The clean path: when both operands are finite (:func:`_finite_operand`) and the
    native FP32/FP64 operation raises no IEEE exception (:func:`_raising`), every result
    is finite and the engine could only add NX (no NaN, Inf, overflow, division by
    zero, invalid operation or inexact tiny result exists), so NX is all that is left
    to decide. Everything else takes the per-element suspect analysis.
    """
    plan = _BINARY_PLANS.get((dt, op))
    if plan is None:
        return None
    f, fn, clean = plan
    if not isinstance(a, np.ndarray) or not isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
    car = f.carrier
    if a.dtype != car or b.dtype != car or not 1 <= a.ndim <= 3:
        return None
    shape = a.shape
    if b.shape != shape:
        shape = np.broadcast_shapes(shape, b.shape)
        if len(shape) != a.ndim:
            return None
    if 0 in shape:
        return None
    p = shape[0]
    if len(shape) == 3 and a.shape == b.shape:  # the executor's case: no views needed
        x, y = a, b
    else:
        x, y = _to3(a, shape), _to3(b, shape)
    if _EXTOBJ is None:  # pragma: no cover
        with np.errstate(all="ignore"):
            r, st = fn(op, f, x, y, p)
    else:
        token = _EXTOBJ.set(_QUIET)
        try:
            res = None
            if clean is not None and _finite_operand(a) and _finite_operand(b):
                res = _clean(clean, x, y, p)
            if res is None and dt in _ARITH_TYPES:
                # FP32/FP64 + - * / with NaN, Inf or an IEEE exception: the numpy route
                # settles them in several passes, the compiled kernel in one
                res = _arith_arrays(op, dt, x, y)
            r, st = fn(op, f, x, y, p) if res is None else res
        finally:
            _EXTOBJ.reset(token)
    # (a reshaped result would be a view, which the executor copies before publishing)
    return (r if r.shape == shape else r.reshape(shape)), st


def _arith_arrays(
    op: str, dt: DataType, x: np.ndarray, y: np.ndarray
) -> tuple[np.ndarray, np.ndarray] | None:
    from .arith_kernels import arith_arrays  # arith_kernels imports this module

    return arith_arrays(op, dt, x, y)


def _fold_arrays(op: str, dt: DataType, x: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    from .arith_kernels import fold_arrays  # arith_kernels imports this module

    return fold_arrays(op, dt, x)


_ARITH_TYPES = frozenset({DataType.FP32, DataType.FP64})


# ---------------------------------------------------------------- comparisons

#: CMode -> the native relation (0 EQ, 1 NE, 2 LT, 3 GT, 4 LE, 5 GE)
_RELATIONS = (np.equal, np.not_equal, np.less, np.greater, np.less_equal, np.greater_equal)


def compare(cmode: int, dt: DataType, a: np.ndarray, b: np.ndarray) -> Result | None:
    """Fast ``core.compare`` for FP64/FP32/FP16/BF16 (None when not applicable).

    The native IEEE relation of the exactly widened values is the engine's: a NaN
    operand makes every relation false but NE, and +0 equals -0. The status is NV on
    each PE with a signalling NaN operand; operands known to be finite, or found to hold
    no NaN, have none.
    """
    f = FORMATS.get(dt)
    if (
        f is None
        or not isinstance(a, np.ndarray)
        or not isinstance(b, np.ndarray)
        or a.dtype != f.carrier
        or b.dtype != f.carrier
        or a.ndim != b.ndim
        or a.ndim == 0
    ):
        return None
    x, y = f.widen(a), f.widen(b)
    rel = _quiet(_RELATIONS[cmode], x, y)
    if rel.ndim != a.ndim or rel.size == 0:
        return None
    p = rel.shape[0]
    status = np.zeros(p, np.uint8)
    for v, raw in ((x, a), (y, b)):
        if known_finite(raw):
            continue
        nan = np.isnan(v)
        if not nan.any():
            continue
        ub = np.dtype(f"u{f.carrier.itemsize}")
        signalling = nan & ((raw.view(ub) & ub.type(_QUIET_BIT[f.dt])) == 0)
        status |= _any_per_pe(np.broadcast_to(signalling, rel.shape), p) * np.uint8(NV)
    return rel, status


# ---------------------------------------------------------------- unary operations


def _exact_unary(op: str, dt: DataType) -> Callable[..., tuple[np.ndarray, np.ndarray]]:
    def run(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return _fa.float_unary(op, dt, x)

    return run


def _sqrt(op: str, f: _Fmt, a: np.ndarray, p: int) -> Result:
    """Square roots never underflow or overflow; negative, NaN and Inf operands are the
    suspects (both zeros are exact: sqrt(-0) = -0, as the engine keeps the operand)."""
    x = f.widen(a)
    w = np.sqrt(x)
    r = f.narrow(w)
    if f.dt == DataType.FP64:
        check: _Check = _fp64_sqrt_check
    elif f.same:
        check = _sqrt_check64
    else:

        def check(x: np.ndarray, w: np.ndarray) -> np.ndarray:
            return _low_bits(f.low_mask, w)

    ok = _all_finite(w)
    small = None
    if f.dt == DataType.FP64:  # TwoProduct(r, r) exact needs x >= 2**-960
        small = (x < _FP64_SMALL) & (x != 0)
        ok = ok and not small.any()
    if ok:
        return r, _nx_status(check, (x, w), None)
    sus = ~np.isfinite(w)
    if small is not None:
        sus |= small
    status = _nx_status(check, (x, w), sus)
    _patch(_exact_unary(op, f.dt), sus, r, status, a)
    return r, status


def _recip(op: str, f: _Fmt, a: np.ndarray, p: int) -> Result:
    """recip = 1 / x correctly rounded, which for these formats is ``div(1, x)`` in every
    case: 1/0 = signed Inf with DZ, 1/Inf = signed 0, NaN -> canonical NaN (NV if sNaN)."""
    one = np.broadcast_to(np.ones((), f.carrier), a.shape)
    return _muldiv("div", f, one, a, p)


def _widen64(f: _Fmt, a: np.ndarray) -> np.ndarray:
    """Exact float64 values of a carrier array (contiguous, as the engine evaluates)."""
    return np.ascontiguousarray(f.widen(a), np.float64)


#: precision p of the types whose tiny exp results stay native (see _transcendental)
_EXP_TINY = {DataType.FP32: 24, DataType.FP16: 11}


def _exp_tiny(f: _Fmt, p: int) -> float:
    """T = (1 - 2**-(p+1)) * smallest normal: a float64 exp result below it is tiny
    after rounding (UF); T itself rounds up (see :func:`_transcendental`)."""
    return f.min_normal * (1.0 - 2.0 ** -(p + 1))


#: (lo, hi): every operand in [lo, hi] has exp in [twice the smallest normal, the
#: largest finite value] of the type, with a wide margin (at least 8% of the value,
#: billions of float64 ulps: the float64 exp is within one ulp), so nothing is tiny,
#: nothing overflows and the engine settles nothing. ln(max) is 88.72 for FP32 and
#: BF16 and 11.09 for FP16; ln(2 * min normal) is -86.64 for FP32/BF16, -9.01 for FP16.
_EXP_SAFE = {DataType.FP32: (-86.0, 88.0), DataType.BF16: (-86.0, 88.0),
             DataType.FP16: (-8.9, 11.0)}  # fmt: skip


def _exp_in_range(f: _Fmt, a: np.ndarray, p: int) -> Result | None:
    """exp of operands that all lie in :data:`_EXP_SAFE` (decided on the operands, two
    reductions that also give each PE's NX: exp(x) is exact only at x = +-0), else None.
    The result is the float64 exp rounded once, as in :func:`_transcendental`."""
    lo, hi = _EXP_SAFE[f.dt]
    w = a if f.same else f.widen(a)  # exact
    per_pe = w.reshape(p, -1)
    # the extremes as Python floats: the tests below are no further array operations
    mn, mx = per_pe.min(axis=1).tolist(), per_pe.max(axis=1).tolist()
    # (each PE's NaN propagates through its reductions and fails its comparison; a
    # Python min() over the PEs would not propagate it)
    if not (all(v >= lo for v in mn) and all(v <= hi for v in mx)):  # NaN, +-Inf fail
        return None
    status = np.array([NX if a or b else 0 for a, b in zip(mn, mx, strict=True)], np.uint8)
    return f.narrow64(np.exp(w, dtype=np.float64)), status


def _transcendental(op: str, f: _Fmt, a: np.ndarray, p: int) -> Result:
    """exp, log, rsqrt: the engine's numpy FP64 evaluation y, rounded once.

    The engine raises, for an ordinary operand (finite; nonzero for exp; positive for
    log and rsqrt), the flags of a value just beyond y: always NX, UF when that value is
    tiny after rounding, i.e. y < T = (1 - 2**-(p+1)) * smallest normal (a float64 y
    equal to T still rounds up), OF beyond the overflow threshold. Exact exceptions:
    exp(+-0) = 1 (a special operand there), log(1) = +0, rsqrt(4**k). Ordinary operands
    with y up to the largest finite value are settled here (for BF16 only y >= twice the
    smallest normal, as :func:`_bf16_from_f64` covers the normal range); log and rsqrt
    results are never tiny. The rest goes to the engine.
    """
    if op == "exp":
        safe = _exp_in_range(f, a, p)
        if safe is not None:
            return safe
    x = _widen64(f, a)
    tiny_p = _EXP_TINY.get(f.dt) if op == "exp" else None
    if op == "exp":
        y = np.exp(x)
        # every y in [smallest ordinary result, largest finite]: every operand was
        # finite (exp(+Inf) = Inf, exp(-Inf) = 0, NaN fails both tests), nothing needs
        # the engine and nothing is tiny, so the status is NX wherever x != 0
        lo = 2.0 * f.min_normal if tiny_p is None else _exp_tiny(f, tiny_p)
        if y.max() <= f.max_finite and y.min() >= lo:
            nx = (x != 0).reshape(p, -1).any(axis=1)
            return f.narrow64(y), _nx_bits(nx)
    elif op == "log":
        y = np.log(x)
    else:
        y = 1.0 / np.sqrt(x)
    r = f.narrow64(y)
    t = np.abs(y)
    if op == "exp":
        ok_elem = (t <= f.max_finite) & np.isfinite(x)
        if tiny_p is None:
            ok_elem &= t >= 2.0 * f.min_normal
        exact = x == 0
    elif op == "log":
        ok_elem = (x > 0) & (t <= f.max_finite) & ((t >= 2.0 * f.min_normal) | (x == 1))
        exact = x == 1
    else:
        ok_elem = (x > 0) & (t >= 2.0 * f.min_normal) & (t <= f.max_finite)
        m, e = np.frexp(x)
        exact = (m == 0.5) & ((e & 1) == 1)  # x = 2**(e-1) with e - 1 even
    nx = ok_elem & ~exact
    status = _nx_bits(nx.reshape(p, -1).any(axis=1))
    if tiny_p is not None:
        uf = nx & (t < _exp_tiny(f, tiny_p))
        if uf.any():
            status |= uf.reshape(p, -1).any(axis=1).astype(np.uint8) * np.uint8(UF)
    if not ok_elem.all():
        _patch(_exact_unary(op, f.dt), ~ok_elem, r, status, a)
    return r, status


def _relu(op: str, f: _Fmt, a: np.ndarray, p: int) -> Result:
    """relu keeps positive numbers and gives +0 otherwise (-0 too); a NaN operand gives
    the canonical NaN, with NV when it is signalling (as ``core.unary``)."""
    x = f.widen(a)
    r = np.where(x > 0, a, np.zeros((), f.carrier))
    status = np.zeros(p, np.uint8)
    nan = np.isnan(x)
    if nan.any():
        ub = np.dtype(f"u{f.carrier.itemsize}")
        quiet = ub.type(_QUIET_BIT[f.dt])
        snan = nan & ((a.view(ub) & quiet) == 0)
        r.view(ub)[nan] = CANONICAL_NAN[f.dt]
        status |= snan.reshape(p, -1).any(axis=1).astype(np.uint8) * np.uint8(NV)
    return r, status


#: the quiet bit (top fraction bit) of each format's NaNs
_QUIET_BIT = {DataType.FP64: 1 << 51, DataType.FP32: 1 << 22, DataType.FP16: 1 << 9,
              DataType.BF16: 1 << 6}  # fmt: skip


_UNARY: dict[str, Callable[[str, _Fmt, np.ndarray, int], Result]] = {
    "sqrt": _sqrt,
    "recip": _recip,
    "exp": _transcendental,
    "log": _transcendental,
    "rsqrt": _transcendental,
    "relu": _relu,
}


def unary(op: str, dt: DataType, a: np.ndarray) -> Result | None:
    """Fast ``core.unary`` for FP64/FP32/FP16/BF16 sqrt, recip and relu, and for
    FP32/FP16/BF16 exp, log and rsqrt (None when not applicable)."""
    f = FORMATS.get(dt)
    fn = _UNARY.get(op)
    if f is None or fn is None or (fn is _transcendental and dt == DataType.FP64):
        return None
    a = np.asarray(a)
    if a.dtype != f.carrier or not 1 <= a.ndim <= 3 or 0 in a.shape:
        return None
    shape = a.shape
    r, st = _quiet(fn, op, f, _to3(a, shape), shape[0])
    return (r if r.shape == shape else r.reshape(shape)), st


# ---------------------------------------------------------------- reductions


def fold(
    op: str, dt: DataType, x: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """Left fold of (P, N, K) over K, as ``reduce`` defines it, for FP64/FP32/FP16/BF16.

    Returns ``(acc (P, N) carrier, status (P,), redo (P, N) bool)``: rows marked in
    ``redo`` hold no valid result and must be folded by the caller's exact loop (their
    status is not included). None when not applicable.

    * sum/prod: ``np.add/multiply.accumulate`` over ``[init, x0, x1, ...]`` in the
      carrier performs exactly the engine's steps (each step rounds once to the element
      type: native for FP32/FP64; numpy's float16 and ml_dtypes' bfloat16 loops compute
      in float32 and round to nearest even, innocuous as in the module docstring). Rows
      with a NaN/Inf partial (and, for prod, a partial that may be tiny) are redone;
      every other step can only raise NX, checked per step as in :func:`binary`.
    * max/min: rows without NaN fold to the numeric extremum (ties keep the earlier
      element, whose bits are equal) except for zeros: max of zeros is +0 unless every
      zero is -0, min of zeros is -0 if any zero is -0. No status without NaN.
    """
    f = FORMATS.get(dt)
    if f is None or x.dtype != f.carrier or x.ndim != 3 or 0 in x.shape:
        return None
    if dt in _ARITH_TYPES:  # FP32/FP64: the compiled fold where it is certified
        native = _fold_arrays(op, dt, x)
        if native is not None:
            acc, status = native
            return acc, status, np.zeros(acc.shape, bool)
    if op in ("sum", "prod"):
        if op == "prod" and dt == DataType.FP64:
            return None
        return _quiet(_fold_arith, op, f, x)
    if op in ("max", "min"):
        return _quiet(_fold_extreme, op, f, x)
    return None


@cache
def _outer_reduce_sequential(dtype: np.dtype) -> bool:
    """Whether ``np.add.reduce`` over the outer axis of a C-contiguous 2-D ``dtype``
    array adds its rows one after the other, each addition rounded (numpy sums pairwise
    only along the fast axis of memory). Probed on a narrow and a wide array: a 1 ulp
    step that ties back to 1 at every addition of column 0, and is kept by a pairwise or
    reordered sum, tells the two apart."""
    for width in (2, 300):
        tiny = float(np.finfo(dtype).eps) / 2
        rows = np.full((40, width), tiny, dtype)
        rows[0, 0] = rows[-1, 1] = 1.0
        seq = rows[0].copy()
        for r in rows[1:]:
            seq = seq + r
        if not np.array_equal(np.add.reduce(rows, axis=0), seq):
            return False
    return True


#: steps of every PE's first row the sum fast path tests for NX before the full check
_SUM_PROBE = 16


def _fold_sum_outer(f: _Fmt, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """FP32/FP64 sums whose every partial is finite, without the per-step partials.

    The fold ``((+0 + x0) + x1) + ...`` of every row is one ``np.add.reduce`` over the
    outer axis of the (K + 1, P * N) transposed operand (a +0 row first): numpy adds the
    rows one after the other (:func:`_outer_reduce_sequential`), vectorised across the
    rows of the tile, where the accumulation along each row of :func:`_fold_arith` is a
    scalar loop. A finite last partial proves every partial finite (a non-finite partial
    stays non-finite), so only NX is left: the first ``_SUM_PROBE`` steps of every PE's
    first row are replayed and tested exactly (Fast2Sum, as :func:`_fold_arith`); None
    (the caller's general path) unless every PE shows an inexact step there and every
    sum is finite.
    """
    p, n, k = x.shape
    if p * n < 2 or not _outer_reduce_sequential(f.carrier):
        return None
    j = min(k, _SUM_PROBE)
    head = np.empty((p, j + 1), f.carrier)
    head[:, 0] = 0
    head[:, 1:] = x[:, 0, :j]
    part = np.add.accumulate(head, axis=1)
    hit = _add_check(part[:, :-1], head[:, 1:], part[:, 1:]).any(axis=1)
    if not hit.all():
        return None
    work = np.empty((k + 1, p, n), f.carrier)
    work[0] = 0
    work[1:] = x.transpose(2, 0, 1)
    acc = np.add.reduce(work.reshape(k + 1, p * n), axis=0).reshape(p, n)
    if not (np.abs(acc) <= f.max_finite).all():
        return None
    return acc, _nx_bits(hit), np.zeros((p, n), bool)


def _fold_arith(op: str, f: _Fmt, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    p, n, k = x.shape
    if op == "sum" and f.same:
        fast = _fold_sum_outer(f, x)
        if fast is not None:
            return fast
    work = np.empty((p, n, k + 1), f.carrier)
    work[:, :, 0] = 0 if op == "sum" else 1
    work[:, :, 1:] = x
    ufunc = np.add if op == "sum" else np.multiply
    part = ufunc.accumulate(work, axis=2)
    acc = part[:, :, -1].copy()
    pw, xw = f.widen(part), f.widen(x)
    prev, cur = pw[:, :, :-1], pw[:, :, 1:]
    tail = np.abs(pw[:, :, -1])
    if op == "sum":
        # an Inf/NaN partial stays non-finite, so the last partial tells; a step is
        # exact iff the Fast2Sum test passes (cur is the p-bit rounding of prev + x,
        # the test runs in the compute type, which holds every p-bit number)
        redo = ~(tail <= f.max_finite)
        if not redo.any():  # every step counts: the first row of each PE first
            return acc, _nx_status(_add_check, (prev, xw, cur), None), redo
        m = _add_check(prev, xw, cur)
    else:
        # partials that may be tiny (UF) are redone; the others are exact products
        # checked in a type where the product of two partials' factors is exact
        redo = ~(tail <= f.max_finite) | (np.abs(cur) < 2.0 * f.min_normal).any(axis=2)
        if f.same:
            m = cur.astype(np.float64) != prev.astype(np.float64) * xw
        else:
            m = prev * xw != cur
    m &= ~redo[:, :, None]
    nx = m.reshape(p, -1).any(axis=1)
    return acc, _nx_bits(nx), redo


def _fold_extreme(op: str, f: _Fmt, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    p, n, k = x.shape
    status = np.zeros(p, np.uint8)
    if k == 1:  # a single element is returned unchanged (no step, no status)
        return x[:, :, 0].copy(), status, np.zeros((p, n), bool)
    w = f.widen(x)
    m = w.max(axis=2) if op == "max" else w.min(axis=2)  # NaN propagates
    redo = np.isnan(m)
    acc = f.narrow(m)
    zero = m == 0
    if zero.any():
        ub = np.dtype(f"u{f.carrier.itemsize}")
        bits = np.ascontiguousarray(x).view(ub)
        sign = ub.type(1 << (8 * f.carrier.itemsize - 1))
        if op == "max":  # +0 unless every zero of the row is -0
            neg = ~(bits == 0).any(axis=2)
        else:  # -0 if any zero of the row is -0
            neg = (bits == sign).any(axis=2)
        acc.view(ub)[zero] = np.where(neg, sign, ub.type(0))[zero]
    return acc, status, redo


def arg_fold(op: str, dt: DataType, x: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """ARGMAX/ARGMIN of (P, N, K) over K: ``(index (P, N) int64, redo (P, N) bool)``.

    Rows without NaN whose extremum is nonzero move the index exactly once, at the first
    occurrence of the extremum (later equal elements have the accumulator's bits), so
    ``np.argmax``/``np.argmin`` (first occurrence) is the engine's answer and there is
    no status. Rows with a NaN or a zero extremum are redone by the caller.
    """
    f = FORMATS.get(dt)
    if f is None or x.dtype != f.carrier or x.ndim != 3 or 0 in x.shape:
        return None
    w = f.widen(x)
    m = w.max(axis=2) if op == "argmax" else w.min(axis=2)
    idx = np.argmax(w, axis=2) if op == "argmax" else np.argmin(w, axis=2)
    redo = np.isnan(m) | (m == 0)
    return idx, redo
