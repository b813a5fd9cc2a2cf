"""The IR's D11 account (``dialects.matmul_d11``) against the executor's
(``semantics.matmul``, itself checked against an exact Fraction oracle): two independent
implementations of the CUBE numerics must agree bit for bit, status included, over raw
bit patterns of every legal pair (every binade, subnormals, NaN payloads, signalling
NaNs, +-0, +-Inf), accumulators, biases, ReLU and MX scales of every code."""

from __future__ import annotations

import os

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from ptoc.backend.isa import DataType, info
from ptoc.backend.isa.semantics import fpatr as sf
from ptoc.backend.isa.semantics import matmul as sm
from ptoc.backend.isa.semantics.core import from_bits
from ptoc.dialects.matmul_d11 import d11_matmul, round_step, round_step_exact

D = DataType
EXAMPLES = 60 if os.environ.get("HYPOTHESIS_PROFILE", "ci") == "ci" else 2000
_VALID = {D.TF32: ~0x1FFF, D.HF32: ~0x0FFF, D.E3M2: 0x3F, D.E2M3: 0x3F}
PAIRS = sorted(
    {
        (a, b)
        for a in sm.MATRIX_INPUT_TYPES
        for b in sm.MATRIX_INPUT_TYPES
        if sm.pair_legal(a, b)
    },
    key=lambda p: (int(p[0]), int(p[1])),
)
MX_PAIRS = sorted(
    {(a, b) for a in sm.MX_INPUT_TYPES for b in sm.MX_INPUT_TYPES
     if info(a).bits >= 8 and info(b).bits >= 8 and sm.pair_legal(a, b, True)},
    key=lambda p: (int(p[0]), int(p[1])),
)  # fmt: skip


