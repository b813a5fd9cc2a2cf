"""The compiled D11 fold kernel (``fold32.c``) and its build and certification.

Where a C compiler exists, the FP32-addition route of the fold runs in C. These tests pin
that it equals the exact engine over shapes that reach both loop nests of the kernel
(blocks of 3 x 32 sums and the tails), codes over every binade, subnormals, +-0, NaN and
Inf (which leave the route) and accumulators; that the certificate rejects kernels with
each hazard it names (another summation order, flush-to-zero, a wrong NX); and that the
build is cached, falls back without ``target_clones``, and fails into the numpy fold.
"""

from __future__ import annotations

import ctypes
import shutil
import sys

import ml_dtypes
import numpy as np
import pytest
from conftest import examples
from hypothesis import given
from hypothesis import strategies as st

from ptoc.backend.isa.datatypes import DataType
from ptoc.backend.isa.semantics import compiled
from ptoc.backend.isa.semantics import matmul as mm
from ptoc.backend.isa.semantics import matmul_kernels as kernels

D = DataType
CARRIERS = {D.FP16: np.float16, D.BF16: ml_dtypes.bfloat16}
FIELDS = {D.FP16: (10, 15), D.BF16: (7, 127)}
SPECIAL16 = {
    D.FP16: [0x0000, 0x8000, 0x7C00, 0x7E00, 0x0001, 0x03FF, 0x7BFF, 0x3C00, 0xBC00],
    D.BF16: [0x0000, 0x8000, 0x7F80, 0x7FC0, 0x0001, 0x007F, 0x7F7F, 0x3F80, 0xBF80],
}
HAVE_CC = shutil.which(compiled._compiler()[0]) is not None


def codes(
    rng: np.random.Generator, dt: DataType, shape, spread: int, holes: float
) -> np.ndarray:
    """16-bit codes of a binade window of ``spread`` around 1, a ``holes`` share specials.

    Zeros and +-1 keep the fold on the kernel's route; Inf, NaN, subnormals and the
    extremes send it to the exact engine (and check that the route declines them).
    """
    shift, bias = FIELDS[dt]
    sign = rng.integers(0, 2, shape) << 15
    exp = rng.integers(bias - spread, bias + spread + 1, shape) << shift
    frac = rng.integers(0, 1 << shift, shape)
    out = (sign | exp | frac).astype(np.uint16)
    pool = SPECIAL16[dt] if rng.random() < 0.3 else [0x0000, 0x8000, *SPECIAL16[dt][-2:]]
    hole = rng.random(shape) < holes
    out[hole] = rng.choice(pool, int(hole.sum()))
    return out


@pytest.fixture(scope="module")
def kernel():
    fn = kernels.compiled_fold()
    if fn is None:
        assert not HAVE_CC, f"a compiler exists but: {compiled.status('fold32')}"
        pytest.skip("no C compiler: the numpy fold serves (see test_matmul_native_route)")
    return fn


def test_the_kernel_is_built_and_certified_where_a_compiler_exists() -> None:
    fn = kernels.compiled_fold()
    if HAVE_CC:
        assert fn is not None and compiled.status("fold32") == "compiled"
    else:
        assert fn is None and compiled.status("fold32").startswith("not built: ")


@given(
    st.sampled_from([D.FP16, D.BF16]),
    st.integers(1, 9),
    st.integers(1, 70),
    st.integers(1, 40),
    st.integers(1, 12),
    st.sampled_from([0.0, 0.01, 0.2]),
    st.booleans(),
    st.integers(0, 2**32 - 1),
)
@examples(60)
def test_compiled_fold_equals_the_exact_engine(
    kernel, dt, m, n, k, spread, holes, with_acc, seed
):
    rng = np.random.default_rng(seed)
    a = codes(rng, dt, (m, k), spread, holes).view(CARRIERS[dt])
    b = codes(rng, dt, (k, n), spread, holes).view(CARRIERS[dt])
    acc = None
    if with_acc:
        acc = rng.uniform(-4, 4, (m, n)).astype(np.float32)
        acc[rng.random((m, n)) < 0.1] = -0.0
    want, want_status = mm.fold(a, dt, b, dt, acc=acc, exact=True)
    got, status = mm.fold(a, dt, b, dt, acc=acc)
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))
    assert status == want_status
    ops = mm._native_operands(a, dt, b, dt, acc)
    if ops is not None:  # the kernel itself, against the numpy route
        direct, direct_status = kernels.fold_compiled(kernel, *ops)
        np.testing.assert_array_equal(direct.view(np.uint32), want.view(np.uint32))
        assert direct_status == want_status


