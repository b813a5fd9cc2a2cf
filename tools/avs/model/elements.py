"""Per-element value functions and DataType-set helpers, bound to ptoc's executor.

The ASL exposes the value an operation computes for one element
(``InstructionContractValue_TFMA(dt, a, b, c)``, ``TileConvertValue(v, src, dst, ctl)``,
``TileCompareElement(cmp, dt, a, b)``, ...). ptoc computes values only inside bundles,
so each such call runs a one-element bundle of the operation on a scratch ptoc machine
(:func:`element_op`) and returns the element and the numeric status ptoc published.
``TileNumericValueClass`` classifies with ptoc's format tables.

The ASL's shared type-set helpers (``TileVecArithmeticDataTypeSupported``, ...) name the
set an operation's predicate returns; ptoc keeps one set per operation, so a helper is
bound to the set of the operation the test belongs to (its ``source``), or, when the
helper names an operation (``TileUnaryDataTypeSupported(TileUnary_EXP, dt)``), to that
operation's set.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ptoc.backend.isa import DataType, info, op
from ptoc.backend.isa.semantics.floatfmt import FORMATS, classify, subnormal
from ptoc.runtime.ops.common import invalid_encoding

from ..outcome import AssertionFailed
from ..values import Bits, ElementBits, Enum, Opaque, Record
from .core import PtocModel, binding
from .direct import Operands, run_direct
from .harness import configure, configure_predicate, write_tile_element
from .tiles import data_type, dtype_enum, element_bits

ROUNDINGS = ("RNE", "RTZ", "RTM", "RTP", "RNA", "RTO", "RHB")


def control_record(rounding: str = "RNE", saturating: bool = False) -> Record:
    return Record(
        "NumericExecutionControl",
        {"rounding_mode": Enum(f"NumericRound_{rounding}"), "saturating": saturating},
    )


def element_op(
    m: PtocModel,
    mnemonic: str,
    src: DataType,
    words: list[int],
    *,
    dst: DataType | None = None,
    predicate: bool = False,
    extra: dict[str, Any] | None = None,
) -> tuple[int, int]:
    """Run ``mnemonic`` on one-element tiles holding ``words`` (raw bits of ``src``) on a
    scratch machine; the result element's raw bits and the numeric status."""
    s = PtocModel()
    s.interp = m.interp
    o = op(mnemonic)
    fields = [f for f, _ in o.operands]
    values: dict[str, Any] = dict(extra or {})
    # one physical row on every tile, so source and destination descriptors match
    cols = 1024 // min(element_bits(src), element_bits(dst or src))
    slot = 0
    for f in fields:
        if f.startswith("source"):
            configure(
                s,
                slot,
                cols * element_bits(src) // 8,
                cols,
                1,
                1,
                dtype_enum(src),
                Enum("TileLayout_RowMajor"),
                Enum("TileLocation_Any"),
                0b0001,
                1,
            )
            write_tile_element(s, slot, 0, 0, Bits(64, words[slot]))
            values[f] = slot
            slot += 1
    dslot = 8
    if predicate:
        configure_predicate(s, dslot, 128, 1, cols, 1, 1, 0b0001)
    else:
        d = dst or src
        configure(
            s,
            dslot,
            cols * element_bits(d) // 8,
            cols,
            1,
            1,
            dtype_enum(d),
            Enum("TileLayout_RowMajor"),
            Enum("TileLocation_Any"),
            0b0001,
            1,
        )
    values["destination0"] = dslot
    result = run_direct(s, mnemonic, Operands(values), dry=False)
    m.runs.extend(s.runs)
    if result.fault is not None:
        raise AssertionFailed(
            m.line,
            f"ptoc computes one {mnemonic} element",
            f"ptoc rejected the one-element bundle with {result.fault_name}: "
            f"{result.fault.rule}",
        )
    t = s.tiles[dslot]
    if predicate:
        return int(t.predicate_bit(0, 0)), result.status
    return t.read_element(int(t.linear(0, 0))), result.status


