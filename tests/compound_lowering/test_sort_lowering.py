"""sort32, merge_sorted, merge_blocks, pack_records, unpack_records: the lowered bundles,
executed on the machine model, equal the reference semantics bit for bit."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from ptoc.dialects.compound_ref import status as rs

from .data import float_tile, random_bits, sorted_row, u32
from .harness import build, bundle_ops, check, check_or_reject, run_lowered

SORT_DTYPES = [np.float32, np.float16]


# ---------------------------------------------------------------- sort32


@given(
    dt=st.sampled_from(SORT_DTYPES),
    data=st.data(),
    payload_kind=st.sampled_from(["full", "row", "none"]),
    seed=st.integers(0, 2**16),
)
def test_sort32_lowering(dt, data, payload_kind, seed):
    t = data.draw(float_tile(dt, st.integers(1, 3), st.integers(1, 80)))
    rows, cols = t.shape
    rng = np.random.default_rng(seed)
    inputs = {"t": t}
    if payload_kind == "full":
        inputs["p"] = u32(rng, (rows, cols))
    elif payload_kind == "row":
        inputs["p"] = u32(rng, (1, cols))

    def body(kb, x):
        v, p = kb.sort32(x["t"], x.get("p"))
        return {"v": v, "p": p}

    check("sort32", inputs, body, status=rs.sort_status(t))


@pytest.mark.parametrize(
    "dt, shape",
    [
        (np.float32, (2, 32)),  # a2a3/a5 case1
        (np.float16, (4, 64)),  # case2
        (np.float32, (1, 8192)),  # case3
        (np.float32, (2, 13)),  # case4 (tmp variant: a partial group)
        (np.float16, (16, 16)),  # CPU shapes
        (np.float32, (8, 32)),
        (np.float16, (32, 16)),
    ],
)
def test_sort32_pto_isa_cases(dt, shape):
    rng = np.random.default_rng(11)
    t = rng.uniform(-100, 100, shape).astype(dt)
    t[0, : min(4, shape[1])] = t[0, 0]  # ties
    payload = rng.integers(0, 10, shape, dtype=np.uint32)

    def body(kb, x):
        v, p = kb.sort32(x["t"])
        _v2, p2 = kb.sort32(x["t"], x["p"])
        return {"v": v, "p": p, "p2": p2}

    # one 8192-column row cannot be cut into row pieces: keep whole tiles up to 64 KiB
    check("sort32", {"t": t, "p": payload}, body, max_tile_bytes=65536)


# ---------------------------------------------------------------- merge_sorted


@st.composite
def merge_case(draw, max_n=20, unsorted=False):
    dt = draw(st.sampled_from(SORT_DTYPES))
    k = draw(st.integers(2, 4))
    sizes = draw(st.lists(st.integers(1, max_n), min_size=k, max_size=k))
    descending = draw(st.booleans())
    rows = [sorted_row(draw(float_tile(dt, 1, n))[0], descending) for n in sizes]
    if unsorted and draw(st.booleans()):  # one list as drawn (usually not sorted)
        rows[draw(st.integers(0, k - 1))] = draw(
            float_tile(dt, 1, draw(st.integers(1, max_n)))
        )[0]
    total = sum(sizes)
    top_k = draw(st.one_of(st.none(), st.integers(1, total)))
    exhausted = draw(st.booleans())
    payloads = draw(st.booleans())
    return dt, rows, descending, top_k, exhausted, payloads


def merge_inputs(rows, seed=0):
    """One tensor of lists and one of payloads; tile windows name each list."""
    k, n = len(rows), max(len(r) for r in rows)
    lists = np.zeros((k, n), rows[0].dtype)
    for i, r in enumerate(rows):
        lists[i, : len(r)] = r
    pay = u32(np.random.default_rng(seed), (k, n))
    tiles = {}
    for i, r in enumerate(rows):
        tiles[f"l{i}"] = ("L", (i, 0), (1, len(r)))
        tiles[f"p{i}"] = ("P", (i, 0), (1, len(r)))
    return {"L": lists, "P": pay}, tiles


def merge_body(k, payloads, **kw):
    def body(kb, x):
        pays = [x[f"p{i}"] for i in range(k)] if payloads else []
        res = kb.merge_sorted([x[f"l{i}"] for i in range(k)], pays, **kw)
        names = ["v", "p", "n"] if payloads else ["v", "n"]
        return dict(zip(names, res, strict=True))

    return body


@settings(max_examples=40)
@given(case=merge_case())
def test_merge_sorted_lowering(case):
    _dt, rows, descending, top_k, exhausted, payloads = case
    inputs, tiles = merge_inputs(rows)
    body = merge_body(
        len(rows), payloads, descending=descending, top_k=top_k, exhausted=exhausted
    )
    check("merge", inputs, body, tiles=tiles, status=rs.merge_status(*rows))


@settings(max_examples=30)
@given(case=merge_case(unsorted=True))
def test_merge_sorted_rejects_exactly_what_the_reference_rejects(case):
    """Lists as drawn: where the reference rejects one (not sorted), the lowered program
    faults before any store; otherwise it equals the reference."""
    _dt, rows, descending, top_k, exhausted, payloads = case
    top_k = None if top_k is None else min(top_k, sum(len(r) for r in rows))
    inputs, tiles = merge_inputs(rows)
    body = merge_body(
        len(rows), payloads, descending=descending, top_k=top_k, exhausted=exhausted
    )
    res = check_or_reject("merge", inputs, body, status=rs.merge_status(*rows), tiles=tiles)
    event("rejected" if res is None else "accepted")


@settings(max_examples=10)
@given(case=merge_case(max_n=48))
def test_merge_sorted_matrix_path_chunked(case):
    """Totals beyond 64 records use the compare matrices; a tiny matrix budget makes
    every pair span several chunks."""
    _dt, rows, descending, top_k, exhausted, _ = case
    inputs, tiles = merge_inputs(rows)
    body = merge_body(len(rows), True, descending=descending, top_k=top_k, exhausted=exhausted)
    check("merge", inputs, body, tiles=tiles, matrix_bytes=256, status=rs.merge_status(*rows))


def test_merge_sorted_ties_nan_zero_and_list_order():
    nan = np.float32(np.nan)
    neg_nan = np.array([0xFFC00001], np.uint32).view(np.float32)[0]
    rows = [
        np.array([3, 1, 0.0, -0.0, nan], np.float32),
        np.array([3, 1, -0.0, neg_nan, nan], np.float32),
        np.array([1, 0.0, nan], np.float32),
    ]
    for descending in (True, False):
        rows = [sorted_row(r, descending) for r in rows]
        for big in (False, True):  # the TSORT path, then the matrix path
            rr = [np.tile(r, 6) if big else r for r in rows]
            rr = [sorted_row(r, descending) for r in rr]
            inputs, tiles = merge_inputs(rr)
            body = merge_body(3, True, descending=descending)
            check("merge", inputs, body, tiles=tiles, status=rs.merge_status(*rr))


def _pto_lists(rng, dt, sizes):
    return [np.sort(rng.uniform(0, 1, n).astype(dt))[::-1].copy() for n in sizes]


@pytest.mark.parametrize(
    "dt, sizes, top_k, exhausted",
    [
        (np.float32, [64, 64, 64, 64], None, False),  # case_multi1
        (np.float16, [64, 64, 64, 64], None, False),  # case_multi2
        (np.float32, [64, 64, 64, 32], None, False),  # case_multi3
        (np.float32, [64, 64, 32], 64, False),  # case_multi4: top 64
        (np.float32, [32, 32], None, True),  # case_exhausted1
        (np.float16, [128, 128, 128], None, True),  # case_exhausted2
    ],
)
def test_merge_sorted_pto_isa_cases(dt, sizes, top_k, exhausted):
    rng = np.random.default_rng(19)
    rows = _pto_lists(rng, dt, sizes)
    inputs, tiles = merge_inputs(rows)
    base = 0
    for i, n in enumerate(sizes):  # pto-isa payload: a global arange
        inputs["P"][i, :n] = np.arange(base, base + n)
        base += n
    body = merge_body(len(sizes), True, top_k=top_k, exhausted=exhausted)
    res = check("merge", inputs, body, tiles=tiles, status=0)  # sorted finite: no status
    ops = bundle_ops(res)
    assert ops["TMRGSORT"] == len(sizes) - 1  # k - 1 merges for the values


@pytest.mark.parametrize("matrix", [False, True], ids=["sort-path", "matrix-path"])
@pytest.mark.parametrize("descending", [True, False])
def test_merge_status_is_exactly_the_reference(matrix, descending):
    """Sorted finite lists publish no status at all (the old compare path, a TSUB of the
    values and a saturating TCVT to U32, raised NV|NX, and OF near +-3e38); infinities,
    quiet NaNs and signed zeros raise nothing either; one signalling NaN raises NV."""
    big = float(np.finfo(np.float32).max)
    base = [
        np.array([big, 3e38, 1.5, 1.0 + 2.0**-23, 1e-45, 0.0, -3e38, -big], np.float32),
        np.array([np.inf, big, 2.0**-126, -0.0, -1e-45, -big, -np.inf, np.nan], np.float32),
        np.array([3e38, 1.0, -1.0, -3e38], np.float32),
    ]
    reps = 4 if matrix else 1  # more than 64 records take the compare matrices
    rows = [sorted_row(np.tile(r, reps), descending) for r in base]
    inputs, tiles = merge_inputs(rows)
    for kw in ({}, {"top_k": 5}, {"exhausted": True}):
        body = merge_body(3, True, descending=descending, **kw)
        check("merge", inputs, body, tiles=tiles, status=0)
    snan = np.array([0x7F800001], np.uint32).view(np.float32)[0]
    rows[2] = sorted_row(np.append(rows[2], snan), descending)
    inputs, tiles = merge_inputs(rows)
    body = merge_body(3, True, descending=descending, top_k=3)
    check("merge", inputs, body, tiles=tiles, status=rs.merge_status(*rows))


def test_merge_without_payload_is_k_minus_1_tmrgsort():
    rng = np.random.default_rng(3)
    rows = _pto_lists(rng, np.float32, [32, 32, 32, 32])
    inputs, tiles = merge_inputs(rows)
    res = check("merge", inputs, merge_body(4, False), tiles=tiles)
    ops = bundle_ops(res)
    assert ops["TMRGSORT"] == 3
    # besides loads and stores: the merges, and the (constant) counts
    assert set(ops) <= {"TLOAD", "TSTORE", "TMRGSORT", "TEXPANDS", "TCONCAT"}


def test_unsorted_list_faults_before_any_store():
    from ptoc.runtime import TileLegalityFault

    rows = [np.array([1, 2, 3], np.float32), np.array([3, 2, 1], np.float32)]
    inputs, tiles = merge_inputs(rows)
    with pytest.raises(Exception) as e:
        check("merge", inputs, merge_body(2, True), tiles=tiles)
    # the reference rejects it, and so does the lowered TMRGSORT (checked directly)
    assert "not sorted" in str(e.value)
    module = build("merge", inputs, merge_body(2, True), tiles=tiles)
    with pytest.raises(TileLegalityFault, match="TMRGSORT"):
        run_lowered(module, inputs)


# ---------------------------------------------------------------- merge_blocks


@st.composite
def blocks_case(draw, unsorted=False):
    dt = draw(st.sampled_from(SORT_DTYPES))
    unit = 32 if dt == np.float32 else 16
    block = unit * draw(st.integers(1, 2))
    n = draw(st.integers(1, 4 * block + block))
    descending = draw(st.booleans())
    t = draw(float_tile(dt, 1, n))
    keep = draw(st.integers(0, n // block)) if unsorted else -1  # this block as drawn
    for i, s in enumerate(range(0, n, block)):
        if i != keep:
            t[0, s : s + block] = sorted_row(t[0, s : s + block], descending)
    return t, block, descending


@settings(max_examples=25)
@given(case=blocks_case(), payload=st.booleans(), seed=st.integers(0, 99))
def test_merge_blocks_lowering(case, payload, seed):
    t, block, descending = case
    inputs = {"t": t}
    if payload:
        inputs["p"] = u32(np.random.default_rng(seed), t.shape)

    def body(kb, x):
        res = kb.merge_blocks(x["t"], block, x.get("p"), descending=descending)
        return dict(zip(["v", "p"], res, strict=False))

    check("merge_blocks", inputs, body, status=rs.merge_status(t))


@settings(max_examples=25)
@given(case=blocks_case(unsorted=True), payload=st.booleans())
def test_merge_blocks_rejects_exactly_what_the_reference_rejects(case, payload):
    """One block as drawn (the tail and lone blocks included): the lowering rejects
    exactly the inputs the reference rejects, before any effect."""
    t, block, descending = case
    inputs = {"t": t}
    if payload:
        inputs["p"] = u32(np.random.default_rng(1), t.shape)

    def body(kb, x):
        res = kb.merge_blocks(x["t"], block, x.get("p"), descending=descending)
        return dict(zip(["v", "p"], res, strict=False))

    res = check_or_reject("merge_blocks", inputs, body, status=rs.merge_status(t))
    event("rejected" if res is None else "accepted")


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
    """pto-isa case_single1..8, with the arange payload."""
    rng = np.random.default_rng(19)
    v = rng.uniform(0, 1, records).astype(dt)
    for s in range(0, records, block):
        v[s : s + block] = np.sort(v[s : s + block])[::-1]
    inputs = {"v": v[None, :], "p": np.arange(records, dtype=np.uint32)[None, :]}

    def body(kb, x):
        m, p = kb.merge_blocks(x["v"], block, x["p"])
        return {"m": m, "p": p, "values_only": kb.merge_blocks(x["v"], block)[0]}

    check("merge_blocks", inputs, body, status=0)


@pytest.mark.parametrize(
    "n, block", [(32, 32), (20, 32), (160, 32), (150, 32), (16, 16), (80, 16)]
)
def test_merge_blocks_rejects_an_unsorted_block_that_is_a_group_alone(n, block):
    """A row of at most one block, or a one-block tail group: the reference rejects an
    unsorted block there like anywhere else, and so must the lowering (a TMRGSORT fault
    before any store), while a sorted one passes unchanged."""
    from ptoc.runtime import TileLegalityFault

    dt = np.float32 if block == 32 else np.float16
    v = np.zeros((1, n), dt)
    for s in range(0, n, block):
        v[0, s : s + block] = np.arange(min(block, n - s), 0, -1)
    last = (n - 1) // block * block
    check("merge_blocks", {"v": v}, lambda kb, x: kb.merge_blocks(x["v"], block)[0], status=0)
    v[0, last : last + 2] = v[0, last : last + 2][::-1].copy()  # the last group: unsorted
    with pytest.raises(Exception, match="not sorted"):
        check("merge_blocks", {"v": v}, lambda kb, x: kb.merge_blocks(x["v"], block)[0])
    module = build("merge_blocks", {"v": v}, lambda kb, x: kb.merge_blocks(x["v"], block)[0])
    with pytest.raises(TileLegalityFault, match="TMRGSORT"):
        run_lowered(module, {"v": v})


@pytest.mark.parametrize(
    "dt, records, top_k",
    [
        (np.float32, 1024, 256),
        (np.float32, 1024, 512),
        (np.float16, 1024, 1024),
        (np.float32, 640, 256),
    ],
)
def test_topk_pipeline(dt, records, top_k):
    """The pto-isa top-k cases as an example built from the interfaces: sort32 (32-record
    groups with their column index), four-block merges 32 -> 128 (a run of 512 and a
    shorter tail), then a two-way merge of the runs keeping the top k with their
    indices."""
    rng = np.random.default_rng(7)
    v = rng.uniform(-1, 1, (1, records)).astype(dt)
    v[0, 100:110] = v[0, 5]  # ties across groups
    tail = records - 512

    def body(kb, x):
        s, idx = kb.sort32(x["v"])
        s, idx = kb.merge_blocks(s, 32, idx)
        s, idx = kb.merge_blocks(s, 128, idx)
        lo = [kb.extract(a, (0, 0), (1, 512)) for a in (s, idx)]
        hi = [kb.extract(a, (0, 512), (1, tail)) for a in (s, idx)]
        top, pay, counts = kb.merge_sorted([lo[0], hi[0]], [lo[1], hi[1]], top_k=top_k)
        return {"top": top, "idx": pay, "counts": counts}

    res = check("topk", {"v": v}, body, status=0)
    want = v[0, np.argsort(-v[0].astype(np.float64), kind="stable")][:top_k]
    assert res.got["out_top"][0].tobytes() == want.tobytes()
    assert np.array_equal(v[0, res.got["out_idx"][0]], res.got["out_top"][0])


# ---------------------------------------------------------------- records


@given(dt=st.sampled_from(SORT_DTYPES), data=st.data(), seed=st.integers(0, 99))
def test_pack_unpack_records_lowering(dt, data, seed):
    v = data.draw(float_tile(dt, st.integers(1, 3), st.integers(1, 12)))
    p = u32(np.random.default_rng(seed), v.shape)

    def body(kb, x):
        packed = kb.pack_records(x["v"], x["p"])
        uv, up = kb.unpack_records(packed, "FP32" if dt == np.float32 else "FP16")
        return {"packed": packed, "v": uv, "p": up}

    check("records", {"v": v, "p": p}, body, status=rs.movement_status())


@pytest.mark.parametrize("container", [np.uint8, np.float32, np.uint16, np.int32])
@pytest.mark.parametrize("value", ["FP32", "FP16"])
def test_unpack_records_from_any_container(container, value):
    rng = np.random.default_rng(5)
    t = random_bits(rng, container, (3, 16 // np.dtype(container).itemsize * 2))

    def body(kb, x):
        v, p = kb.unpack_records(x["t"], value)
        return {"v": v, "p": p}

    check("unpack", {"t": t}, body, status=0)


def test_sort_lowering_selectors():
    """sort32 without a payload: TSORT plus the group base (TCI, TANDS, TCOLEXPAND,
    TADD); with a payload, TTRANS/TGATHER/TTRANS route it."""
    t = np.random.default_rng(1).standard_normal((4, 64)).astype(np.float32)
    res = check("sort32", {"t": t}, lambda kb, x: dict(zip("vp", kb.sort32(x["t"]))))
    ops = Counter(bundle_ops(res))
    assert ops["TSORT"] == 1 and ops["TGATHER"] == 0
