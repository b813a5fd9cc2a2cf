"""Catalog facts of the FSU scalar forms: operand carriers, rounding controls, text names.

From ``asl/scalar/model/fsu/profile.asl`` and ``asl/scalar/model/dispatch/fsu.asl``:

* SrcType (2 bits) selects the source carrier. For the floating forms 0 is FP64 (the
  whole GPR) and 1 is FP32 (the low word, ``NormalizeScalarFPSource``); for SCVTF a
  signed and for UCVTF an unsigned integer of 64 bits (0) or 32 bits (1, sign- or
  zero-extended, ``NormalizeScalarIntegerSource``). Codes 2 and 3 are reserved.
* DstType (5 bits, the conversions) selects the destination carrier, codes 0..14. A
  floating destination code is the tile DataType code (FP64, FP32, TF32, ... HiF4X2);
  the result is zero-extended from the width ``NormalizeScalarFPResult`` keeps. An
  integer destination code has the width and signedness of
  ``NormalizeScalarIntegerResult``; a signed one is sign-extended to 64 bits.
* The active rounding mode is CORE_STATE[39:37] (``ResolveScalarFPActiveRoundingMode``):
  1 toward -Inf, 2 toward +Inf, 3 toward zero, every other code to nearest even.
  FCVTA/M/N/P/Z round with a fixed mode (``ScalarFPFixedConversionRoundingMode``).
* Flags NV, DZ, OF, UF, NX are ORed into the sticky CORE_STATE[36:32] status, the same
  status tile operations accumulate.

The text names of the carriers (``fadd.fs``, ``fcvtz.fs2sw``) are the catalog's examples
(fd, fs, sd, sw, ud, uw); ptoc names the other codes (docs/formats.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .datatypes import DataType
from .semantics.floatfmt import RNA, RNE, RTM, RTP, RTZ

#: the floating source carriers, by SrcType
FP_SOURCE: dict[int, DataType] = {0: DataType.FP64, 1: DataType.FP32}
#: the integer source widths of SCVTF/UCVTF, by SrcType
INT_SOURCE_BITS: dict[int, int] = {0: 64, 1: 32}

#: the floating destination carrier of each DstType code and the bits the GPR keeps
FP_DESTINATION: dict[int, tuple[DataType, int]] = {
    0: (DataType.FP64, 64),
    1: (DataType.FP32, 32),
    2: (DataType.TF32, 19),
    3: (DataType.HF32, 32),
    4: (DataType.FP16, 16),
    5: (DataType.BF16, 16),
    6: (DataType.HiF8, 8),
    7: (DataType.E4M3, 8),
    8: (DataType.E5M2, 8),
    9: (DataType.E3M2, 6),
    10: (DataType.E2M3, 6),
    11: (DataType.E2M1X2, 4),
    12: (DataType.E1M2X2, 4),
    13: (DataType.E8M0, 8),
    14: (DataType.HiF4X2, 9),
}


@dataclass(frozen=True)
class IntCarrier:
    """An integer destination carrier: its width and whether it is sign-extended."""

    bits: int
    signed: bool

    @property
    def range(self) -> tuple[int, int]:
        if self.signed:
            return -(1 << (self.bits - 1)), (1 << (self.bits - 1)) - 1
        return 0, (1 << self.bits) - 1


#: the integer destination carrier of each DstType code (``NormalizeScalarIntegerResult``)
INT_DESTINATION: dict[int, IntCarrier] = {
    code: IntCarrier(bits, signed)
    for code, (bits, signed) in enumerate(
        [(64, False), (32, False), (16, False), (8, False), (4, False), (2, False),
         (1, False), (1, False), (64, True), (32, True), (16, True), (8, True),
         (4, True), (2, True), (1, True)]
    )
}  # fmt: skip

#: CORE_STATE[39:37] -> the rounding mode (a :mod:`.semantics.floatfmt` code)
ACTIVE_ROUNDING: dict[int, int] = {0: RNE, 1: RTM, 2: RTP, 3: RTZ, 4: RNE, 5: RNE, 6: RNE,
                                   7: RNE}  # fmt: skip
#: the fixed rounding of the floating-to-integer conversions
FIXED_ROUNDING: dict[str, int] = {
    "FCVTA": RNA,
    "FCVTM": RTM,
    "FCVTN": RNE,
    "FCVTP": RTP,
    "FCVTZ": RTZ,
}


@dataclass(frozen=True)
class FsuForm:
    """What one FSU mnemonic computes: its handler kind and operation.

    ``kind`` is the ASL handler: "binary", "minmax", "unary", "abs", "fused", "compare"
    or "convert"; ``op`` the operation (add, sub, mul, div, min, max, sqrt, recip, exp,
    madd, msub, nmadd, nmsub, eq, ne, lt, ge; for conversions f2f, f2i, s2f, u2f);
    ``signalling`` whether a compare signals NV on a quiet NaN (the ...S forms).
    """

    kind: str
    op: str
    signalling: bool = False


FSU_FORMS: dict[str, FsuForm] = {
    **{m: FsuForm("binary", m[1:].lower()) for m in ("FADD", "FSUB", "FMUL", "FDIV")},
    "FMIN": FsuForm("minmax", "min"),
    "FMAX": FsuForm("minmax", "max"),
    "FABS": FsuForm("abs", "abs"),
    **{m: FsuForm("unary", m[1:].lower()) for m in ("FSQRT", "FRECIP", "FEXP")},
    **{m: FsuForm("fused", m[1:].lower()) for m in ("FMADD", "FMSUB", "FNMADD", "FNMSUB")},
    **{
        m + s: FsuForm("compare", m[1:].lower(), s == "S")
        for m in ("FEQ", "FNE", "FLT", "FGE")
        for s in ("", "S")
    },
    "FCVT": FsuForm("convert", "f2f"),
    **{m: FsuForm("convert", "f2i") for m in FIXED_ROUNDING},
    "SCVTF": FsuForm("convert", "s2f"),
    "UCVTF": FsuForm("convert", "u2f"),
}

# ------------------------------------------------------------------ text names

#: source names by SrcType: floating forms, SCVTF, UCVTF
SOURCE_NAMES: dict[str, dict[int, str]] = {
    "f": {0: "fd", 1: "fs"},
    "s": {0: "sd", 1: "sw"},
    "u": {0: "ud", 1: "uw"},
}
#: floating destination names by DstType (fd, fs from the catalog; the others are the
#: DataType names)
FP_DESTINATION_NAMES: dict[int, str] = {
    code: {0: "fd", 1: "fs"}.get(code, dt.name.lower())
    for code, (dt, _) in FP_DESTINATION.items()
}
#: integer destination names by DstType (sd, sw, ud, uw from the catalog; the others
#: sh/sb/uh/ub for 16 and 8 bits, s4/u4 ... by width; code 7 repeats code 6's carrier)
INT_DESTINATION_NAMES: dict[int, str] = {
    0: "ud", 1: "uw", 2: "uh", 3: "ub", 4: "u4", 5: "u2", 6: "u1", 7: "u1b",
    8: "sd", 9: "sw", 10: "sh", 11: "sb", 12: "s4", 13: "s2", 14: "s1",
}  # fmt: skip


def type_suffixes(mnemonic: str) -> dict[str, dict[str, int]]:
    """Every ``.suffix`` of an FSU mnemonic's text with the field values it fixes:
    ``{T}`` is SrcType, ``{srcT2dstT}`` SrcType and DstType."""
    form = FSU_FORMS[mnemonic]
    if form.kind != "convert":
        return {name: {"SrcType": t} for t, name in SOURCE_NAMES["f"].items()}
    src = SOURCE_NAMES[{"s2f": "s", "u2f": "u"}.get(form.op, "f")]
    dst = INT_DESTINATION_NAMES if form.op == "f2i" else FP_DESTINATION_NAMES
    return {
        f"{s}2{d}": {"SrcType": t, "DstType": code}
        for t, s in src.items()
        for code, d in dst.items()
    }


__all__ = [
    "ACTIVE_ROUNDING",
    "FIXED_ROUNDING",
    "FP_DESTINATION",
    "FP_SOURCE",
    "FSU_FORMS",
    "INT_DESTINATION",
    "INT_SOURCE_BITS",
    "FsuForm",
    "IntCarrier",
    "type_suffixes",
]


def _code(table: dict[int, Any], dt: DataType) -> int:
    return next(k for k, v in table.items() if (v[0] if isinstance(v, tuple) else v) == dt)


#: the SrcType of an FP32 source, the DstType of an FP32 result, and the SrcType of a
#: 64-bit integer source (what the compiler's FP32 scalars use)
FP32_SOURCE = _code(FP_SOURCE, DataType.FP32)
FP32_DESTINATION = _code(FP_DESTINATION, DataType.FP32)
INT64_SOURCE = next(k for k, bits in INT_SOURCE_BITS.items() if bits == 64)
#: the quiet FSU form computing each binary operation or comparison (``FsuForm.op``)
FSU_BY_OP: dict[str, str] = {
    f.op: m
    for m, f in FSU_FORMS.items()
    if f.kind in ("binary", "minmax") or (f.kind == "compare" and not f.signalling)
}
