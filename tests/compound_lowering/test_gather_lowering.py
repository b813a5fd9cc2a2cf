"""gather_pattern, gather_flat, gather_blocks, scatter_flat, transpose: the lowered
bundles, executed on the machine model, equal the reference semantics bit for bit."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ptoc.dialects.compound_ref.gather import PATTERNS

from .data import any_tile, random_bits
from .harness import build, bundle_ops, check, check_or_reject, run_lowered

DTYPES = [
    np.float32,
    np.float16,
    ml_dtypes.bfloat16,
    np.int32,
    np.uint32,
    np.int16,
    np.uint16,
    np.int8,
    np.uint8,
    ml_dtypes.float8_e4m3fn,
]
ROWS, COLS = st.integers(1, 4), st.integers(1, 40)
SAME_WIDTH = {1: "U8", 2: "S16", 4: "S32"}


# ---------------------------------------------------------------- mask patterns


@given(
    t=any_tile(DTYPES, ROWS, COLS),
    pattern=st.sampled_from(sorted(PATTERNS)),
    computed=st.booleans(),
)
def test_gather_pattern_lowering(t, pattern, computed):
    """Of the loaded tile (the strided view reads its tensor when C % period == 0) and
    of a computed copy of it (two TTRANS: the transposed gather)."""
    if t.shape[1] <= PATTERNS[pattern][1]:
        return  # keeps no column: rejected (test_rejections)

    def body(kb, x):
        src = kb.trans(kb.trans(x["t"])) if computed else x["t"]
        return kb.gather_pattern(src, pattern)

    check("pattern", {"t": t}, body, status=0)


@settings(max_examples=20)
@given(t=any_tile(DTYPES, ROWS, COLS), pattern=st.sampled_from(sorted(PATTERNS)))
def test_gather_pattern_reinterprets(t, pattern):
    if t.shape[1] <= PATTERNS[pattern][1]:
        return
    dtype = SAME_WIDTH[t.dtype.itemsize]

    def body(kb, x):
        return kb.gather_pattern(x["t"], pattern, dtype)

    check("pattern", {"t": t}, body, status=0)


FP32_FAMILY = [
    ("P0101", (4, 64)),
    ("P1010", (7, 1024)),
    ("P0001", (3, 1056)),
    ("P0010", (4, 128)),
    ("P0100", (5, 256)),
    ("P1000", (6, 288)),
    ("P1111", (7, 320)),
]


@pytest.mark.parametrize(
    "dt", [np.float32, np.float16, np.int16, np.uint16, np.int32, np.uint32, np.int8, np.uint8]
)
@pytest.mark.parametrize("pattern, shape", FP32_FAMILY)
def test_gather_pattern_pto_isa_cases(pattern, shape, dt):
    if np.dtype(dt).itemsize == 2 and pattern == "P0101":
        shape = (5, 128)  # the FP16 family's P0101 case
    t = random_bits(np.random.default_rng(23), dt, shape)
    check("pattern", {"t": t}, lambda kb, x: kb.gather_pattern(x["t"], pattern), status=0)


def test_gather_pattern_float_int_reinterpretation():
    """pto-isa case1_float_int_P1010: f32 source, s32 destination (the same bits)."""
    t = random_bits(np.random.default_rng(2), np.float32, (4, 64))
    check(
        "pattern", {"t": t}, lambda kb, x: kb.gather_pattern(x["t"], "P1010", "S32"), status=0
    )


# ---------------------------------------------------------------- flat gather


@st.composite
def flat_case(draw):
    t = draw(any_tile(DTYPES, ROWS, COLS))
    r, c = draw(st.integers(1, 4)), draw(st.integers(1, 12))
    idt = draw(st.sampled_from([np.int32, np.uint32, np.int16, np.uint16, np.int64]))
    hi = min(t.size - 1, np.iinfo(idt).max)
    offs = draw(st.lists(st.integers(0, hi), min_size=r * c, max_size=r * c))
    return t, np.array(offs, idt).reshape(r, c)


@given(case=flat_case())
def test_gather_flat_lowering(case):
    t, offs = case
    check("flat", {"t": t, "o": offs}, lambda kb, x: kb.gather_flat(x["t"], x["o"]), status=0)


@pytest.mark.parametrize(
    "dt, src, dst, idx_dt",
    [
        (np.float32, (32, 1024), (16, 64), np.int32),
        (np.int32, (32, 512), (16, 256), np.int32),
        (np.float16, (16, 1024), (16, 128), np.int32),
        (np.float16, (16, 1024), (16, 128), np.int16),
        (np.int16, (32, 256), (32, 64), np.int32),
    ],
)
def test_gather_flat_pto_isa_cases(dt, src, dst, idx_dt):
    rng = np.random.default_rng(29)
    t = random_bits(rng, dt, src)
    offs = rng.integers(0, min(t.size, np.iinfo(idx_dt).max + 1), dst).astype(idx_dt)
    check("flat", {"t": t, "o": offs}, lambda kb, x: kb.gather_flat(x["t"], x["o"]), status=0)


@pytest.mark.parametrize("shape", [(9, 1000), (24, 1024), (40, 1000)])
def test_gather_flat_chunk_edges(shape):
    """A source of several chunks (8192 FP32 elements each), the last one full or
    shorter: offsets at every chunk's first and last element, and random ones."""
    rng = np.random.default_rng(31)
    t = random_bits(rng, np.float32, shape)
    edges = [e for c in range(0, t.size, 8192) for e in (c, c + 1, min(c + 8191, t.size - 1))]
    offs = np.concatenate([edges, rng.integers(0, t.size, 64 - len(edges))])
    offs = offs.astype(np.int32).reshape(8, 8)
    check("flat", {"t": t, "o": offs}, lambda kb, x: kb.gather_flat(x["t"], x["o"]), status=0)


