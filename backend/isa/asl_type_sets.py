"""The BSTART DataType sets that the executable ASL legality predicates admit (DECISIONS D9).

The 0.58.3 contract records list DataTypes in prose ("DataType is one of ..."); the
executable ASL states them as predicates, and where the two disagree the predicate wins
(D9), while seed sentences still win over both (D4, ``seed_overrides.DTYPES``). This
module records, for every tile operation of the catalog, the set its predicate admits
and the ASL function(s) it was read from, as data for the catalog generator
(``generate.py``: seeds > these sets > contract prose). Only ``generate.py`` and the
tests read it; everything else reads the generated ``catalog.py``.

The sets were read from PTO-ISA/pto-spec 0.58.3: the operation's
``InstructionContractDataTypeLegal_<OP>`` and the predicates it calls
(``asl/tile/model/legality/dtype-layout.asl`` and friends), cross-checked against the
operation's ``TileOperandsLegal_*`` handler and the bundle schema of
``asl/block/model/dispatch/*-schema.asl`` that run when the bundle executes. Where those
layers disagree, the entry keeps the types every layer accepts and says so in ``note``.

An entry with ``types`` None has no BSTART DataType predicate of its own; ``note`` says
which rule governs instead. ``ASL_TYPE_RULES`` and ``ASL_TYPE_PAIRS`` hold the ASL's
further rules (destination, index and filter types, type pairs), which seed sentences
narrow in places (``seed_overrides.TYPE_RULES``).
"""

from __future__ import annotations

from dataclasses import dataclass

from .datatypes import DataType as D
from .datatypes import info


@dataclass(frozen=True)
class AslTypeSet:
    """One operation's BSTART DataType set as an ASL predicate admits it."""

    #: the admitted DataTypes; None when the ASL has no DataType predicate for the op
    types: frozenset[D] | None
    #: the ASL function(s) the set was read from
    predicate: str
    #: where the ASL layers disagree, or why there is no set
    note: str = ""


def _four_bit(d: D) -> bool:
    return info(d).bits == 4


#: every assigned DataType (``TileTeplRawCarrierTypeSupported``, the TCVT predicate)
ALL = frozenset(D)
#: ``TileVecArithmeticDataTypeSupported``: the sixteen arithmetic types
VEC_ARITHMETIC = frozenset(
    {
        D.FP64, D.FP32, D.TF32, D.HF32, D.FP16, D.BF16, D.E4M3, D.E5M2,
        D.S64, D.S32, D.S16, D.S8, D.U64, D.U32, D.U16, D.U8,
    }
)  # fmt: skip
#: ``TileVecScalarIntegerDataTypeSupported``: the eight byte-or-wider integers
VEC_INTEGER = frozenset({D.S64, D.S32, D.S16, D.S8, D.U64, D.U32, D.U16, D.U8})
#: ``TileFloatingElementwiseDataTypeSupported``: the eight SFU floating types
FLOAT_ELEMENTWISE = frozenset({D.FP64, D.FP32, D.TF32, D.HF32, D.FP16, D.BF16, D.E4M3, D.E5M2})
#: ``TileA9DataTypeSupported`` (= ``TilePartialDataTypeSupported``,
#: ``TileImg2ColDataTypeSupported``)
A9 = frozenset({D.S32, D.U32, D.FP32, D.S16, D.U16, D.FP16, D.BF16, D.S8, D.U8})
#: ``TileF3DataTypeSupported``
F3 = frozenset({D.FP16, D.FP32, D.BF16})
#: ``TileMove24DataTypeSupported``: every assigned type except HiF4X2
MOVE24 = ALL - {D.HiF4X2}
#: ``TileCarrierOnlyDataTypeSupported``: not four-bit and at most four bytes
CARRIER_ONLY = frozenset(d for d in D if not _four_bit(d) and info(d).bits <= 32)
#: ``TileCarrierOrPackedBaselineDataTypeSupported``: carrier-only or four-bit (no 64-bit)
CARRIER_OR_PACKED = frozenset(d for d in D if info(d).bits <= 32)
#: ``IndexedTLSUTransferDataTypeLegal``: no four-bit type (no nibble selector)
INDEXED_TRANSFER = frozenset(d for d in D if not _four_bit(d))
#: ``TileTCIDataTypeSupported``
TCI = frozenset({D.S32, D.S16, D.U32, D.U16})
#: ``TileTTRIDataTypeSupported``
TTRI = frozenset({D.FP32, D.FP16, D.S32, D.S16, D.U32, D.U16})
#: ``TileSortDataTypeSupported``
SORT = frozenset({D.FP32, D.FP16})
#: ``TileHistogramSourceDataTypeSupported``
HISTOGRAM = frozenset({D.U16, D.U32})


