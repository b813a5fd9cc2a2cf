"""B.FPATR matrix post-processing: pre-quantization, activation, RowMax and GroupMax.

Bit-exact as the reference profile defines it (``asl/arch/profile/matrix-postprocess.asl``
and ``matrix-quantization.asl``; descriptor rules in ``asl/block/attributes/B.FPATR.asl``;
routing in ``asl/tile/model/execution/postprocess.asl``). Per element of the raw
accumulator (``MatrixPostQuantBaseWithFlags``):

1. PreQuantMode 0 with ReluMode 0 is the identity; shift modes 12/13 arithmetic-shift the
   S32 value right by ``param[35:32] + 1`` and saturate to S16 (no activation).
2. The multiplier is the FP19 scale ``param[31:13]`` (1.0 without a parameter) unless the
   source is negative (``MatrixValueClassNegative`` includes -0 and -Inf) and ReLU is on:
   then 0 (ReLU) or the FP19 LReLU/PReLU parameter (``MatrixSelectedMultiplier``).
3. FP32 NaN and Inf take ``MatrixPostQuantSpecialValue`` (except -Inf with a zero
   multiplier, which becomes 0); -0 with a nonzero multiplier and no offset keeps its sign.
4. ``value * multiplier`` is exact (24 or 32 bits times FP19's 11 fit in float64). Modes
   with an S5/S9/S17 intermediate round and saturate there, add the signed offset and
   encode the integer (``MatrixQuantizedAffine``); others encode the real
   (``MatrixEncodeReal``) with the reference encoders, whose overflow gives Inf (or the
   largest finite value under Sat) in every rounding mode, whose tininess is detected
   before rounding and whose exact zero is +0; E4M3 overflows above 448 before rounding
   (to its NaN, or +-448 under Sat) and never produces -0 from rounding.

RowMax and GroupMax reduce the raw accumulator with the MAX step of the reduction
profile (``TileProfileMatrixReductionStepWithFlags``), optionally on absolute values.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..datatypes import DataType, info
from . import core as _core
from .core import SemanticError, from_bits, to_bits
from .floatfmt import (
    CANONICAL_NAN,
    NV,
    NX,
    OF,
    RHB,
    RNA,
    RNE,
    RTM,
    RTO,
    RTP,
    RTZ,
    Classes,
    classify,
    decode,
    encode_parts,
    max_finite_bits,
    parts_of,
)

D = DataType


@dataclass(frozen=True)
class PreQuant:
    """One assigned PreQuantMode code (``BundleFPATROutputType`` and its sibling tables)."""

    code: int
    #: destination type (None: keep the accumulator type, code 0)
    output: DataType | None
    #: the accumulator class it accepts (``BundleFPATRAccumulatorTypeLegal``)
    accumulator: frozenset[DataType]
    #: "vector" (a 1 x N U64 source tile), "scalar" (a B.IOR word) or None
    parameter: str | None
    #: signed offset width of the intermediate (``BundleFPATRModeOffsetWidth``)
    offset_bits: int = 0
    #: rounding forced by the mode (``MatrixFPATREffectiveControl``), None: B.DATR RMode
    rounding: int | None = None
    #: the S32 -> S16 arithmetic-shift modes (``BundleFPATRModeIsShift``)
    shift: bool = False


_F, _S = frozenset({D.FP32}), frozenset({D.S32})
_V, _C = "vector", "scalar"

#: Every assigned PreQuantMode (``BundleFPATRPreQuantModeLegal``); other codes reserved.
PRE_QUANT: dict[int, PreQuant] = {
    q.code: q
    for q in (
        PreQuant(0, None, frozenset({D.FP32, D.S32, D.U32}), None),
        PreQuant(1, D.FP16, _F, None, rounding=RNE),
        PreQuant(2, D.S8, _S, _V, 9),
        PreQuant(3, D.S8, _S, _C, 9),
        PreQuant(4, D.FP16, _S, _V),
        PreQuant(5, D.FP16, _S, _C),
        PreQuant(12, D.S16, _S, _V, shift=True),
        PreQuant(13, D.S16, _S, _C, shift=True),
        PreQuant(16, D.BF16, _F, None, rounding=RNE),
        PreQuant(17, D.S4X2, _S, _C, 5),
        PreQuant(18, D.S4X2, _S, _V, 5),
        PreQuant(19, D.S16, _S, _C, 17),
        PreQuant(20, D.S16, _S, _V, 17),
        PreQuant(23, D.S8, _F, _V, 9),
        PreQuant(24, D.S8, _F, _C, 9),
        PreQuant(25, D.HiF8, _F, _C, rounding=RHB),
        PreQuant(26, D.E4M3, _F, _C, rounding=RNE),
        PreQuant(27, D.FP32, _F, _C),
        PreQuant(28, D.HiF8, _F, _V, rounding=RHB),
        PreQuant(32, D.FP16, _F, _C, rounding=RNE),
        PreQuant(33, D.FP16, _F, _V, rounding=RNE),
        PreQuant(34, D.BF16, _F, _C, rounding=RNE),
        PreQuant(35, D.BF16, _S, _C),
        PreQuant(36, D.BF16, _F, _V, rounding=RNE),
        PreQuant(37, D.E4M3, _F, _V, rounding=RNE),
        PreQuant(38, D.FP32, _F, _V),
        PreQuant(39, D.BF16, _S, _V),
    )
}

#: ReluMode: 0 none, 1 ReLU, 2 scalar LReLU/PReLU (B.IOR), 3 vector PReLU (1 x N U64 tile).
RELU_MODES = (0, 1, 2, 3)
#: GroupNCode -> GroupN columns (``BundleFPATRGroupN``).
GROUP_N = (0, 8, 16, 32, 48, 64, 80, 96, 112, 128)


@dataclass(frozen=True)
class Fpatr:
    """The latched B.FPATR descriptor (all zero: no conversion, activation or reduction)."""

    pre_quant_mode: int = 0
    relu_mode: int = 0
    group_n_code: int = 0
    row_max: bool = False
    group_max: bool = False
    row_max_init: bool = False
    max_abs: bool = False
    trans_a: bool = False
    trans_b: bool = False

    @property
    def group_n(self) -> int:
        return GROUP_N[self.group_n_code]

    @property
    def pre_quant(self) -> PreQuant:
        return PRE_QUANT[self.pre_quant_mode]


def fields_legal(f: Fpatr) -> bool:
    """``BundleFPATRFieldsLegal``: assigned codes and consistent reduction enables."""
    if f.pre_quant_mode not in PRE_QUANT or f.relu_mode not in RELU_MODES:
        return False
    if not 0 <= f.group_n_code < len(GROUP_N):
        return False
    if f.row_max_init and not f.row_max:
        return False
    if f.group_max != (f.group_n_code != 0):
        return False
    return not (f.max_abs and not (f.row_max or f.group_max))


def datr_legal(f: Fpatr, rmode: int, sat: bool) -> bool:
    """``BundleFPATRDATRFieldsLegal``: the B.DATR RMode/Sat a PreQuantMode admits."""
    pq = PRE_QUANT.get(f.pre_quant_mode)
    if pq is None:
        return False
    if pq.code == 0 or pq.shift:
        return rmode == 0 and not sat
    if pq.rounding is not None:
        return rmode == 0
    return True


def output_type(f: Fpatr, acc_type: DataType) -> DataType:
    """D's type: the accumulator type for code 0, else ``BundleFPATROutputType``."""
    return DataType(acc_type) if f.pre_quant_mode == 0 else f.pre_quant.output  # type: ignore[return-value]


