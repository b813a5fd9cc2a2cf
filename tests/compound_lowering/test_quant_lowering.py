"""quantize_rows, dequantize_rows, quantize_mx, dequantize_mx: the lowered bundles,
executed on the machine model, equal the reference semantics bit for bit."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ptoc.dialects.compound_ref import status as rs

from .data import float_tile, int_tile, random_bits
from .harness import bundle_ops, check

F32 = np.float32
ROWS, COLS = st.integers(1, 6), st.integers(1, 40)


def _column(draw, rows):
    return draw(float_tile(F32, rows, 1))


# ---------------------------------------------------------------- quantize_rows


@st.composite
def quant_case(draw):
    x = draw(float_tile(F32, ROWS, COLS))
    rows = x.shape[0]
    scale = draw(st.one_of(st.floats(width=32, allow_nan=True), st.just("tile")))
    offset = draw(st.one_of(st.none(), st.floats(-300, 300, width=32), st.just("tile")))
    dtype = draw(st.sampled_from(["S8", "U8"]))
    inputs = {"x": x}
    if scale == "tile":
        inputs["s"] = _column(draw, rows)
    if offset == "tile":
        inputs["o"] = _column(draw, rows)
    return inputs, scale, offset, dtype


@given(case=quant_case())
def test_quantize_rows_lowering(case):
    inputs, scale, offset, dtype = case

    def body(kb, t):
        s = t["s"] if scale == "tile" else scale
        o = t["o"] if offset == "tile" else offset
        return kb.quantize_rows(t["x"], s, o, dtype)

    rows = inputs["x"].shape[0]
    s_col, o_col = _param(inputs, "s", scale, rows), _param(inputs, "o", offset, rows)
    want = rs.quantize_rows_status(
        inputs["x"], s_col, o_col, np.int8 if dtype == "S8" else np.uint8
    )
    check("quant", inputs, body, status=want)


def _param(inputs, name, value, rows):
    """The (R, 1) FP32 column of a tile or scalar parameter (None stays None)."""
    if value == "tile":
        return inputs[name]
    if value is None:
        return None
    return np.full((rows, 1), value, F32)


def test_quantize_rows_double_rounding():
    """``fl32(x * s)`` is rounded before the integer rounding: the lowering must not fuse
    them. 25.443102f * 2.7708886f is 70.5000001157 exactly, 70.5 in FP32, so the result
    is 70 (an exact evaluation would give 71)."""
    x = np.array([[25.443102, 2.5, -0.5, 127.5, -128.5, np.inf, -np.inf, np.nan]], F32)
    s = np.array([[2.7708886]], F32)
    res = check("quant", {"x": x, "s": s}, lambda kb, t: kb.quantize_rows(t["x"], t["s"]))
    assert res.got["out"][0, 0] == 70


@pytest.mark.parametrize("rows", [64, 128, 256])
@pytest.mark.parametrize("sym", [True, False])
def test_quantize_rows_pto_isa_cases(rows, sym):
    """int8_sym (S8, no offset) and int8_asym (U8, float offsets), FP32 rows x 128."""
    rng = np.random.default_rng(43)
    x = rng.uniform(-10, 10, (rows, 128)).astype(F32)
    inputs = {"x": x, "s": rng.uniform(0.5, 20, (rows, 1)).astype(F32)}
    if not sym:
        inputs["o"] = rng.uniform(-50, 150, (rows, 1)).astype(F32)

    def body(kb, t):
        return kb.quantize_rows(t["x"], t["s"], t.get("o"), "S8" if sym else "U8")

    res = check("quant", inputs, body)
    ops = bundle_ops(res)
    assert ops["TQUANT"] >= 1 and ops["TROWEXPANDMUL"] >= 1


def test_scalar_quantize_rounds_the_product_first():
    """A scalar multiplier is TMULS then TQUANT 1.0: TQUANT's own multiplier rounds the
    exact product once (D10), the interface rounds fl32(x*m) first. D10's witness: the
    exact product 2.50000000326 is 2.5 in FP32, so the interface gives 2 (TQUANT alone 3)."""
    x = np.full((1, 8), np.uint32(0x3FA868D4)).view(F32)
    m = float(np.uint32(0x3FF3377A).view(F32))
    res = check("quant", {"x": x}, lambda kb, t: kb.quantize_rows(t["x"], m))
    assert res.got["out"].tolist() == [[2] * 8]
    ops = bundle_ops(res)
    assert ops["TMULS"] == 1 and ops["TQUANT"] == 1 and sum(ops.values()) == 4


# ---------------------------------------------------------------- dequantize_rows


@st.composite
def dequant_case(draw):
    dt = draw(st.sampled_from([np.int8, np.uint8, np.int16]))
    q = draw(int_tile(dt, ROWS, COLS))
    rows = q.shape[0]
    scale = draw(st.one_of(st.floats(width=32, allow_nan=True), st.just("tile")))
    offset = draw(
        st.one_of(
            st.none(), st.floats(-300, 300, width=32), st.integers(-128, 255), st.just("tile")
        )
    )
    inputs = {"q": q}
    if scale == "tile":
        inputs["s"] = _column(draw, rows)
    if offset == "tile":
        inputs["o"] = _column(draw, rows)
    return inputs, scale, offset


@given(case=dequant_case())
def test_dequantize_rows_lowering(case):
    inputs, scale, offset = case

    def body(kb, t):
        s = t["s"] if scale == "tile" else scale
        o = t["o"] if offset == "tile" else offset
        return kb.dequantize_rows(t["q"], s, o)

    rows = inputs["q"].shape[0]
    s_col, o_col = _param(inputs, "s", scale, rows), _param(inputs, "o", offset, rows)
    check("dequant", inputs, body, status=rs.dequantize_rows_status(inputs["q"], s_col, o_col))


@pytest.mark.parametrize(
    "dt, shape, zero_offset",
    [
        (np.int8, (32, 32), False),
        (np.int8, (31, 31), False),
        (np.int16, (15, 15), False),
        (np.int16, (4, 511), False),
        (np.int8, (4, 255), False),
        (np.int16, (64, 64), False),
        (np.int8, (63, 63), False),
        (np.int16, (64, 64), True),
        (np.int8, (63, 63), True),
    ],
)
def test_dequantize_rows_pto_isa_cases(dt, shape, zero_offset):
    rng = np.random.default_rng(47)
    info = np.iinfo(dt)
    q = rng.integers(info.min, info.max, shape, endpoint=True).astype(dt)
    s = rng.uniform(-2, 2, (shape[0], 1)).astype(F32)
    o = np.zeros((shape[0], 1), F32) if zero_offset else rng.uniform(-5, 5, (shape[0], 1))
    inputs = {"q": q, "s": s, "o": o.astype(F32)}
    check("dequant", inputs, lambda kb, t: kb.dequantize_rows(t["q"], t["s"], t["o"]))


def test_scalar_dequantize_is_one_tdequant():
    q = np.random.default_rng(1).integers(-128, 127, (8, 64)).astype(np.int8)
    res = check("dequant", {"q": q}, lambda kb, t: kb.dequantize_rows(t["q"], 0.5, -3))
    assert bundle_ops(res)["TDEQUANT"] == 1 and res.bundles == 3


# ---------------------------------------------------------------- MX


MX_DTYPES = [np.float32, np.float16, ml_dtypes.bfloat16]


@st.composite
def mx_tile(draw):
    dt = draw(st.sampled_from(MX_DTYPES))
    rows, groups = draw(st.integers(1, 4)), draw(st.integers(1, 3))
    t = draw(float_tile(dt, rows, 32 * groups))
    # special groups: all zero, tiny, one NaN, infinities, saturation edges
    kind = draw(st.sampled_from(["raw", "zero", "tiny", "nan", "inf", "edge"]))
    g = draw(st.integers(0, groups - 1))
    r = draw(st.integers(0, rows - 1))
    cols = slice(32 * g, 32 * g + 32)
    with np.errstate(all="ignore"):
        if kind == "zero":
            t[r, cols] = -0.0
        elif kind == "tiny":
            t[r, cols] = (t[r, cols].astype(np.float64) * 1e-40).astype(dt)
        elif kind == "nan":
            t[r, cols] = np.abs(np.nan_to_num(t[r, cols].astype(np.float64), nan=1.0)).astype(
                dt
            )
            t[r, 32 * g + draw(st.integers(0, 31))] = np.nan
        elif kind == "inf":
            t[r, 32 * g + draw(st.integers(0, 31))] = -np.inf
        elif kind == "edge":
            t[r, cols] = (
                np.array([448, 464, 480, 2.0**-9, 2.0**-10, 1.0], np.float64)
                .repeat(6)[:32]
                .astype(dt)
            )
    return t


def _mx_body(kb, x):
    e, s, amax, scaling = kb.quantize_mx(x["t"])
    return {"e": e, "s": s, "amax": amax, "scaling": scaling}


@given(t=mx_tile())
def test_quantize_mx_lowering(t):
    def body(kb, x):
        out = _mx_body(kb, x)
        return {**out, "back": kb.dequantize_mx(out["e"], out["s"])}

    check("mx", {"t": t}, body)


def _group(amax: float, dt, sign: float = 1.0) -> np.ndarray:
    """32 values whose largest magnitude is ``amax`` (the others smaller, mixed signs)."""
    g = np.linspace(0.0, 1.0, 32) * amax * np.where(np.arange(32) % 2, -1.0, 1.0)
    g[7] = sign * amax
    with np.errstate(over="ignore"):
        return g.astype(dt)


#: amax classes of the shared exponent: below 1 and not a power of two (TCVT to E8M0
#: with RTZ rounds those up), just above a power of two, the top binade (TCVT overflows
#: to 0xFF there), E = 8 and 9, subnormal amax, powers of two, a zero group
MX_AMAX = [0.75, 0.3, 2.0**-100 * 1.5, 2.0**-119 * 1.25, 1.0 + 2.0**-20, 3.0, 100.0,
           2.0**127 * 1.5, float(np.finfo(F32).max), 2.0**-118, 2.0**-119, 2.0**-126 * 1.5,
           2.0**-130, 2.0**-149, 0.5, 1.0, 2.0**127, 0.0]  # fmt: skip


@pytest.mark.parametrize("dt", MX_DTYPES, ids=["fp32", "fp16", "bf16"])
def test_quantize_mx_shared_exponent_of_every_amax_class(dt):
    """OCP MX: scale = floor(log2 amax) - 8, clamped to 0 (the biased FP32 exponent E of
    amax minus 8). amax 0.75 gives scale 118 and the element 0.75 * 2**9 = 384 (the old
    RTZ-to-E8M0 lowering gave 119 and 192); amax in (2**127, 2**128) gives 246 (it gave
    0xFF and NaN elements). Status: exactly the element step's (no NX/UF/NV from the
    exponent extraction)."""
    with np.errstate(over="ignore", under="ignore"):
        amaxes = [a for a in MX_AMAX if np.isfinite(np.asarray(a, np.float64).astype(dt))]
    groups = [_group(a, dt, -1.0 if i % 3 == 1 else 1.0) for i, a in enumerate(amaxes)]
    groups.append(_group(2.0, dt))
    groups[-1][3] = np.inf  # an infinite group: scale 247
    groups.append(_group(2.0, dt))
    groups[-1][5] = np.nan  # a NaN group: 0xFF
    t = np.stack(groups).reshape(len(groups), 32)  # one group per row
    res = check("mx", {"t": t}, _mx_body, status=rs.quantize_mx_status(t))
    scales = res.got["out_s"].view(np.uint8)[:, 0]
    if dt == np.float32:
        assert scales[0] == 118 and res.got["out_e"].astype(np.float64)[0, 7] == 384.0
        assert scales[amaxes.index(2.0**127 * 1.5)] == 246
    assert scales[-2] == 247 and scales[-1] == 0xFF


@given(t=mx_tile())
def test_quantize_mx_status(t):
    """Status per PE equals the reference status on adversarial tiles."""
    check("mx", {"t": t}, _mx_body, status=rs.quantize_mx_status(t))


@given(data=st.data())
def test_dequantize_mx_lowering(data):
    rows, groups = data.draw(st.integers(1, 4)), data.draw(st.integers(1, 3))
    seed = data.draw(st.integers(0, 999))
    rng = np.random.default_rng(seed)
    raw = data.draw(st.booleans())  # uint8 raw bits instead of E4M3 / E8M0
    e = random_bits(rng, np.uint8 if raw else ml_dtypes.float8_e4m3fn, (rows, 32 * groups))
    s = random_bits(rng, np.uint8 if raw else ml_dtypes.float8_e8m0fnu, (rows, groups))
    want = rs.dequantize_mx_status(e, s)
    check("dmx", {"e": e, "s": s}, lambda kb, x: kb.dequantize_mx(x["e"], x["s"]), status=want)


@pytest.mark.parametrize(
    "shape", [(32, 32), (32, 64), (64, 128), (128, 128), (64, 256), (64, 512)]
)
def test_quantize_mx_pto_isa_cases(shape):
    """A5 MXFP8: ND 32x32, 32x64, 64x128, 128x128; NZ 64x256, 64x512 (same values),
    with the generator's uniform(-100, 100) data (no element saturates at 448)."""
    rng = np.random.default_rng(53)
    x = rng.uniform(-100, 100, shape).astype(F32)

    def body(kb, t):
        e, s, amax, scaling = kb.quantize_mx(t["x"])
        return {"e": e, "s": s, "amax": amax, "scaling": scaling}

    res = check("mx", {"x": x}, body)
    back = res.got["out_e"].astype(np.float64).reshape(shape[0], -1, 32)
    back *= 2.0 ** (res.got["out_s"].view(np.uint8).astype(np.float64)[:, :, None] - 127)
    amax = res.got["out_amax"][:, :, None]
    assert np.all(np.abs(back - x.reshape(back.shape)) <= 2.0**-4 * amax)