def _contract(name: str) -> str:
    return f"InstructionContractDataTypeLegal_{name}"


def _vec(name: str, also: str = "") -> AslTypeSet:
    tail = f"; {also}" if also else ""
    return AslTypeSet(
        VEC_ARITHMETIC, f"{_contract(name)}: TileVecArithmeticDataTypeSupported{tail}"
    )


def _integer(name: str, via: str = "") -> AslTypeSet:
    pred = via or "TileVecScalarIntegerDataTypeSupported"
    return AslTypeSet(VEC_INTEGER, f"{_contract(name)}: {pred}")


ASL_DTYPES: dict[str, AslTypeSet] = {}

# ---- elementwise tile-tile (TEPL Mode 0): ExecuteTileBinary / ExecuteTileUnary
for _m in ("TADD", "TSUB", "TMUL", "TDIV", "TREM", "TMAX", "TMIN"):
    ASL_DTYPES[_m] = _vec(
        _m, "TileBinaryDataTypeSupported in TileOperandsLegal_ExecuteTileBinary"
    )
for _m in ("TAND", "TOR", "TXOR", "TNOT"):
    ASL_DTYPES[_m] = _integer(_m)
for _m in ("TSHL", "TSHR"):
    ASL_DTYPES[_m] = _integer(_m, "TileBinaryDataTypeSupported (shift: integer types)")
ASL_DTYPES["TABS"] = _vec("TABS", "TileUnaryDataTypeSupported(ABS)")
ASL_DTYPES["TNEG"] = AslTypeSet(
    VEC_ARITHMETIC, f"{_contract('TNEG')}: TileTNegDataTypeSupported (the arithmetic types)"
)
ASL_DTYPES["TRELU"] = AslTypeSet(
    VEC_ARITHMETIC, f"{_contract('TRELU')}: TileTReluDataTypeSupported (the arithmetic types)"
)
for _m, _u in (("TEXP", "EXP"), ("TLOG", "LOG"), ("TRECIP", "RECIP"), ("TSQRT", "SQRT"),
               ("TRSQRT", "RSQRT")):  # fmt: skip
    ASL_DTYPES[_m] = AslTypeSet(
        FLOAT_ELEMENTWISE,
        f"{_contract(_m)}: TileUnaryDataTypeSupported({_u}) = "
        "TileFloatingElementwiseDataTypeSupported",
    )
ASL_DTYPES["TCMP"] = AslTypeSet(
    VEC_ARITHMETIC, f"{_contract('TCMP')}: TileCompareDataTypeSupported (the arithmetic types)"
)
ASL_DTYPES["TSEL"] = AslTypeSet(
    VEC_ARITHMETIC,
    f"{_contract('TSEL')}: TileSelectDataTypeSupported (the arithmetic types)",
    "the contract prose lists HiF8, E3M2, E2M3 and E8M0 and excludes FP64/S64/U64; the "
    "predicate, TileOperandsLegal_ExecuteTileSelect and the comparison bundle schema admit "
    "exactly the arithmetic types",
)
ASL_DTYPES["TFMA"] = AslTypeSet(
    VEC_ARITHMETIC,
    f"{_contract('TFMA')}: TileFusedMultiplyAddDataTypeSupported (the arithmetic types)",
)
ASL_DTYPES["TCVT"] = AslTypeSet(
    ALL,
    f"{_contract('TCVT')}: TRUE (every assigned type; pairs: HardwareTCVTTypePairSupported)",
)

# ---- tile-scalar and immediate: ExecuteTileScalar, ExecuteTileCompareScalar, ...
for _m in ("TADDS", "TSUBS", "TMULS", "TDIVS", "TREMS", "TMAXS", "TMINS"):
    ASL_DTYPES[_m] = AslTypeSet(
        VEC_ARITHMETIC,
        f"{_contract(_m)}: TileBinaryDataTypeSupported (arithmetic: the arithmetic types)",
    )
for _m in ("TANDS", "TORS", "TXORS"):
    ASL_DTYPES[_m] = _integer(_m)
for _m in ("TSHLS", "TSHRS"):
    ASL_DTYPES[_m] = _integer(_m, "TileBinaryDataTypeSupported (shift: integer types)")