@st.composite
def wild_offsets(draw, size, shape, dtypes):
    """Offsets around the valid range ``0 .. size - 1``: in range, -1, ``size`` and
    beyond, each element independently (so most tiles hold a rejected offset)."""
    idt = np.dtype(draw(st.sampled_from(dtypes)))
    lo, hi = np.iinfo(idt).min, np.iinfo(idt).max
    el = st.one_of(st.integers(0, size - 1), st.sampled_from([size, size + 7]), st.just(-1))
    n = shape[0] * shape[1]
    vals = [v for v in draw(st.lists(el, min_size=n, max_size=n))]
    return np.array([min(max(v, lo), hi) for v in vals], idt).reshape(shape)


@given(data=st.data())
def test_gather_and_scatter_flat_reject_exactly_what_the_reference_rejects(data):
    """Out-of-range offsets: the lowering faults before any effect exactly when the
    reference rejects them (gather_flat, scatter_flat)."""
    t = data.draw(any_tile(DTYPES, ROWS, COLS))
    dts = [np.int32, np.uint32, np.int16, np.uint16]
    offs = data.draw(wild_offsets(t.size, (2, 3), dts))
    body0 = lambda kb, x: kb.gather_flat(x["t"], x["o"])  # noqa: E731
    check_or_reject("flat", {"t": t, "o": offs}, body0, status=0)
    shape = (data.draw(st.integers(1, 3)), data.draw(st.integers(1, 6)))
    soffs = data.draw(wild_offsets(shape[0] * shape[1], t.shape, dts))
    body = lambda kb, x: kb.scatter_flat(x["t"], x["o"], shape)  # noqa: E731
    check_or_reject("scatter", {"t": t, "o": soffs}, body, status=0)


def test_gather_flat_out_of_range_faults():
    """Offsets past the source make the lowered block illegal (the reference rejects them
    too), also when the source is gathered in chunks."""
    from ptoc.runtime import TileLegalityFault

    rng = np.random.default_rng(1)
    for shape in ((4, 8), (32, 1024), (9, 1000)):  # one chunk, four full, full + short
        t = random_bits(rng, np.float32, shape)
        for bad in (t.size, t.size + 5, -1):
            offs = np.zeros((2, 3), np.int32)
            offs[1, 2] = bad
            module = build(
                "flat", {"t": t, "o": offs}, lambda kb, x: kb.gather_flat(x["t"], x["o"])
            )
            with pytest.raises(TileLegalityFault, match="TGATHER"):
                run_lowered(module, {"t": t, "o": offs})


