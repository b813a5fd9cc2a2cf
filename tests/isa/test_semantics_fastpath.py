"""The native fast paths (``semantics.fastpath``) are bit-identical to the exact engine.

Every accelerated operation x DataType is run twice on the same operands: through the
fast path (the default) and through the exact engine (``exact=True`` for
``core.binary``/``core.unary``, :func:`fastpath.exact_only` for everything built on
them: reductions, expansions, tile-scalar ops, EXPDIF). Results are compared as raw
bits (NaN payloads and zero signs included) together with the status vectors.

Operands are adversarial: signed zeros, subnormals, smallest/largest normals, +-Inf,
quiet and signalling NaNs with payloads, values around the overflow and underflow
boundaries of each operation, ordinary values whose results are exact (to exercise the
per-PE NX sampling), and random bit patterns.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ptoc.backend.isa import Executor, row, rows
from ptoc.backend.isa.datatypes import DataType as D
from ptoc.backend.isa.datatypes import info
from ptoc.backend.isa.semantics import compiled, core, expand, fastpath, reduce

try:
    from .bulk_draw import elements
except ImportError:  # tests/isa is not a package
    from bulk_draw import elements

FAST = [D.FP64, D.FP32, D.FP16, D.BF16]
BINARY = ["add", "sub", "mul", "div", "max", "min"]
UNARY = ["sqrt", "recip", "exp", "log", "rsqrt", "relu"]
#: (width, exponent bits, fraction bits)
LAYOUT = {D.FP64: (64, 11, 52), D.FP32: (32, 8, 23), D.FP16: (16, 5, 10), D.BF16: (16, 8, 7)}
UINT = {16: np.uint16, 32: np.uint32, 64: np.uint64}
NV, DZ, OF, UF, NX = 1, 2, 4, 8, 16

#: each fast path is checked against the generic engine for every (op, DataType) pair, so
#: the pairs multiply the examples: a third of the profile's per-test budget per pair
#: keeps the default run short (the thorough profile still draws hundreds per pair)
PER_PAIR = settings(max_examples=max(20, settings.default.max_examples // 3))


def test_every_accelerated_type_is_tested_here() -> None:
    """FAST is the fast path's own format table: a type it accelerates is compared with
    the engine below (the catalog admits more floating types since D9; those run on the
    exact engine only)."""
    assert set(FAST) == set(fastpath.FORMATS)


# ---------------------------------------------------------------- operands


def _bits(dt: D, sign: int, exp: int, frac: int) -> int:
    w, _, m = LAYOUT[dt]
    return (sign << (w - 1)) | (exp << m) | frac


def special_bits(dt: D) -> list[int]:
    """Adversarial encodings: zeros, subnormals, normals at the edges, Inf, NaNs."""
    w, e, m = LAYOUT[dt]
    bias, top, fmax = (1 << (e - 1)) - 1, (1 << e) - 1, (1 << m) - 1
    mags = [
        0, 1, 2, 3, fmax, fmax - 1, 1 << (m - 1),  # zero and subnormals
        _bits(dt, 0, 1, 0), _bits(dt, 0, 1, 1), _bits(dt, 0, 1, fmax), _bits(dt, 0, 2, 0),
        _bits(dt, 0, bias, 0), _bits(dt, 0, bias, 1), _bits(dt, 0, bias - 1, fmax),
        _bits(dt, 0, bias + 1, 0), _bits(dt, 0, bias, 1 << (m - 1)),  # 1, 1+u, 1-u/2, 2, 1.5
        _bits(dt, 0, top - 1, fmax), _bits(dt, 0, top - 1, fmax - 1), _bits(dt, 0, top - 1, 0),
        _bits(dt, 0, (bias + top) // 2, 0), _bits(dt, 0, (bias + top) // 2, fmax),  # ~sqrt max
        _bits(dt, 0, bias // 2, 0), _bits(dt, 0, bias // 2 + 1, fmax),  # ~sqrt min normal
        _bits(dt, 0, top, 0),  # Inf
        _bits(dt, 0, top, 1 << (m - 1)), _bits(dt, 0, top, (1 << (m - 1)) | 5),  # quiet NaNs
        _bits(dt, 0, top, 1), _bits(dt, 0, top, fmax >> 1),  # signalling NaNs
    ]  # fmt: skip
    return mags + [v | (1 << (w - 1)) for v in mags]


def moderate_bits(dt: D, raw: int) -> int:
    """An ordinary number from 64 raw bits: exponent within a few binades of 1 (most
    results are normal), fraction zero, one ulp, one half or anything."""
    _, e, m = LAYOUT[dt]
    bias = (1 << (e - 1)) - 1
    spread = min(bias - 2, 12)
    x = ((raw >> 1) & 0xFF) % (2 * spread + 1) - spread
    fsel = (raw >> 9) & 7
    f = (0, 1, 1 << (m - 1))[fsel] if fsel < 3 else (raw >> 12) & ((1 << m) - 1)
    return _bits(dt, raw & 1, bias + x, f)


def element(dt: D) -> Callable[[int, int], int]:
    """Picker for ``bulk_draw.elements``: a third each of special encodings, moderate
    numbers and uniform raw bits (every binade)."""
    w = LAYOUT[dt][0]
    specials = special_bits(dt)

    def pick(kind: int, raw: int) -> int:
        if kind < 85:
            return specials[kind % len(specials)]
        if kind < 170:
            return moderate_bits(dt, raw)
        return raw & ((1 << w) - 1)

    return pick


def carrier_array(dt: D, bits: list[int] | np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    w = LAYOUT[dt][0]
    return np.array(bits, np.uint64).astype(UINT[w]).reshape(shape).view(info(dt).carrier)


@st.composite
def tiles(draw: st.DrawFn, dt: D, n: int = 2) -> list[np.ndarray]:
    """``n`` same-shape (P, R, C) carrier arrays of adversarial elements."""
    shape = (draw(st.integers(1, 4)), draw(st.integers(1, 3)), draw(st.integers(1, 9)))
    size = shape[0] * shape[1] * shape[2]
    elems = elements(size, element(dt))
    return [carrier_array(dt, draw(elems), shape) for _ in range(n)]


def raw(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    return a.view(UINT[a.dtype.itemsize * 8])


def assert_same(fast: tuple[np.ndarray, ...], exact: tuple[np.ndarray, ...]) -> None:
    """Results bit for bit (dtype, shape, NaN payloads, zero signs) and status vectors."""
    assert len(fast) == len(exact)
    for f, e in zip(fast, exact, strict=True):
        f, e = np.asarray(f), np.asarray(e)
        assert f.dtype == e.dtype and f.shape == e.shape, (f.dtype, e.dtype, f.shape, e.shape)
        if f.dtype.kind == "f" or f.dtype == info(D.BF16).carrier:
            fb, eb = raw(f), raw(e)
            bad = np.flatnonzero(fb != eb)
            assert bad.size == 0, (
                f"{bad.size} element(s) differ, first at {bad[0]}: "
                f"{hex(int(fb.reshape(-1)[bad[0]]))} vs {hex(int(eb.reshape(-1)[bad[0]]))}"
            )
        else:
            assert np.array_equal(f, e), (f, e)


def both(fn: Callable[[], tuple[np.ndarray, ...]]) -> None:
    """``fn()`` with fast paths against ``fn()`` inside :func:`fastpath.exact_only`."""
    fast = fn()
    with fastpath.exact_only():
        exact = fn()
    assert_same(fast, exact)


# ---------------------------------------------------------------- elementwise


@pytest.mark.parametrize("dt", FAST, ids=lambda d: d.name)
@pytest.mark.parametrize("op", BINARY)
@PER_PAIR
@given(data=st.data())
def test_binary_matches_engine(op: str, dt: D, data: st.DataObject) -> None:
    a, b = data.draw(tiles(dt))
    assert_same(core.binary(op, dt, a, b), core.binary(op, dt, a, b, exact=True))


@pytest.mark.parametrize("dt", FAST, ids=lambda d: d.name)
@PER_PAIR
@given(data=st.data())
def test_compare_matches_engine(dt: D, data: st.DataObject) -> None:
    """Every CMode on adversarial operands (NaNs of both kinds, signed zeros, Inf), on
    full tiles and against a broadcast scalar (TCMPS), and on read-only operands whose
    finiteness may already be known: relation and NV status as the exact engine."""
    a, b = data.draw(tiles(dt))
    fa, fb = frozen(a), frozen(b)
    fastpath.finite(fa)
    for cmode in range(6):
        both(lambda c=cmode: core.compare(c, dt, a, b))
        both(lambda c=cmode: core.compare(c, dt, a, np.broadcast_to(b[:, :1, :1], a.shape)))
        both(lambda c=cmode: core.compare(c, dt, fa, fb))


def frozen(a: np.ndarray) -> np.ndarray:
    """A read-only copy, as the executor publishes tiles (its finiteness is cached)."""
    c = a.copy()
    c.flags.writeable = False
    return c


@pytest.mark.parametrize("dt", FAST, ids=lambda d: d.name)
@pytest.mark.parametrize("op", BINARY)
@PER_PAIR
@given(data=st.data())
def test_binary_on_published_operands(op: str, dt: D, data: st.DataObject) -> None:
    """Read-only operands are scanned for NaN/Inf once and remembered: the second call
    takes the clean path from the cache and must still agree."""
    a, b = (frozen(v) for v in data.draw(tiles(dt)))
    want = core.binary(op, dt, a, b, exact=True)
    assert_same(core.binary(op, dt, a, b), want)
    assert_same(core.binary(op, dt, a, b), want)
    assert_same(
        core.binary(op, dt, a[:, :1], b[:, :1]),
        core.binary(op, dt, a[:, :1], b[:, :1], exact=True),
    )


@pytest.mark.parametrize(
    ("op", "dt"),
    [("add", D.FP32), ("sub", D.FP32), ("mul", D.FP32), ("div", D.FP32), ("add", D.FP64),
     ("sub", D.FP64)],
)  # fmt: skip
@given(data=st.data(), exact_pes=st.lists(st.booleans(), min_size=4, max_size=4))
def test_clean_kernel_matches_engine(
    op: str, dt: D, data: st.DataObject, exact_pes: list[bool]
) -> None:
    """The executor's clean kernel (finite operands, every PE probed at once from the
    samples, the PEs without an inexact sample element tested in full) gives the exact
    engine's result and status, or None; PEs of small integers make exact results, so
    the full test runs as well as the probe."""
    kernel = fastpath.clean_kernel(op, dt)
    assert kernel is not None
    rows_, cols = data.draw(st.integers(1, 3)), data.draw(st.sampled_from([1, 8, 16, 40]))
    carrier = info(dt).carrier
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    a = rng.standard_normal((4, rows_, cols)).astype(carrier)
    b = rng.standard_normal((4, rows_, cols)).astype(carrier)
    for pe, exact in enumerate(exact_pes):
        if exact:
            a[pe] = rng.integers(1, 8, (rows_, cols))
            b[pe] = rng.choice([1.0, 2.0, 4.0], (rows_, cols))
    if data.draw(st.booleans()):  # an inexact element past the probed sample
        a[0, -1, -1] = 1.0 / 3.0
    a, b = frozen(a), frozen(b)
    got = kernel(a, b, fastpath.probe_sample(a), fastpath.probe_sample(b), None)
    if got is not None:
        assert_same(got, core.binary(op, dt, a, b, exact=True))


def test_finiteness_is_remembered_only_for_immutable_arrays() -> None:
    base = np.ones((2, 2, 4), np.float32)
    view = base[:, :, :3]
    view.flags.writeable = False  # read-only view of a writable owner: not remembered
    other = np.full((2, 2, 3), 2.0**127, np.float32)
    assert_same(core.binary("add", D.FP32, view, other),
                core.binary("add", D.FP32, view, other, exact=True))  # fmt: skip
    base[1, 1, 1] = np.inf
    base[0, 0, 0] = 2.0**127
    got = core.binary("add", D.FP32, view, other)
    assert_same(got, core.binary("add", D.FP32, view, other, exact=True))
    assert got[1].tolist() == [OF | NX, NX]  # PE0 overflows now, PE1 adds an Inf
    owner = np.ones((2, 2, 3), np.float32)
    owner.flags.writeable = False
    assert fastpath._finite_operand(owner) and fastpath._finite_operand(owner[:, :1])
    assert id(owner) in fastpath._FINITE
    key = id(owner)
    del owner
    assert key not in fastpath._FINITE  # forgotten with the array


@pytest.mark.parametrize("dt", FAST, ids=lambda d: d.name)
@pytest.mark.parametrize("op", UNARY)
@PER_PAIR
@given(data=st.data())
def test_unary_matches_engine(op: str, dt: D, data: st.DataObject) -> None:
    (a,) = data.draw(tiles(dt, 1))
    assert_same(core.unary(op, dt, a), core.unary(op, dt, a, exact=True))


@pytest.mark.parametrize("dt", FAST, ids=lambda d: d.name)
@pytest.mark.parametrize("op", BINARY)
@PER_PAIR
@given(data=st.data())
def test_binary_broadcast_shapes(op: str, dt: D, data: st.DataObject) -> None:
    """Tile-scalar (P, 1, 1), row/column broadcast (P, R, 1)/(P, 1, C) and 2-D fold steps."""
    a, b = data.draw(tiles(dt))
    for other in (b[:, :1, :1], b[:, :, :1], b[:, :1, :]):
        assert_same(core.binary(op, dt, a, other), core.binary(op, dt, a, other, exact=True))
    a2, b2 = a[:, 0], b[:, 0]
    assert_same(core.binary(op, dt, a2, b2), core.binary(op, dt, a2, b2, exact=True))


RNG_CASES = ["bits", "normal", "integers", "tiny", "huge", "late_inexact"]


def rng_operands(dt: D, case: str, seed: int, shape: tuple[int, int, int]) -> np.ndarray:
    """Large operand tiles of one flavour (numpy generator, deterministic)."""
    rng = np.random.default_rng(seed)
    w, e, m = LAYOUT[dt]
    bias = (1 << (e - 1)) - 1
    car = info(dt).carrier
    if case == "bits":  # uniformly random encodings (every class, NaN payloads)
        raw_bits = rng.integers(0, 1 << w, size=shape, dtype=np.uint64)
        return raw_bits.astype(UINT[w]).view(car)
    if case == "normal":
        return rng.standard_normal(shape).astype(np.float32).astype(car)
    if case == "integers":  # exact sums and products: the sampling has to look further
        return rng.integers(-8, 9, size=shape).astype(car)
    if case in ("tiny", "huge"):  # exponents at the bottom/top of the range
        exps = (
            rng.integers(1, 4, size=shape)
            if case == "tiny"
            else bias + rng.integers(bias - 4, bias + 1, size=shape)
        )
        if case == "tiny":
            exps = exps + rng.integers(0, (bias + 1) // 2, size=shape) * (
                rng.random(shape) < 0.5
            )
        frac = rng.integers(0, 1 << m, size=shape, dtype=np.uint64)
        sign = rng.integers(0, 2, size=shape, dtype=np.uint64)
        b = (sign << np.uint64(w - 1)) | (exps.astype(np.uint64) << np.uint64(m)) | frac
        return b.astype(UINT[w]).view(car)
    # late_inexact: exact data except one inexact element in the last row of PE 1
    x = rng.integers(-8, 9, size=shape).astype(car)
    x[1 % shape[0], -1, -1] = car.type(1.0) / car.type(3.0) if car != np.float16 else 0.3
    return x


@pytest.mark.parametrize("dt", FAST, ids=lambda d: d.name)
@pytest.mark.parametrize("case", RNG_CASES)
@pytest.mark.parametrize("route", ["compiled", "numpy"])
def test_binary_and_unary_on_large_tiles(case: str, dt: D, route: str) -> None:
    """Large tiles of every flavour; FP32/FP64 + - * / with NaN, Inf or an IEEE exception
    take the compiled kernel where it exists, so the numpy route runs suspended too."""
    shape = (4, 16, 64)
    a = rng_operands(dt, case, 1, shape)
    b = rng_operands(dt, case, 2, shape)
    mixed = rng_operands(dt, "normal", 3, shape)
    with compiled.suspended() if route == "numpy" else contextlib.nullcontext():
        _large_tiles(dt, case, a, b, mixed)


def _large_tiles(dt: D, case: str, a: np.ndarray, b: np.ndarray, mixed: np.ndarray) -> None:
    for op in BINARY:
        for x, y in ((a, b), (a, mixed), (mixed, b)):
            assert_same(core.binary(op, dt, x, y), core.binary(op, dt, x, y, exact=True))
    for op in UNARY:
        for x in (a, np.abs(a) if case != "bits" else a):
            assert_same(core.unary(op, dt, x), core.unary(op, dt, x, exact=True))


def _near(dt: D, v: np.ndarray, rng: np.random.Generator, ulps: int = 3) -> np.ndarray:
    """Carrier values within a few ulps of the float64 values ``v`` (both signs)."""
    w = LAYOUT[dt][0]
    car = info(dt).carrier
    with np.errstate(over="ignore"):
        c = v.astype(car) if dt != D.BF16 else v.astype(np.float32).astype(car)
    step = rng.integers(-ulps, ulps + 1, size=v.shape).astype(np.int64)
    bits = raw(c).astype(np.int64) + step
    bits = np.clip(bits, 0, (1 << (w - 1)) - 1) if w < 64 else bits
    out = bits.astype(UINT[w]).view(car)
    neg = rng.random(v.shape) < 0.5
    return np.where(neg, -out, out).astype(car)


@pytest.mark.parametrize("dt", FAST, ids=lambda d: d.name)
def test_underflow_and_overflow_boundaries(dt: D) -> None:
    """Products, quotients and exponentials landing around the smallest normal (the
    tiny band, after-rounding tininess), the subnormal range and the overflow edge."""
    rng = np.random.default_rng(7)
    shape = (4, 8, 64)
    fi = ml_dtypes.finfo(info(dt).carrier) if dt == D.BF16 else np.finfo(info(dt).carrier)
    mn, mx = float(fi.smallest_normal), float(fi.max)
    x = _near(dt, 1.0 + rng.random(shape), rng)
    for target in (mn, mn * 0.5, mn * (1 - 2.0**-8), mn * 2, mn * 2.0**-5, mx, mx * 0.75):
        with np.errstate(over="ignore"):
            y_mul = _near(dt, np.abs(target / x.astype(np.float64)), rng)
            y_div = _near(dt, np.abs(x.astype(np.float64) / target), rng)
        for op, y in (("mul", y_mul), ("div", y_div)):
            assert_same(core.binary(op, dt, x, y), core.binary(op, dt, x, y, exact=True))
            assert_same(core.binary(op, dt, y, x), core.binary(op, dt, y, x, exact=True))
        big = _near(dt, np.full(shape, target), rng)
        assert_same(
            core.binary("add", dt, big, big), core.binary("add", dt, big, big, exact=True)
        )
        assert_same(core.unary("recip", dt, big), core.unary("recip", dt, big, exact=True))
    # exp around log(smallest normal), log(largest finite) and the subnormal range
    for edge in (np.log(mn), np.log(mn) - 3.0, np.log(mx), np.log(mn * 2.0**-9)):
        e = _near(dt, np.abs(np.full(shape, edge)) * np.sign(edge), rng, ulps=40)
        e = np.where(raw(e) >> np.uint64(LAYOUT[dt][0] - 1), e, -e) if edge < 0 else np.abs(e)
        e = e.astype(info(dt).carrier)
        assert_same(core.unary("exp", dt, e), core.unary("exp", dt, e, exact=True))


@pytest.mark.parametrize("dt", [D.FP32, D.FP16], ids=lambda d: d.name)
def test_after_rounding_tininess_band(dt: D) -> None:
    """Products and quotients just below the smallest normal: those that round up to it
    (in [T, min normal), T = (1 - 2**-(p+1)) * min normal) are not tiny after rounding
    (NX only), those below T are (UF and NX)."""
    rng = np.random.default_rng(12)
    car = info(dt).carrier
    p = 24 if dt == D.FP32 else 11
    mn = float(np.finfo(car).smallest_normal)
    thr = mn * (1 - 2.0 ** -(p + 1))
    x = (1.0 + rng.random(20000)).astype(car)
    steps = rng.integers(-2, 3, size=x.size).astype(np.int64)
    y_mul = raw((mn / x.astype(np.float64)).astype(car)).astype(np.int64) + steps
    y_mul = y_mul.astype(UINT[LAYOUT[dt][0]]).view(car)
    x_div = raw((mn * x.astype(np.float64)).astype(car)).astype(np.int64) + steps
    x_div = x_div.astype(UINT[LAYOUT[dt][0]]).view(car)
    prod = x.astype(np.float64) * y_mul.astype(np.float64)
    quot = x_div.astype(np.float64) / x.astype(np.float64)
    for op, a, b, exact in (("mul", x, y_mul, prod), ("div", x_div, x, quot)):
        band = (exact >= thr) & (exact < mn)
        below = (exact < thr) & (exact > mn * (1 - 2.0 ** -(p - 2)))
        # (a quotient of p-bit numbers is never in the band: X_d / X != 1 differs from 1
        # by at least 1/X > 2**-p; the band is only reachable by products)
        assert below.sum() > 0 and (band.sum() > 0 or op == "div"), (op, band.sum())
        keep = band | below
        a3, b3 = a[keep].reshape(1, 1, -1), b[keep].reshape(1, 1, -1)
        for sign in (1, -1):
            sa = (a3 * car.type(sign)).astype(car)
            assert_same(core.binary(op, dt, sa, b3), core.binary(op, dt, sa, b3, exact=True))
        # one element per PE, so the status shows each element's own flags
        a4, b4 = a[keep][:64].reshape(-1, 1, 1), b[keep][:64].reshape(-1, 1, 1)
        for i in range(0, a4.shape[0], 4):
            got = core.binary(op, dt, a4[i : i + 4], b4[i : i + 4])
            assert_same(got, core.binary(op, dt, a4[i : i + 4], b4[i : i + 4], exact=True))


@pytest.mark.parametrize("dt", FAST, ids=lambda d: d.name)
def test_exp_log_rsqrt_exact_cases(dt: D) -> None:
    """exp(+-0) = 1, log(1) = +0 and rsqrt(4**k) raise nothing; their neighbours NX."""
    car = info(dt).carrier
    vals = np.array([0.0, -0.0, 1.0, 4.0, 0.25, 16.0, 2.0, 8.0, 0.5, 1024.0], np.float32)
    a = np.broadcast_to(vals.astype(car), (2, 3, vals.size)).copy()
    a[1, 2, :3] = np.array([3.0, 5.0, 7.0], np.float32).astype(car)
    for op in ("exp", "log", "rsqrt"):
        assert_same(core.unary(op, dt, a), core.unary(op, dt, a, exact=True))


def test_fp64_transform_ranges() -> None:
    """FP64 products/quotients/roots outside TwoProduct's exact range go to the engine."""
    rng = np.random.default_rng(11)
    shape = (3, 4, 32)
    exps = rng.choice([-1070, -1000, -960, -500, 0, 500, 990, 1000, 1020], size=shape)
    x = np.ldexp(1.0 + rng.random(shape), exps) * np.where(rng.random(shape) < 0.5, -1, 1)
    y = np.ldexp(1.0 + rng.random(shape), rng.permutation(exps.reshape(-1)).reshape(shape))
    for op in BINARY:
        assert_same(core.binary(op, D.FP64, x, y), core.binary(op, D.FP64, x, y, exact=True))
    for op in UNARY:
        for v in (x, np.abs(x)):
            assert_same(core.unary(op, D.FP64, v), core.unary(op, D.FP64, v, exact=True))