def check_accumulator(f: Fpatr, acc_type: DataType) -> None:
    """``BundleFPATRAccumulatorTypeLegal``, raising :class:`SemanticError` when broken."""
    pq = PRE_QUANT.get(f.pre_quant_mode)
    if pq is None:
        raise SemanticError(f"B.FPATR PreQuantMode {f.pre_quant_mode} is reserved")
    if DataType(acc_type) not in pq.accumulator:
        names = "/".join(sorted(t.name for t in pq.accumulator))
        raise SemanticError(
            f"B.FPATR PreQuantMode {pq.code} needs a {names} accumulator, not "
            f"{DataType(acc_type).name} (BundleFPATRAccumulatorTypeLegal)"
        )


def vector_sources(f: Fpatr) -> tuple[str, ...]:
    """The auxiliary Local sources B.FPATR adds, in stream order after the math sources."""
    out: list[str] = []
    if f.row_max and f.row_max_init:
        out.append("RowMaxIn")
    if f.pre_quant.parameter == _V:
        out.append("QuantVector")
    if f.relu_mode == 3:
        out.append("ReluVector")
    return tuple(out)


def scalar_parameters(f: Fpatr) -> tuple[str, ...]:
    """The B.IOR words B.FPATR consumes, in slot order (RegSrc0, RegSrc1)."""
    out: list[str] = []
    if f.pre_quant.parameter == _C:
        out.append("quant")
    if f.relu_mode == 2:
        out.append("relu")
    return tuple(out)


