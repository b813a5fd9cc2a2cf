"""TSORT / TMRGSORT semantics against plain-Python oracles (seed ADR 0083 D135/D136)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ptoc.backend.isa.datatypes import DataType
from ptoc.backend.isa.semantics.core import NV, SemanticError
from ptoc.backend.isa.semantics.sorting import descending_gpr_legal, tmrgsort, tsort

FP32, FP16 = DataType.FP32, DataType.FP16
_BITS = {FP32: (np.uint32, np.float32, 32), FP16: (np.uint16, np.float16, 16)}

# Raw special encodings: +-0, +-inf, quiet NaNs (with payloads, negative), signalling NaNs.
SPECIAL = {
    FP32: [
        0x00000000,
        0x80000000,
        0x7F800000,
        0xFF800000,
        0x7FC00000,
        0xFFC00001,
        0x7FC12345,
        0x7F800001,
        0x7FA00000,
        0xFF800002,
        0x3F800000,
        0xBF800000,
        0x00000001,
        0x80000001,
        0x7F7FFFFF,
        0xFF7FFFFF,
    ],
    FP16: [
        0x0000,
        0x8000,
        0x7C00,
        0xFC00,
        0x7E00,
        0xFE01,
        0x7E55,
        0x7C01,
        0x7D00,
        0xFC02,
        0x3C00,
        0xBC00,
        0x0001,
        0x8001,
        0x7BFF,
        0xFBFF,
    ],
}


def from_bits(dt: DataType, bits) -> np.ndarray:
    ut, ft, _ = _BITS[dt]
    return np.asarray(bits, dtype=np.uint64).astype(ut).view(ft)


def bits_of(a: np.ndarray) -> list:
    return a.view(_BITS[FP32 if a.dtype == np.float32 else FP16][0]).tolist()


def is_snan(dt: DataType, b: int) -> bool:
    w = _BITS[dt][2]
    exp = (b >> (10 if w == 16 else 23)) & (0x1F if w == 16 else 0xFF)
    frac = b & ((1 << (10 if w == 16 else 23)) - 1)
    quiet = 1 << (9 if w == 16 else 22)
    return exp == (0x1F if w == 16 else 0xFF) and frac != 0 and not frac & quiet


def value(dt: DataType, b: int) -> float:
    return float(from_bits(dt, [b])[0])


def oracle_key(dt: DataType, b: int, desc: bool):
    """Python sort key: numbers before NaNs; NaNs all equal; -0 == +0 as Python floats."""
    v = value(dt, b)
    if math.isnan(v):
        return (1, 0.0)
    return (0, -v if desc else v)


def elements(dt: DataType):
    w = _BITS[dt][2]
    pool = st.sampled_from(SPECIAL[dt])
    ties = st.sampled_from(SPECIAL[dt][:4] + SPECIAL[dt][10:12])
    return st.one_of(pool, ties, st.integers(0, (1 << w) - 1))


@st.composite
def tile(draw, dt: DataType, max_rows: int = 3, max_cols: int = 70):
    p = draw(st.integers(1, 2))
    r = draw(st.integers(1, max_rows))
    c = draw(st.integers(1, max_cols))
    bits = draw(st.lists(elements(dt), min_size=p * r * c, max_size=p * r * c))
    return np.array(bits, dtype=np.uint64).reshape(p, r, c)


def oracle_tsort(dt, bits, width, desc):
    p, r, c = bits.shape
    out_v = np.zeros_like(bits)
    out_i = np.zeros(bits.shape, dtype=np.uint32)
    for pe in range(p):
        for row in range(r):
            for g0 in range(0, c, width):
                grp = [int(bits[pe, row, j]) for j in range(g0, min(g0 + width, c))]
                order = sorted(range(len(grp)), key=lambda i: oracle_key(dt, grp[i], desc))
                for k, i in enumerate(order):
                    out_v[pe, row, g0 + k] = grp[i]
                    out_i[pe, row, g0 + k] = i
    nv = [NV if any(is_snan(dt, int(b)) for b in bits[pe].ravel()) else 0 for pe in range(p)]
    return out_v, out_i, nv


@pytest.mark.parametrize("dt", [FP32, FP16])
@given(data=st.data())
def test_tsort_matches_python_sorted(dt, data):
    bits = data.draw(tile(dt))
    width = data.draw(st.integers(1, 64))
    desc = data.draw(st.booleans())
    vals, idx, status = tsort(dt, from_bits(dt, bits), width, desc)
    ev, ei, enV = oracle_tsort(dt, bits, width, desc)
    assert vals.dtype == _BITS[dt][1] and idx.dtype == np.uint32
    assert np.array_equal(np.asarray(bits_of(vals), dtype=np.uint64), ev)
    assert np.array_equal(idx, ei)
    assert status.dtype == np.uint8 and status.tolist() == enV


def test_tsort_nan_last_descending():
    b = [0x7FC00001, 0x3F800000, 0x7FC00002, 0xBF800000, 0x7F800000]
    vals, idx, st_ = tsort(FP32, from_bits(FP32, [[b]]), 32, True)
    assert bits_of(vals)[0][0] == [0x7F800000, 0x3F800000, 0xBF800000, 0x7FC00001, 0x7FC00002]
    assert idx.tolist() == [[[4, 1, 3, 0, 2]]]
    assert st_.tolist() == [0]


def test_tsort_nan_last_ascending():
    b = [0x7E01, 0x3C00, 0xFE02, 0xBC00, 0xFC00]
    vals, idx, _ = tsort(FP16, from_bits(FP16, [[b]]), 32, False)
    assert bits_of(vals)[0][0] == [0xFC00, 0xBC00, 0x3C00, 0x7E01, 0xFE02]
    assert idx.tolist() == [[[4, 3, 1, 0, 2]]]


@pytest.mark.parametrize("desc", [False, True])
def test_tsort_signed_zeros_keep_source_order(desc):
    b = [0x80000000, 0x00000000, 0x80000000, 0x00000000]
    vals, idx, _ = tsort(FP32, from_bits(FP32, [[b]]), 4, desc)
    assert bits_of(vals)[0][0] == b and idx.tolist() == [[[0, 1, 2, 3]]]


def test_tsort_snan_sets_nv_and_is_moved_bit_exact():
    b = np.array([[[0x7F800001, 0x3F800000]], [[0x3F800000, 0x00000000]]], dtype=np.uint64)
    vals, _, status = tsort(FP32, from_bits(FP32, b), 2, False)
    assert status.tolist() == [NV, 0]
    assert bits_of(vals)[0][0] == [0x3F800000, 0x7F800001]


def test_tsort_partial_last_group_never_mixes_groups():
    v = np.array([[[5, 4, 3, 2, 1, 0, -1]]], dtype=np.float32)
    vals, idx, _ = tsort(FP32, v, 3, False)
    assert vals.tolist() == [[[3, 4, 5, 0, 1, 2, -1]]]
    assert idx.tolist() == [[[2, 1, 0, 2, 1, 0, 0]]]


@pytest.mark.parametrize("width", [0, 65])
def test_tsort_width_domain(width):
    with pytest.raises(ValueError):
        tsort(FP32, np.zeros((1, 1, 4), np.float32), width, False)


def test_tsort_rejects_bf16():
    with pytest.raises(ValueError):
        tsort(DataType.BF16, np.zeros((1, 1, 4), np.float32), 4, False)


# ---- TMRGSORT ------------------------------------------------------------------------


def left_before(dt, lb: int, rb: int, desc: bool) -> bool:
    """ASL TileSortLeftBefore, written independently in Python."""
    lv, rv = value(dt, lb), value(dt, rb)
    if math.isnan(lv):
        return math.isnan(rv)
    if math.isnan(rv):
        return True
    if lv == rv:
        return True
    return lv > rv if desc else lv < rv


def oracle_merge(dt, a: list, b: list, desc: bool) -> list:
    out, i, j = [], 0, 0
    while i < len(a) or j < len(b):
        take_left = j >= len(b) or (i < len(a) and left_before(dt, a[i], b[j], desc))
        if take_left:
            out.append(a[i])
            i += 1
        else:
            out.append(b[j])
            j += 1
    return out


def is_sorted(dt, s: list, desc: bool) -> bool:
    return all(left_before(dt, s[k], s[k + 1], desc) for k in range(len(s) - 1))


@st.composite
def streams(draw, dt: DataType, nan_free: bool = False):
    p = draw(st.integers(1, 3))
    n0, n1 = draw(st.integers(1, 40)), draw(st.integers(1, 40))
    desc = draw(st.booleans())
    el = elements(dt)
    if nan_free:  # numbers only, zeros of both signs and repeats made likely
        el = st.one_of(
            el.filter(lambda v: not math.isnan(value(dt, v))),
            st.sampled_from([0, 1 << (dt_width(dt) - 1)]),
        )
    a = [draw(st.lists(el, min_size=n0, max_size=n0)) for _ in range(p)]
    b = [draw(st.lists(el, min_size=n1, max_size=n1)) for _ in range(p)]
    if draw(st.integers(0, 4)):  # mostly sorted inputs; sometimes raw (usually unsorted)
        a = [sorted(x, key=lambda v: oracle_key(dt, v, desc)) for x in a]
        b = [sorted(x, key=lambda v: oracle_key(dt, v, desc)) for x in b]
    return a, b, desc


@pytest.mark.parametrize("dt", [FP32, FP16])
@given(data=st.data())
def test_tmrgsort_matches_two_pointer_merge(dt, data):
    a, b, desc = data.draw(streams(dt))
    aa = from_bits(dt, [[x] for x in a])
    bb = from_bits(dt, [[x] for x in b])
    legal = all(is_sorted(dt, x, desc) for x in a + b)
    if not legal:
        with pytest.raises(SemanticError):
            tmrgsort(dt, aa, bb, desc)
        return
    merged, status = tmrgsort(dt, aa, bb, desc)
    assert merged.shape == (len(a), 1, len(a[0]) + len(b[0]))
    for pe in range(len(a)):
        assert bits_of(merged)[pe][0] == oracle_merge(dt, a[pe], b[pe], desc)
        snan = any(is_snan(dt, v) for v in a[pe] + b[pe])
        assert status[pe] == (NV if snan else 0)


def dt_width(dt: DataType) -> int:
    return 32 if dt == FP32 else 16


@pytest.mark.parametrize("dt", [FP32, FP16])
@given(data=st.data())
def test_tmrgsort_nan_free_streams_match_two_pointer_merge(dt, data):
    """Streams without NaN (the numeric-order path): +-0 ties, infinities, subnormals,
    repeats, both directions, unsorted inputs rejected naming the stream."""
    a, b, desc = data.draw(streams(dt, nan_free=True))
    aa = from_bits(dt, [[x] for x in a])
    bb = from_bits(dt, [[x] for x in b])
    left_ok = all(is_sorted(dt, x, desc) for x in a)
    if not left_ok or not all(is_sorted(dt, x, desc) for x in b):
        with pytest.raises(SemanticError, match="left" if not left_ok else "right"):
            tmrgsort(dt, aa, bb, desc)
        return
    merged, status = tmrgsort(dt, aa, bb, desc)
    for pe in range(len(a)):
        assert bits_of(merged)[pe][0] == oracle_merge(dt, a[pe], b[pe], desc)
    assert status.tolist() == [0] * len(a)


def test_tmrgsort_ties_left_first():
    # -0 and +0 are equal: whichever stream is left goes first.
    m, _ = tmrgsort(FP32, from_bits(FP32, [[[0x80000000]]]), from_bits(FP32, [[[0x0]]]), False)
    assert bits_of(m) == [[[0x80000000, 0x0]]]
    m, _ = tmrgsort(FP32, from_bits(FP32, [[[0x0]]]), from_bits(FP32, [[[0x80000000]]]), True)
    assert bits_of(m) == [[[0x0, 0x80000000]]]


def test_tmrgsort_nans_last_keep_order_and_left_precedence():
    left = from_bits(FP16, [[[0x3C00, 0x7E01, 0x7E02]]])
    right = from_bits(FP16, [[[0x4000, 0x7E03]]])
    m, _ = tmrgsort(FP16, left, right, False)
    assert bits_of(m) == [[[0x3C00, 0x4000, 0x7E01, 0x7E02, 0x7E03]]]
    m, _ = tmrgsort(FP16, from_bits(FP16, [[[0x4000, 0x7E01]]]), right, True)
    assert bits_of(m) == [[[0x4000, 0x4000, 0x7E01, 0x7E03]]]


def test_tmrgsort_unsorted_illegal():
    with pytest.raises(SemanticError):
        tmrgsort(
            FP32, np.array([[[2.0, 1.0]]], np.float32), np.array([[[0.0]]], np.float32), False
        )
    # NaN before a number is unsorted in both directions.
    bad = from_bits(FP32, [[[0x7FC00000, 0x3F800000]]])
    ok = np.array([[[0.0]]], np.float32)
    for desc in (False, True):
        with pytest.raises(SemanticError):
            tmrgsort(FP32, ok, bad, desc)
    # Ascending input is unsorted for a descending merge; one bad PE rejects the block.
    with pytest.raises(SemanticError):
        tmrgsort(FP32, np.array([[[1.0, 2.0]]], np.float32), ok, True)
    two = np.array([[[1.0, 2.0]], [[2.0, 1.0]]], np.float32)
    with pytest.raises(SemanticError):
        tmrgsort(FP32, two, np.zeros((2, 1, 1), np.float32), False)


def test_tmrgsort_snan_sets_nv():
    _, status = tmrgsort(
        FP32,
        from_bits(FP32, [[[0x3F800000]], [[0x0]]]),
        from_bits(FP32, [[[0x7F800001]], [[0x0]]]),
        False,
    )
    assert status.tolist() == [NV, 0]


def test_direction_per_pe_from_gpr():
    v = np.array([[[1.0, 3.0, 2.0]], [[1.0, 3.0, 2.0]]], np.float32)
    vals, idx, _ = tsort(FP32, v, 8, np.array([0, 1], np.uint64))
    assert vals.tolist() == [[[1.0, 2.0, 3.0]], [[3.0, 2.0, 1.0]]]
    assert idx.tolist() == [[[0, 2, 1]], [[1, 2, 0]]]
    a = np.array([[[1.0, 2.0]], [[2.0, 1.0]]], np.float32)
    b = np.array([[[1.5]], [[1.5]]], np.float32)
    m, _ = tmrgsort(FP32, a, b, np.array([0, 1], np.uint64))
    assert m.tolist() == [[[1.0, 1.5, 2.0]], [[2.0, 1.5, 1.0]]]
    assert descending_gpr_legal(np.array([0, 1], np.uint64)) is None
    assert descending_gpr_legal(np.array([2], np.uint64)) is not None
    with pytest.raises(SemanticError):
        tsort(FP32, v, 8, np.array([0, 2], np.uint64))


@pytest.mark.parametrize("c", [9, 70_000])
def test_tsort_group_order_packed_and_stable_fallback_agree(c):
    """The packed unique-key sort (wide rows included) and the stable-argsort fallback
    that rows of more than 2**26 groups would take give the oracle's order and in-group
    columns."""
    from ptoc.backend.isa.semantics.sorting import (
        _group_order,
        _sort_key,
        _stable_group_order,
    )

    rng = np.random.default_rng(7)
    x = rng.choice(np.array([0.0, -0.0, 1.5, -2.0, np.nan], np.float32), (1, 1, c))
    key, _ = _sort_key(FP32, x, False)
    bits = x.view(np.uint32).reshape(-1).tolist()
    want = []
    for g in range(c // 2):
        ka = oracle_key(FP32, bits[2 * g], False)
        kb = oracle_key(FP32, bits[2 * g + 1], False)
        want += [2 * g + 1, 2 * g] if kb < ka else [2 * g, 2 * g + 1]
    want += [c - 1] if c % 2 else []
    for order, local in (_group_order(FP32, key.copy(), 2), _stable_group_order(key, 2, 32)):
        assert order.reshape(-1).tolist() == want
        assert local.reshape(-1).tolist() == [w % 2 for w in want]


def test_tmrgsort_checks_each_stream_not_the_seam():
    """The streams are checked separately and the rule names the unsorted one; the
    pair across the seam (left's last, right's first) is no constraint."""
    f = np.float32
    m, _ = tmrgsort(FP32, np.array([[[2.0, 3.0]]], f), np.array([[[1.0, 4.0]]], f), False)
    assert m.tolist() == [[[1.0, 2.0, 3.0, 4.0]]]
    m, _ = tmrgsort(FP32, np.array([[[5.0]]], f), np.array([[[1.0]]], f), False)
    assert m.tolist() == [[[1.0, 5.0]]]
    with pytest.raises(SemanticError, match="left"):
        tmrgsort(FP32, np.array([[[3.0, 2.0]]], f), np.array([[[2.0, 1.0]]], f), False)
    with pytest.raises(SemanticError, match="right"):
        tmrgsort(FP32, np.array([[[1.0, 2.0]]], f), np.array([[[2.0, 1.0]]], f), False)
    two = np.array([[[1.0, 2.0]], [[1.0, 2.0]]], f)
    with pytest.raises(SemanticError, match="right"):
        tmrgsort(FP32, two, np.array([[[0.0, 1.0]], [[1.0, 0.0]]], f), False)