# ---------------------------------------------------------------- narrowing conversions


def test_fp16_conversion_from_float64_is_rounded_once() -> None:
    """numpy's float64 -> float16 cast (used for exp/log/rsqrt results) rounds once: values
    a hair above/below FP16 midpoints (where rounding through float32 would tie)."""
    rng = np.random.default_rng(5)
    halves = rng.integers(0, 0x7BFF, size=4096, dtype=np.uint16).view(np.float16)
    lo = halves.astype(np.float64)
    hi = np.nextafter(halves, np.float16(np.inf)).astype(np.float64)
    mid = (lo + hi) / 2
    for v in (mid, np.nextafter(mid, np.inf), np.nextafter(mid, -np.inf), mid * (1 + 2.0**-30)):
        want, _ = core.round_float(D.FP16, v)
        assert np.array_equal(raw(v.astype(np.float16)), raw(want))


def test_bf16_conversion_from_float64_is_rounded_once() -> None:
    rng = np.random.default_rng(6)
    b = rng.integers(0x0080, 0x7F7F, size=4096, dtype=np.uint16).view(ml_dtypes.bfloat16)
    lo = b.astype(np.float64)
    hi = (raw(b) + np.uint16(1)).view(ml_dtypes.bfloat16).astype(np.float64)
    mid = (lo + hi) / 2
    for v in (mid, np.nextafter(mid, np.inf), np.nextafter(mid, -np.inf), -mid, lo, 0.0 * lo):
        want, _ = core.round_float(D.BF16, v)
        assert np.array_equal(raw(fastpath._bf16_from_f64(v)), raw(want))


