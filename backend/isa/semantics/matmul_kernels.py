"""The compiled routes of the D11 fold (``fold32.c``, ``fma32.c``) and their certificates.

:mod:`.matmul` is the fold; this module holds what runs it in C where a compiler exists
(:mod:`.compiled` builds and caches the libraries): the FP16/BF16 route in one call
(:func:`fold_half`), FP32 additions of exact products (:func:`fold_compiled`) and the
fused FP32 steps (:func:`fold_fused`; :func:`fold_fp32` for FP32 carriers). Each
library is used only after its certificate (:func:`certify_fold`, :func:`certify_fma`)
found it equal to the numpy path on probes of every hazard, bit for bit and status
included; every function here returns None where the numpy path must decide instead.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable

import numpy as np

from ..datatypes import DataType
from . import compiled
from . import matmul as _mm  # the numpy paths (matmul imports this module first)
from .core import to_bits
from .floatfmt import NX, OF, RNE, UF

D = DataType


def fold_compiled(
    kernel: Callable[..., int], a32: np.ndarray, b32: np.ndarray, run: np.ndarray
) -> tuple[np.ndarray, int]:
    """:func:`.matmul._fold_native` by the compiled ``fold32.c`` (:func:`compiled_fold`)."""
    m, k = a32.shape
    n = b32.shape[1]
    a = np.ascontiguousarray(a32, np.float32)
    b = np.ascontiguousarray(b32, np.float32)
    out = np.array(run, np.float32, order="C")  # a copy: the kernel adds in place
    status = NX if kernel(a.ctypes.data, b.ctypes.data, out.ctypes.data, m, n, k) else 0
    if np.isinf(out).any():  # finite exact products: an Inf sum is an overflow
        status |= OF | NX
    return out, status


def compiled_fold() -> Callable[..., int] | None:
    """The compiled fold kernel, or None where numpy folds (no compiler, self-test failed).

    In numpy the fold costs two memory passes over the M * N * K products (about 20x a
    BLAS matmul); the C loop of ``fold32.c`` keeps a block of sums in registers across k
    and performs the same IEEE FP32 additions in the same order. It is built once per
    machine (:mod:`.compiled`) and certified at load by :func:`certify_fold`.
    """
    lib = compiled.load("fold32", certify_fold)
    return None if lib is None else lib.ptoc_fold_f32


def compiled_half() -> Callable[..., int] | None:
    """The compiled FP16/BF16 route of ``fold32.c`` (widening, range check and fold in one
    call; certified with the fold)."""
    lib = compiled.load("fold32", certify_fold)
    return None if lib is None else lib.ptoc_fold_half


def fold_half(
    a: np.ndarray, a_type: DataType, b: np.ndarray, b_type: DataType, acc: np.ndarray | None
) -> tuple[np.ndarray, int] | None:
    """The FP16/BF16 route (:func:`.matmul._native_operands`, :func:`.matmul._fold_native`)
    in one compiled call, or None when there is no kernel or the route does not apply."""
    kernel = compiled_half()
    if kernel is None:
        return None
    for x, dt in ((a, a_type), (b, b_type)):
        if not (
            (dt == D.FP16 and x.dtype == np.float16) or (dt == D.BF16 and x.dtype.itemsize == 2)
        ):
            return None
    return fold_half_by(kernel, a, a_type, b, b_type, acc)


def fold_half_by(
    kernel: Callable[..., int],
    a: np.ndarray,
    a_type: DataType,
    b: np.ndarray,
    b_type: DataType,
    acc: np.ndarray | None,
) -> tuple[np.ndarray, int] | None:
    m, k = a.shape
    n = b.shape[1]
    if m * n * k == 0:
        return None
    if acc is None:
        out = np.zeros((m, n), np.float32)
    elif np.asarray(acc).dtype == np.float32:
        out = np.array(acc, np.float32, order="C")  # a copy: the kernel adds in place
    else:
        return None
    ca, cb = to_bits(a), to_bits(b)  # C-contiguous codes
    flags = kernel(
        ca.ctypes.data, int(a_type == D.FP16), cb.ctypes.data, int(b_type == D.FP16),
        out.ctypes.data, m, n, k,
    )  # fmt: skip
    if flags < 0:
        return None  # the route does not apply (or no memory): the general path decides
    return out, (NX if flags & 1 else 0) | (OF | NX if flags & 2 else 0)


def certify_fold(lib: ctypes.CDLL) -> str | None:
    """None when the compiled fold equals the numpy fold on probes of every hazard, else
    the first disagreement: the widening of every FP16/BF16 code (:func:`certify_widen`),
    the FP32 additions (:func:`certify_add`) and the whole FP16/BF16 route with its
    declines (:func:`certify_half`)."""
    return certify_widen(lib) or certify_add(lib) or certify_half(lib)


def certify_add(lib: ctypes.CDLL) -> str | None:
    """None when ``ptoc_fold_f32`` equals the numpy fold on probes of every hazard.

    The probes cover both loop nests of the kernel (blocks of 3 x 32 sums and the tails),
    ties to even, sums that cancel to subnormals (flush-to-zero would show), signed zeros
    in both orders, overflow to Inf, and an exact fold (no NX), comparing bits and status.
    """
    fn = lib.ptoc_fold_f32
    fn.restype = ctypes.c_int
    fn.argtypes = [ctypes.c_void_p] * 3 + [ctypes.c_ssize_t] * 3
    rng = np.random.default_rng(11)
    probes = []
    for m, n, k in ((6, 40, 9), (4, 32, 3), (1, 1, 1), (5, 3, 7)):
        a = rng.uniform(-2, 2, (m, k)).astype(np.float32)
        b = (rng.uniform(-2, 2, (k, n)).astype(np.float16)).astype(np.float32)
        a = a.astype(np.float16).astype(np.float32)  # 11-bit significands: exact products
        probes.append((a, b, rng.uniform(-1, 1, (m, n)).astype(np.float32)))
    tie = np.float32(2.0**-24)
    probes.append(
        (
            np.array([[1.0, 1.0, 1.0]], np.float32),
            np.array([[1.0], [tie], [tie]], np.float32),
            np.zeros((1, 1), np.float32),
        )
    )  # 1 + 2**-24 ties to 1, twice
    tiny = np.float32(2.0**-63)
    probes.append(
        (
            np.array([[1.5 * tiny, -tiny]], np.float32),
            np.array([[tiny], [tiny]], np.float32),
            np.zeros((1, 1), np.float32),
        )
    )  # cancels to 2**-127
    probes.append(
        (
            np.array([[-1.0, 1.0]], np.float32),
            np.array([[0.0, -0.0], [-0.0, 0.0]], np.float32),
            np.array([[-0.0, -0.0]], np.float32),
        )
    )
    big = np.float32(2.0**63)
    probes.append(
        (
            np.array([[1.5 * big, 1.5 * big]], np.float32),
            np.array([[big], [big]], np.float32),
            np.zeros((1, 1), np.float32),
        )
    )  # overflows to Inf
    exact = np.arange(12, dtype=np.float32).reshape(3, 4)
    probes.append((exact, exact.T.copy(), np.ones((3, 3), np.float32)))
    for i, (a, b, run) in enumerate(probes):
        got, got_status = fold_compiled(fn, a, b, run)
        want, want_status = _mm._fold_native_numpy(a, b, run.copy())
        if not np.array_equal(got.view(np.uint32), want.view(np.uint32)):
            return f"probe {i}: result bits differ from the numpy fold"
        if got_status != want_status:
            return f"probe {i}: status {got_status:#x} != {want_status:#x}"
    return None


#: status bits of the compiled fused fold (``fma32.c``)
FMA_STATUS = ((1, NX), (2, UF), (4, OF))
FMA_INVALID = 8


def fold_fused(av: np.ndarray, bv: np.ndarray, s: np.ndarray) -> tuple[np.ndarray, int] | None:
    """The RNE fold of finite FP32 values by the compiled fused kernel, else None.

    ``av``, ``bv`` and the start ``s`` are float64 arrays; the kernel applies when every
    element is a finite FP32 value (FP32 operands; MX-scaled operands beyond FP32 and
    non-finite ones take the exact engine). Each step is one ``fmaf``, the exact product
    plus the sum rounded once: the D11 step itself, certified by :func:`certify_fma`.
    """
    kernel = compiled_fma()
    if kernel is None:
        return None
    with np.errstate(over="ignore", invalid="ignore"):
        ops = [x.astype(np.float32) for x in (av, bv, s)]
    for x, x32 in zip((av, bv, s), ops):
        if not (np.isfinite(x32).all() and np.array_equal(x32, x)):
            return None
    return fold_fused_by(kernel, ops[0], ops[1], ops[2])


def fold_fp32(
    a: np.ndarray, b: np.ndarray, acc: np.ndarray | None
) -> tuple[np.ndarray, int] | None:
    """The RNE fold of FP32 carrier operands (and FP32 start ``acc``, None: +0) by the
    compiled fused kernel when every element is finite, else None.

    What :func:`.matmul.fold` computes for them through :func:`fold_fused` -- float64
    copies that are exact, then the kernel on their FP32 values, then the FP32 carrier
    of the float64 result -- without the round trips: finite FP32 values convert to
    float64 and back unchanged, and the kernel never makes a NaN from finite operands
    (it reports an invalid operation instead, which returns None here as there).
    """
    kernel = compiled_fma()
    if kernel is None:
        return None
    for x in (a, b) if acc is None else (a, b, acc):
        if x.dtype != np.float32 or not np.isfinite(x).all():
            return None
    run = np.zeros((a.shape[0], b.shape[1]), np.float32) if acc is None else acc
    return fold_fused_by(kernel, a, b, run, widen=False)


def fold_fused_by(
    kernel: Callable[..., int],
    a32: np.ndarray,
    b32: np.ndarray,
    run: np.ndarray,
    widen: bool = True,
) -> tuple[np.ndarray, int] | None:
    """The kernel's fold of FP32 ``a32`` x ``b32`` from ``run`` (copied): the float64
    result (``widen``; else the FP32 one) and status, or None on an invalid operation."""
    m, k = a32.shape
    n = b32.shape[1]
    a = np.ascontiguousarray(a32, np.float32)
    b = np.ascontiguousarray(b32, np.float32)
    out = np.array(run, np.float32, order="C")
    flags = kernel(a.ctypes.data, b.ctypes.data, out.ctypes.data, m, n, k)
    if flags & FMA_INVALID:  # not for finite operands; the exact engine then decides
        return None
    status = 0
    for bit, flag in FMA_STATUS:
        if flags & bit:
            status |= flag
    return (out.astype(np.float64) if widen else out), status


def compiled_fma() -> Callable[..., int] | None:
    """The compiled fused fold kernel (``fma32.c``), or None where the exact engine folds."""
    lib = compiled.load("fma32", certify_fma)
    return None if lib is None else lib.ptoc_fold_fma_f32


def certify_fma(lib: ctypes.CDLL) -> str | None:
    """None when the compiled fused fold equals the exact engine on probes of every hazard.

    Besides both loop nests and signed zeros: products far below FP32's subnormals and
    far above its range inside a step, sums that round to subnormals (UF) and one that
    rounds up to the smallest normal (not tiny after rounding, ptoc's tininess rule),
    overflow, and an exact cancellation of a product's low bits.
    """
    fn = lib.ptoc_fold_fma_f32
    fn.restype = ctypes.c_int
    fn.argtypes = [ctypes.c_void_p] * 3 + [ctypes.c_ssize_t] * 3
    rng = np.random.default_rng(13)
    f32 = np.float32
    probes = []
    for (m, n, k), scale in (((6, 40, 9), 1.0), ((4, 32, 3), 2.0**-70), ((5, 3, 7), 2.0**60)):
        a = (rng.standard_normal((m, k)) * scale).astype(f32)
        b = (rng.standard_normal((k, n)) * scale).astype(f32)
        probes.append((a, b, rng.standard_normal((m, n)).astype(f32) * f32(scale * scale)))
    probes.append(
        (
            np.array([[2.0**-75, 1.0, 1.0 + 2.0**-23]], f32),
            np.array(
                [[-(2.0**-76), 1.0, 0.0], [0.0, -1.0, 1.0 + 2.0**-23], [0.0, 0.0, 1.0]], f32
            ),
            np.array([[2.0**-126, 1.0, -(1.0 + 2.0**-22)]], f32),
        )
    )  # rounds up to 2**-126 (not tiny after rounding); exact +0; exact 2**-46
    probes.append(
        (
            np.array([[2.0**64, -1.0]], f32),
            np.array([[2.0**64, 0.0], [0.0, -0.0]], f32),
            np.array([[0.0, -0.0]], f32),
        )
    )  # overflow to Inf; -0 + -0 stays -0
    probes.append(
        (np.array([[2.0**-100]], f32), np.array([[3.0 * 2.0**-40]], f32), np.zeros((1, 1), f32))
    )  # a subnormal, inexact sum: UF
    for i, (a, b, run) in enumerate(probes):
        got = fold_fused_by(fn, a, b, run)
        want, want_status = _mm._fold_exact(
            a.astype(np.float64), b.astype(np.float64), run.astype(np.float64), RNE
        )
        if got is None:
            return f"probe {i}: the kernel reported an invalid operation"
        if not np.array_equal(
            _mm._to_fp32(got[0]).view(np.uint32), _mm._to_fp32(want).view(np.uint32)
        ):
            return f"probe {i}: result bits differ from the exact engine"
        if got[1] != want_status:
            return f"probe {i}: status {got[1]:#x} != {want_status:#x}"
    return None


def certify_half(lib: ctypes.CDLL) -> str | None:
    """None when ``ptoc_fold_half`` equals the numpy route, declines included: mixed
    FP16/BF16 pairs with and without a start, a NaN operand, an Inf start, products
    below FP32's normal range, sums that overflow."""
    fn = lib.ptoc_fold_half
    fn.restype = ctypes.c_int
    pointer, flag, size = ctypes.c_void_p, ctypes.c_int, ctypes.c_ssize_t
    fn.argtypes = [pointer, flag, pointer, flag, pointer, size, size, size]
    rng = np.random.default_rng(14)
    carriers = {D.FP16: np.float16, D.BF16: None}
    probes: list[tuple[np.ndarray, DataType, np.ndarray, DataType, np.ndarray | None]] = []
    for a_type, b_type, (m, n, k) in (
        (D.FP16, D.BF16, (6, 40, 9)), (D.BF16, D.BF16, (4, 33, 5)), (D.FP16, D.FP16, (3, 2, 7)),
    ):  # fmt: skip
        a = rng.uniform(-3, 3, (m, k)).astype(np.float32)
        b = rng.uniform(-3, 3, (k, n)).astype(np.float32)
        c0 = rng.uniform(-1, 1, (m, n)).astype(np.float32)
        probes += [(a, a_type, b, b_type, None), (a, a_type, b, b_type, c0)]
    one = np.ones((2, 1), np.float32)
    probes.append((np.array([[np.nan, 1.0]], np.float32), D.BF16, one, D.BF16, None))
    probes.append((one.T, D.FP16, one, D.FP16, np.array([[np.inf]], np.float32)))
    probes.append(
        (np.array([[2.0**-20, 1.0]], np.float32), D.FP16, one * 2.0**-110, D.BF16, None)
    )
    probes.append(
        (np.array([[2.0**127, 2.0**127]], np.float32), D.BF16, one * 1.5, D.BF16, None)
    )
    for i, (pa, a_type, pb, b_type, start) in enumerate(probes):
        xa, xb = (half_codes(x, dt, carriers[dt]) for x, dt in ((pa, a_type), (pb, b_type)))
        got = fold_half_by(fn, xa, a_type, xb, b_type, start)
        ops = _mm._native_operands(xa, a_type, xb, b_type, start)
        want = (
            None if ops is None else _mm._fold_native_numpy(*ops, start_is_zero=start is None)
        )
        if (got is None) != (want is None):
            return f"half probe {i}: the route {'declined' if got is None else 'applied'}"
        if got is not None and want is not None:
            if not np.array_equal(got[0].view(np.uint32), want[0].view(np.uint32)):
                return f"half probe {i}: result bits differ from the numpy route"
            if got[1] != want[1]:
                return f"half probe {i}: status {got[1]:#x} != {want[1]:#x}"
    return None


def half_codes(x: np.ndarray, dt: DataType, carrier: type | None) -> np.ndarray:
    """FP32 values (exact in ``dt``) as an FP16 array or as BF16 codes in a uint16 array."""
    if carrier is not None:
        return x.astype(carrier)
    return (x.view(np.uint32) >> np.uint32(16)).astype(np.uint16)


def certify_widen(lib: ctypes.CDLL) -> str | None:
    """None when ``ptoc_widen16`` widens every FP16 and BF16 code as numpy does and finds
    the extremes of :func:`_half_extremes` (all codes; zeros only; a few subsets)."""
    fn = lib.ptoc_widen16
    fn.restype = None
    fn.argtypes = [ctypes.c_void_p] * 2 + [ctypes.c_ssize_t, ctypes.c_int, ctypes.c_void_p]
    every = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
    rng = np.random.default_rng(12)
    samples = [every, np.array([0x8000, 0, 0x8000], np.uint16)]
    samples += [rng.choice(every[:0x7C00], 50) for _ in range(4)]
    for dt, carrier in ((D.FP16, np.float16), (D.BF16, np.uint16)):  # BF16: any 16-bit view
        for i, codes in enumerate(samples):
            out = np.empty(codes.shape, np.uint32)
            ext = np.zeros(2, np.uint16)
            fn(
                codes.ctypes.data,
                out.ctypes.data,
                codes.size,
                int(dt == D.FP16),
                ext.ctypes.data,
            )
            x = codes.view(carrier)
            want = _mm._fp32_carrier(x, dt)
            assert want is not None
            if not np.array_equal(out, want.view(np.uint32)):
                return f"{dt.name} widening of sample {i} differs from numpy"
            mag = codes & np.uint16(0x7FFF)
            lo = min(int((mag - np.uint16(1)).min()) + 1, 0xFFFF)  # 0xFFFF: only zeros
            if int(ext[0]) != lo or int(ext[1]) != int(mag.max()):
                return f"{dt.name} extremes of sample {i} differ"
    return None
