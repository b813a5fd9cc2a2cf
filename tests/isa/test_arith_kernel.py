"""The compiled FP32/FP64 arithmetic kernel (``arith.c``) and its certificate.

Where a C compiler exists, warm two-source FP32/FP64 add, sub, mul and div bundles run in
one compiled pass that reads the IEEE flags of every PE. These tests pin that the kernel
equals the exact engine on operands of every class (random bit patterns: every binade,
subnormals, NaN payloads of both kinds; and the edges: signed zeros, infinities, the
overflow and underflow thresholds, exact results), in every operand layout the executor
passes (dense, a broadcast column or row value, a column stride), result bits, per-PE
status and the not-finite answer included; and that the certificate rejects a kernel
with each hazard it guards against.
"""

from __future__ import annotations

import ctypes
import shutil

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ptoc.backend.isa.datatypes import DataType
from ptoc.backend.isa.semantics import arith_kernels as ak
from ptoc.backend.isa.semantics import compiled
from ptoc.backend.isa.semantics.core import binary, to_bits

D = DataType
HAVE_CC = shutil.which(compiled._compiler()[0]) is not None
OPS = list(ak.OPS)
#: (width, exponent bits, fraction bits)
LAYOUT = {D.FP32: (32, 8, 23), D.FP64: (64, 11, 52)}
UINT = {32: np.uint32, 64: np.uint64}
CARRIER = {D.FP32: np.float32, D.FP64: np.float64}


@pytest.fixture(scope="module")
def kernel():
    fn = ak.compiled_arith()
    if fn is None:
        assert not HAVE_CC, f"a compiler exists but: {compiled.status('arith')}"
        pytest.skip("no C compiler: the numpy route serves (tests/runtime/test_fast_vs_exact)")
    return fn


def test_the_kernel_is_built_and_certified_where_a_compiler_exists() -> None:
    fn = ak.compiled_arith()
    if HAVE_CC:
        assert fn is not None and compiled.status("arith") == "compiled"
    else:
        assert fn is None and compiled.status("arith").startswith("not built: ")


def test_suspended_and_disabled_kernels_step_aside() -> None:
    with compiled.suspended():
        assert ak.compiled_arith() is None
        assert not ak.arith_enabled()
    from ptoc.backend.isa.semantics import fastpath

    with fastpath.exact_only():
        assert not ak.arith_enabled()
    assert ak.arith_enabled()