# ---------------------------------------------------------------- reductions


def _rows(dt: D, seed: int, shape: tuple[int, int, int]) -> list[np.ndarray]:
    """Reduction inputs: ordinary rows, exact rows, rows with NaN/Inf/zeros of both signs."""
    rng = np.random.default_rng(seed)
    car = info(dt).carrier
    out = [rng_operands(dt, c, seed, shape) for c in ("normal", "integers", "bits", "tiny")]
    z = rng_operands(dt, "normal", seed + 1, shape)
    z[:, 0] = np.where(rng.random(shape[2]) < 0.5, car.type(0.0), -car.type(0.0))
    z[:, 1] = -car.type(0.0)
    z[:, 2, ::3] = car.type(np.inf)
    z[0, 3, 1] = carrier_array(dt, [_bits(dt, 0, (1 << LAYOUT[dt][1]) - 1, 1)], ())  # sNaN
    z[-1, 3, 2] = car.type(np.nan)
    z[:, 4] = -np.abs(z[:, 4])
    z[:, 4, 5] = car.type(0.0)
    z[:, 5] = np.abs(z[:, 5])
    z[:, 5, 7] = -car.type(0.0)
    out.append(z)
    return out


def _route(route: str) -> contextlib.AbstractContextManager[None]:
    """FP32/FP64 folds of at least 64 elements take the compiled kernel where it exists:
    the numpy route is tested with it suspended."""
    return compiled.suspended() if route == "numpy" else contextlib.nullcontext()