def _word(dt: DataType, raw: int) -> ElementBits:
    return ElementBits(64, raw, element_bits(dt))


def _raw(dt: DataType, v: Bits) -> int:
    return v.value & ((1 << element_bits(dt)) - 1)


@binding("InstructionContractValue_TFMA", "TileProfileFusedInvalidResult")
def tfma_value(m: PtocModel, dt: Enum, a: Bits, b: Bits, c: Bits) -> tuple:
    d = data_type(dt)
    raw, st = element_op(m, "TFMA", d, [_raw(d, a), _raw(d, b), _raw(d, c)])
    return (_word(d, raw), Bits(5, st))


def _minmax(m: PtocModel, mnemonic: str, dt: Enum, a: Bits, b: Bits) -> tuple:
    d = data_type(dt)
    raw, st = element_op(m, mnemonic, d, [_raw(d, a), _raw(d, b)])
    return (_word(d, raw), bool(st & 1))


@binding("InstructionContractFloatingValue_TMAX")
def tmax_value(m: PtocModel, dt: Enum, a: Bits, b: Bits) -> tuple:
    return _minmax(m, "TMAX", dt, a, b)


@binding("InstructionContractFloatingValue_TMIN")
def tmin_value(m: PtocModel, dt: Enum, a: Bits, b: Bits) -> tuple:
    return _minmax(m, "TMIN", dt, a, b)


@binding("TileConvertValue", "TileProfileConvert")
def convert_value(m: PtocModel, value: Bits, src: Enum, dst: Enum, control: Record) -> tuple:
    s, d = data_type(src), data_type(dst)
    raw, st = element_op(
        m, "TCVT", s, [_raw(s, value)], dst=d, extra={"numeric_control": control}
    )
    return (_word(d, raw), Bits(5, st))


def _widen(m: PtocModel, src: DataType, value: Bits) -> Bits:
    """ptoc's TCVT to FP32 (exact for FP16 and BF16 sources)."""
    raw, _ = element_op(
        m,
        "TCVT",
        src,
        [_raw(src, value)],
        dst=DataType.FP32,
        extra={"numeric_control": control_record()},
    )
    return _word(DataType.FP32, raw)


@binding("ExactWidenFP16ToFP32")
def exact_widen_fp16(m: PtocModel, value: Bits) -> Bits:
    return _widen(m, DataType.FP16, value)


@binding("ExactWidenBF16ToFP32")
def exact_widen_bf16(m: PtocModel, value: Bits) -> Bits:
    return _widen(m, DataType.BF16, value)


@binding("TileConvertIntegerValue")
def convert_integer_value(m: PtocModel, value: Bits, src: Enum, dst: Enum, sat: bool) -> Bits:
    s, d = data_type(src), data_type(dst)
    raw, _ = element_op(
        m,
        "TCVT",
        s,
        [_raw(s, value)],
        dst=d,
        extra={"numeric_control": control_record("RNE", bool(sat))},
    )
    return _word(d, raw)


def _operation(e: Enum) -> str:
    prefix = {"TileBinary": "T", "TileUnary": "T"}[e.type]
    return prefix + e.member


@binding("TileProfileBinaryWithFlags", "TileProfileBinary")
def binary_value(m: PtocModel, operation: Enum, dt: Enum, a: Bits, b: Bits) -> tuple:
    d = data_type(dt)
    raw, st = element_op(m, _operation(operation), d, [_raw(d, a), _raw(d, b)])
    return (_word(d, raw), Bits(5, st))


@binding("TileProfileUnary")
def unary_value(m: PtocModel, operation: Enum, dt: Enum, a: Bits) -> tuple:
    d = data_type(dt)
    raw, st = element_op(m, _operation(operation), d, [_raw(d, a)])
    return (_word(d, raw), Bits(5, st))


@binding("TileSFUUnarySpecialValue")
def sfu_special_value(m: PtocModel, operation: Enum, dt: Enum, a: Bits) -> tuple:
    """The ASL splits special operands from the profile computation; ptoc computes both in
    one place, so every operand counts as handled with ptoc's value."""
    word, flags = unary_value(m, operation, dt, a)
    return (True, word, flags)