ASL_DTYPES["TCMPS"] = AslTypeSet(
    VEC_ARITHMETIC, f"{_contract('TCMPS')}: TileCompareDataTypeSupported (the arithmetic types)"
)
ASL_DTYPES["TSELS"] = AslTypeSet(
    VEC_ARITHMETIC,
    f"{_contract('TSELS')}: TileSelectDataTypeSupported (the arithmetic types)",
    "as TSEL: the prose's HiF8, E3M2, E2M3 and E8M0 are not admitted",
)
ASL_DTYPES["TEXPANDS"] = _vec(
    "TEXPANDS", "TileFillPadDataTypeSupported in ExecuteTileFillScalar"
)

# ---- reductions and expansions
for _ax in ("ROW", "COL"):
    for _o in ("SUM", "MAX", "MIN", "PROD"):
        ASL_DTYPES[f"T{_ax}{_o}"] = _vec(
            f"T{_ax}{_o}", "TileOperandsLegal_ExecuteTileReduction"
        )
    for _o in ("ARGMAX", "ARGMIN"):
        ASL_DTYPES[f"T{_ax}{_o}"] = AslTypeSet(
            A9,
            f"{_contract(f'T{_ax}{_o}')}: TileArgReductionSourceDataTypeSupported "
            "(TileA9DataTypeSupported)",
        )
    for _o in ("", "ADD", "SUB", "MUL", "DIV", "MAX", "MIN"):
        ASL_DTYPES[f"T{_ax}EXPAND{_o}"] = _vec(
            f"T{_ax}EXPAND{_o}", "TileOperandsLegal_ExecuteTileExpand"
        )
    ASL_DTYPES[f"T{_ax}EXPANDEXPDIF"] = AslTypeSet(
        F3,
        f"{_contract(f'T{_ax}EXPANDEXPDIF')}: FP16, BF16 or FP32 "
        "(pairs: TileExpandExpdifTypePairLegal)",
    )

# ---- layout and rearrangement
for _m in ("TCONCAT", "TEXTRACT", "TINSERT", "TTRANS"):
    ASL_DTYPES[_m] = AslTypeSet(
        MOVE24, f"{_contract(_m)}: TileCarrierOrMove24BaselineDataTypeSupported"
    )
ASL_DTYPES["TFILLPAD"] = AslTypeSet(
    VEC_ARITHMETIC & CARRIER_ONLY,
    f"{_contract('TFILLPAD')}: TileFillPadDataTypeSupported (the arithmetic types); "
    "TileOperandsLegal_TFILLPAD: TileCarrierOnlyDataTypeSupported",
    "the two layers disagree: the predicate admits FP64/S64/U64 and rejects HiF8, E3M2, "
    "E2M3 and E8M0, the operand legality that executes admits the latter and rejects the "
    "64-bit types; the set is what both accept",
)
ASL_DTYPES["TIMG2COL"] = AslTypeSet(
    A9, f"{_contract('TIMG2COL')}: TileImg2ColDataTypeSupported"
)
ASL_DTYPES["TMOV"] = AslTypeSet(
    ALL,
    "TileOperandsLegal_TMOV: TileShapeAndTypeMatch only (no DataType predicate)",
)

# ---- irregular and complex
ASL_DTYPES["TCI"] = AslTypeSet(TCI, f"{_contract('TCI')}: TileTCIDataTypeSupported")
ASL_DTYPES["TTRI"] = AslTypeSet(TTRI, f"{_contract('TTRI')}: TileTTRIDataTypeSupported")
ASL_DTYPES["THISTOGRAM"] = AslTypeSet(
    HISTOGRAM, "TileOperandsLegal_THISTOGRAM: TileHistogramSourceDataTypeSupported"
)
for _m in ("TSORT", "TMRGSORT"):
    ASL_DTYPES[_m] = AslTypeSet(SORT, f"{_contract(_m)}: TileSortDataTypeSupported")
for _m in ("TPARTADD", "TPARTMUL", "TPARTMAX", "TPARTMIN"):
    ASL_DTYPES[_m] = AslTypeSet(
        A9, f"{_contract(_m)}: TilePartialDataTypeSupportedForOperation"
    )
ASL_DTYPES["TQUANT"] = AslTypeSet(
    frozenset({D.FP32}), "TileOperandsLegal_TQUANT: FP32 source, S8/U8 destination"
)
ASL_DTYPES["TDEQUANT"] = AslTypeSet(
    frozenset({D.S8, D.U8}), "TileOperandsLegal_TDEQUANT: S8/U8 source, FP32 destination"
)
ASL_DTYPES["TGATHER"] = AslTypeSet(
    INDEXED_TRANSFER,
    "InstructionContractValueDataTypeLegal_TGATHER: IndexedTLSUTransferDataTypeLegal",
    "seed decision 138 narrows the values to FP32, FP16, S32, S16, U32, U16 and the "
    "indices (ASL: S16/U16/S32/U32/S64/U64) to S32/U32",
)
ASL_DTYPES["TSCATTER"] = AslTypeSet(
    INDEXED_TRANSFER,
    "InstructionContractTypePairLegal_TSCATTER: IndexedTLSUTransferDataTypeLegal values",
    "seed decision 139 narrows the values and pairs the index width with the value width",
)