@pytest.mark.parametrize("dt", FAST, ids=lambda d: d.name)
@pytest.mark.parametrize("op", ["sum", "prod", "max", "min"])
@pytest.mark.parametrize("route", ["compiled", "numpy"])
def test_reductions_match_engine(op: str, dt: D, route: str) -> None:
    with _route(route):
        for x in _rows(dt, 21, (3, 6, 12)):
            both(lambda x=x: reduce.row_reduce(op, dt, x))
            both(lambda x=x: reduce.col_reduce(op, dt, x))
            both(lambda x=x: reduce.row_reduce(op, dt, x[:, :, :1]))  # a single element


@pytest.mark.parametrize("dt", FAST, ids=lambda d: d.name)
@pytest.mark.parametrize("op", ["argmax", "argmin"])
def test_arg_reductions_match_engine(op: str, dt: D) -> None:
    for x in _rows(dt, 22, (3, 6, 12)):
        both(lambda x=x: reduce.row_arg(op, dt, x, D.U32))
        both(lambda x=x: reduce.col_arg(op, dt, x, D.S32))


@pytest.mark.parametrize("dt", FAST, ids=lambda d: d.name)
@PER_PAIR
@given(data=st.data())
def test_reductions_property(dt: D, data: st.DataObject) -> None:
    (x,) = data.draw(tiles(dt, 1))
    for op in ("sum", "prod", "max", "min"):
        both(lambda op=op: reduce.row_reduce(op, dt, x))
    for op in ("argmax", "argmin"):
        both(lambda op=op: reduce.col_arg(op, dt, x, D.U32))