# ---------------------------------------------------------------- FP19 and parameters


def fp19_value(bits: np.ndarray) -> np.ndarray:
    """``FP19FiniteValue``: 1 sign, 8 exponent (bias 127), 10 fraction bits, as float64."""
    b = np.asarray(bits, np.uint64)
    exp = ((b >> np.uint64(10)) & np.uint64(0xFF)).astype(np.int64)
    frac = (b & np.uint64(0x3FF)).astype(np.int64)
    sig = np.where(exp > 0, frac + 1024, frac).astype(np.float64)
    mag = np.ldexp(sig, np.where(exp > 0, exp - 137, -136))
    return np.where(((b >> np.uint64(18)) & np.uint64(1)) == 1, -mag, mag)


def fp19_from_fp32(bits: int) -> int:
    """``FP32ToFP19``: FP32 bits to FP19 (1 sign, 8 exponent, 10 fraction bits), the
    13 discarded fraction bits rounded to nearest, ties to even (a carry out of the
    fraction raises the exponent, up to the infinity encoding); every NaN becomes the
    canonical FP19 NaN ``0x3FF00``."""
    bits &= 0xFFFFFFFF
    if (bits >> 23) & 0xFF == 0xFF and bits & 0x7FFFFF:
        return 0x3FF00
    exponent, fraction, discarded = (bits >> 23) & 0xFF, (bits >> 13) & 0x3FF, bits & 0x1FFF
    if discarded > 0x1000 or (discarded == 0x1000 and fraction & 1):
        fraction += 1
        if fraction == 0x400:
            fraction = 0
            if exponent < 255:
                exponent += 1
    return ((bits >> 31) << 18) | (exponent << 10) | fraction


def _fp19_positive_normal(bits: np.ndarray) -> np.ndarray:
    exp = (bits >> np.uint64(10)) & np.uint64(0xFF)
    return ((bits >> np.uint64(18)) & np.uint64(1) == 0) & (exp != 0) & (exp != 0xFF)


def _field_zero(w: np.ndarray, hi: int, lo: int) -> np.ndarray:
    mask = np.uint64(((1 << (hi - lo + 1)) - 1) << lo)
    return (w & mask) == 0


def quant_param_legal(mode: int, words: np.ndarray) -> np.ndarray:
    """``BundleFPATRQuantParameterWordLegal`` per 64-bit parameter word."""
    w = np.asarray(words, np.uint64)
    pq = PRE_QUANT.get(mode)
    if pq is None or pq.parameter is None:
        return np.zeros(w.shape, bool)
    if pq.shift:
        return _field_zero(w, 31, 0) & _field_zero(w, 63, 36)
    ok = _field_zero(w, 12, 0) & _fp19_positive_normal(
        (w >> np.uint64(13)) & np.uint64(0x7FFFF)
    )
    if pq.offset_bits:
        top = 37 + pq.offset_bits  # offset occupies [37 + width - 1 : 37]
        return ok & _field_zero(w, 36, 32) & _field_zero(w, 63, top)
    return ok & _field_zero(w, 63, 32)


def relu_param_legal(words: np.ndarray) -> np.ndarray:
    """``BundleFPATRReluParameterWordLegal``: FP19 +0 or positive normal in bits 18:0."""
    w = np.asarray(words, np.uint64)
    low = w & np.uint64(0x7FFFF)
    return _field_zero(w, 63, 19) & ((low == 0) | _fp19_positive_normal(low))


def quant_param(scale_fp19: int, offset: int = 0, offset_bits: int = 0) -> int:
    """``MatrixQuantParameter``: the 64-bit word of an FP19 scale and a signed offset."""
    word = (scale_fp19 & 0x7FFFF) << 13
    if offset_bits:
        word |= (offset & ((1 << offset_bits) - 1)) << 37
    return word


