"""Fast paths of TCVT: float narrowings to nearest even and the float64 view of a source.

The exact engine decodes every source element into parts and rounds it with integer
arithmetic (:func:`.floatarith.round_f64`), about a hundred times slower than a cast.
This module computes the common elements natively and proves, element by element, that
the result is the engine's; every other element goes to the engine as one subset.

Narrowing to an IEEE-like format (:data:`NARROW_DESTS`) with round to nearest even
(:func:`narrow_rne`), on the exact float64 value ``x`` of each source element:

* ``x`` is widened with ``astype(float64)``, which is exact for every carrier of
  :data:`EXACT_WIDEN` (IEEE widening in numpy and ml_dtypes; ``tests/isa`` compares it
  with the engine's :func:`.floatfmt.decode` on every 8- and 16-bit encoding);
* rounding the float64 magnitude bits to the destination's ``m`` fraction bits is the
  integer step ``(mag + 2**(d-1) - 1 + lsb) >> d`` with ``d = 52 - m`` and ``lsb`` the
  lowest kept bit: it carries exactly when the dropped bits exceed one half, or equal
  it with an odd ``lsb`` (ties to even); a carry out of the fraction increments the
  exponent field, which is the correctly rounded next binade;
* that integer is the destination encoding (rebias the exponent, shift over the
  ``lowpad`` bits, put the sign back) whenever ``|x|`` is at least the destination's
  smallest normal and the rounded magnitude is at most its largest finite value. Such
  an element is neither tiny (no UF) nor overflowing (no OF); its only possible flag is
  NX, set iff a dropped bit is nonzero. Zeros are exact and keep their sign.

Values below the smallest normal ``2**emin`` are rounded at the fixed quantum
``2**(emin - m)``: ``|x| * 2**(m - emin)`` is exact (a power-of-two scaling upwards)
and ``np.rint`` rounds it to nearest even, giving the subnormal fraction (a carry into
``2**m`` is the smallest normal's encoding). Tininess is detected after rounding
(:func:`.floatfmt.encode_parts`): ``|x|`` is tiny unless rounding it to ``p = m + 1``
bits with an unbounded exponent gives ``2**emin``, i.e. unless ``|x| >= T = 2**emin *
(1 - 2**-(p+1))``. Below T an inexact rounding sets UF and NX (a result of zero keeps
the sign); the narrow band ``T <= |x| < 2**emin`` goes to the engine.

Everything else -- NaN and infinite sources, that band, results beyond the largest
finite value (OF, Sat, formats without infinity) -- is converted by the engine
(``exact`` callback), so results and status bits are the engine's on every element.
:func:`.fastpath.exact_only` switches this off (the caller checks
:func:`.fastpath.enabled`).

Float to integer conversions take the same exact float64 view (:func:`widen64`, NaN
mask ``isnan``) instead of the engine's decode and classification, and then the
native integer rounding of :func:`.convert.float_to_int`, which settles or delegates
each element itself.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

import numpy as np

from ..datatypes import DataType, info
from . import fastpath as _fp
from .floatfmt import FORMATS, NX, UF

__all__ = ["EXACT_WIDEN", "NARROW_DESTS", "narrow_rne", "widen64"]

#: float sources whose carrier widens exactly to float64 by ``astype`` (every encoding
#: is a valid one: no padding bits an exact decode would have to ignore)
EXACT_WIDEN = frozenset({
    DataType.FP64, DataType.FP32, DataType.FP16, DataType.BF16,
    DataType.E4M3, DataType.E5M2,
})  # fmt: skip
#: IEEE-like destinations (sign, exponent, fraction; :data:`.floatfmt.FORMATS`) of
#: :func:`narrow_rne`; the packed 4-bit formats are left to the engine
NARROW_DESTS = frozenset({
    DataType.FP32, DataType.TF32, DataType.HF32, DataType.FP16, DataType.BF16,
    DataType.E4M3, DataType.E5M2, DataType.E3M2, DataType.E2M3,
})  # fmt: skip

_U64 = np.uint64
_MAG = _U64(0x7FFFFFFFFFFFFFFF)
_SIGN = _U64(1 << 63)

#: ``exact(subset) -> (carrier values, per-element uint8 flags)``: the engine's
#: conversion of a 1-D subset of the source carrier array
Exact = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]


@dataclass(frozen=True)
class _Dest:
    """Integer constants of one destination format (see the module docstring)."""

    drop: int  # d: float64 fraction bits below the destination's
    min_normal: int  # float64 magnitude bits of the smallest normal
    tiny: int  # float64 magnitude bits of T (values below are tiny after rounding)
    sub_scale: float  # 2**(m - emin): a subnormal magnitude in quanta
    max_code: int  # the largest finite magnitude, in rounded (>> d) units
    rebias: int  # subtracted from a rounded magnitude: the exponent rebias
    lowpad: int  # zero bits under the fraction in the container
    sign_shift: int  # 63 - sign bit position
    container: np.dtype  # unsigned container of the carrier


@cache
def _dest(dt: DataType) -> _Dest:
    f = FORMATS[dt]
    assert f.signed_zero  # a zero result keeps its sign below
    m = f.mbits
    tiny = np.array(2.0**f.emin * (1.0 - 2.0 ** -(m + 2)), np.float64)
    max_exp = f.max_biased - f.bias  # unbiased exponent of the largest finite value
    container = np.dtype(f"u{info(dt).carrier.itemsize}")
    return _Dest(
        drop=52 - m,
        min_normal=(1023 + f.emin) << 52,
        tiny=int(tiny.view(np.uint64)),
        sub_scale=2.0 ** (m - f.emin),
        max_code=((max_exp + 1023) << m) | f.max_frac,
        rebias=(1023 - f.bias) << m,
        lowpad=f.lowpad,
        sign_shift=63 - f.sign_bit,
        container=container,
    )


def widen64(dt: DataType, a: np.ndarray) -> np.ndarray:
    """The exact float64 value of every element of an :data:`EXACT_WIDEN` carrier array
    (a NaN of any kind is a float64 NaN; a signalling NaN widens quietly)."""
    if a.dtype == np.float64:
        return a
    return _fp._quiet(a.astype, np.float64)


def narrow_rne(
    src: DataType, dst: DataType, a: np.ndarray, exact: Exact
) -> tuple[np.ndarray, np.ndarray]:
    """``src`` carrier array ``a`` (P, ...) rounded to nearest even at ``dst``:
    (destination carrier array, per-PE status (P,)), bit-identical to the engine.

    ``src`` must be in :data:`EXACT_WIDEN` and ``dst`` in :data:`NARROW_DESTS`; the
    elements the native step cannot settle go through ``exact``.
    """
    k = _dest(dst)
    x = np.ascontiguousarray(widen64(src, a))
    u = x.view(_U64)
    mag = u & _MAG
    d = _U64(k.drop)
    rounded = (mag + _U64((1 << (k.drop - 1)) - 1) + ((mag >> d) & _U64(1))) >> d
    ok = ((mag >= _U64(k.min_normal)) & (rounded <= _U64(k.max_code))) | (mag == 0)
    # zeros: max(rounded, rebias) - rebias is 0 (a zero rounds to 0)
    body = (np.maximum(rounded, _U64(k.rebias)) - _U64(k.rebias)) << _U64(k.lowpad)
    sign = (u & _SIGN) >> _U64(k.sign_shift)
    bits = body | sign
    inexact = (mag & _U64((1 << k.drop) - 1)) != 0
    p = a.shape[0]
    if ok.all():
        out = bits.astype(k.container).view(info(dst).carrier)
        return out, inexact.reshape(p, -1).any(axis=1).astype(np.uint8) * np.uint8(NX)
    flags = np.where(inexact, np.uint8(NX), np.uint8(0))
    rest = ~ok
    sub = rest & (mag < _U64(k.tiny))  # tiny after rounding: the subnormal quantum
    if sub.any():
        v = np.abs(x[sub]) * k.sub_scale
        n = np.rint(v)
        bits[sub] = (n.astype(_U64) << _U64(k.lowpad)) | sign[sub]
        flags[sub] = np.where(n != v, np.uint8(NX | UF), np.uint8(0))
        rest &= ~sub
    out = bits.astype(k.container).view(info(dst).carrier)
    if rest.any():
        got, got_flags = exact(a[rest])
        out[rest] = got
        flags[rest] = got_flags
    return out, np.bitwise_or.reduce(flags.reshape(p, -1), axis=1).astype(np.uint8)