def test_compiled_fold_overflow_cancellation_and_zero_signs(kernel) -> None:
    big = 2.0**63
    a = np.array([[1.5 * big, 1.5 * big, -(2.0**-63)] * 12] * 5, np.float32)
    b = np.full((36, 33), big, np.float32)
    out, status = kernels.fold_compiled(kernel, a, b, np.zeros((5, 33), np.float32))
    assert np.isposinf(out).all() and status == mm.OF | mm.NX
    z = np.zeros((4, 32), np.float32)
    start = np.full((4, 32), -0.0, np.float32)
    out, status = kernels.fold_compiled(kernel, -np.ones((4, 1), np.float32), z[:1], start)
    assert (out.view(np.uint32) == 0x80000000).all() and status == 0  # -0 + -0 stays -0
    out, _ = kernels.fold_compiled(kernel, np.ones((4, 1), np.float32), z[:1], start)
    assert (out.view(np.uint32) == 0).all()  # -0 + +0 is +0


class _FakeFold:
    """A stand-in for the kernel: the numpy fold in Python with one defect."""

    def __init__(self, defect: str) -> None:
        self.defect = defect

    def __call__(self, pa, pb, pacc, m, n, k) -> int:
        def view(ptr, count):
            return np.ctypeslib.as_array((ctypes.c_float * count).from_address(ptr))

        a, b = view(pa, m * k).reshape(m, k), view(pb, k * n).reshape(k, n)
        acc = view(pacc, m * n).reshape(m, n)
        want, status = mm._fold_native_numpy(a, b, acc.copy())
        if self.defect == "blas":
            want = (acc + np.matmul(a, b)).astype(np.float32)  # another order of additions
        elif self.defect == "ftz":
            want = np.where(np.abs(want) < 2.0**-126, np.float32(0) * want, want)
        acc[...] = want
        inexact = bool(status & mm.NX)
        return int(not inexact) if self.defect == "nx" else int(inexact)


class _FakeLibrary:
    def __init__(self, defect: str) -> None:
        self.ptoc_fold_f32 = _FakeFold(defect)


@pytest.mark.parametrize("defect", ["blas", "ftz", "nx"])
def test_the_certificate_rejects_each_hazard(defect) -> None:
    problem = kernels.certify_add(_FakeLibrary(defect))
    assert problem is not None and problem.startswith("probe ")


def test_the_certificate_accepts_a_faithful_fold() -> None:
    assert kernels.certify_add(_FakeLibrary("none")) is None


class _Delegate:
    """The real library with one entry point replaced."""

    def __init__(self, lib, **entries) -> None:
        self._lib = lib
        for name, fn in entries.items():
            setattr(self, name, fn)

    def __getattr__(self, name):
        return getattr(self._lib, name)


class _Entry:
    """A settable stand-in for a ctypes function (the certificate sets its types)."""

    def __init__(self, fn) -> None:
        self.fn = fn

    def __call__(self, *args):
        return self.fn(*args)


@pytest.fixture(scope="module")
def library(kernel):
    return compiled.load("fold32")