# ---------------------------------------------------------------- block gather


@st.composite
def blocks_case(draw):
    dt = np.dtype(draw(st.sampled_from(DTYPES)))
    per_block = 32 // dt.itemsize
    rows = draw(st.integers(1, 4))
    cols = per_block * draw(st.integers(1, 3)) + draw(st.integers(0, per_block - 1))
    t = random_bits(np.random.default_rng(draw(st.integers(0, 99))), dt, (rows, cols))
    nblocks = t.nbytes // 32
    r, nb = draw(st.integers(1, 3)), draw(st.integers(1, 4))
    ids = draw(st.lists(st.integers(0, nblocks - 1), min_size=r * nb, max_size=r * nb))
    odt = draw(st.sampled_from([np.uint32, np.int32, np.uint16]))
    offs = np.array(ids) * 32
    if draw(st.booleans()):  # one offset unaligned or past the end: rejected
        offs[draw(st.integers(0, offs.size - 1))] = draw(
            st.sampled_from([nblocks * 32, 4, 33, 32 * nblocks + 64])
        )
    return t, offs.astype(odt).reshape(r, nb)


@settings(max_examples=30)
@given(case=blocks_case())
def test_gather_blocks_lowering(case):
    t, offs = case
    if t.nbytes < 32:
        return
    body = lambda kb, x: kb.gather_blocks(x["t"], x["o"])  # noqa: E731
    check_or_reject("blocks", {"t": t, "o": offs}, body, status=0)


@pytest.mark.parametrize(
    "dt, src, offs",
    [
        (np.float32, (2, 128), (2, 16)),
        (np.int32, (2, 128), (2, 16)),
        (np.uint32, (2, 128), (2, 16)),
        (np.int16, (1, 32768), (1, 2048)),
        (np.float16, (1, 32768), (1, 2048)),
        (np.uint16, (257, 128), (257, 8)),
        (np.int8, (2, 256), (2, 8)),
        (np.int8, (2, 32768), (2, 1024)),
        (np.uint8, (2, 32768), (2, 1024)),
    ],
)
def test_gather_blocks_pto_isa_cases(dt, src, offs):
    """Upstream offsets are i * 32 (an identity copy); the reversed blocks make it a real
    permutation."""
    rng = np.random.default_rng(31)
    t = random_bits(rng, dt, src)
    ident = (np.arange(offs[0] * offs[1]) * 32 % t.nbytes).reshape(offs).astype(np.uint32)
    rev = ident[:, ::-1].copy()

    def body(kb, x):
        return {"id": kb.gather_blocks(x["t"], x["i"]), "rev": kb.gather_blocks(x["t"], x["r"])}

    # a single 32768-element row cannot be cut into row pieces: whole tiles up to 64 KiB
    check("blocks", {"t": t, "i": ident, "r": rev}, body, max_tile_bytes=65536, status=0)


def test_gather_blocks_unaligned_offset_faults():
    from ptoc.runtime import TileLegalityFault

    t = random_bits(np.random.default_rng(3), np.float32, (2, 64))
    offs = np.array([[0, 32, 48]], np.uint32)
    module = build(
        "blocks", {"t": t, "o": offs}, lambda kb, x: kb.gather_blocks(x["t"], x["o"])
    )
    with pytest.raises(TileLegalityFault, match="TGATHER"):
        run_lowered(module, {"t": t, "o": offs})


# ---------------------------------------------------------------- scatter