def shift_param(code: int) -> int:
    """``MatrixShiftParameter``: the shift-mode word (arithmetic shift by ``code + 1``)."""
    return (code & 0xF) << 32


def _offsets(words: np.ndarray, width: int) -> np.ndarray:
    """``MatrixQuantOffset``: the signed ``width``-bit field at bit 37 (0 for width 0)."""
    if width == 0:
        return np.zeros(words.shape, np.int64)
    raw = ((words >> np.uint64(37)) & np.uint64((1 << width) - 1)).astype(np.int64)
    return np.where(raw >= 1 << (width - 1), raw - (1 << width), raw)


def _row(param: int | np.ndarray | None, n: int, what: str) -> np.ndarray:
    if param is None:
        raise SemanticError(f"B.FPATR selects a {what} parameter that was not supplied")
    if np.ndim(param) == 0:
        return np.full(n, int(param) % (1 << 64), np.uint64)
    p = to_bits(np.asarray(param)).astype(np.uint64).reshape(-1)
    if p.size != n:
        raise ValueError(f"the {what} vector must have {n} elements, got {p.size}")
    return p


# ---------------------------------------------------------------- reference encoders


def round_to_integer(x: np.ndarray, rmode: int) -> np.ndarray:
    """``FloatingToInteger`` of exact float64 values (integral float64 results)."""
    if rmode in (0, RNE):
        return np.rint(x)
    if rmode == RTP:
        return np.ceil(x)
    if rmode == RTM:
        return np.floor(x)
    if rmode == RTZ:
        return np.trunc(x)
    lower = np.floor(x)
    frac = x - lower  # exact
    if rmode == RNA:
        return np.where(
            frac > 0.5,
            lower + 1,
            np.where(frac < 0.5, lower, np.where(x < 0, lower, lower + 1)),
        )
    if rmode == RTO:
        return np.where((frac == 0) | (np.fmod(lower, 2) != 0), lower, lower + 1)
    if rmode == RHB:
        return np.where(frac < 0.5, lower, lower + 1)
    raise ValueError(f"RMode {rmode} is not a rounding mode")


def _int_range(dt: DataType) -> tuple[int, int]:
    bits = info(dt).bits
    if info(dt).is_signed:
        return -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    return 0, (1 << bits) - 1


def _int_bits(dt: DataType, v: np.ndarray) -> np.ndarray:
    """``NormalizeTileInteger`` of integral float64 values: the low element-width bits."""
    bits = info(dt).bits
    low = np.mod(v, float(1 << bits))  # exact for integral float64
    return low.astype(np.uint64)


def encode_integer(
    x: np.ndarray, dt: DataType, rmode: int, sat: bool
) -> tuple[np.ndarray, np.ndarray]:
    """``ReferenceMatrixIntegerEncoding``: round, then clamp (Sat) or wrap; raw bits, flags."""
    r = round_to_integer(x, rmode)
    lo, hi = _int_range(dt)
    over = (r < lo) | (r > hi)
    sel = np.clip(r, lo, hi) if sat else r
    flags = np.where(over, OF | NX, np.where(r != x, NX, 0))
    return _int_bits(dt, sel), flags.astype(np.uint8)


def _round_saturate(x: np.ndarray, width: int, rmode: int) -> tuple[np.ndarray, np.ndarray]:
    """``MatrixRoundAndSaturateSigned`` to an S5/S9/S17 intermediate."""
    r = round_to_integer(x, rmode)
    lo, hi = -(1 << (width - 1)), (1 << (width - 1)) - 1
    over = (r < lo) | (r > hi)
    flags = np.where(over, OF | NX, np.where(r != x, NX, 0))
    return np.clip(r, lo, hi), flags.astype(np.uint8)


def _sign_bit(dt: DataType) -> np.uint64:
    return np.uint64(1 << (info(dt).bits - 1))


def _largest(dt: DataType, neg: np.ndarray) -> np.ndarray:
    """``MatrixFloatingLargestFinite``."""
    return np.where(neg, _sign_bit(dt), np.uint64(0)) | max_finite_bits(dt)


