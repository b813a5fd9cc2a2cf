"""CUBE matrix numerics: TMATMUL, TGEMV and their ACC, BIAS and MX forms (DECISIONS D11).

The ASL fixes the structure (``MatrixProductResultFromTiles``,
``MatrixMXProductResultFromTiles`` and ``MatrixBiasResult`` in
``asl/tile/model/execution/cube.asl``) and leaves the arithmetic to the impdef hooks
``TileProfileMatrixAccumulate``, ``TileProfileMatrixScaledAccumulate`` and
``TileProfileMatrixBias``. D11 is ptoc's profile for them:

* every destination element [m, n] starts at the accumulator element (ACC forms) or +0
  and folds k = 0 .. K-1 in increasing order, ``sum = round(sum + a[m,k] * b[k,n])``:
  the product is exact and each step rounds once to the accumulator type (FP32; a
  fused multiply-add), with the B.DATR rounding mode (RNE by default);
* integer matrices accumulate exactly and wrap modulo 2**32 (S32/U32);
* a bias adds after the fold with one more rounding;
* MX forms multiply each product by the exact power-of-two E8M0 block scales of its
  row (A, block k // 32) and column (B) before it enters the fold;
* IEEE rules per step: Inf*0 and Inf-Inf give NaN and set NV, a signalling NaN operand
  sets NV, every NaN result is the canonical quiet NaN, signed zeros follow IEEE
  addition (a fold from +0 over -0 products gives +0).

How it is computed exactly and fast. Every product of two matrix inputs (at most 24
significand bits each, E8M0 scales are powers of two) is exact in float64. When both
inputs have at most 24 significand bits together and every product of the call lies in
FP32's normal range (checked from the operands' extreme magnitudes), the products are
exact FP32 values and a step is one IEEE FP32 addition: the fold then runs as one
in-place float32 addition per k (or one ``np.add.reduce`` over a block of k while M * N is
small, which numpy evaluates row after row), of products formed a block of k at a time,
which is the path of FP16, FP8 and in-range BF16/TF32/HF32 inputs. FP16 and BF16
operands reach it without a float64 copy (BF16 widens by shifting its bits). Otherwise
(FP32 inputs, MX scales out of range, subnormal or overflowing products, another
rounding mode) each step forms the exact sum ``s + p`` as the float64 pair of Knuth's
TwoSum and rounds it once: for RNE by rounding the pair to odd at 53 bits and then to
FP32 (correct since 53 >= 24 + 2, Boldo and Melquiond), elements that are tiny or
overflow and other rounding modes through the exact parts engine of :mod:`.floatfmt`.
Non-finite operands take a per-step special-value pass.

The post-processing of B.FPATR (conversion, activation, RowMax/GroupMax) is
:mod:`.fpatr`; :func:`matmul` composes fold, bias and post-processing as
``CommitMatrixResult`` does. Arrays are 2-D logical operands in their carrier dtypes
(``A`` is M x K, ``B`` K x N); status is one int of the bits NV, DZ, OF, UF, NX for the
call (the executor calls once per PE).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from ..datatypes import DataType, info
from . import fpatr as _fpatr
from . import matmul_kernels as kernels
from .core import SemanticError, from_bits, to_bits
from .floatarith import two_sum
from .floatfmt import (
    CANONICAL_NAN,
    FORMATS,
    NV,
    NX,
    OF,
    RNE,
    RTM,
    classify,
    decode,
    encode_parts,
    parts_from_pair,
)

D = DataType

#: ``TileOrdinaryMatrixInputTypeSupported`` (matrix-shape.asl): A and B of ordinary forms.
MATRIX_INPUT_TYPES = frozenset(
    {D.FP32, D.TF32, D.HF32, D.FP16, D.BF16, D.HiF8, D.E4M3, D.E5M2, D.E3M2, D.E2M3}
    | {D.E2M1X2, D.E1M2X2, D.S16, D.S8, D.S4X2, D.U16, D.U8, D.U4X2}
)
#: ``TileMXInputTypeSupported`` (matrix-functions.asl): A and B of MX forms.
MX_INPUT_TYPES = frozenset({D.FP16, D.BF16, D.E4M3, D.E5M2, D.E2M1X2, D.E1M2X2})
#: ``TileMXInputTypeNeedsScale``: MX sides that carry an E8M0 scale operand.
MX_SCALED_TYPES = MX_INPUT_TYPES - {D.FP16, D.BF16}
#: K elements per E8M0 scale (``inner DIVRM 32`` in ``MatrixMXProductResultFromTiles``).
MX_BLOCK = 32

_FLT_MAX = float(np.finfo(np.float32).max)
_TINY = 2.0**-125  # below this a rounded FP32 sum may be subnormal or tiny
_KNOWN_EXACT_SUM = 2**16  # integer chunks: |sum| < 2**48 < 2**53 in float64
_PRODUCT_BLOCK = 1 << 19  # products formed per call of the native fold (2 MiB of FP32)
_NX_SAMPLE = 256  # elements of a step checked for NX before the whole step
_REDUCE_MAX = 1 << 14  # up to this M * N the native fold adds a block of k in one call


def type_class(dt: DataType) -> str:
    """ "float", "signed" or "unsigned" (``TileDataTypeIsFloating`` / ``...IsSigned``)."""
    i = info(dt)
    if i.is_float:
        return "float"
    return "signed" if i.is_signed else "unsigned"


def pair_legal(a_type: DataType, b_type: DataType, mx: bool = False) -> bool:
    """Whether AType/BType form a legal pair.

    Ordinary forms: ``TileOrdinaryMatrixInputTypesSameClass`` (both supported and of one
    class: floating, signed or unsigned). MX forms: ``TileMXOperandPairLegal`` (any two
    MX input types).
    """
    if mx:
        return a_type in MX_INPUT_TYPES and b_type in MX_INPUT_TYPES
    if a_type not in MATRIX_INPUT_TYPES or b_type not in MATRIX_INPUT_TYPES:
        return False
    return type_class(a_type) == type_class(b_type)


def accumulator_type(a_type: DataType, b_type: DataType, mx: bool = False) -> DataType:
    """``TileOrdinaryMatrixAccumulatorType``: FP32, S32 or U32 by class; MX forms FP32.

    Raises :class:`SemanticError` for an illegal pair.
    """
    known = _ACC_TYPES.get((a_type, b_type, mx))
    if known is not None:
        return known
    acc = _accumulator_type(DataType(a_type), DataType(b_type), mx)
    _ACC_TYPES[(a_type, b_type, mx)] = acc
    return acc


#: (AType, BType, mx) -> accumulator type, for the legal pairs met so far (one lookup per
#: fold instead of the class tests)
_ACC_TYPES: dict[tuple[DataType, DataType, bool], DataType] = {}


def _accumulator_type(a_type: DataType, b_type: DataType, mx: bool) -> DataType:
    if not pair_legal(a_type, b_type, mx):
        rule = "TileMXOperandPairLegal" if mx else "TileOrdinaryMatrixInputTypesSameClass"
        raise SemanticError(
            f"{a_type.name} x {b_type.name} is not a legal CUBE matrix pair ({rule})"
        )
    if mx:
        return D.FP32
    return {"float": D.FP32, "signed": D.S32, "unsigned": D.U32}[type_class(a_type)]


def needs_scale(dt: DataType, mx: bool = True) -> bool:
    """Whether an MX side of type ``dt`` takes an E8M0 scale operand."""
    return mx and DataType(dt) in MX_SCALED_TYPES


def scale_blocks(k: int) -> int:
    """The number of E8M0 scale blocks along K (``(k + 31) DIVRM 32``)."""
    return (k + MX_BLOCK - 1) // MX_BLOCK


def significand_bits(dt: DataType) -> int:
    """Significand width (with the hidden bit) of a floating matrix input type."""
    if dt == D.HiF8:
        return 4  # the widest HiF8 field (D0..D2: 1 + 3 fraction bits, hif8.asl)
    return FORMATS[dt].mbits + 1


# ---------------------------------------------------------------- results


@dataclass(frozen=True)
class MatmulResult:
    """Outputs of one CUBE matrix operation, published together (``CommitMatrixResult``).

    ``d`` is M x N in the output type (the accumulator type unless B.FPATR
    pre-quantizes); ``row_max`` (M x 1) and ``group_max`` (M x ceil(N / GroupN)) are in
    the accumulator type when enabled; ``status`` ORs NV, DZ, OF, UF, NX of every step.
    """

    d: np.ndarray
    row_max: np.ndarray | None
    group_max: np.ndarray | None
    status: int


# ---------------------------------------------------------------- operands


def _widening_carrier(dt: DataType) -> np.dtype | None:
    """The carrier whose float64 conversion is exact for ``dt`` (numpy/ml_dtypes widen IEEE
    values exactly); ml_dtypes is imported only when a BF16 operand needs it."""
    if dt == D.FP32:
        return np.dtype(np.float32)
    if dt == D.FP16:
        return np.dtype(np.float16)
    if dt == D.BF16:
        import ml_dtypes

        return np.dtype(ml_dtypes.bfloat16)
    return None


def _float_values(x: np.ndarray, dt: DataType) -> tuple[np.ndarray, bool]:
    """Exact float64 values of a floating carrier array and whether any is a sNaN.

    FP32, FP16 and BF16 carriers of finite values widen exactly with one cast (the
    common case, and much cheaper than decoding bit fields); NaN payloads and the other
    formats go through the bit-field decoder.
    """
    x = np.asarray(x)
    if x.dtype == _widening_carrier(dt):
        with np.errstate(invalid="ignore"):  # a signalling NaN widens with a warning
            v = x.astype(np.float64)
        if not np.isnan(v).any():
            return v, False
    bits = to_bits(x)
    return decode(dt, bits), bool(classify(dt, bits).snan.any())


def _scaled(values: np.ndarray, scales: np.ndarray | None, axis: int) -> np.ndarray:
    """``values`` times the E8M0 scale of its K block (exact: powers of two in float64)."""
    if scales is None:
        return values
    s = decode(D.E8M0, to_bits(np.asarray(scales)))
    k = values.shape[axis]
    blocks = np.arange(k) // MX_BLOCK
    full = s[:, blocks] if axis == 1 else s[blocks, :]
    with np.errstate(invalid="ignore"):
        return values * full


def _check_shapes(
    a: np.ndarray,
    b: np.ndarray,
    acc: np.ndarray | None,
    a_scale: np.ndarray | None,
    b_scale: np.ndarray | None,
) -> tuple[int, int, int]:
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[0]:
        raise ValueError(f"matmul operands must be M x K and K x N, got {a.shape} x {b.shape}")
    m, k = a.shape
    n = b.shape[1]
    if m == 0 or n == 0 or k == 0:
        raise ValueError("M, N and K must be positive")
    if acc is not None and np.shape(acc) != (m, n):
        raise ValueError(f"accumulator must be {m} x {n}, got {np.shape(acc)}")
    blocks = scale_blocks(k)
    if a_scale is not None and np.shape(a_scale) != (m, blocks):
        raise ValueError(f"A scale must be {m} x {blocks}, got {np.shape(a_scale)}")
    if b_scale is not None and np.shape(b_scale) != (blocks, n):
        raise ValueError(f"B scale must be {blocks} x {n}, got {np.shape(b_scale)}")
    return m, n, k


# ---------------------------------------------------------------- the fold


def fold(
    a: np.ndarray,
    a_type: DataType,
    b: np.ndarray,
    b_type: DataType,
    *,
    acc: np.ndarray | None = None,
    a_scale: np.ndarray | None = None,
    b_scale: np.ndarray | None = None,
    mx: bool = False,
    rmode: int = 0,
    exact: bool = False,
) -> tuple[np.ndarray, int]:
    """The D11 fold of A (M x K) times B (K x N): (M x N accumulator carrier, status).

    ``acc`` (ACC forms) is the starting value in the accumulator type; ``a_scale``
    (M x ceil(K/32)) and ``b_scale`` (ceil(K/32) x N) are the E8M0 scales of MX forms,
    required exactly for the sides :func:`needs_scale` names. ``rmode`` is B.DATR RMode
    (0 and 1 RNE, 2 RTZ, 3 RTM, 4 RTP, 5 RNA, 6 RTO, 7 RHB) and only affects floating
    folds. ``exact`` skips the FP32-addition fast path (the results are identical).
    """
    a_type, b_type = DataType(a_type), DataType(b_type)
    acc_type = accumulator_type(a_type, b_type, mx)
    a, b = np.asarray(a), np.asarray(b)
    m, n, _ = _check_shapes(a, b, acc, a_scale, b_scale)
    for side, dt, sc in (("A", a_type, a_scale), ("B", b_type, b_scale)):
        if (sc is not None) != needs_scale(dt, mx):
            need = "needs" if needs_scale(dt, mx) else "takes no"
            raise SemanticError(
                f"MX {side} of type {dt.name} {need} an E8M0 scale "
                "(TileMatrixInfoOptionalScalesLegal)"
            )
    if acc_type != D.FP32:
        return _fold_int(a, b, acc, acc_type), 0
    if acc is not None:
        acc = np.asarray(acc)
        if acc.dtype != np.float32:  # a carrier array: other dtypes would be read as codes
            raise ValueError(f"an FP32 accumulator is a float32 carrier array, got {acc.dtype}")
    if not exact and rmode in (0, RNE) and a_scale is None and b_scale is None:
        half = kernels.fold_half(a, a_type, b, b_type, acc)
        if half is not None:
            return half
        if a_type == D.FP32 and b_type == D.FP32:
            # the fused route below on FP32 carriers, without its float64 round trips
            single = kernels.fold_fp32(a, b, acc)
            if single is not None:
                return single
        ops = _native_operands(a, a_type, b, b_type, acc)
        if ops is not None:
            return _fold_native(*ops, start_is_zero=acc is None)
    av, a_snan = _float_values(a, a_type)
    bv, b_snan = _float_values(b, b_type)
    av = _scaled(av, a_scale, axis=1)
    bv = _scaled(bv, b_scale, axis=0)
    if acc is None:
        s = np.zeros((m, n))
        c_snan = False
    else:
        s, c_snan = _float_values(acc, D.FP32)
    status = NV if (a_snan or b_snan or c_snan) else 0
    bits_sum = significand_bits(a_type) + significand_bits(b_type)
    fast: tuple[np.ndarray, int] | None = None
    if not exact and rmode in (0, RNE):
        if _native_exact(
            av, bv, s, bits_sum, scaled=a_scale is not None or b_scale is not None
        ):
            with np.errstate(over="ignore"):
                r32, st = _fold_native(
                    av.astype(np.float32), bv.astype(np.float32), s.astype(np.float32)
                )
            fast = r32.astype(np.float64), st
        else:
            fast = kernels.fold_fused(av, bv, s)
    r, st = fast if fast is not None else _fold_exact(av, bv, s, rmode or RNE)
    return _to_fp32(r), status | st


def _fold_int(
    a: np.ndarray, b: np.ndarray, acc: np.ndarray | None, acc_type: DataType
) -> np.ndarray:
    """Exact integer products and sums wrapped modulo 2**32 (S32/U32).

    Inputs are at most 16 bits wide, so a chunk of 2**16 products sums to less than
    2**48 in magnitude: float64 matrix products of such chunks are exact in any order.
    """
    ai = a.astype(np.int64)
    bi = b.astype(np.int64)
    total = np.zeros((ai.shape[0], bi.shape[1]), np.uint64)
    if acc is not None:
        total += np.asarray(acc).astype(np.int64).view(np.uint64)
    for k0 in range(0, ai.shape[1], _KNOWN_EXACT_SUM):
        k1 = k0 + _KNOWN_EXACT_SUM
        part = np.matmul(ai[:, k0:k1].astype(np.float64), bi[k0:k1].astype(np.float64))
        total += part.astype(np.int64).view(np.uint64)
    low = (total & np.uint64(0xFFFFFFFF)).astype(np.uint32)
    return low.view(np.int32) if acc_type == D.S32 else low


def _native_exact(
    av: np.ndarray, bv: np.ndarray, s: np.ndarray, bits_sum: int, scaled: bool = True
) -> bool:
    """Whether every product of the call is an exact FP32 value and every operand finite.

    Then a fold step is exactly one IEEE FP32 addition. Products of at most 24
    significand bits are exact in FP32 when their magnitudes lie in its normal range;
    the extreme operand magnitudes bound every product. Only MX scales (``scaled``)
    can take an operand beyond FP32.
    """
    if bits_sum > 24:
        return False
    if not (np.isfinite(av).all() and np.isfinite(bv).all() and np.isfinite(s).all()):
        return False
    with np.errstate(over="ignore"):
        for x in (av, bv) if scaled else ():
            if not np.array_equal(x.astype(np.float32).astype(np.float64), x):
                return False  # an MX-scaled operand beyond FP32
    return _products_in_range(_extremes(av), _extremes(bv))


def _extremes(x: np.ndarray) -> tuple[float, float]:
    """(smallest nonzero, largest) magnitude of ``x``; NaN or Inf make the largest non-finite.

    The smallest is +Inf when every element is a zero. Reductions with ``where`` avoid
    the copies of boolean indexing (these checks run once per bundle and PE).
    """
    mag = np.abs(x)
    if mag.size == 0:
        return float("inf"), 0.0
    return float(np.min(mag, where=mag > 0, initial=np.inf)), float(mag.max())


#: FP16/BF16: (the magnitude bits of +Inf, the carrier that decodes a magnitude)
_HALF = {D.FP16: (0x7C00, np.float16), D.BF16: (0x7F80, None)}


def _half_extremes(x: np.ndarray, dt: DataType) -> tuple[float, float]:
    """:func:`_extremes` of an FP16/BF16 operand from its 16-bit encodings: both formats
    are sign-magnitude, so the magnitude bits order the magnitudes as integers do (a
    NaN or an infinity has the largest, which then decodes as non-finite)."""
    mag = to_bits(x) & np.uint16(0x7FFF)
    if mag.size == 0:
        return float("inf"), 0.0
    hi = int(mag.max())
    lo = int((mag - np.uint16(1)).min()) + 1  # zeros wrap to 0xFFFF, past every magnitude
    return _extremes_of_codes(lo, hi, dt)


def _extremes_of_codes(lo: int, hi: int, dt: DataType) -> tuple[float, float]:
    """:func:`_half_extremes` from the smallest nonzero (above 0x7FFF: none) and the
    largest magnitude code."""
    inf_bits, half = _HALF[dt]
    if hi >= inf_bits:
        return 0.0, float("inf")  # an Inf or a NaN: the caller takes the general path
    if lo > 0x7FFF:
        return float("inf"), 0.0  # every element is a zero

    def value(bits: int) -> float:
        if half is not None:
            return float(np.uint16(bits).view(half))
        return float(np.uint32(bits << 16).view(np.float32))

    return value(lo), value(hi)


def _products_in_range(a_ext: tuple[float, float], b_ext: tuple[float, float]) -> bool:
    """Whether every product of finite operands with these extremes is FP32-normal or zero.

    The float64 products of the extremes are exact (at most 24 + 24 significand bits).
    """
    (a_lo, a_hi), (b_lo, b_hi) = a_ext, b_ext
    if a_lo == np.inf or b_lo == np.inf:
        return True  # every product is a signed zero
    return a_lo * b_lo >= 2.0**-126 and a_hi * b_hi <= _FLT_MAX


def _fp32_carrier(x: np.ndarray, dt: DataType) -> np.ndarray | None:
    """The FP32 values of an FP16 or BF16 operand, or None for other types and carriers.

    FP16 widens with numpy's cast; BF16 is the upper half of an FP32 encoding, so its bits
    shifted up 16 are the FP32 bits (no ml_dtypes cast, which is elementwise C++ and
    several times slower). Both are exact for every encoding, NaN payloads included.
    """
    if dt == D.FP16 and x.dtype == np.float16:
        return x.astype(np.float32)
    if dt == D.BF16 and x.dtype.itemsize == 2:
        bits = to_bits(x).astype(np.uint32)
        np.left_shift(bits, 16, out=bits)
        return bits.view(np.float32)
    return None


def _native_operands(
    a: np.ndarray, a_type: DataType, b: np.ndarray, b_type: DataType, acc: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """FP32 (A, B, start) of a fold that :func:`_fold_native` computes exactly, else None.

    The FP16/BF16 route of :func:`fold` without a float64 copy: None when an operand is
    another type, non-finite (a NaN, signalling or not, takes the general path, which
    reports NV), or a product may leave FP32's normal range.
    """
    a32 = _fp32_carrier(a, a_type)
    b32 = _fp32_carrier(b, b_type) if a32 is not None else None
    if a32 is None or b32 is None:
        return None
    a_ext, b_ext = _half_extremes(a, a_type), _half_extremes(b, b_type)
    if not (a_ext[1] <= _FLT_MAX and b_ext[1] <= _FLT_MAX):
        return None  # an Inf or a NaN
    if not _products_in_range(a_ext, b_ext):
        return None
    if acc is None:
        s = np.zeros((a32.shape[0], b32.shape[1]), np.float32)
    else:
        acc = np.asarray(acc)
        if acc.dtype != np.float32:
            return None
        s = acc.copy()
        if not float(np.abs(s).max()) <= _FLT_MAX:
            return None
    return a32, b32, s


def _fold_native(
    a32: np.ndarray, b32: np.ndarray, run: np.ndarray, start_is_zero: bool = False
) -> tuple[np.ndarray, int]:
    """The fold as float32 additions of exact float32 products (see :func:`_native_exact`).

    ``a32`` (M x K), ``b32`` (K x N) and the start ``run`` (M x N) are FP32 arrays;
    ``start_is_zero`` says that ``run`` is all +0 (no accumulator). The compiled kernel
    (:func:`.matmul_kernels.compiled_fold`) runs it where it could be built, else numpy
    (:func:`_fold_native_numpy`); both give the same bits and status.
    """
    kernel = kernels.compiled_fold()
    if kernel is not None:
        return kernels.fold_compiled(kernel, a32, b32, run)
    return _fold_native_numpy(a32, b32, run, start_is_zero)


def _fold_native_numpy(
    a32: np.ndarray, b32: np.ndarray, run: np.ndarray, start_is_zero: bool = False
) -> tuple[np.ndarray, int]:
    """:func:`_fold_native` in numpy: one outer product per block of k, then additions.

    ``a32`` (M x K), ``b32`` (K x N) and the start ``run`` (M x N) are FP32 arrays;
    ``start_is_zero`` says that ``run`` is all +0 (no accumulator). The fold is elementwise,
    so it runs on the transposed problem when N < M: the products of a block of k come from
    one call whose inner loops are the longer side, then each k is one in-place IEEE float32
    addition (or one reduction per block of k, see below).

    A step is inexact iff the exact one of ``new - prev`` (when |prev| >= |p|) and
    ``new - p`` (when |p| >= |prev|) differs from the other addend (Fast2Sum); once NX is
    known the check stops and the additions go in place. Finite operands and exact
    products leave overflow (OF|NX; the sum becomes and stays Inf) as the only other
    event: an FP32 sum of two FP32 values is never tiny and inexact.

    The block of products is an ``einsum`` outer product (several times faster than a
    broadcast multiply, whose inner loops are only N long). einsum accumulates into a
    zeroed output, so a -0 product comes out as +0; that never changes a step unless the
    running sum is -0, and under RNE a sum becomes -0 only from -0 + -0. So einsum
    serves every fold whose start has no -0 element (every fold without an accumulator);
    the others use the broadcast multiply, which keeps zero signs.

    While M * N is at most ``_REDUCE_MAX`` a Python call per k costs more than the
    additions themselves, so after the NX check the rest of a block is one
    ``np.add.reduce`` over its outer axis (the running sum as its first row), which
    numpy evaluates as the same additions in the same order (:func:`_reduce_is_sequential`).
    """
    m, k = a32.shape
    n = b32.shape[1]
    if n < m:
        out, status = _fold_native_numpy(b32.T, a32.T, run.T.copy(), start_is_zero)
        return np.ascontiguousarray(out.T), status
    a_t = np.ascontiguousarray(a32.T)
    b_c = np.ascontiguousarray(b32)
    zero_start = start_is_zero
    signed_zero_start = not zero_start and bool(np.any((run == 0) & np.signbit(run)))
    # a reduction over the outer axis adds the rows one after the other (see
    # _reduce_is_sequential) and saves a call per k, which only pays while calls cost
    # more than the extra copy of its first row; that copy may turn a -0 start into +0
    by_reduce = not signed_zero_start and 2 <= m * n <= _REDUCE_MAX and _reduce_is_sequential()
    kc = max(1, min(k, _PRODUCT_BLOCK // (m * n)))
    buf = np.empty((kc + 1, m, n), np.float32)  # [running sum, products of the block]
    nx = False
    with np.errstate(over="ignore", invalid="ignore"):
        for k0 in range(0, k, kc):
            c = min(kc, k - k0)
            p = buf[1 : c + 1]
            if signed_zero_start:
                np.multiply(a_t[k0 : k0 + c, :, None], b_c[k0 : k0 + c, None, :], out=p)
            else:
                np.einsum("ki,kj->kij", a_t[k0 : k0 + c], b_c[k0 : k0 + c], out=p)
            q = 0
            if zero_start and k0 == 0:
                run = p[0].copy()  # +0 + p is p: the first step is exact
                q = 1
            while not nx and q < c:
                new = run + p[q]
                nx = _inexact(run, p[q], new)
                run = new
                q += 1
            if q == c:
                continue
            if by_reduce:
                buf[q] = run  # the slot of the last product consumed (or slot 0)
                run = np.add.reduce(buf[q : c + 1], axis=0, out=run)
            else:
                for pq in p[q:]:
                    np.add(run, pq, out=run)
    status = NX if nx else 0
    if np.isinf(run).any():
        status |= OF | NX
    return run, status


def _inexact(run: np.ndarray, p: np.ndarray, new: np.ndarray) -> bool:
    """Whether some ``new = fl(run + p)`` is inexact (Fast2Sum, see :func:`_fold_native`).

    A few hundred elements are checked first: a random fold shows NX at once there, and
    small arrays cost a fraction of the whole check.
    """
    r, q, z = run.reshape(-1), p.reshape(-1), new.reshape(-1)
    # a float64 sum of two FP32 values that differs from the FP32 sum proves it inexact
    # (a few Python floats; the exact test below decides when none differs)
    if any(c != a + b for a, b, c in zip(r[:8].tolist(), q[:8].tolist(), z[:8].tolist())):
        return True
    if r.size > _NX_SAMPLE:
        cut = slice(0, _NX_SAMPLE)
        if _fast2sum_differs(r[cut], q[cut], z[cut]):
            return True
    return _fast2sum_differs(r, q, z)


def _fast2sum_differs(r: np.ndarray, q: np.ndarray, z: np.ndarray) -> bool:
    return bool(np.any((z - r) != q)) or bool(np.any((z - q) != r))


@functools.cache
def _reduce_is_sequential() -> bool:
    """Whether ``np.add.reduce`` over the outer axis adds row by row, in order.

    numpy sums pairwise only along the fast axis of memory; over an outer axis of a
    C-contiguous array (the inner axis at least 2 long) it adds each row to the result
    in turn, each addition rounded: exactly the D11 fold, without a Python call per k.
    This probe guards the assumption (pairwise or reordered sums give another value
    here); without it the fold adds one k per call.
    """
    rows = np.full((40, 2), 2.0**-24, np.float32)
    rows[0, 0] = rows[-1, 1] = 1.0  # 1 + 2**-24 ties to 1 at each step of column 0
    seq = rows[0].copy()
    for r in rows[1:]:
        seq = seq + r  # one rounded float32 addition per element and row
    return bool(np.array_equal(np.add.reduce(rows, axis=0), seq))


def _fold_exact(
    av: np.ndarray, bv: np.ndarray, s: np.ndarray, rmode: int
) -> tuple[np.ndarray, int]:
    """The fold with an exact fused step per k (any rounding mode, any operands)."""
    col_ok = np.isfinite(av).all(axis=0)
    row_ok = np.isfinite(bv).all(axis=1)
    status = 0
    s_ok = bool(np.isfinite(s).all())
    with np.errstate(invalid="ignore", over="ignore"):
        for kk in range(av.shape[1]):
            a_col, b_row = av[:, kk], bv[kk, :]
            p = np.multiply.outer(a_col, b_row)
            if col_ok[kk] and row_ok[kk] and s_ok:
                s, st = round_sum(s, p, rmode)
                # only an overflow can leave a non-finite sum behind
                s_ok = not (st & OF) or bool(np.isfinite(s).all())
            else:
                s, st = _special_step(s, p, a_col, b_row, rmode)
                s_ok = bool(np.isfinite(s).all())
            status |= st
    return s, status


def _special_step(
    s: np.ndarray, p: np.ndarray, a_col: np.ndarray, b_row: np.ndarray, rmode: int
) -> tuple[np.ndarray, int]:
    """One step where an operand or the running sum is Inf or NaN (IEEE FMA rules)."""
    inf_zero = (np.isinf(a_col)[:, None] & (b_row == 0)[None, :]) | (
        (a_col == 0)[:, None] & np.isinf(b_row)[None, :]
    )
    return add_special(s, p, rmode, invalid=inf_zero)


def add_special(
    s: np.ndarray, p: np.ndarray, rmode: int = RNE, invalid: np.ndarray | None = None
) -> tuple[np.ndarray, int]:
    """``round(s + p)`` at FP32 for float64 operands that may be NaN or Inf.

    NaN operands give NaN; Inf - Inf (and the ``invalid`` mask, e.g. Inf*0 products)
    give NaN with NV; an Inf operand otherwise wins; finite pairs round once.
    """
    s_nan, p_nan = np.isnan(s), np.isnan(p)
    s_inf, p_inf = np.isinf(s), np.isinf(p)
    inf_inf = s_inf & p_inf & (np.signbit(s) != np.signbit(p))
    fin = ~(s_nan | p_nan | s_inf | p_inf)
    r, status = round_sum(np.where(fin, s, 0.0), np.where(fin, p, 0.0), rmode)
    r = np.where(s_inf, s, np.where(p_inf, p, r))
    bad = s_nan | p_nan | inf_inf
    if invalid is not None:
        bad |= invalid
        status |= NV if invalid.any() else 0
    status |= NV if inf_inf.any() else 0
    return np.where(bad, np.nan, r), status


def round_sum(s: np.ndarray, p: np.ndarray, rmode: int = RNE) -> tuple[np.ndarray, int]:
    """FP32 ``round(s + p)`` of finite float64 operands, returned as float64, and status.

    ``s`` holds FP32 values and ``p`` exact products (|p| < 2**300), so the TwoSum pair
    (hi, lo) is the exact sum. RNE rounds it to odd at 53 bits (truncate, then OR the
    sticky into the last bit) and casts to float32, which is then correctly rounded;
    tiny and overflowing elements and other modes use :func:`.floatfmt.encode_parts`.
    """
    hi, lo = two_sum(s, p)
    if rmode not in (0, RNE):
        return _round_general(hi, lo, s, p, rmode)
    hb = hi.view(np.uint64)
    sticky = lo != 0
    toward_zero = sticky & (np.signbit(lo) != np.signbit(hi))
    ro = ((hb - toward_zero.astype(np.uint64)) | sticky.astype(np.uint64)).view(np.float64)
    with np.errstate(over="ignore"):
        r = ro.astype(np.float32).astype(np.float64)
    status = NX if (sticky.any() or not np.array_equal(r, hi)) else 0
    mag = np.abs(ro)
    rare = (mag > _FLT_MAX) | ((mag < _TINY) & (ro != 0))
    if rare.any():
        idx = np.nonzero(rare)
        rr, st = _round_general(hi[idx], lo[idx], s[idx], p[idx], RNE)
        r[idx] = rr
        status |= st
    return r, status


def _round_general(
    hi: np.ndarray, lo: np.ndarray, s: np.ndarray, p: np.ndarray, rmode: int
) -> tuple[np.ndarray, int]:
    """Round the exact pair hi + lo to FP32 with the parts engine (any mode, all flags)."""
    bits, flags = encode_parts(D.FP32, *parts_from_pair(hi, lo), rmode=rmode)
    r = bits.astype(np.uint32).view(np.float32).astype(np.float64)
    zero = (hi == 0) & (lo == 0)
    if rmode == RTM and zero.any():
        # IEEE: an exact zero sum is -0 under RTM unless both addends are +0
        neg = np.signbit(s) | np.signbit(p)
        r = np.where(zero, np.where(neg, -0.0, 0.0), r)
    return r, int(np.bitwise_or.reduce(flags, axis=None)) if flags.size else 0


def _to_fp32(r: np.ndarray) -> np.ndarray:
    """float64 values that are FP32 values (or NaN) as an FP32 carrier, canonical NaNs."""
    out = r.astype(np.float32)
    nan = np.isnan(r)
    if nan.any():
        bits = out.view(np.uint32)
        bits[nan] = CANONICAL_NAN[D.FP32]
    return out


# ---------------------------------------------------------------- bias


def add_bias(value: np.ndarray, acc_type: DataType, bias: np.ndarray) -> tuple[np.ndarray, int]:
    """``MatrixBiasResult``: ``value[m, n] + bias[n]`` with one rounding (D11).

    ``bias`` is the 1 x N (or N) row in the accumulator type. Floating sums round with
    RNE (``TileProfileMatrixBias`` takes no rounding control); integers wrap.
    """
    acc_type = DataType(acc_type)
    bias = np.asarray(bias).reshape(1, -1)
    if bias.shape[1] != value.shape[1]:
        raise ValueError(f"bias must have {value.shape[1]} columns, got {bias.shape[1]}")
    if acc_type != D.FP32:
        ut = np.uint32
        r = (np.asarray(value).view(ut) + np.asarray(bias).astype(value.dtype).view(ut)).astype(
            ut
        )
        return r.view(value.dtype), 0
    v, v_snan = _float_values(value, D.FP32)
    bv, b_snan = _float_values(bias, D.FP32)
    with np.errstate(invalid="ignore"):
        r, status = add_special(v, np.broadcast_to(bv, v.shape), RNE)
    return _to_fp32(r), status | (NV if (v_snan or b_snan) else 0)


# ---------------------------------------------------------------- the operation


def matmul(
    a: np.ndarray,
    a_type: DataType,
    b: np.ndarray,
    b_type: DataType,
    *,
    acc: np.ndarray | None = None,
    bias: np.ndarray | None = None,
    a_scale: np.ndarray | None = None,
    b_scale: np.ndarray | None = None,
    mx: bool = False,
    rmode: int = 0,
    sat: bool = False,
    fpatr: _fpatr.Fpatr | None = None,
    quant: int | np.ndarray | None = None,
    relu_param: int | np.ndarray | None = None,
    row_max_in: np.ndarray | None = None,
    exact: bool = False,
) -> MatmulResult:
    """One CUBE matrix operation on logical operands, as ``CommitMatrixResult`` publishes it.

    fold (ACC: from ``acc``) -> bias -> B.FPATR: D is the post-processed result, RowMax
    and GroupMax reduce the raw (post-bias) accumulator. ``quant`` and ``relu_param``
    are the scalar B.IOR word or the 1 x N U64 vector of the selected modes;
    ``row_max_in`` is the M x 1 RowMaxIn tile. TGEMV is the M = 1 case. ``rmode``
    applies to the fold (D11) and to the conversion; ``sat`` to the conversion.
    """
    f = fpatr or _fpatr.Fpatr()
    acc_type = accumulator_type(DataType(a_type), DataType(b_type), mx)
    if not _fpatr.fields_legal(f):
        raise SemanticError("B.FPATR fields are inconsistent (BundleFPATRFieldsLegal)")
    _fpatr.check_accumulator(f, acc_type)
    if f.row_max_init and row_max_in is None:
        raise ValueError("RowMaxInit needs the M x 1 RowMaxIn tile")
    raw, status = fold(
        a,
        a_type,
        b,
        b_type,
        acc=acc,
        a_scale=a_scale,
        b_scale=b_scale,
        mx=mx,
        rmode=rmode,
        exact=exact,
    )
    if bias is not None:
        raw, st = add_bias(raw, acc_type, bias)
        status |= st
    d, st = _fpatr.postprocess(raw, acc_type, f, quant, relu_param, rmode, sat)
    status |= st
    row = group = None
    if f.row_max:
        row, st = _fpatr.row_max(
            raw, acc_type, f.max_abs, row_max_in if f.row_max_init else None
        )
        status |= st
    if f.group_max:
        group, st = _fpatr.group_max(raw, acc_type, f.group_n, f.max_abs)
        status |= st
    return MatmulResult(d, row, group, status)


def carrier_of(dt: DataType, values: np.ndarray) -> np.ndarray:
    """Carrier array of ``dt`` from raw bits (a convenience for callers and tests)."""
    return from_bits(np.asarray(values), DataType(dt))


__all__ = [
    "MATRIX_INPUT_TYPES",
    "MX_BLOCK",
    "MX_INPUT_TYPES",
    "MX_SCALED_TYPES",
    "MatmulResult",
    "accumulator_type",
    "add_bias",
    "add_special",
    "carrier_of",
    "fold",
    "matmul",
    "needs_scale",
    "pair_legal",
    "round_sum",
    "scale_blocks",
    "significand_bits",
    "type_class",
]
