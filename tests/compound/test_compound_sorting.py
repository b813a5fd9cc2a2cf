"""sort32, merge_sorted, merge_blocks, pack_records, unpack_records."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ptoc.dialects.compound_ref import (
    CompoundError,
    Records,
    merge_blocks,
    merge_sorted,
    pack_records,
    sort32,
    unpack_records,
)

from . import oracle
from .gen import float_tile, sorted_list

SORT_DTYPES = [np.float32, np.float16]


def _u32(rng, shape):
    return rng.integers(0, 2**32, size=shape, dtype=np.uint32)


# ---------------------------------------------------------------- sort32


@given(
    dt=st.sampled_from(SORT_DTYPES),
    data=st.data(),
    payload_kind=st.sampled_from(["full", "row", "none"]),
    seed=st.integers(0, 2**16),
)
def test_sort32_matches_oracle(dt, data, payload_kind, seed):
    t = data.draw(float_tile(dt, st.integers(1, 3), st.integers(1, 80)))
    rows, cols = t.shape
    rng = np.random.default_rng(seed)
    if payload_kind == "full":
        payload = _u32(rng, (rows, cols))
        full = payload
    elif payload_kind == "row":
        payload = _u32(rng, (1, cols))
        full = np.repeat(payload, rows, axis=0)
    else:
        payload = None
        full = np.repeat(np.arange(cols, dtype=np.uint32)[None], rows, axis=0)
    got = sort32(t, payload)
    want_v, want_p = oracle.sort32(t, full)
    assert oracle.same_bits(got.values, want_v)
    assert oracle.same_bits(got.payload, want_p)
    # invariants: each group is a permutation of its records and sorted; NaNs last
    for r in range(rows):
        for g in range(0, cols, 32):
            src = sorted(
                zip(oracle.raw(t)[r, g : g + 32].tolist(), full[r, g : g + 32].tolist())
            )
            dst = sorted(
                zip(
                    oracle.raw(got.values)[r, g : g + 32].tolist(),
                    got.payload[r, g : g + 32].tolist(),
                )
            )
            assert src == dst
            assert oracle.is_sorted([float(v) for v in got.values[r, g : g + 32]], True)


def test_sort32_stability_signed_zero_and_nan_order():
    t = np.array([[0.0, -0.0, np.nan, 1.0, -np.nan, 1.0, -0.0]], np.float32)
    t[0, 4] = np.array(0xFFC00001, np.uint32).view(np.float32)
    got = sort32(t)
    assert got.payload.tolist() == [[3, 5, 0, 1, 6, 2, 4]]
    assert oracle.raw(got.values)[0, 6] == 0xFFC00001  # NaN bits carried unchanged


def test_sort32_rejects():
    with pytest.raises(CompoundError):
        sort32(np.zeros((2, 4), np.int32))
    with pytest.raises(CompoundError):
        sort32(np.zeros((2, 4), np.float32), np.zeros((2, 3), np.uint32))
    with pytest.raises(CompoundError):
        sort32(np.zeros((2, 4), np.float32), np.zeros((2, 4), np.int32))
    with pytest.raises(CompoundError):
        sort32(np.zeros((2, 0), np.float32))


@pytest.mark.parametrize(
    "dt, shape",
    [
        (np.float32, (2, 32)),
        (np.float16, (4, 64)),
        (np.float32, (1, 8192)),
        (np.float32, (2, 13)),
        (np.float16, (16, 16)),
        (np.float32, (8, 32)),
        (np.float16, (32, 16)),
    ],
)
def test_sort32_pto_isa_cases(dt, shape):
    """pto-isa TSORT32 cases (a2a3/a5 and CPU shapes); payload = arange as on the NPU."""
    rng = np.random.default_rng(20260)
    t = rng.uniform(-100, 100, size=shape).astype(dt)
    t[:, ::7] = t[:, :1]  # force ties
    payload = np.arange(shape[0] * shape[1], dtype=np.uint32).reshape(shape)
    got = sort32(t, payload)
    assert got.values.shape == shape and got.values.dtype == dt
    assert got.payload.shape == shape and got.payload.dtype == np.uint32
    rows, cols = shape
    for r in range(rows):
        for g in range(0, cols, 32):
            v = got.values[r, g : g + 32].astype(np.float64)
            p = got.payload[r, g : g + 32]
            assert np.all(v[:-1] >= v[1:])
            assert np.array_equal(t[r, p - r * cols].astype(np.float64), v)  # payload tracks
            assert np.all((p - r * cols >= g) & (p - r * cols < g + 32))
            ties = v[:-1] == v[1:]
            assert np.all(p[:-1][ties] < p[1:][ties])  # stable


# ---------------------------------------------------------------- merge_sorted


@st.composite
def merge_case(draw):
    dt = draw(st.sampled_from(SORT_DTYPES))
    descending = draw(st.booleans())
    n = draw(st.integers(2, 4))
    lists = []
    for _ in range(n):
        t = draw(float_tile(dt, 1, st.integers(1, 24)))
        lists.append(sorted_list(t[0], descending)[None, :])
    records = draw(st.booleans())
    exhausted = draw(st.booleans())
    total = sum(x.shape[1] for x in lists)
    top_k = draw(st.one_of(st.none(), st.integers(1, total)))
    return lists, descending, records, exhausted, top_k


@given(case=merge_case(), seed=st.integers(0, 2**16))
def test_merge_sorted_matches_oracle(case, seed):
    lists, descending, use_records, exhausted, top_k = case
    rng = np.random.default_rng(seed)
    pays = [_u32(rng, x.shape) for x in lists]
    args = [Records(v, p) for v, p in zip(lists, pays)] if use_records else lists
    out, counts = merge_sorted(*args, descending=descending, top_k=top_k, exhausted=exhausted)
    recs = [
        [(float(v[0, k]), int(oracle.raw(v)[0, k]), int(p[0, k])) for k in range(v.shape[1])]
        for v, p in zip(lists, pays)
    ]
    want, want_counts = oracle.merge(recs, descending, top_k, exhausted)
    assert counts == tuple(want_counts)
    values = out.values if use_records else out
    assert values.shape == (1, len(want)) and values.dtype == lists[0].dtype
    assert oracle.raw(values)[0].tolist() == [b for _, b, _ in want]
    if use_records:
        assert out.payload.dtype == np.uint32
        assert out.payload[0].tolist() == [p for _, _, p in want]
    # invariants
    assert sum(counts) == values.shape[1]
    assert all(c <= x.shape[1] for c, x in zip(counts, lists))
    assert oracle.is_sorted([float(v) for v in values[0]], descending)
    if exhausted and top_k is None:
        assert any(c == x.shape[1] for c, x in zip(counts, lists))
    if not exhausted and top_k is None:
        assert counts == tuple(x.shape[1] for x in lists)


def test_merge_sorted_ties_nan_and_zero_rules():
    a = np.array([[2.0, 0.0, np.nan]], np.float32)
    b = np.array([[2.0, -0.0, np.nan]], np.float32)
    out, counts = merge_sorted(
        Records(a, np.array([[0, 1, 2]], np.uint32)),
        Records(b, np.array([[10, 11, 12]], np.uint32)),
    )
    assert out.payload.tolist() == [[0, 10, 1, 11, 2, 12]]
    assert counts == (3, 3)
    # ascending: NaNs still last; +0 of list 0 before -0 of list 1
    up, counts = merge_sorted(
        np.array([[0.0, 2.0, np.nan]], np.float32),
        np.array([[-0.0, 2.0, np.nan]], np.float32),
        descending=False,
    )
    assert np.signbit(up[0, :2]).tolist() == [False, True]
    assert up[0, 2:4].tolist() == [2.0, 2.0] and np.isnan(up[0, 4:]).all()
    assert counts == (3, 3)


def test_merge_sorted_exhausted_stops_after_emptying_record():
    a = np.array([[9.0, 1.0]], np.float32)
    b = np.array([[8.0, 7.0, 6.0]], np.float32)
    out, counts = merge_sorted(a, b, exhausted=True)
    assert out.tolist() == [[9.0, 8.0, 7.0, 6.0]] and counts == (1, 3)
    out, counts = merge_sorted(a, b, exhausted=True, top_k=2)
    assert out.tolist() == [[9.0, 8.0]] and counts == (1, 1)


def test_merge_sorted_rejects():
    ok = np.array([[3.0, 1.0]], np.float32)
    with pytest.raises(CompoundError, match="not sorted"):
        merge_sorted(ok, np.array([[1.0, 3.0]], np.float32))
    with pytest.raises(CompoundError, match="NaN"):
        merge_sorted(ok, np.array([[np.nan, 3.0]], np.float32))
    with pytest.raises(CompoundError):
        merge_sorted(ok)
    with pytest.raises(CompoundError):
        merge_sorted(ok, ok, ok, ok, ok)
    with pytest.raises(CompoundError):
        merge_sorted(ok, np.zeros((1, 0), np.float32))
    with pytest.raises(CompoundError):
        merge_sorted(ok, ok.astype(np.float16))
    with pytest.raises(CompoundError):
        merge_sorted(ok, Records(ok, np.zeros((1, 2), np.uint32)))
    with pytest.raises(CompoundError):
        merge_sorted(ok, ok, top_k=5)
    with pytest.raises(CompoundError):
        merge_sorted(np.ones((2, 2), np.float32), ok)


def _sorted_lists(rng, dt, sizes):
    """Descending lists whose payload is a global arange, as pto-isa's generators."""
    out, base = [], 0
    for n in sizes:
        v = np.sort(rng.uniform(0, 1, n).astype(dt))[::-1].copy()[None, :]
        out.append(Records(v, np.arange(base, base + n, dtype=np.uint32)[None, :]))
        base += n
    return out