def test_long_sum_folds_sequentially() -> None:
    """A 256-column FP16/BF16/FP32 sum where pairwise summation would differ."""
    rng = np.random.default_rng(9)
    for dt in (D.FP32, D.FP16, D.BF16):
        x = (rng.standard_normal((2, 3, 256)) * 100).astype(np.float32).astype(info(dt).carrier)
        x[:, :, 0] = info(dt).carrier.type(3000.0)
        both(lambda x=x, dt=dt: reduce.row_reduce("sum", dt, x))


@pytest.mark.parametrize("dt", [D.FP32, D.FP64], ids=lambda d: d.name)
@PER_PAIR
@given(
    shape=st.tuples(st.integers(1, 4), st.integers(1, 9), st.integers(1, 70)),
    scale=st.sampled_from([2.0**-140, 2.0**-20, 1.0, 2.0**60, 2.0**120, 2.0**1000]),
    seed=st.integers(0, 2**32 - 1),
)
def test_row_sums_by_outer_reduction_match_engine(
    dt: D, shape: tuple[int, int, int], scale: float, seed: int
) -> None:
    with compiled.suspended():  # the numpy route's outer reduction (the kernel: below)
        _outer_sums(dt, shape, scale, seed)
    _outer_sums(dt, shape, scale, seed)