@binding("TileCompareElement")
def compare_element(m: PtocModel, comparison: Enum, dt: Enum, a: Bits, b: Bits) -> tuple:
    d = data_type(dt)
    bit, st = element_op(
        m, "TCMP", d, [_raw(d, a), _raw(d, b)], predicate=True, extra={"comparison": comparison}
    )
    return (bool(bit), Bits(5, st))


#: probe values (as Python floats) that tell the rounding modes apart
_PROBES = (1.5, -1.5, 2.5, -2.5, 0.75, -0.75)


@binding("InstructionContractDefaultRounding_TCVT")
def tcvt_default_rounding(m: PtocModel, src: Enum, dst: Enum) -> Enum:
    """The rounding ptoc's TCVT applies when B.DATR.RMode is 0: the explicit mode whose
    results agree with RMode 0 on probe values (integer sources: every mode agrees)."""
    s, d = data_type(src), data_type(dst)
    probes = _probe_bits(s, d)

    def run(rounding: str | None) -> list[tuple[int, int]]:
        out = []
        for p in probes:
            ctl = (
                Record(
                    "TileNumericSelection",
                    {
                        "use_operation_default": True,
                        "rounding_mode": Enum("NumericRound_RNE"),
                        "saturating": False,
                    },
                )
                if rounding is None
                else control_record(rounding)
            )
            out.append(element_op(m, "TCVT", s, [p], dst=d, extra={"numeric_control": ctl}))
        return out

    default = run(None)
    for r in ROUNDINGS:
        if run(r) == default:
            return Enum(f"NumericRound_{r}")
    raise AssertionFailed(
        m.line,
        "ptoc's default TCVT rounding is a named mode",
        "RMode 0 matches no explicit rounding mode on the probes",
    )


def _probe_bits(src: DataType, dst: DataType) -> list[int]:
    si = info(src)
    if not si.is_float or src not in FORMATS:
        return [1, 2]
    di = info(dst)
    if di.is_float and dst in FORMATS:
        f = FORMATS[dst]
        ulp = 2.0**-f.mbits
        vals = [1 + ulp / 2, 1 + 3 * ulp / 2, -(1 + ulp / 2), -(1 + 3 * ulp / 2), 1 + ulp / 4]
    else:
        vals = list(_PROBES)
    return [_float_bits(src, v) for v in vals]


def _float_bits(dt: DataType, v: float) -> int:
    carrier = info(dt).carrier
    arr = np.array([v]).astype(carrier)
    return int(arr.view(np.dtype(f"u{arr.dtype.itemsize}"))[0])


@binding("TileNumericValueClass")
def numeric_value_class(m: PtocModel, dt: Enum, value: Bits) -> Enum:
    d = data_type(dt)
    raw = np.array([_raw(d, value)], np.uint64)
    carrier_bits = raw.astype(np.dtype(f"u{max(1, info(d).carrier.itemsize)}"))
    if invalid_encoding(d, carrier_bits.view(info(d).carrier)):
        return Enum("NumericValue_InvalidEncoding")
    c = classify(d, raw)
    neg = bool(c.neg[0])
    if not info(d).is_float and info(d).is_signed:  # ClassifyInteger: the sign bit
        neg = bool(int(raw[0]) >> (element_bits(d) - 1))
    sign = "Negative" if neg else "Positive"
    if bool(c.nan[0]):
        return Enum("NumericValue_SignalingNaN" if bool(c.snan[0]) else "NumericValue_QuietNaN")
    if bool(c.inf[0]):
        return Enum(f"NumericValue_{sign}Infinity")
    if bool(c.zero[0]):
        return Enum(f"NumericValue_{sign}Zero")
    if bool(subnormal(d, raw)[0]):
        return Enum(f"NumericValue_{sign}Subnormal")
    return Enum(f"NumericValue_{sign}Normal")