def _infinity(dt: DataType, neg: np.ndarray) -> np.ndarray:
    """``MatrixFloatingInfinity`` (E4M3 has none: its canonical NaN)."""
    if dt == D.E4M3:
        return np.full(np.shape(neg), CANONICAL_NAN[dt], np.uint64)
    if dt == D.HiF8:
        return np.where(neg, np.uint64(0xEF), np.uint64(0x6F))
    exp_all = {D.FP32: 0x7F800000, D.FP16: 0x7C00, D.BF16: 0x7F80}[dt]
    return np.where(neg, _sign_bit(dt), np.uint64(0)) | np.uint64(exp_all)


def encode_float(
    x: np.ndarray, dt: DataType, rmode: int, sat: bool
) -> tuple[np.ndarray, np.ndarray]:
    """``ReferenceMatrixFloatingEncoding`` of exact finite float64 values: raw bits, flags."""
    neg = x < 0
    fin = np.where(np.isfinite(x), x, 0.0)
    sneg, m, e = parts_of(fin)
    bits, flags = encode_parts(
        dt, sneg, m, e, np.zeros(x.shape, bool), rmode or RNE, sat, tininess_before=True
    )
    if dt == D.E4M3:
        # ReferenceFP8Encoding: magnitudes above 448 overflow before rounding; rounding
        # to zero selects code 0 (the candidate search meets +0 first)
        over = np.abs(x) > 448.0
        big = np.where(neg, np.uint64(0xFE), np.uint64(0x7E)) if sat else np.uint64(0x7F)
        bits = np.where(over, big, np.where(bits == 0x80, np.uint64(0), bits))
        flags = np.where(over, OF | NX, flags)
    elif dt != D.HiF8:  # HiF8's encoder already applies the reference overflow rule
        over = (flags & OF) != 0
        bits = np.where(over, _largest(dt, neg) if sat else _infinity(dt, neg), bits)
    zero = x == 0  # the reference encoders return +0 for an exact zero
    bits = np.where(zero, np.uint64(0), bits)
    flags = np.where(zero, 0, flags)
    return bits.astype(np.uint64), flags.astype(np.uint8)


def _encode(
    x: np.ndarray, dt: DataType, rmode: int, sat: bool
) -> tuple[np.ndarray, np.ndarray]:
    """``MatrixEncodeReal``."""
    if info(dt).is_int:
        return encode_integer(x, dt, rmode, sat)
    return encode_float(x, dt, rmode, sat)


def _special(cls: Classes, dt: DataType, sat: bool) -> tuple[np.ndarray, np.ndarray]:
    """``MatrixPostQuantSpecialValue`` of FP32 NaN/Inf sources: raw bits and flags."""
    neg = cls.neg
    shape = neg.shape
    if info(dt).is_int:
        lo, hi = _int_range(dt)
        minimum = _int_bits(dt, np.full(shape, float(lo)))
        nan_bits = np.zeros(shape, np.uint64) if sat else minimum
        if sat:
            inf_bits = np.where(neg, minimum, _int_bits(dt, np.full(shape, float(hi))))
            inf_flags = np.full(shape, OF | NX)
        else:
            inf_bits, inf_flags = minimum, np.full(shape, NV)
        nan_flags = np.full(shape, NV)
    else:
        nan_bits = np.full(shape, 0 if sat else CANONICAL_NAN[dt], np.uint64)
        nan_flags = np.where(cls.snan, NV, 0)
        if sat:
            inf_bits, inf_flags = _largest(dt, neg), np.full(shape, OF | NX)
        else:
            inf_bits = _infinity(dt, neg)
            inf_flags = np.full(shape, OF | NX if dt == D.E4M3 else 0)
    bits = np.where(cls.nan, nan_bits, inf_bits)
    flags = np.where(cls.nan, nan_flags, inf_flags)
    return bits.astype(np.uint64), flags.astype(np.uint8)


# ---------------------------------------------------------------- post-processing


def effective_rounding(f: Fpatr, rmode: int) -> int:
    """``MatrixFPATREffectiveControl``: HiF8 modes use RHB, fixed modes RNE, else RMode."""
    forced = f.pre_quant.rounding
    return forced if forced is not None else (rmode or RNE)