@pytest.mark.parametrize(
    "dt, sizes, top_k, exhausted, want_len",
    [
        (np.float32, [64, 64, 64, 64], None, False, 256),  # case_multi1
        (np.float16, [64, 64, 64, 64], None, False, 256),  # case_multi2
        (np.float32, [64, 64, 64, 32], None, False, 224),  # case_multi3
        (np.float32, [64, 64, 32], 64, False, 64),  # case_multi4: top 64
        (np.float32, [32, 32], None, True, None),  # case_exhausted1
        (np.float16, [128, 128, 128], None, True, None),  # case_exhausted2
    ],
)
def test_merge_sorted_pto_isa_cases(dt, sizes, top_k, exhausted, want_len):
    rng = np.random.default_rng(19)
    lists = _sorted_lists(rng, dt, sizes)
    out, counts = merge_sorted(*lists, top_k=top_k, exhausted=exhausted)
    if want_len is not None:
        assert out.values.shape == (1, want_len)
    assert out.values.dtype == dt and out.payload.dtype == np.uint32
    assert sum(counts) == out.values.shape[1]
    # golden: stable descending argsort of the concatenation, truncated
    cat_v = np.concatenate([x.values[0] for x in lists])
    cat_p = np.concatenate([x.payload[0] for x in lists])
    order = np.argsort(-cat_v.astype(np.float64), kind="stable")
    n = out.values.shape[1]
    assert np.array_equal(oracle.raw(out.values)[0], oracle.raw(cat_v[order][:n]))
    assert np.array_equal(out.payload[0], cat_p[order][:n])
    if exhausted:
        assert any(c == s for c, s in zip(counts, sizes))
        last = n - 1
        lid = np.searchsorted(np.cumsum(sizes), out.payload[0, last], side="right")
        assert counts[lid] == sizes[lid]  # the last record emptied its list