def _raw(rng: np.random.Generator, dt: DataType, shape: tuple[int, int], style: str):
    bits = info(dt).bits
    raw = rng.integers(0, 1 << bits, shape, dtype=np.uint64)
    if style == "narrow" and info(dt).is_float:
        # one binade's worth of exponents around 1 with full significands: long sums
        # that round, tie and cancel
        sign = raw & np.uint64(1 << (bits - 1))
        one = from_bits(np.zeros(shape, np.uint64), dt)
        one = np.ones(shape, one.dtype)
        ob = np.ascontiguousarray(one).view(f"u{one.itemsize}").astype(np.uint64)
        frac = raw & np.uint64((1 << max(1, bits // 3)) - 1)
        raw = sign | (ob + frac)
    mask = _VALID.get(dt)
    if mask is not None:
        raw &= np.uint64(mask & ((1 << bits) - 1))
    return from_bits(raw, dt)


def _same(x: np.ndarray, y: np.ndarray) -> bool:
    x, y = np.ascontiguousarray(x), np.ascontiguousarray(y)
    return x.dtype == y.dtype and np.array_equal(
        x.view(f"u{x.itemsize}"), y.view(f"u{y.itemsize}")
    )


@settings(max_examples=EXAMPLES, deadline=None)
@given(
    pair=st.sampled_from(PAIRS),
    m=st.integers(1, 5),
    n=st.integers(1, 5),
    k=st.integers(1, 40),
    acc=st.booleans(),
    bias=st.booleans(),
    relu=st.booleans(),
    style=st.sampled_from(["raw", "narrow"]),
    seed=st.integers(0, 2**32 - 1),
)
def test_ir_reference_is_the_executors_d11(pair, m, n, k, acc, bias, relu, style, seed) -> None:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(seed)
    a_t, b_t = pair
    r_t = sm.accumulator_type(a_t, b_t)
    a, b = _raw(rng, a_t, (m, k), style), _raw(rng, b_t, (k, n), style)
    c = _raw(rng, r_t, (m, n), style) if acc else None
    bi = _raw(rng, r_t, (1, n), style) if bias else None
    got, st_ = d11_matmul(a, a_t, b, b_t, acc=c, bias=bi, relu=relu)
    want = sm.matmul(a, a_t, b, b_t, acc=c, bias=bi, fpatr=sf.Fpatr(relu_mode=int(relu)),
                     exact=True)  # fmt: skip
    assert _same(got, want.d)
    assert st_ == want.status


@settings(max_examples=EXAMPLES, deadline=None)
@given(
    pair=st.sampled_from(MX_PAIRS),
    m=st.integers(1, 4),
    n=st.integers(1, 4),
    k=st.sampled_from([1, 31, 33, 70]),
    acc=st.booleans(),
    bias=st.booleans(),
    relu=st.booleans(),
    seed=st.integers(0, 2**32 - 1),
)
def test_ir_reference_is_the_executors_mx_d11(pair, m, n, k, acc, bias, relu, seed) -> None:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(seed)
    a_t, b_t = pair
    a, b = _raw(rng, a_t, (m, k), "raw"), _raw(rng, b_t, (k, n), "raw")
    blocks = sm.scale_blocks(k)
    sa = from_bits(rng.integers(0, 256, (m, blocks), dtype=np.uint64), D.E8M0)
    sb = from_bits(rng.integers(0, 256, (blocks, n), dtype=np.uint64), D.E8M0)
    sa = sa if sm.needs_scale(a_t, True) else None
    sb = sb if sm.needs_scale(b_t, True) else None
    c = _raw(rng, D.FP32, (m, n), "raw") if acc else None
    bi = _raw(rng, D.FP32, (1, n), "raw") if bias else None
    got, st_ = d11_matmul(a, a_t, b, b_t, acc=c, bias=bi, a_scale=sa, b_scale=sb, mx=True,
                          relu=relu)  # fmt: skip
    want = sm.matmul(a, a_t, b, b_t, acc=c, bias=bi, a_scale=sa, b_scale=sb, mx=True,
                     fpatr=sf.Fpatr(relu_mode=int(relu)), exact=True)  # fmt: skip
    assert _same(got, want.d)
    assert st_ == want.status


def test_round_step_edges() -> None:
    """Ties broken by the exact error, the overflow threshold, tininess after rounding,
    signed zeros and the IEEE special rules, each against a hand-derived FP32 result."""
    f = np.float64
    cases = [
        # (s, p, result, flags)
        (1.0, 2.0**-24, 1.0, NX_),  # an exact tie: to even
        (1.0, 2.0**-24 + 2.0**-70, 1.0 + 2.0**-23, NX_),  # just above the tie
        (1.0 + 2.0**-23, 2.0**-24, 1.0 + 2.0**-22, NX_),  # a tie to the even above
        (1.0, -(2.0**-24) - 2.0**-70, 1.0 - 2.0**-24, NX_),  # below 1: the finer grid
        (2.0**127 * (2 - 2.0**-23), 2.0**103, np.inf, OF_ | NX_),  # tie past MAX: Inf
        (2.0**127 * (2 - 2.0**-23), 2.0**103 - 2.0**60, 2.0**127 * (2 - 2.0**-23), NX_),
        (2.0**-126, -(2.0**-150), 2.0**-126, UF_ | NX_),  # tiny and inexact after rounding
        (0.0, 2.0**200, np.inf, OF_ | NX_),  # an exact product past FP32: overflow
        (2.0**-149, 2.0**-149, 2.0**-148, 0),  # exact subnormal sum: no flags
        (-0.0, -0.0, -0.0, 0),
        (1.0, -1.0, 0.0, 0),
        (np.inf, -np.inf, np.nan, NV_),
        (np.inf, 5.0, np.inf, 0),
    ]
    for s, p, want, flags in cases:
        r, st_ = round_step(np.array([f(s)]), np.array([f(p)]))
        assert st_ == flags, (s, p, st_)
        if np.isnan(want):
            assert np.isnan(r[0])
        else:
            assert r[0] == want and np.signbit(r[0]) == np.signbit(want), (s, p, r[0])


NV_, OF_, UF_, NX_ = 1, 4, 8, 16


def _pairs(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Accumulators on the FP32 grid (raw bits: every binade, subnormals, +-0, Inf, NaN)
    and exact products of two FP32 values, with ties: ``p`` half an ulp of ``s``, give
    or take a product far below it, and sums near the overflow threshold."""
    s32 = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32).view(np.float32)
    x = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32).view(np.float32)
    y = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32).view(np.float32)
    with np.errstate(all="ignore"):
        s = s32.astype(np.float64)
        p = x.astype(np.float64) * y.astype(np.float64)
        kind = rng.integers(0, 6, n)
        _, e = np.frexp(s)
        half = np.ldexp(1.0, e - 25)  # half an FP32 ulp of a normal s
        # below half a float64 ulp of the sum, above one of the product: a tie in the
        # float64 sum that only the exact error breaks
        tiny = np.ldexp(1.0, e - 60) * rng.choice([-1.0, 0.0, 1.0], n)
        p = np.where(kind == 1, half + tiny, p)
        p = np.where(kind == 2, -half + tiny, p)
        p = np.where(kind == 3, rng.standard_normal(n), p)  # sums that cancel and round
        s = np.where(kind == 3, rng.standard_normal(n).astype(np.float32), s)
        big = 2.0**127 * (2 - 2.0**-23)
        p = np.where(kind == 4, 2.0**103 + rng.choice([-1.0, 0.0, 1.0], n) * 2.0**60, p)
        s = np.where(kind == 4, big, s)
    return s, p


@settings(max_examples=EXAMPLES, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 64))
def test_the_fast_round_step_is_the_exact_one(seed: int, n: int) -> None:
    """``round_step`` (decided on the float64 sum, the rest by the grid) against
    ``round_step_exact`` (every element by the grid): the same bits and flags."""
    rng = np.random.default_rng(seed)
    s, p = _pairs(rng, n)
    got, got_st = round_step(s, p)
    want, want_st = round_step_exact(s, p)
    assert got_st == want_st
    assert np.array_equal(got.view(np.uint64), want.view(np.uint64)) or (
        np.array_equal(np.isnan(got), np.isnan(want))
        and np.array_equal(got[~np.isnan(got)].view(np.uint64),
                           want[~np.isnan(want)].view(np.uint64))
    )  # fmt: skip
    # and each element alone (the flags of one element, not a union that hides one)
    for i in range(min(n, 8)):
        one, one_st = round_step(s[i : i + 1], p[i : i + 1])
        ref, ref_st = round_step_exact(s[i : i + 1], p[i : i + 1])
        assert one_st == ref_st, (s[i], p[i])
        assert np.isnan(one[0]) == np.isnan(ref[0])
        if not np.isnan(ref[0]):
            assert one.view(np.uint64)[0] == ref.view(np.uint64)[0], (s[i], p[i])