def _outer_sums(dt: D, shape: tuple[int, int, int], scale: float, seed: int) -> None:
    """The outer-axis reduction of FP32/FP64 row sums: every binade (subnormal sums,
    overflowing ones that fall back), exact rows, signed zeros, ties of a long row."""
    rng = np.random.default_rng(seed)
    car = info(dt).carrier.type
    with np.errstate(over="ignore", under="ignore"):
        x = (rng.standard_normal(shape) * scale).astype(car)
    if seed % 3 == 0:
        x = np.round(rng.standard_normal(shape) * 8).astype(car)  # exact rows
    if seed % 5 == 0:
        x[..., ::2] = -car(0.0)
    both(lambda: reduce.row_reduce("sum", dt, x))
    both(lambda: reduce.col_reduce("sum", dt, x))


def test_row_sums_take_the_outer_reduction_and_fall_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rng = np.random.default_rng(12)
    taken: list[bool] = []
    real = fastpath._fold_sum_outer

    def spy(f: object, x: np.ndarray) -> object:
        r = real(f, x)  # type: ignore[arg-type]
        taken.append(r is not None)
        return r

    monkeypatch.setattr(fastpath, "_fold_sum_outer", spy)
    monkeypatch.setattr(compiled, "_suspended", 1)  # the numpy route's reduction
    ordinary = rng.standard_normal((4, 32, 128)).astype(np.float32)
    both(lambda: reduce.row_reduce("sum", D.FP32, ordinary))
    exact = np.ones((4, 32, 128), np.float32)  # no inexact step: the full check decides
    both(lambda: reduce.row_reduce("sum", D.FP32, exact))
    late = ordinary.copy()  # inexact at once, overflowing at the end: the engine's rows
    late[:, :, -1] = np.float32(3e38)
    late[:, :, -2] = np.float32(3e38)
    both(lambda: reduce.row_reduce("sum", D.FP32, late))
    assert taken == [True, False, False], taken  # exact_only never reaches the fold


# ---------------------------------------------------------------- built on core


@pytest.mark.parametrize("dt", FAST, ids=lambda d: d.name)
@PER_PAIR
@given(data=st.data())
def test_expansions_and_tile_scalar_match_engine(dt: D, data: st.DataObject) -> None:
    a, b = data.draw(tiles(dt))
    for op in expand.EXPAND_OPS:
        both(lambda op=op: expand.row_expand(op, dt, a, b[:, :, :1]))
        both(lambda op=op: expand.col_expand(op, dt, a, b[:, :1, :]))
    w = LAYOUT[dt][0]
    gpr = raw(b[:, 0, :1]).astype(np.uint64).reshape(-1) | np.uint64(
        0xABC << 52 if w < 64 else 0
    )
    for m in (r.mnemonic for r in rows(executor=Executor.TILE_SCALAR)):
        if m in ("TANDS", "TORS", "TXORS", "TSHLS", "TSHRS", "TREMS"):
            continue
        both(lambda m=m: row(m).semantics(dt, a, gpr))
    for m in ("TEXP", "TSQRT", "TRECIP", "TRELU"):
        both(lambda m=m: row(m).semantics(dt, a))
    for m in ("TADD", "TMAX"):
        both(lambda m=m: row(m).semantics(dt, a, b))


@st.composite
def mostly_ordinary_tiles(draw: st.DrawFn, dt: D) -> list[np.ndarray]:
    """A (P, R, C) tile and a (P, R, C) broadcast source of ordinary numbers (every
    binade a moderate exponent reaches), with a special encoding (zeros, NaN payloads,
    Inf, subnormals, the top binade) in about one element of fifty."""
    shape = (draw(st.integers(1, 4)), draw(st.integers(1, 3)), draw(st.integers(1, 9)))
    size = shape[0] * shape[1] * shape[2]
    specials = special_bits(dt)

    def pick(kind: int, raw: int) -> int:
        return specials[raw % len(specials)] if kind < 5 else moderate_bits(dt, raw)

    elems = elements(size, pick)
    return [carrier_array(dt, draw(elems), shape) for _ in range(2)]


@pytest.mark.parametrize("dt", FAST, ids=lambda d: d.name)
@PER_PAIR
@given(data=st.data())
def test_broadcast_min_max_match_engine(dt: D, data: st.DataObject) -> None:
    """The row/column expansions' native min/max (accepted only where no result is a
    NaN or a zero) against the engine, on mostly ordinary data so that both the
    accepted and the rejected outcome occur."""
    a, b = data.draw(mostly_ordinary_tiles(dt))
    for op in ("max", "min"):
        both(lambda op=op: expand.row_expand(op, dt, a, b[:, :, :1]))
        both(lambda op=op: expand.col_expand(op, dt, a, b[:, :1, :]))
        both(lambda op=op: expand.row_expand(op, dt, frozen(a), frozen(b)[:, :, :1]))
    # published operands: their "no NaN, no zero" fact is scanned once and then reused
    fa, fb = frozen(a), frozen(b)
    col, row = fb[:, :, :1], fb[:, :1, :]
    for op in ("max", "min"):
        for _ in range(2):
            both(lambda op=op: expand.row_expand(op, dt, fa, col))
            both(lambda op=op: expand.col_expand(op, dt, fa, row))