def test_the_certificate_rejects_a_widening_that_flushes_fp16_subnormals(library) -> None:
    real = library.ptoc_widen16

    def widen(src, dst, count, fp16, extremes):
        real(src, dst, count, fp16, extremes)
        codes = np.ctypeslib.as_array((ctypes.c_uint16 * count).from_address(src))
        out = np.ctypeslib.as_array((ctypes.c_uint32 * count).from_address(dst))
        if fp16:
            out[(codes & 0x7C00) == 0] &= np.uint32(0x80000000)

    problem = kernels.certify_fold(_Delegate(library, ptoc_widen16=_Entry(widen)))
    assert problem == "FP16 widening of sample 0 differs from numpy"


@pytest.mark.parametrize("defect", ["never declines", "always declines", "no OF"])
def test_the_certificate_rejects_each_route_defect(library, defect) -> None:
    real = library.ptoc_fold_half

    def half(a, a_fp16, b, b_fp16, acc, m, n, k):
        if defect == "always declines":
            return -1
        flags = real(a, a_fp16, b, b_fp16, acc, m, n, k)
        if defect == "never declines" and flags < 0:
            return 0
        return flags & ~2 if defect == "no OF" else flags

    problem = kernels.certify_half(_Delegate(library, ptoc_fold_half=_Entry(half)))
    assert problem is not None and problem.startswith("half probe ")


def test_the_certificate_accepts_the_built_library(library) -> None:
    assert kernels.certify_fold(library) is None


def test_a_failed_certificate_serves_the_numpy_fold(monkeypatch) -> None:
    compiled.reset("fold32")
    monkeypatch.setattr(kernels, "certify_fold", lambda lib: "probe 0: forced")
    try:
        assert kernels.compiled_fold() is None
        assert compiled.status("fold32") == "self-test failed: probe 0: forced"
        a = np.array([[1.0, 2.0**-24]], np.float16)
        got, status = mm.fold(a, D.FP16, a.T.copy(), D.FP16)
        want, want_status = mm.fold(a, D.FP16, a.T.copy(), D.FP16, exact=True)
        assert got.view(np.uint32).tolist() == want.view(np.uint32).tolist()
        assert status == want_status
    finally:
        compiled.reset("fold32")


def test_ptoc_compiled_0_disables_every_kernel(monkeypatch) -> None:
    compiled.reset("fold32")
    monkeypatch.setenv("PTOC_COMPILED", "0")
    try:
        assert compiled.load("fold32") is None
        assert compiled.status("fold32") == "disabled by PTOC_COMPILED=0"
    finally:
        compiled.reset("fold32")


