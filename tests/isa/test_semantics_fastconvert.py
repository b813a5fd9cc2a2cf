"""TCVT's fast paths (``semantics.fastconvert``) are bit-identical to the exact engine.

Each conversion runs twice on the same source tile: through the fast path (the default)
and through the exact engine (:func:`fastpath.exact_only`); results are compared as raw
bits (zero signs, NaN encodings) together with the per-PE status. Sources mix every
encoding class: raw bits of every binade (NaN payloads quiet and signalling, +-Inf,
+-0, subnormals), the destination's own values and the midpoints between neighbours
(ties), their float neighbours, and the boundaries of the fast path's cases: the
smallest normal, the tininess threshold T below it, the largest finite value and the
overflow threshold.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ptoc.backend.isa.datatypes import DataType as D
from ptoc.backend.isa.datatypes import info
from ptoc.backend.isa.semantics import fastconvert, fastpath
from ptoc.backend.isa.semantics.convert import convert
from ptoc.backend.isa.semantics.floatfmt import FORMATS, classify, decode, max_finite_bits

RNE = 1
SOURCES = sorted(fastconvert.EXACT_WIDEN, key=lambda d: d.value)
DESTS = sorted(fastconvert.NARROW_DESTS, key=lambda d: d.value)
INT_DESTS = [D.S64, D.S32, D.S16, D.S8, D.S4X2, D.U64, D.U32, D.U16, D.U8, D.U4X2]


def _raw(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a).view(f"u{a.dtype.itemsize}")


@pytest.mark.parametrize("src", [D.FP16, D.BF16, D.E4M3, D.E5M2], ids=lambda d: d.name)
def test_widening_is_the_exact_decode_on_every_encoding(src: D) -> None:
    """``astype(float64)`` of every 8- and 16-bit encoding is the engine's decode, and
    its NaNs are exactly the engine's NaN class."""
    width = info(src).bits
    bits = np.arange(1 << width, dtype=np.uint64)
    a = bits.astype(f"u{width // 8}").view(info(src).carrier)
    got = fastconvert.widen64(src, a)
    want = decode(src, bits)
    nan = classify(src, bits).nan
    assert np.array_equal(np.isnan(got), nan)
    assert np.array_equal(_raw(got)[~nan], _raw(want)[~nan])


def _format_values(dst: D, raw: list[int]) -> list[float]:
    """Values around ``dst``'s interesting points: its own numbers (from ``raw`` bits),
    the midpoints of neighbours, and the case boundaries of the fast path."""
    f = FORMATS[dst]
    width = info(dst).bits
    tiny = 2.0**f.emin
    quantum = 2.0 ** (f.emin - f.mbits)
    biggest = float(decode(dst, np.array(max_finite_bits(dst), np.uint64)))
    edges = [
        0.0, tiny, tiny * (1 - 2.0 ** -(f.mbits + 2)), tiny * (1 - 2.0 ** -(f.mbits + 1)),
        tiny - quantum / 2, quantum, quantum / 2, quantum / 4, quantum * 1.5,
        biggest, biggest * (1 + 2.0 ** -(f.mbits + 1)), biggest * 2, 1.0, 1.5,
        1 + 2.0 ** -(f.mbits + 1), 1 + 3 * 2.0 ** -(f.mbits + 1),
    ]  # fmt: skip
    mask = (1 << width) - 1
    vals = []
    for r in raw:
        code = np.array(r & mask, np.uint64)
        a, b = decode(dst, code), decode(dst, code + np.uint64(1))
        vals += [float(a), float((a + b) / 2)]
    vals = [v for v in vals if np.isfinite(v)] + edges
    out = []
    for v in vals:
        out += [v, -v, float(np.nextafter(v, np.inf)), float(np.nextafter(v, -np.inf))]
    return out


