"""partial_add/mul/max/min where neither source covers the destination, one source is
empty, or one covers it: the lowered bundles equal the reference bit for bit."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ptoc.dialects.compound_ref import status as rs
from ptoc.dialects.compound_ref.partial import default_pad

from .data import float_tile, int_tile, random_bits
from .harness import bundle_ops, check

DTYPES = {
    "FP32": np.float32,
    "FP16": np.float16,
    "BF16": ml_dtypes.bfloat16,
    "S32": np.int32,
    "S16": np.int16,
    "S8": np.int8,
    "U32": np.uint32,
    "U16": np.uint16,
    "U8": np.uint8,
}
KINDS = ("add", "mul", "max", "min")


def _tile(draw, dt, rows, cols):
    if np.dtype(dt).kind in "iu":
        return draw(int_tile(dt, rows, cols))
    return draw(float_tile(dt, rows, cols))


@st.composite
def partial_case(draw):
    name = draw(st.sampled_from(sorted(DTYPES)))
    dt = DTYPES[name]
    rows, cols = draw(st.integers(1, 9)), draw(st.integers(1, 24))
    srcs = []
    for _ in range(2):
        if draw(st.integers(0, 5)) == 0:
            srcs.append(None)  # an empty source
        else:
            srcs.append(_tile(draw, dt, st.integers(1, rows), st.integers(1, cols)))
    pad = None
    if draw(st.booleans()):
        pad = draw(st.sampled_from([0, 1, 7])) if np.dtype(dt).kind in "iu" else -2.5
    return name, srcs, (rows, cols), pad


def partial_body(kind, name, shape, pad):
    def body(kb, x):
        return kb.partial(kind, x.get("a"), x.get("b"), shape, pad, dtype=name)

    return body


@given(case=partial_case(), kind=st.sampled_from(KINDS))
def test_partial_lowering(case, kind):
    name, (a, b), shape, pad = case
    inputs = {k: v for k, v in (("a", a), ("b", b)) if v is not None}
    if not inputs:
        inputs["unused"] = np.zeros((1, 1), DTYPES[name])
    want = 0 if a is None or b is None else rs.partial_status(kind, a, b)
    check("partial", inputs, partial_body(kind, name, shape, pad), status=want)


def test_covered_nan_and_signed_zero_survive():
    """A NaN or -0 covered by one source is copied bit for bit (a pad-then-TMAX
    formulation would turn the NaN into the pad); both-covered NaNs follow TMAX."""
    a = np.array([[np.nan, -0.0, 1.0, np.nan], [2.0, -0.0, np.nan, 3.0]], np.float32)
    a.view(np.uint32)[0, 3] = 0xFFC00001
    b = np.array([[5.0, 0.0], [np.nan, 1.0], [np.nan, -0.0]], np.float32)
    for kind in KINDS:
        body = partial_body(kind, "FP32", (3, 4), None)
        check("partial", {"a": a, "b": b}, body, status=rs.partial_status(kind, a, b))


@pytest.mark.parametrize("kind", ["max", "min"])
@pytest.mark.parametrize("name", sorted(DTYPES))
def test_partial_max_min_pto_isa_neither_covers(kind, name):
    """A5/Kirin TPARTMAX/MIN at 122x123 with sources 104x123 and 122x110."""
    rng = np.random.default_rng(59)
    dt = DTYPES[name]
    a = random_bits(rng, dt, (104, 123))
    b = random_bits(rng, dt, (122, 110))
    body = partial_body(kind, name, (122, 123), None)
    res = check("partial", {"a": a, "b": b}, body, status=rs.partial_status(kind, a, b))
    assert bundle_ops(res)[f"TPART{kind.upper()}"] == 1  # the band both sources cover


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("src", [(16, 0), (0, 32)])
def test_partial_pto_isa_empty_source(kind, src):
    """a2a3 testEmpty*: a 16x0 or 0x32 source covers nothing; the result is the other."""
    a = random_bits(np.random.default_rng(61), np.float32, (16, 32))
    res = check("partial", {"a": a}, partial_body(kind, "FP32", (16, 32), None), status=0)
    assert res.bundles == 2  # the load and the store: a rename
    del src


@pytest.mark.parametrize(
    "kind, name, dst, sa, sb",
    [
        ("add", "FP32", (64, 64), (64, 64), (8, 64)),
        ("add", "FP32", (64, 64), (64, 64), (64, 8)),
        ("max", "FP16", (8, 48), (8, 48), (8, 16)),
        ("min", "FP16", (8, 768), (8, 768), (8, 512)),
        ("mul", "S16", (8, 48), (8, 16), (8, 48)),
        ("add", "S32", (64, 64), (8, 64), (64, 64)),
        ("mul", "FP32", (128, 64), (96, 64), (128, 64)),
        ("max", "FP16", (5, 33), (5, 33), (5, 33)),
        ("mul", "S8", (8, 48), (8, 48), (8, 16)),
        ("mul", "U8", (9, 20), (5, 20), (9, 7)),
    ],
)
def test_partial_pto_isa_one_source_covers(kind, name, dst, sa, sb):
    rng = np.random.default_rng(67)
    dt = DTYPES[name]
    a, b = random_bits(rng, dt, sa), random_bits(rng, dt, sb)
    body = partial_body(kind, name, dst, None)
    res = check("partial", {"a": a, "b": b}, body, status=rs.partial_status(kind, a, b))
    if name not in ("S8", "U8") or kind != "mul":
        assert bundle_ops(res)[f"TPART{kind.upper()}"] == 1


def test_default_pads_are_the_reference_pads():
    for name, dt in DTYPES.items():
        for kind in KINDS:
            body = partial_body(kind, name, (3, 5), None)
            res = check("partial", {"unused": np.zeros((1, 1), dt)}, body, status=0)
            want = np.full((3, 5), default_pad(kind, dt), dt)
            assert res.got["out"].tobytes() == want.tobytes()