# ---------------------------------------------------------------- merge_blocks


@st.composite
def blocks_case(draw):
    dt = draw(st.sampled_from(SORT_DTYPES))
    unit = 32 if dt == np.float32 else 16
    block = unit * draw(st.integers(1, 2))
    n = draw(st.integers(1, 4 * block * 2 + block))
    descending = draw(st.booleans())
    t = draw(float_tile(dt, 1, n))
    for s in range(0, n, block):
        t[0, s : s + block] = sorted_list(t[0, s : s + block], descending)
    return t, block, descending


@given(case=blocks_case(), use_records=st.booleans())
def test_merge_blocks_matches_oracle(case, use_records):
    t, block, descending = case
    n = t.shape[1]
    payload = np.arange(n, dtype=np.uint32)[None, :] * 3
    arg = Records(t, payload) if use_records else t
    got = merge_blocks(arg, block, descending=descending)
    values = got.values if use_records else got
    want = []
    for g in range(0, n, 4 * block):
        blocks = [
            [
                (float(t[0, k]), int(oracle.raw(t)[0, k]), int(payload[0, k]))
                for k in range(s, min(s + block, n))
            ]
            for s in range(g, min(g + 4 * block, n), block)
        ]
        want += oracle.merge(blocks, descending)[0]
    assert oracle.raw(values)[0].tolist() == [b for _, b, _ in want]
    if use_records:
        assert got.payload[0].tolist() == [p for _, _, p in want]