def _source(src: D, values: list[float], raw: list[int]) -> np.ndarray:
    """A (4, n, 1) source tile: ``values`` rounded into ``src`` and raw ``src`` bits."""
    width = info(src).bits
    car = info(src).carrier
    with np.errstate(all="ignore"):
        a = np.array(values, np.float64).astype(car)
    b = np.array([r & ((1 << width) - 1) for r in raw], np.uint64)
    b = b.astype(f"u{width // 8}").view(car)
    both = np.concatenate([a, b])
    n = -(-len(both) // 4) * 4
    both = np.concatenate([both, both[: n - len(both)]])
    return both.reshape(4, -1, 1)


def _same(src: D, dst: D, a: np.ndarray, rmode: int, sat: bool) -> None:
    got = convert(src, dst, a, rmode, sat)
    with fastpath.exact_only():
        want = convert(src, dst, a, rmode, sat)
    assert got[0].dtype == want[0].dtype
    assert np.array_equal(_raw(got[0]), _raw(want[0]))
    assert np.array_equal(got[1], want[1])


@pytest.mark.parametrize("dst", DESTS, ids=lambda d: d.name)
@pytest.mark.parametrize("src", SOURCES, ids=lambda d: d.name)
@given(data=st.data())
def test_narrowing_to_nearest_even_matches_the_exact_engine(
    src: D, dst: D, data: st.DataObject
) -> None:
    words = st.integers(0, (1 << 64) - 1)
    raw_dst = data.draw(st.lists(words, min_size=1, max_size=12))
    raw_src = data.draw(st.lists(words, min_size=0, max_size=12))
    a = _source(src, _format_values(dst, raw_dst), raw_src)
    _same(src, dst, a, data.draw(st.sampled_from([0, RNE])), data.draw(st.booleans()))


@pytest.mark.parametrize("src", [s for s in SOURCES if info(s).bits <= 32], ids=str)
def test_narrowing_of_every_short_encoding(src: D) -> None:
    """Every 8- and 16-bit source encoding (FP32: a stride through all of them) into
    every destination, with and without Sat."""
    width = info(src).bits
    bits = np.arange(0, 1 << width, 1 if width <= 16 else 65521, dtype=np.uint64)
    bits = bits[: len(bits) // 4 * 4]
    a = bits.astype(f"u{width // 8}").view(info(src).carrier).reshape(4, -1, 1)
    for dst in DESTS:
        if dst != src:
            for sat in (False, True):
                _same(src, dst, a, 0, sat)


@pytest.mark.parametrize("src", SOURCES, ids=lambda d: d.name)
@given(data=st.data())
def test_float_to_integer_matches_the_exact_engine(src: D, data: st.DataObject) -> None:
    """The float64 view of the source feeds the native integer rounding: every integer
    destination, rounding mode and Sat."""
    dst = data.draw(st.sampled_from(INT_DESTS))
    words = st.integers(0, (1 << 64) - 1)
    raw_src = data.draw(st.lists(words, min_size=0, max_size=16))
    ints = data.draw(st.lists(st.integers(-(2**64), 2**64), min_size=1, max_size=8))
    halves = [i + 0.5 for i in ints] + [float(i) for i in ints]
    a = _source(src, [*halves, 0.25, 0.75, -0.5, 1e300], raw_src)
    _same(src, dst, a, data.draw(st.integers(0, 7)), data.draw(st.booleans()))


@pytest.mark.parametrize("dst", INT_DESTS, ids=lambda d: d.name)
@given(data=st.data())
def test_float_to_integer_tiles_of_ordinary_values(dst: D, data: st.DataObject) -> None:
    """Tiles whose every value rounds into the destination range (the native path's
    whole-tile case): integers, halves (ties), fractions, the range ends exactly, and
    such tiles with one value beyond an end."""
    info_dst = info(dst)
    lo = -(2 ** (info_dst.bits - 1)) if info_dst.is_signed else 0
    hi = (2 ** (info_dst.bits - 1) - 1) if info_dst.is_signed else 2**info_dst.bits - 1
    lo, hi = max(lo, -(2**40)), min(hi, 2**40)
    ints = data.draw(st.lists(st.integers(lo, hi), min_size=4, max_size=16))
    fracs = data.draw(st.lists(st.sampled_from([0.0, 0.25, 0.5, 0.75, -0.5, -0.25]),
                               min_size=len(ints), max_size=len(ints)))  # fmt: skip
    vals = [min(max(i + f, lo), hi) for i, f in zip(ints, fracs, strict=True)] + [lo, hi]
    # and one value just beyond an end, every other example (no longer the whole-tile
    # case: it must not be taken)
    vals += data.draw(st.sampled_from([[], [lo - 1], [hi + 1], [lo - 0.75], [hi + 0.75]]))
    src = data.draw(st.sampled_from([D.FP64, D.FP32]))
    a = _source(src, vals, [])
    _same(src, dst, a, data.draw(st.integers(0, 7)), data.draw(st.booleans()))