def test_a_missing_compiler_falls_back_with_its_reason(monkeypatch, tmp_path) -> None:
    compiled.reset("fold32")
    monkeypatch.setenv("PTOC_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("CC", str(tmp_path / "no-such-cc"))
    try:
        assert compiled.load("fold32") is None
        assert compiled.status("fold32").startswith("not built: ")
        assert not list(tmp_path.iterdir())  # no half-written library is left behind
    finally:
        compiled.reset("fold32")


@pytest.mark.skipif(sys.platform == "win32" or not HAVE_CC, reason="needs a POSIX cc")
def test_the_build_drops_target_clones_and_is_cached(monkeypatch, tmp_path) -> None:
    cc = tmp_path / "cc-without-clones"
    log = tmp_path / "calls"
    real = shutil.which(compiled._compiler()[0])
    cc.write_text(
        "#!/bin/sh\n"
        f'echo "$*" >> "{log}"\n'
        'case "$*" in *PTOC_CLONES*)\n'
        '  echo "error: target_clones unsupported" >&2; exit 1;;\n'
        "esac\n"
        f'exec "{real}" "$@"\n'
    )
    cc.chmod(0o755)
    cache = tmp_path / "cache"
    monkeypatch.setenv("PTOC_CACHE_DIR", str(cache))
    monkeypatch.setenv("CC", str(cc))
    compiled.reset("fold32")
    try:
        lib = compiled.load("fold32", kernels.certify_fold)
        assert lib is not None, compiled.status("fold32")
        calls = log.read_text().splitlines()
        assert len(calls) == 2 and "PTOC_CLONES" in calls[0] and "PTOC_CLONES" not in calls[1]
        built = [p.name for p in cache.iterdir()]
        assert len(built) == 1 and built[0].startswith("fold32-")
        compiled.reset("fold32")
        assert compiled.load("fold32", kernels.certify_fold) is not None
        assert len(log.read_text().splitlines()) == 2  # the cached library, no new build
    finally:
        compiled.reset("fold32")


# --- the fused FP32 kernel (fma32.c) ---------------------------------------------------

SPECIAL32 = [0, 0x80000000, 0x00000001, 0x807FFFFF, 0x00800000, 0x7F7FFFFF, 0x3F800000]
HAZARD32 = [0x7F800000, 0xFF800000, 0x7FC00000, 0x7FA00000]  # leave the kernel's route


def codes32(rng: np.random.Generator, shape, holes: float) -> np.ndarray:
    """FP32 codes from any binade (a window per call, so that sums interact), specials."""
    centre = int(rng.integers(1, 255))
    spread = int(rng.integers(0, 40))
    lo, hi = max(0, centre - spread), min(254, centre + spread)
    sign = rng.integers(0, 2, shape).astype(np.uint32) << 31
    exp = rng.integers(lo, hi + 1, shape).astype(np.uint32) << 23
    out = sign | exp | rng.integers(0, 1 << 23, shape).astype(np.uint32)
    pool = SPECIAL32 + HAZARD32 if rng.random() < 0.2 else SPECIAL32
    hole = rng.random(shape) < holes
    out[hole] = rng.choice(np.array(pool, np.uint32), int(hole.sum()))
    return out.view(np.float32)


@pytest.fixture(scope="module")
def fma_kernel():
    fn = kernels.compiled_fma()
    if fn is None:
        assert not HAVE_CC, f"a compiler exists but: {compiled.status('fma32')}"
        pytest.skip("no C compiler: the exact engine serves FP32 folds")
    return fn


@given(
    st.integers(1, 9),
    st.integers(1, 70),
    st.integers(1, 24),
    st.sampled_from([0.0, 0.02, 0.2]),
    st.booleans(),
    st.integers(0, 2**32 - 1),
)
@examples(60)
def test_fused_fold_equals_the_exact_engine(fma_kernel, m, n, k, holes, with_acc, seed):
    rng = np.random.default_rng(seed)
    a, b = codes32(rng, (m, k), holes), codes32(rng, (k, n), holes)
    acc = codes32(rng, (m, n), holes) if with_acc else None
    want, want_status = mm.fold(a, D.FP32, b, D.FP32, acc=acc, exact=True)
    got, status = mm.fold(a, D.FP32, b, D.FP32, acc=acc)
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))
    assert status == want_status


@given(
    st.integers(1, 9),
    st.integers(1, 40),
    st.integers(1, 24),
    st.sampled_from([0.0, 0.02, 0.2]),
    st.booleans(),
    st.integers(0, 2**32 - 1),
)
@examples(40)
def test_fp32_carrier_route_equals_the_float64_route(
    fma_kernel, m, n, k, holes, with_acc, seed
):
    """``fold_fp32`` (FP32 carriers straight to the kernel) declines exactly where the
    float64 route ``fold_fused`` does (a NaN or an infinity) and otherwise gives its
    bits and status, over every binade, subnormals and signed zeros."""
    rng = np.random.default_rng(seed)
    a, b = codes32(rng, (m, k), holes), codes32(rng, (k, n), holes)
    acc = codes32(rng, (m, n), holes) if with_acc else None
    with np.errstate(invalid="ignore"):  # a signalling NaN widens with a warning
        start = np.zeros((m, n)) if acc is None else acc.astype(np.float64)
        want = kernels.fold_fused(a.astype(np.float64), b.astype(np.float64), start)
    got = kernels.fold_fp32(a, b, acc)
    assert (got is None) == (want is None)
    if got is not None and want is not None:
        np.testing.assert_array_equal(
            got[0].view(np.uint32), mm._to_fp32(want[0]).view(np.uint32)
        )
        assert got[1] == want[1]