def postprocess(
    value: np.ndarray,
    acc_type: DataType,
    f: Fpatr,
    quant: int | np.ndarray | None = None,
    relu_param: int | np.ndarray | None = None,
    rmode: int = 0,
    sat: bool = False,
) -> tuple[np.ndarray, int]:
    """``TileProfileMatrixPostProcessWithFlags`` over an M x N accumulator tile.

    ``quant``/``relu_param``: the B.IOR word (scalar modes) or the 1 x N U64 tile
    (vector modes). Illegal descriptors or parameter words raise :class:`SemanticError`
    (they fault before any effect). Returns (D in the output type, status).
    """
    acc_type = DataType(acc_type)
    if not fields_legal(f):
        raise SemanticError("B.FPATR fields are inconsistent (BundleFPATRFieldsLegal)")
    check_accumulator(f, acc_type)
    mode, relu = f.pre_quant_mode, f.relu_mode
    value = np.asarray(value)
    if mode == 0 and relu == 0:
        return value.copy(), 0
    pq = f.pre_quant
    out_type = output_type(f, acc_type)
    n = value.shape[1]
    words = np.ones(n, np.uint64)  # the architectural "Zeros + 1" of parameter-less modes
    if pq.parameter is not None:
        words = _row(quant, n, f"{pq.parameter} pre-quantization")
        if not quant_param_legal(mode, words).all():
            raise SemanticError(
                f"a PreQuantMode {mode} parameter word has reserved bits or a scale that "
                "is not a positive normal FP19 (BundleFPATRQuantParameterWordLegal)"
            )
    rwords = np.zeros(n, np.uint64)
    if relu in (2, 3):
        rwords = _row(relu_param, n, "LReLU/PReLU")
        if not relu_param_legal(rwords).all():
            raise SemanticError(
                "an LReLU/PReLU parameter is not FP19 +0 or a positive normal in bits "
                "18:0 (BundleFPATRReluParameterWordLegal)"
            )
    ctl = effective_rounding(f, rmode)
    if pq.shift:
        shift = ((words >> np.uint64(32)) & np.uint64(0xF)).astype(np.int64) + 1
        shifted = value.astype(np.int64) >> shift[None, :]  # MatrixShiftS32ToS16
        over = (shifted < -32768) | (shifted > 32767)
        r = np.clip(shifted, -32768, 32767).astype(np.int16)
        return r, (OF | NX) if over.any() else 0

    source = acc_type if mode == 0 else next(iter(pq.accumulator))
    shape = value.shape
    fp_source = source == D.FP32
    if fp_source:
        bits = to_bits(value).astype(np.uint64)
        cls = classify(D.FP32, bits)
        x = decode(D.FP32, bits)
        negative = cls.neg & ~cls.nan
    else:
        x = value.astype(np.int64).astype(np.float64)
        negative = x < 0
    scale = (
        fp19_value((words >> np.uint64(13)) & np.uint64(0x7FFFF))
        if pq.parameter
        else np.ones(n)
    )
    on_negative = 0.0 if relu == 1 else fp19_value(rwords & np.uint64(0x7FFFF))
    mult = np.where(
        negative & (relu != 0), np.broadcast_to(on_negative, (n,))[None, :], scale[None, :]
    )
    mult = np.broadcast_to(mult, shape)
    offset = np.broadcast_to(_offsets(words, pq.offset_bits)[None, :], shape)
    with np.errstate(invalid="ignore"):
        if fp_source:
            neg_inf = cls.inf & cls.neg
            take_special = (cls.nan | cls.inf) & ~(neg_inf & (mult == 0))
            src = np.where(cls.nan | cls.inf, 0.0, x)
        else:
            take_special = np.zeros(shape, bool)
            src = x
        activated = src * mult  # exact (MatrixActivationWithFlags has no flags)
        if pq.offset_bits:
            inter, f1 = _round_saturate(activated, pq.offset_bits, ctl)
            enc, f2 = encode_integer(inter + offset, out_type, ctl, sat)
            flags = f1 | f2
        else:
            enc, flags = _encode(activated, out_type, ctl, sat)
    res = enc
    if fp_source:
        if info(out_type).is_float:
            neg_zero = cls.zero & cls.neg & (mult != 0) & (offset == 0)
            signed = np.uint64(0) if out_type == D.HiF8 else _sign_bit(out_type)
            res = np.where(neg_zero, signed, res)
            flags = np.where(neg_zero, 0, flags)
        if take_special.any():
            sbits, sflags = _special(cls, out_type, sat)
            res = np.where(take_special, sbits, res)
            flags = np.where(take_special, sflags, flags)
    status = int(np.bitwise_or.reduce(np.asarray(flags, np.uint8), axis=None))
    return from_bits(res.astype(np.uint64), out_type), status