@binding("TileSortLeftBefore")
def sort_left_before(m: PtocModel, a: Bits, b: Bits, descending: bool, dt: Enum) -> bool:
    """Whether ptoc's TMRGSORT of the one-element streams [a] and [b] puts ``a`` first."""
    d = data_type(dt)
    s = PtocModel()
    s.interp = m.interp
    lay, loc = Enum("TileLayout_RowMajor"), Enum("TileLocation_Any")
    cols = 1024 // element_bits(d)
    for slot, v in ((0, a), (1, b)):
        configure(
            s, slot, cols * element_bits(d) // 8, cols, 1, 1, dtype_enum(d), lay, loc, 0b0001, 1
        )
        write_tile_element(s, slot, 0, 0, Bits(64, _raw(d, v)))
    configure(s, 8, cols * element_bits(d) // 8, cols, 1, 2, dtype_enum(d), lay, loc, 0b0001, 1)
    result = run_direct(
        s,
        "TMRGSORT",
        Operands({"destination0": 8, "source0": 0, "source1": 1, "flag0": bool(descending)}),
        dry=False,
    )
    m.runs.extend(s.runs)
    if result.fault is not None:
        raise AssertionFailed(
            m.line,
            "ptoc merges the two one-element streams",
            f"ptoc rejected the TMRGSORT with {result.fault_name}: {result.fault.rule}",
        )
    first = s.tiles[8].read_element(0)
    return first == _raw(d, a)


@binding("TileHistogramSelectedByteSupported")
def histogram_byte_supported(m: PtocModel, dt: Enum, byte_id: int) -> bool:
    """ptoc's THISTOGRAM ByteId rule (``semantics.generate.thistogram_shapes_legal`` with
    an ample filter)."""
    from ptoc.backend.isa.semantics.generate import thistogram_shapes_legal

    return thistogram_shapes_legal(data_type(dt), (1, 1), (3, 1), byte_id) is None


# ----------------------------------------------------------------------------- type sets

_SUBJECT_SETS = (
    "TileVecArithmeticDataTypeSupported",
    "TileVecScalarIntegerDataTypeSupported",
    "TileCompareDataTypeSupported",
    "TileSelectDataTypeSupported",
    "TileSortDataTypeSupported",
    "TileTNegDataTypeSupported",
    "TileTReluDataTypeSupported",
    "TileCarrierOrMove24BaselineDataTypeSupported",
    "TileFillPadDataTypeSupported",
    "TileImg2ColDataTypeSupported",
    "TileArgReductionSourceDataTypeSupported",
    "TileTCIDataTypeSupported",
    "TileTTRIDataTypeSupported",
    "TileHistogramSourceDataTypeSupported",
    "TileCarrierOrPackedBaselineDataTypeSupported",
    "TileCarrierOnlyDataTypeSupported",
    "TileTeplRawCarrierTypeSupported",
)


def _subject_set(name: str) -> Any:
    def fn(m: PtocModel, dt: Enum) -> bool | Opaque:
        if m.subject is None:
            return Opaque(
                f"{name} is a shared ASL type-set helper; ptoc keeps one type set per operation"
            )
        return data_type(dt) in op(m.subject).dtypes

    return fn


for _name in _SUBJECT_SETS:
    binding(_name)(_subject_set(_name))

_OP_PREFIX = {"TileUnary": "T", "TileBinary": "T", "TilePartial": "TPART"}


@binding(
    "TileUnaryDataTypeSupported",
    "TileBinaryDataTypeSupported",
    "TilePartialDataTypeSupportedForOperation",
)
def op_set(m: PtocModel, operation: Enum, dt: Enum) -> bool:
    mnemonic = _OP_PREFIX[operation.type] + operation.member
    if m.subject is not None and m.subject.startswith(mnemonic) and m.subject.endswith("S"):
        mnemonic = m.subject  # TileBinaryDataTypeSupported(TileBinary_ADD, dt) in TADDS
    return data_type(dt) in op(mnemonic).dtypes


__all__ = ["element_op"]