def _special(dt: DataType) -> list[int]:
    w, e, m = LAYOUT[dt]
    top, bias, fmax = (1 << e) - 1, (1 << (e - 1)) - 1, (1 << m) - 1

    def b(exp: int, frac: int) -> int:
        return (exp << m) | frac

    mags = [
        0, 1, 2, fmax, b(1, 0), b(1, 1), b(1, fmax), b(bias, 0), b(bias, 1), b(bias + 1, 0),
        b(bias - 1, fmax), b(top - 1, fmax), b(top - 1, 0), b(top, 0),
        b(top, 1 << (m - 1)), b(top, (1 << (m - 1)) | 5), b(top, 1), b(top, 0x2A),
        b(bias + m, 0), b(bias - m, 3), b(bias + (bias // 2), 7), b(bias - (bias // 2), 9),
    ]  # fmt: skip
    return mags + [v | (1 << (w - 1)) for v in mags]


def _codes(dt: DataType) -> st.SearchStrategy[int]:
    w, _, _ = LAYOUT[dt]
    return st.one_of(st.sampled_from(_special(dt)), st.integers(0, (1 << w) - 1))


@st.composite
def operands(draw: st.DrawFn) -> tuple[DataType, str, np.ndarray, np.ndarray]:
    dt = draw(st.sampled_from(list(LAYOUT)))
    op = draw(st.sampled_from(OPS))
    p, r, c = draw(st.integers(1, 4)), draw(st.integers(1, 3)), draw(st.integers(1, 40))
    w = LAYOUT[dt][0]

    def array(shape: tuple[int, ...]) -> np.ndarray:
        n = int(np.prod(shape))
        codes = draw(st.lists(_codes(dt), min_size=n, max_size=n))
        return np.array(codes, np.uint64).astype(UINT[w]).view(CARRIER[dt]).reshape(shape)

    x = array((p, r, c))
    layout = draw(st.sampled_from(["dense", "column", "row value", "strided"]))
    if layout == "dense":
        y = array((p, r, c))
    elif layout == "column":  # (P, R, 1) broadcast along the row: TROWEXPAND*
        y = np.broadcast_to(array((p, r, 1)), (p, r, c))
    elif layout == "row value":  # x broadcast: a scalar per row on the left
        x = np.broadcast_to(array((p, r, 1)), (p, r, c))
        y = array((p, r, c))
    else:  # every other column of a wider array
        y = array((p, r, 2 * c))[:, :, ::2]
    return dt, op, x, y


@given(operands())
def test_the_kernel_equals_the_exact_engine(kernel, case) -> None:
    dt, op, x, y = case
    want, want_status = binary(op, dt, x, y, exact=True)
    got, status, bad = ak.arith(kernel, op, dt, x, y)
    assert np.array_equal(to_bits(got), to_bits(want))
    assert status.tolist() == np.asarray(want_status, np.uint8).tolist()
    assert bad == (not bool(np.isfinite(want).all()))


@pytest.mark.parametrize("dt", list(LAYOUT))
def test_flags_stay_with_their_pe(kernel, dt: DataType) -> None:
    """Each PE's status holds only its own elements' flags: PE 0 exact sums, PE 1 an
    inexact one, PE 2 an overflow, PE 3 Inf - Inf and a signalling NaN."""
    w, _, m = LAYOUT[dt]
    big = np.finfo(CARRIER[dt]).max
    snan = np.array([((1 << (w - 1)) - 1) ^ ((1 << m) - 1) | 1], UINT[w]).view(CARRIER[dt])[0]
    x = np.array([[[1.0, 2.0]], [[1.0, 3.0]], [[big, 1.0]], [[np.inf, snan]]], CARRIER[dt])
    y = np.array([[[2.0, 4.0]], [[2.0**-60, 1.0]], [[big, 1.0]], [[np.inf, 1.0]]], CARRIER[dt])
    got, status, bad = ak.arith(kernel, "add", dt, x, y)
    nv, of, nx = 1, 4, 16
    assert status.tolist() == [0, nx, of | nx, nv]
    assert bad
    # NaN results are the canonical quiet NaN whatever the operand's payload
    want = binary("add", dt, x, y, exact=True)[0]
    assert np.array_equal(to_bits(got[3, 0]), to_bits(want)[3, 0])


# ---------------------------------------------------------------- the certificate


class _Mutant:
    """A stand-in library whose ``ptoc_arith`` runs the real kernel and then breaks its
    result in one way (the certificate must notice)."""

    def __init__(self, real, breaks: str) -> None:
        self.ptoc_arith = self
        self.ptoc_fold = ak.compiled_fold()
        entries = ak.block_entries()
        assert entries is not None
        self.ptoc_arith_block, self.ptoc_fold_block = entries
        if breaks == "block status":  # the one-argument entry leaves the status alone

            def no_status(args, entry=entries[0]) -> int:
                saved, args[4] = args[4], 0
                try:
                    return entry(args)
                finally:
                    args[4] = saved

            self.ptoc_arith_block = no_status
        elif breaks == "block answer":
            self.ptoc_fold_block = lambda args, entry=entries[1]: entry(args) ^ 0x10
        self.real, self.breaks = real, breaks
        self.restype = self.argtypes = None

    def __call__(self, d: int, x: int, y: int, z: int) -> int:
        packed = self.real(d, x, y, z)
        block = np.ctypeslib.as_array((ctypes.c_int64 * 19).from_address(d))
        pes, rows, cols = (int(v) for v in block[2:5])
        wide = bool(block[1])
        zp, zr = int(block[11]), int(block[12])
        n = (pes - 1) * zp + (rows - 1) * zr + cols
        kind = ctypes.c_uint64 if wide else ctypes.c_uint32
        out = np.ctypeslib.as_array((kind * n).from_address(z))
        exp = 0x7FF0000000000000 if wide else 0x7F800000
        frac = (1 << (52 if wide else 23)) - 1
        if self.breaks == "native NaN":  # the payload numpy would keep
            nan = (out & exp) == exp
            nan &= (out & frac) != 0
            out[nan] |= 1
        elif self.breaks == "flush to zero":
            tiny = ((out & exp) == 0) & ((out & frac) != 0)
            out[tiny] &= out.dtype.type(((1 << (64 if wide else 32)) - 1) ^ frac)
        elif self.breaks == "status of PE 0":
            packed &= ~0xFF
        elif self.breaks == "not finite":
            packed &= ~(1 << 62)
        return packed


BREAKS = ["native NaN", "flush to zero", "status of PE 0", "not finite", "block status",
          "block answer"]  # fmt: skip


@pytest.mark.parametrize("breaks", BREAKS)
def test_the_certificate_rejects_a_broken_kernel(kernel, breaks: str) -> None:
    assert ak.certify_arith(_Mutant(kernel, "none")) is None
    problem = ak.certify_arith(_Mutant(kernel, breaks))
    assert problem is not None, breaks


# ---------------------------------------------------------------- the array route


@st.composite
def large_operands(draw: st.DrawFn) -> tuple[DataType, str, np.ndarray, np.ndarray]:
    """Operands of at least :data:`ak.ARRAY_ROUTE_MIN` elements, mostly ordinary with a
    few specials (so the numpy route's clean path fails and the array route serves), as
    dense tiles or with a broadcast column (the row expansions)."""
    dt = draw(st.sampled_from(list(LAYOUT)))
    op = draw(st.sampled_from(OPS))
    p, r = draw(st.integers(1, 4)), draw(st.integers(1, 3))
    c = draw(st.sampled_from([512, 600]))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    w = LAYOUT[dt][0]
    specials = np.array(_special(dt), np.uint64).astype(UINT[w]).view(CARRIER[dt])

    def array(shape: tuple[int, ...]) -> np.ndarray:
        a = rng.standard_normal(shape).astype(CARRIER[dt])
        holes = rng.random(shape) < draw(st.sampled_from([0.0, 0.01, 0.3]))
        a[holes] = specials[rng.integers(0, len(specials), int(holes.sum()))]
        return a

    x = array((p, r, c))
    y = array((p, r, c)) if draw(st.booleans()) else array((p, r, 1))
    return dt, op, x, np.broadcast_to(y, x.shape)


@given(large_operands())
def test_binary_of_large_operands_equals_the_exact_engine(kernel, case) -> None:
    """``core.binary`` (the semantics the executor and the references call): the array
    route where the numpy route's clean path does not apply, bit for bit."""
    dt, op, x, y = case
    calls: list[int] = []
    real = ak.ArithPlan.__call__

    def counting(plan: ak.ArithPlan, *args: int) -> tuple[np.ndarray, bool]:
        calls.append(1)
        return real(plan, *args)

    ak.ArithPlan.__call__ = counting  # type: ignore[method-assign]
    try:
        got, status = binary(op, dt, x, y)
    finally:
        ak.ArithPlan.__call__ = real  # type: ignore[method-assign]
    want, want_status = binary(op, dt, x, y, exact=True)
    assert np.array_equal(to_bits(got), to_bits(want))
    assert np.asarray(status).tolist() == np.asarray(want_status).tolist()
    if not np.isfinite(x).all() or not np.isfinite(y).all():
        assert calls, "NaN or Inf operands take the compiled kernel"


def test_small_or_misaligned_operands_keep_the_numpy_route(kernel) -> None:
    x = np.ones((4, 1, 8), np.float32)
    assert ak.arith_arrays("add", D.FP32, x, x) is None  # small
    storage = np.zeros(4 * 4 * 256 + 1, np.float32).view(np.uint8)[2 : 2 + 4 * 4 * 256 * 4]
    odd = storage.view(np.float32).reshape(4, 4, 256)
    assert ak.address(odd) % 4
    assert ak.arith_arrays("add", D.FP32, odd, odd) is None
    assert ak.arith_arrays("max", D.FP32, odd, odd) is None


# ---------------------------------------------------------------- the folds


@st.composite
def fold_operands(draw: st.DrawFn) -> tuple[DataType, str, np.ndarray]:
    """(P, N, K) operands of every class, folded along rows (K contiguous) or columns
    (a transposed view), at least :data:`ak.FOLD_ROUTE_MIN` elements; up to 20 rows, so
    row folds take the kernel's blocks of 8 rows and the rows left over."""
    dt = draw(st.sampled_from(list(LAYOUT)))
    op = draw(st.sampled_from(list(ak.FOLD_OPS)))
    p, n = draw(st.integers(1, 4)), draw(st.integers(1, 20))
    k = draw(st.integers(-(-ak.FOLD_ROUTE_MIN // (p * n)), 70))
    w = LAYOUT[dt][0]
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    specials = np.array(_special(dt), np.uint64).astype(UINT[w]).view(CARRIER[dt])
    x = rng.standard_normal((p, n, k)).astype(CARRIER[dt])
    holes = rng.random(x.shape) < draw(st.sampled_from([0.0, 0.02, 0.3]))
    x[holes] = specials[rng.integers(0, len(specials), int(holes.sum()))]
    if draw(st.booleans()):  # a column fold: K strided, N contiguous
        x = np.swapaxes(np.ascontiguousarray(np.swapaxes(x, 1, 2)), 1, 2)
    return dt, op, x


@given(fold_operands())
def test_the_fold_equals_the_exact_step_loop(kernel, case) -> None:
    from ptoc.backend.isa.semantics import fastpath
    from ptoc.backend.isa.semantics.reduce import _fold_loop

    dt, op, x = case
    got = ak.fold_arrays(op, dt, x)
    assert got is not None
    with fastpath.exact_only():
        want, want_status = _fold_loop(op, dt, x)
    assert np.array_equal(to_bits(got[0]), to_bits(want))
    assert got[1].tolist() == np.asarray(want_status, np.uint8).tolist()


def test_the_certificate_rejects_a_fold_in_another_order(kernel) -> None:
    """A sum folded from the last element to the first is a different computation."""
    lib = ctypes.CDLL(str(compiled._build("arith")))

    class Reversed:
        def __init__(self) -> None:
            self.ptoc_arith = lib.ptoc_arith
            self.ptoc_arith_block = lib.ptoc_arith_block
            self.ptoc_fold_block = lib.ptoc_fold_block
            self.real = lib.ptoc_fold
            self.ptoc_fold = self

        def __call__(self, d: int, x: int, z: int) -> int:
            block = np.ctypeslib.as_array((ctypes.c_int64 * 16).from_address(d))
            if block[0] == 0 and block[4] > 1:  # a sum: walk k backwards
                flipped = block.copy()
                flipped[7] = -block[7]
                last = x + int(block[4] - 1) * int(block[7]) * (8 if block[1] else 4)
                return self.real(ak.address(flipped), last, z)
            return self.real(d, x, z)

    assert ak.certify_arith(lib) is None
    problem = ak.certify_arith(Reversed())  # type: ignore[arg-type]
    assert problem is not None and "fold sum" in problem