@st.composite
def scatter_case(draw):
    t = draw(any_tile(DTYPES, ROWS, st.integers(1, 24)))
    r, c = draw(st.integers(1, 4)), draw(st.integers(1, 12))
    idt = draw(st.sampled_from([np.int32, np.uint16, np.int16, np.uint32]))
    hot = draw(st.integers(0, r * c - 1))  # many duplicates of one target
    el = st.one_of(st.just(hot), st.integers(0, r * c - 1))
    offs = np.array(draw(st.lists(el, min_size=t.size, max_size=t.size)), idt)
    into = draw(st.booleans())
    return t, offs.reshape(t.shape), (r, c), into


@given(case=scatter_case(), seed=st.integers(0, 99))
def test_scatter_flat_lowering(case, seed):
    t, offs, shape, into = case
    inputs = {"t": t, "o": offs}
    if into:
        inputs["i"] = random_bits(np.random.default_rng(seed), t.dtype, shape)

    def body(kb, x):
        return kb.scatter_flat(x["t"], x["o"], shape, x.get("i"))

    check("scatter", inputs, body, status=0)


@pytest.mark.parametrize(
    "dt, shape, idx_dt, idx_shape",
    [
        (np.int16, (2, 32), np.uint16, (1, 32)),
        (np.float16, (63, 64), np.uint16, None),
        (np.int32, (31, 128), np.uint32, None),
        (np.int16, (15, 192), np.int16, None),
        (np.float32, (7, 448), np.int32, None),
        (np.int8, (256, 32), np.uint16, None),
        (np.float32, (32, 64), np.uint32, None),
        (ml_dtypes.bfloat16, (32, 64), np.int16, None),
    ],
)
def test_scatter_flat_pto_isa_cases(dt, shape, idx_dt, idx_shape):
    """Heavy duplicates: upstream indices keep the column (``idx % cols == c``), drawn
    from few rows. The (2, 32) case has a one-row index: only the first row scatters."""
    rng = np.random.default_rng(37)
    rows, cols = shape if idx_shape is None else idx_shape
    t = random_bits(rng, dt, (rows, cols))
    lim = 16 if np.iinfo(idx_dt).max < rows * cols else rows
    offs = (rng.integers(0, min(rows, lim), (rows, cols)) * cols + np.arange(cols)).astype(
        idx_dt
    )
    check(
        "scatter",
        {"t": t, "o": offs},
        lambda kb, x: kb.scatter_flat(x["t"], x["o"], shape),
        status=0,
    )


def test_scatter_flat_out_of_range_faults():
    from ptoc.runtime import TileLegalityFault

    t = random_bits(np.random.default_rng(3), np.float32, (2, 4))
    offs = np.array([[0, 1, 2, 3], [4, 5, 6, 12]], np.int32)
    body = lambda kb, x: kb.scatter_flat(x["t"], x["o"], (3, 4))  # noqa: E731
    module = build("scatter", {"t": t, "o": offs}, body)
    with pytest.raises(TileLegalityFault, match="TGATHER"):
        run_lowered(module, {"t": t, "o": offs})


# ---------------------------------------------------------------- transpose


@given(t=any_tile(DTYPES, st.integers(1, 9), st.integers(1, 40)), scratch=st.booleans())
def test_transpose_lowering(t, scratch):
    def body(kb, x):
        return {
            "t": kb.transpose(x["t"], x["t"] if scratch else None),
            "bits": kb.transpose(x["t"], None, SAME_WIDTH[t.dtype.itemsize]),
        }

    res = check("transpose", {"t": t}, body, status=0)
    assert bundle_ops(res)["TTRANS"] == 2  # the scratch tile costs nothing


@pytest.mark.parametrize(
    "dt, shape",
    [
        (np.float32, (1, 8)),
        (np.float16, (9, 512)),
        (np.int8, (512, 2)),
        (np.uint8, (27, 77)),
        (np.float32, (31, 15)),
        (np.float16, (22, 63)),
    ],
)
def test_transpose_pto_isa_cases(dt, shape):
    t = random_bits(np.random.default_rng(41), dt, shape)
    check("transpose", {"t": t}, lambda kb, x: kb.transpose(x["t"], x["t"]), status=0)