@pytest.mark.parametrize(
    "dt, records, block",
    [
        (np.float32, 128, 32),
        (np.float32, 160, 32),
        (np.float32, 256, 32),
        (np.float32, 320, 32),
        (np.float16, 128, 32),
        (np.float16, 160, 32),
        (np.float16, 256, 32),
        (np.float16, 512, 128),
    ],
)
def test_merge_blocks_pto_isa_cases(dt, records, block):
    """pto-isa case_single1..8 (record counts and blocks as its generator writes them)."""
    rng = np.random.default_rng(19)
    v = rng.uniform(0, 1, records).astype(dt)
    for s in range(0, records, block):
        v[s : s + block] = np.sort(v[s : s + block])[::-1]
    got = merge_blocks(Records(v[None, :], np.arange(records, dtype=np.uint32)[None, :]), block)
    full = records // (4 * block) * 4 * block
    g = got.values[0, :full].reshape(-1, 4 * block).astype(np.float64)
    assert np.all(g[:, :-1] >= g[:, 1:])
    golden = v[:full].reshape(-1, 4 * block)
    order = np.argsort(-golden.astype(np.float64), kind="stable", axis=1)
    assert np.array_equal(
        got.values[0, :full].reshape(-1, 4 * block), np.take_along_axis(golden, order, 1)
    )
    # the tail is a final partial group: its blocks are merged the same way
    tail = v[full:]
    order = np.argsort(-tail.astype(np.float64), kind="stable")
    assert np.array_equal(got.values[0, full:], tail[order])
    assert np.array_equal(got.payload[0, full:], np.arange(full, records)[order])


def test_merge_blocks_topk_pipeline():
    """pto-isa topk: 32-record sorts, 4-block stages 32 -> 128 -> 512, a 2-way top-k merge."""
    rng = np.random.default_rng(7)
    v = rng.uniform(-1, 1, (1, 1024)).astype(np.float32)
    r = sort32(v)
    r = merge_blocks(merge_blocks(r, 32), 128)
    for h in (0, 512):
        assert np.array_equal(r.values[0, h : h + 512], np.sort(v[0, h : h + 512])[::-1])
    top = merge_sorted(
        Records(r.values[:, :512], r.payload[:, :512]),
        Records(r.values[:, 512:], r.payload[:, 512:]),
        top_k=256,
    )[0]
    assert np.array_equal(top.values[0], np.sort(v[0])[::-1][:256])
    assert np.array_equal(v[0, top.payload[0]], top.values[0])


def test_merge_blocks_rejects():
    with pytest.raises(CompoundError):
        merge_blocks(np.zeros((1, 64), np.float32), 16)
    with pytest.raises(CompoundError):
        merge_blocks(np.zeros((1, 64), np.float16), 24)
    with pytest.raises(CompoundError, match="not sorted"):
        merge_blocks(np.arange(64, dtype=np.float32)[None, :], 32)
    with pytest.raises(CompoundError):
        merge_blocks(np.zeros((2, 64), np.float32), 32)


# ---------------------------------------------------------------- pack / unpack


@given(dt=st.sampled_from(SORT_DTYPES), data=st.data(), seed=st.integers(0, 2**16))
def test_pack_unpack_records(dt, data, seed):
    v = data.draw(float_tile(dt, st.integers(1, 3), st.integers(1, 20)))
    p = _u32(np.random.default_rng(seed), v.shape)
    packed = pack_records(Records(v, p))
    assert packed.dtype == (np.uint32 if dt == np.float32 else np.uint16)
    assert packed.shape == (v.shape[0], v.shape[1] * 8 // packed.dtype.itemsize)
    want = oracle.pack_records(v, p)
    assert [packed[r].tobytes() for r in range(v.shape[0])] == want
    assert np.array_equal(pack_records(v, p), packed)
    for view in (packed, packed.view(dt), packed.view(np.uint8)):
        back = unpack_records(view, dt)
        assert oracle.same_bits(back.values, v) and np.array_equal(back.payload, p)


def test_unpack_records_rejects():
    with pytest.raises(CompoundError):
        unpack_records(np.zeros((1, 3), np.uint32), np.float32)
    with pytest.raises(CompoundError):
        unpack_records(np.zeros((1, 2), np.uint32), np.int32)