def test_fused_fold_serves_fp32_and_declines_non_finite_operands(fma_kernel) -> None:
    a = np.array([[1.0, 2.0**-100]], np.float32)
    b = np.array([[3.0], [3.0 * 2.0**-40]], np.float32)
    s = np.zeros((1, 1))
    got = kernels.fold_fused(a.astype(np.float64), b.astype(np.float64), s)
    assert got is not None and got[0][0, 0] == np.float32(3.0) and got[1] == mm.NX
    for bad in (np.inf, np.nan, 2.0**200, 2.0**-160):  # the last two are no FP32 values
        a64 = a.astype(np.float64)
        a64[0, 1] = bad
        assert kernels.fold_fused(a64, b.astype(np.float64), s) is None


class _FakeFma:
    """A stand-in for the fused kernel with one defect, computed with Python floats."""

    def __init__(self, defect: str) -> None:
        self.defect = defect

    def __call__(self, pa, pb, pacc, m, n, k) -> int:
        def view(ptr, count):
            return np.ctypeslib.as_array((ctypes.c_float * count).from_address(ptr))

        a, b = view(pa, m * k).reshape(m, k), view(pb, k * n).reshape(k, n)
        acc = view(pacc, m * n).reshape(m, n)
        f64 = np.float64
        want, status = mm._fold_exact(a.astype(f64), b.astype(f64), acc.astype(f64), mm.RNE)
        if self.defect == "unfused":  # the product rounded to FP32 before the addition
            s = acc.astype(np.float32)
            for kk in range(k):
                s = s + np.multiply.outer(a[:, kk], b[kk]).astype(np.float32)
            want = s.astype(f64)
        acc[...] = want.astype(np.float32)
        bits = sum(bit for bit, flag in kernels.FMA_STATUS if status & flag)
        if self.defect == "tiny before rounding" and (np.abs(acc) == 2.0**-126).any():
            bits |= 2
        if self.defect == "no UF":
            bits &= ~2
        return bits


class _FakeFmaLibrary:
    def __init__(self, defect: str) -> None:
        self.ptoc_fold_fma_f32 = _FakeFma(defect)


@pytest.mark.parametrize("defect", ["unfused", "tiny before rounding", "no UF"])
def test_the_fma_certificate_rejects_each_hazard(defect) -> None:
    problem = kernels.certify_fma(_FakeFmaLibrary(defect))
    assert problem is not None and problem.startswith("probe ")


def test_the_fma_certificate_accepts_a_faithful_fold() -> None:
    assert kernels.certify_fma(_FakeFmaLibrary("none")) is None


@pytest.mark.skipif(sys.platform == "win32" or not HAVE_CC, reason="needs a POSIX cc")
def test_an_unwritable_cache_builds_for_the_process(monkeypatch, tmp_path) -> None:
    blocked = tmp_path / "file-not-dir"
    blocked.write_text("")
    monkeypatch.setenv("PTOC_CACHE_DIR", str(blocked / "cache"))  # below a file: no mkdir
    compiled.reset("fold32")
    try:
        assert compiled.load("fold32", kernels.certify_fold) is not None
        assert compiled.status("fold32") == "compiled"
    finally:
        compiled.reset("fold32")


def test_an_accumulator_of_another_dtype_is_refused() -> None:
    a = np.ones((2, 3), np.float16)
    with pytest.raises(ValueError, match="float32 carrier"):
        mm.fold(a, D.FP16, a.T.copy(), D.FP16, acc=np.ones((2, 2)))
    start = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    got, _ = mm.fold(a, D.FP16, a.T.copy(), D.FP16, acc=start)
    assert got.tolist() == [[4.0, 5.0], [6.0, 7.0]]