# ---- memory and data movement
for _m in ("TLOAD", "TSTORE"):
    ASL_DTYPES[_m] = AslTypeSet(ALL, f"{_contract(_m)}: TileRegularTLSUDataTypeSupported")
ASL_DTYPES["TPREFETCH"] = AslTypeSet(
    CARRIER_OR_PACKED,
    f"{_contract('TPREFETCH')}: TileCarrierOrPackedBaselineDataTypeSupported",
)
ASL_DTYPES["GMOV"] = AslTypeSet(
    CARRIER_OR_PACKED,
    f"{_contract('GMOV')}: TileCarrierOrPackedBaselineDataTypeSupported",
)
for _m in ("MGATHER", "MSCATTER", "MGATHER_MASK", "MSCATTER_MASK", "MGATHER_CAS"):
    ASL_DTYPES[_m] = AslTypeSet(
        INDEXED_TRANSFER, f"the {_m} bundle schema: IndexedTLSUTransferDataTypeLegal"
    )

# ---- CUBE: the matrix operand rules are not one BSTART DataType predicate
for _m in ("TMATMUL", "TMATMUL_BIAS", "TMATMUL_ACC", "TMATMUL_MX", "TMATMUL_MX_BIAS",
           "TMATMUL_MX_ACC", "TGEMV", "TGEMV_BIAS", "TGEMV_ACC", "TGEMV_MX", "TGEMV_MX_BIAS",
           "TGEMV_MX_ACC"):  # fmt: skip
    ASL_DTYPES[_m] = AslTypeSet(
        None,
        "no InstructionContractDataTypeLegal predicate",
        "CUBE operand types are per-role matrix rules (TileCubeDataTypeSupported, "
        "TileMXOperandPairLegal, matrix-*.asl), not a BSTART DataType set; the executor "
        "does not model CUBE operations, so the catalog keeps the contract prose",
    )


# ---- further type rules: what they constrain -> (types, the ASL function)
_INDEX = frozenset({D.S16, D.U16, D.S32, D.U32, D.S64, D.U64})
ASL_TYPE_RULES: dict[str, dict[str, tuple[frozenset[D], str]]] = {
    "TQUANT": {"dst": (frozenset({D.S8, D.U8}), "TileOperandsLegal_TQUANT")},
    "TDEQUANT": {"dst": (frozenset({D.FP32}), "TileOperandsLegal_TDEQUANT")},
    "TSORT": {"index": (frozenset({D.U32}), "TileOperandsLegal_TSORT")},
    "TGATHER": {"index": (_INDEX, "InstructionContractIndexDataTypeLegal_TGATHER")},
    "TSCATTER": {"index": (_INDEX, "InstructionContractTypePairLegal_TSCATTER")},
    **{
        f"T{_ax}{_o}": {
            "dst": (frozenset({D.S32, D.U32}), "TileOperandsLegal_ExecuteTileReduction")
        }
        for _ax in ("ROW", "COL")
        for _o in ("ARGMAX", "ARGMIN")
    },
    "THISTOGRAM": {
        "dst": (frozenset({D.U32}), "TileOperandsLegal_THISTOGRAM"),
        "filter": (frozenset({D.U8}), "TileHistogramInputsLegal"),
    },
    "TCVT": {"e8m0_sources": (F3, "HardwareTCVTE8M0SourceTypeSupported")},
    # a predicate tile (TileStorage_Predicate) has no DataType of its own
    "TCMP": {"dst": (frozenset(), "TileOperandsLegal_ExecuteTileCompare")},
    "TCMPS": {"dst": (frozenset(), "TileOperandsLegal_ExecuteTileCompareScalar")},
}

#: (source, destination) pairs of the EXPDIF expansions (TileExpandExpdifTypePairLegal)
_EXPDIF = frozenset(
    {(D.FP16, D.FP16), (D.BF16, D.BF16), (D.FP32, D.FP32), (D.FP16, D.FP32), (D.BF16, D.FP32)}
)
ASL_TYPE_PAIRS: dict[str, tuple[frozenset[tuple[D, D]], str]] = {
    "TROWEXPANDEXPDIF": (_EXPDIF, "TileExpandExpdifTypePairLegal"),
    "TCOLEXPANDEXPDIF": (_EXPDIF, "TileExpandExpdifTypePairLegal"),
}
