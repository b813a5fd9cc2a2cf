"""Hypothesis strategies with adversarial element data for the compound tests."""

from __future__ import annotations

import ml_dtypes
import numpy as np
from hypothesis import strategies as st

# interesting raw bit patterns per width: zeros, infinities, quiet/signalling NaNs with
# payloads and both signs, extremes, subnormals, ones
SPECIAL = {
    4: [
        0x00000000,
        0x80000000,
        0x7F800000,
        0xFF800000,
        0x7FC00000,
        0xFFC00000,
        0x7FC00001,
        0x7F800001,
        0xFFBFFFFF,
        0x7F7FFFFF,
        0xFF7FFFFF,
        0x00000001,
        0x80000001,
        0x00800000,
        0x3F800000,
        0xBF800000,
        0x3F000000,
        0x40000000,
        0x4B000000,
    ],
    2: [
        0x0000,
        0x8000,
        0x7C00,
        0xFC00,
        0x7E00,
        0xFE00,
        0x7E01,
        0x7C01,
        0x7BFF,
        0xFBFF,
        0x0001,
        0x8001,
        0x0400,
        0x3C00,
        0xBC00,
        0x3800,
        0x4000,
    ],
}
BF16_SPECIAL = [
    0x0000,
    0x8000,
    0x7F80,
    0xFF80,
    0x7FC0,
    0xFFC0,
    0x7F81,
    0x7F7F,
    0xFF7F,
    0x0001,
    0x8001,
    0x3F80,
    0xBF80,
]
UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32}


#: (exponent bits, mantissa bits) of the IEEE formats the tests draw
LAYOUT = {
    np.dtype(np.float32): (8, 23),
    np.dtype(np.float16): (5, 10),
    np.dtype(ml_dtypes.bfloat16): (8, 7),
}


def binade_bits(dtype) -> st.SearchStrategy[int]:
    """Raw bits of one IEEE element with the binade drawn uniformly: every exponent
    field (0: zeros and subnormals; all ones: infinities and NaNs, so quiet and
    signalling NaN payloads of both signs) is equally likely, and the significand is
    0, 1, the quiet bit, all ones or anything. So values below 1, subnormals, the top
    binade and every NaN kind appear in every few draws, not once in 2**8."""
    ebits, mbits = LAYOUT[np.dtype(dtype)]
    top = (1 << mbits) - 1
    mant = st.one_of(
        st.sampled_from([0, 1, 1 << (mbits - 1), top, top - 1]), st.integers(0, top)
    )
    return st.builds(
        lambda s, e, m: (s << (ebits + mbits)) | (e << mbits) | m,
        st.integers(0, 1),
        st.integers(0, (1 << ebits) - 1),
        mant,
    )


def float_bits(
    dtype, *, tie_values=(-2.0, -1.0, -0.0, 0.0, 1.0, 2.0, 3.0)
) -> st.SearchStrategy:
    """Raw bit patterns of one float element: specials, ties from a small set, every
    binade (:func:`binade_bits`), anything."""
    dt = np.dtype(dtype)
    width = dt.itemsize
    specials = BF16_SPECIAL if dt == np.dtype(ml_dtypes.bfloat16) else SPECIAL[width]
    ties = [int(np.array(v, dt).view(UINT[width])) for v in tie_values]
    return st.one_of(
        st.sampled_from(specials),
        st.sampled_from(ties),
        binade_bits(dt),
        st.integers(0, (1 << (8 * width)) - 1),
    )


@st.composite
def float_tile(draw, dtype, rows, cols) -> np.ndarray:
    """A (rows, cols) tile of adversarial elements (rows/cols: ints or strategies)."""
    r = draw(rows) if isinstance(rows, st.SearchStrategy) else rows
    c = draw(cols) if isinstance(cols, st.SearchStrategy) else cols
    dt = np.dtype(dtype)
    b = draw(st.lists(float_bits(dt), min_size=r * c, max_size=r * c))
    return np.array(b, UINT[dt.itemsize]).reshape(r, c).view(dt)


@st.composite
def int_tile(draw, dtype, rows, cols) -> np.ndarray:
    r = draw(rows) if isinstance(rows, st.SearchStrategy) else rows
    c = draw(cols) if isinstance(cols, st.SearchStrategy) else cols
    info = np.iinfo(dtype)
    edge = [info.min, info.max, 0, 1, -1 if info.min < 0 else 2, info.min + 1, info.max - 1]
    el = st.one_of(st.sampled_from(edge), st.integers(int(info.min), int(info.max)))
    return np.array(draw(st.lists(el, min_size=r * c, max_size=r * c)), dtype).reshape(r, c)


def sorted_list(values: np.ndarray, descending: bool) -> np.ndarray:
    """values (1-D) sorted in the seed order (numbers, then NaNs), stable; for test input."""
    with np.errstate(invalid="ignore"):
        v = values.astype(np.float64)
    nan = np.isnan(v)
    key = np.where(nan, 0, -v if descending else v)
    return values[np.lexsort((key, nan))]