@pytest.mark.parametrize(("src", "dst"), sorted(expand.EXPDIF_PAIRS, key=str))
@PER_PAIR
@given(data=st.data())
def test_expdif_matches_engine(src: D, dst: D, data: st.DataObject) -> None:
    a, b = data.draw(tiles(src))
    both(lambda: expand.row_expand_expdif(src, dst, a, b[:, :, :1]))
    both(lambda: expand.col_expand_expdif(src, dst, a, b[:, :1, :]))


def test_softmax_style_chain() -> None:
    """TROWMAX, TROWEXPANDSUB, TEXP, TROWSUM, TROWEXPANDDIV on ordinary data."""
    rng = np.random.default_rng(3)
    for dt in FAST:
        x = (rng.standard_normal((4, 16, 64)) * 4).astype(np.float32).astype(info(dt).carrier)

        def chain(x: np.ndarray = x, dt: D = dt) -> tuple[np.ndarray, ...]:
            mx, s1 = reduce.row_reduce("max", dt, x)
            d, s2 = expand.row_expand("sub", dt, x, mx)
            e, s3 = core.unary("exp", dt, d)
            sm, s4 = reduce.row_reduce("sum", dt, e)
            out, s5 = expand.row_expand("div", dt, e, sm)
            return out, s1 | s2 | s3 | s4 | s5, e, sm

        both(chain)


# ---------------------------------------------------------------- non-finite sums


def nonfinite_bits(dt: D) -> list[int]:
    """Encodings that make sums special: +-Inf, quiet and signalling NaNs with payloads,
    the top binade (sums of two overflow), the largest finite value and its neighbours
    (ties at the overflow threshold), +-0 and subnormals (exact small sums)."""
    w, e, m = LAYOUT[dt]
    top, fmax = (1 << e) - 1, (1 << m) - 1
    mags = [
        _bits(dt, 0, top, 0),  # Inf
        _bits(dt, 0, top, 1 << (m - 1)), _bits(dt, 0, top, (1 << (m - 1)) | 3),  # quiet
        _bits(dt, 0, top, 1), _bits(dt, 0, top, fmax >> 1), _bits(dt, 0, top, 2),  # signalling
        _bits(dt, 0, top - 1, fmax), _bits(dt, 0, top - 1, fmax - 1), _bits(dt, 0, top - 1, 0),
        _bits(dt, 0, top - 1, 1 << (m - 1)), _bits(dt, 0, top - 2, fmax),  # top binades
        _bits(dt, 0, top - m - 2, 0),  # half an ulp of the largest finite value: a tie
        0, 1, fmax,  # zero, subnormals
    ]  # fmt: skip
    return mags + [v | (1 << (w - 1)) for v in mags]


@st.composite
def nonfinite_tiles(draw: st.DrawFn, dt: D) -> list[np.ndarray]:
    """Two (P, R, C) tiles mostly of :func:`nonfinite_bits`, some uniform raw bits."""
    shape = (draw(st.integers(1, 4)), draw(st.integers(1, 3)), draw(st.integers(1, 9)))
    size = shape[0] * shape[1] * shape[2]
    specials = nonfinite_bits(dt)
    w = LAYOUT[dt][0]

    def pick(kind: int, raw: int) -> int:
        return specials[kind % len(specials)] if kind < 220 else raw & ((1 << w) - 1)

    elems = elements(size, pick)
    return [carrier_array(dt, draw(elems), shape) for _ in range(2)]


@pytest.mark.parametrize("dt", FAST, ids=lambda d: d.name)
@pytest.mark.parametrize("op", ["add", "sub"])
@PER_PAIR
@given(data=st.data())
def test_nonfinite_sums_match_engine(op: str, dt: D, data: st.DataObject) -> None:
    """Sums of Inf, NaN payloads and top-binade values (settled natively, not by the
    engine) agree with the engine bit for bit, fresh and published operands alike."""
    a, b = data.draw(nonfinite_tiles(dt))
    want = core.binary(op, dt, a, b, exact=True)
    assert_same(core.binary(op, dt, a, b), want)
    assert_same(core.binary(op, dt, frozen(a), frozen(b)), want)
    assert_same(core.binary(op, dt, a, b[:, :1, :1]), core.binary(op, dt, a, b[:, :1, :1],
                                                                  exact=True))  # fmt: skip


@pytest.mark.parametrize("dt", FAST, ids=lambda d: d.name)
@pytest.mark.parametrize("op", ["add", "sub"])
@PER_PAIR
@given(data=st.data())
def test_sums_with_an_operand_of_only_infinities_and_nans(
    op: str, dt: D, data: st.DataObject
) -> None:
    """Published operands one of which holds no finite element (the per-operand NaN
    facts path: NaN handling only, Inf - Inf, signalling NaNs), either side, read
    twice (the facts are then cached), against the engine."""
    a, b = data.draw(nonfinite_tiles(dt))
    w, e, m = LAYOUT[dt]
    top = (1 << e) - 1
    ub = UINT[w]
    raw = a.view(ub).copy()
    special = (raw >> ub(m)) & ub(top) == ub(top)  # Inf or NaN
    raw[~special] = ub(top << m) | (raw[~special] & ub(1 << (w - 1)))  # finite -> +-Inf
    inf_nan = raw.view(a.dtype)
    for x, y in ((inf_nan, b), (b, inf_nan), (inf_nan, inf_nan[::-1].copy())):
        fx, fy = frozen(x), frozen(y)
        want = core.binary(op, dt, x, y, exact=True)
        assert_same(core.binary(op, dt, fx, fy), want)
        assert_same(core.binary(op, dt, fx, fy), want)