# ---------------------------------------------------------------- RowMax / GroupMax


def _abs(dt: DataType, v: np.ndarray) -> tuple[np.ndarray, int]:
    """``MatrixReductionAbsoluteWithFlags``: floats clear the sign; S32 INT_MIN is MAX, OF."""
    if dt == D.U32:
        return v, 0
    if dt == D.S32:
        imin = v == np.iinfo(np.int32).min
        r = np.where(imin, np.int32(np.iinfo(np.int32).max), np.abs(v)).astype(np.int32)
        return r, OF if imin.any() else 0
    b = to_bits(v) & np.uint32(0x7FFFFFFF)
    return b.view(np.float32), 0


def _max_step(
    dt: DataType, cur: np.ndarray, cand: np.ndarray, max_abs: bool
) -> tuple[np.ndarray, int]:
    """``TileProfileMatrixReductionStepWithFlags``: MAX of (optionally) absolute values."""
    flags = 0
    if max_abs:
        cur, f1 = _abs(dt, cur)
        cand, f2 = _abs(dt, cand)
        flags = f1 | f2
    if dt == D.FP32:
        r, st = _core.binary("max", dt, cur, cand)
        return r, flags | int(np.bitwise_or.reduce(st, axis=None))
    return np.maximum(cur, cand), flags


def row_max(
    value: np.ndarray, acc_type: DataType, max_abs: bool, init: np.ndarray | None = None
) -> tuple[np.ndarray, int]:
    """``MatrixRowMaxResult``: M x 1 fold of each row (then of RowMaxIn when ``init``)."""
    acc_type = DataType(acc_type)
    x = np.asarray(value)
    v = x[:, 0].copy()
    status = 0
    if max_abs:
        v, st = _max_step(acc_type, v, v, True)
        status |= st
    for c in range(1, x.shape[1]):
        v, st = _max_step(acc_type, v, x[:, c], max_abs)
        status |= st
    if init is not None:
        v, st = _max_step(acc_type, np.asarray(init).reshape(-1), v, max_abs)
        status |= st
    return v.reshape(-1, 1), status


def group_max(
    value: np.ndarray, acc_type: DataType, group_n: int, max_abs: bool
) -> tuple[np.ndarray, int]:
    """``MatrixGroupMaxResult``: M x ceil(N / GroupN) maxima of consecutive column groups."""
    acc_type = DataType(acc_type)
    if group_n <= 0:
        raise ValueError("GroupN must be positive")
    x = np.asarray(value)
    n = x.shape[1]
    groups = (n + group_n - 1) // group_n
    first = np.arange(groups) * group_n
    v = x[:, first].copy()
    status = 0
    if max_abs:
        v, st = _max_step(acc_type, v, v, True)
        status |= st
    for off in range(1, group_n):
        cols = first + off
        live = np.nonzero(cols < n)[0]
        if live.size == 0:
            break
        r, st = _max_step(acc_type, v[:, live], x[:, cols[live]], max_abs)
        v[:, live] = r
        status |= st
    return v, status


def group_columns(n: int, f: Fpatr) -> int:
    """``BundleGroupMaxColumns``: the GroupMaxOut column count."""
    if not f.group_max or f.group_n == 0:
        return n
    return (n + f.group_n - 1) // f.group_n


__all__ = [
    "GROUP_N",
    "PRE_QUANT",
    "RELU_MODES",
    "Fpatr",
    "PreQuant",
    "check_accumulator",
    "datr_legal",
    "effective_rounding",
    "encode_float",
    "encode_integer",
    "fields_legal",
    "fp19_value",
    "group_columns",
    "group_max",
    "output_type",
    "postprocess",
    "quant_param",
    "quant_param_legal",
    "relu_param_legal",
    "round_to_integer",
    "row_max",
    "scalar_parameters",
    "shift_param",
    "vector_sources",
]
