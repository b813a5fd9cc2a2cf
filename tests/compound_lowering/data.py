"""Adversarial test data for the lowering tests: raw bit patterns (NaNs with payloads and
both signs, signalling NaNs, +-0, +-inf, subnormals, extremes, every binade drawn
uniformly by ``compound.gen.binade_bits``), many ties, and seeded generators for the
fixed pto-isa cases."""

from __future__ import annotations

import ml_dtypes
import numpy as np
from compound.gen import LAYOUT, binade_bits
from hypothesis import strategies as st

UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32}

SPECIAL = {
    np.dtype(np.float32): [
        0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000,
        0x7FC00001, 0x7F800001, 0xFFBFFFFF, 0x7F7FFFFF, 0xFF7FFFFF, 0x00000001,
        0x80000001, 0x00800000, 0x3F800000, 0xBF800000, 0x3F000000, 0x40200000,
        0x4B000000, 0x42FE0000, 0x43000000,
    ],
    np.dtype(np.float16): [
        0x0000, 0x8000, 0x7C00, 0xFC00, 0x7E00, 0xFE00, 0x7E01, 0x7C01, 0x7BFF, 0xFBFF,
        0x0001, 0x8001, 0x0400, 0x3C00, 0xBC00, 0x3800, 0x4000,
    ],
    np.dtype(ml_dtypes.bfloat16): [
        0x0000, 0x8000, 0x7F80, 0xFF80, 0x7FC0, 0xFFC0, 0x7F81, 0x7F7F, 0xFF7F, 0x0001,
        0x8001, 0x3F80, 0xBF80,
    ],
}  # fmt: skip
TIES = (-2.0, -1.0, -0.0, 0.0, 0.5, 1.0, 2.0, 2.5, 3.0)


def float_bits(dtype: np.dtype) -> st.SearchStrategy[int]:
    dt = np.dtype(dtype)
    ties = [int(np.array(v, dt).view(UINT[dt.itemsize])) for v in TIES]
    specials = SPECIAL.get(dt, [0, 1 << (8 * dt.itemsize - 1)])
    if dt not in LAYOUT:
        return st.one_of(
            st.sampled_from(specials),
            st.sampled_from(ties),
            st.integers(0, (1 << (8 * dt.itemsize)) - 1),
        )
    return st.one_of(
        st.sampled_from(specials),
        st.sampled_from(ties),
        binade_bits(dt),
        st.integers(0, (1 << (8 * dt.itemsize)) - 1),
    )


@st.composite
def float_tile(draw, dtype, rows, cols) -> np.ndarray:
    """A (rows, cols) tile of adversarial raw bits (rows/cols: ints or strategies)."""
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
    edge = [info.min, info.max, 0, 1, info.min + 1, info.max - 1]
    el = st.one_of(st.sampled_from(edge), st.integers(int(info.min), int(info.max)))
    return np.array(draw(st.lists(el, min_size=r * c, max_size=r * c)), dtype).reshape(r, c)


@st.composite
def any_tile(draw, dtypes, rows, cols) -> np.ndarray:
    dt = np.dtype(draw(st.sampled_from(dtypes)))
    if dt.kind in "iu":
        return draw(int_tile(dt, rows, cols))
    return draw(float_tile(dt, rows, cols))


def sorted_row(values: np.ndarray, descending: bool) -> np.ndarray:
    """``values`` (1-D) in the seed order (numbers, then NaNs in order), stable."""
    with np.errstate(invalid="ignore"):
        v = values.astype(np.float64)
    nan = np.isnan(v)
    key = np.where(nan, 0.0, -v if descending else v)
    return values[np.lexsort((key, nan))]


def u32(rng: np.random.Generator, shape: tuple[int, int]) -> np.ndarray:
    return rng.integers(0, 2**32, size=shape, dtype=np.uint32)


def random_bits(rng: np.random.Generator, dtype, shape: tuple[int, int]) -> np.ndarray:
    dt = np.dtype(dtype)
    raw = rng.integers(0, 1 << (8 * dt.itemsize), size=shape, dtype=np.uint64)
    return raw.astype(UINT[dt.itemsize]).view(dt)