@pytest.mark.parametrize("dt", FAST, ids=lambda d: d.name)
def test_nonfinite_sums_skip_the_engine(dt: D, monkeypatch: pytest.MonkeyPatch) -> None:
    """A tile of infinities and NaNs costs native passes: the exact engine is not
    called for its sums (it is what made such tiles 10-40 times slower)."""
    specials = nonfinite_bits(dt)
    a = carrier_array(dt, [specials[i % len(specials)] for i in range(4 * 8 * 16)], (4, 8, 16))
    b = carrier_array(dt, [specials[(5 * i + 3) % len(specials)] for i in range(a.size)],
                      a.shape)  # fmt: skip
    want = {op: core.binary(op, dt, a, b, exact=True) for op in ("add", "sub")}

    def engine(*args: object) -> None:
        raise AssertionError("the exact engine was called")

    monkeypatch.setattr(fastpath._fa, "float_binary", engine)
    for op in ("add", "sub"):
        assert_same(core.binary(op, dt, a, b), want[op])


def test_chained_sums_through_overflow() -> None:
    """x[n+1] = x[n] + x[n-1] grows past the largest finite value and stays infinite;
    then Inf - Inf and NaN operands: every step agrees with the engine."""
    rng = np.random.default_rng(7)
    for dt in FAST:
        car = info(dt).carrier
        x0 = rng.standard_normal((4, 4, 16)).astype(np.float32).astype(car)
        x1 = rng.standard_normal((4, 4, 16)).astype(np.float32).astype(car)
        prev, cur = frozen(x0), frozen(x1)
        steps = 1500 if dt == D.FP64 else 200
        for _ in range(steps):
            nxt, st_fast = core.binary("add", dt, cur, prev)
            want = core.binary("add", dt, cur, prev, exact=True)
            assert_same((nxt, st_fast), want)
            prev, cur = cur, frozen(nxt)
        assert np.isinf(cur.astype(np.float64)).any()
        nan = frozen(core.binary("sub", dt, cur, cur)[0])  # Inf - Inf: NaN
        for x, y in ((cur, nan), (nan, prev), (nan, nan)):
            assert_same(core.binary("add", dt, x, y), core.binary("add", dt, x, y, exact=True))


# ---------------------------------------------------------------- the switches


def test_exact_switches() -> None:
    a = np.array([[[1.0, 2.0]]], np.float32)
    assert fastpath.enabled()
    with fastpath.exact_only():
        assert not fastpath.enabled()
        with fastpath.exact_only():
            assert not fastpath.enabled()
        assert not fastpath.enabled()
    assert fastpath.enabled()
    # inapplicable inputs fall back to the engine: other types, non-carrier dtypes
    assert fastpath.binary("add", D.TF32, a.view(np.uint32), a.view(np.uint32)) is None
    assert fastpath.binary("rem", D.FP32, a, a) is None
    assert fastpath.binary("add", D.FP32, a.astype(np.float64), a) is None
    assert fastpath.unary("abs", D.FP32, a) is None
    assert_same(core.binary("add", D.FP32, a, a), (np.array([[[2.0, 4.0]]], np.float32),
                                                   np.zeros(1, np.uint8)))  # fmt: skip


def test_no_numpy_warnings_escape() -> None:
    a = np.array([[[np.inf, 0.0, 3e38, np.nan]]], np.float32)
    b = np.array([[[-np.inf, 0.0, 3e38, 1.0]]], np.float32)
    with np.errstate(all="raise"):
        for op in BINARY:
            core.binary(op, D.FP32, a, b)
        for op in UNARY:
            core.unary(op, D.FP32, b)


def _around(dt: D, v: float) -> list[float]:
    """``v`` in the type and that value's two neighbours."""
    car = info(dt).carrier
    bits = raw(np.array([v], car)).astype(np.int64)[0]
    out = np.array([bits - 1, bits, bits + 1]).astype(UINT[LAYOUT[dt][0]]).view(car)
    return [float(x) for x in out.astype(np.float64)]


@pytest.mark.parametrize("dt", [D.FP32, D.FP16, D.BF16], ids=lambda d: d.name)
@PER_PAIR
@given(data=st.data())
def test_exp_in_safe_range_matches_engine(dt: D, data: st.DataObject) -> None:
    """exp of operands that all lie in the range decided on the operands
    (``fastpath._EXP_SAFE``): the range's edges and their neighbours, signed zeros
    (whole PEs of them: no NX there), values across the range; with one operand just
    outside (or NaN/Inf) the general path answers. Both equal the exact engine."""
    lo, hi = fastpath._EXP_SAFE[dt]
    car = info(dt).carrier
    edges = [*_around(dt, lo), *_around(dt, hi), 0.0, -0.0, 1e-30, -1e-30]
    inside = st.one_of(st.sampled_from(edges), st.floats(lo, hi, allow_nan=False))
    r, c = data.draw(st.integers(1, 4)), data.draw(st.integers(1, 9))
    vals = data.draw(st.lists(inside, min_size=4 * r * c, max_size=4 * r * c))
    a = np.array(vals, np.float64).astype(car).reshape(4, r, c)
    # rounding to the type may leave the range: keep only the values inside it
    w = a.astype(np.float64)
    a = np.where((w >= lo) & (w <= hi), a, np.zeros((), car))
    for pe in data.draw(st.lists(st.integers(0, 3), max_size=2)):
        a[pe] = car.type(0.0) if data.draw(st.booleans()) else -car.type(0.0)
    got = fastpath._exp_in_range(fastpath.FORMATS[dt], a, 4)
    assert got is not None
    assert_same(got, core.unary("exp", dt, a, exact=True))
    assert_same(core.unary("exp", dt, a), core.unary("exp", dt, a, exact=True))
    outside = data.draw(st.sampled_from([lo * 1.01, hi * 1.01, np.inf, -np.inf, np.nan]))
    b = a.copy()
    b[data.draw(st.integers(0, 3)), 0, 0] = car.type(outside)
    assert fastpath._exp_in_range(fastpath.FORMATS[dt], b, 4) is None
    assert_same(core.unary("exp", dt, b), core.unary("exp", dt, b, exact=True))
