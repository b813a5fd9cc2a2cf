"""Bindings of the ASL's catalog queries to ptoc's catalog (``ptoc.backend.isa``).

The ASL numbers tile operations by their position in the 0.58.3 ``tile-operations.json``
catalog; ptoc's generated catalog keeps that order, so an operation index is an index
into ``ptoc.backend.isa.catalog.OPS``. DataType predicates
(``InstructionContractDataTypeLegal_<OP>``) are the catalog's type sets, B.DATR field
applicability is the catalog's ``datr_fields``. The ASL's semantic-handler records
(``TileHandlerOfIndex``, ``InstructionContractHandler_<OP>``) are its internal dispatch
and have no ptoc counterpart: they evaluate to an opaque value whose comparisons the
interpreter skips and reports.
"""

from __future__ import annotations

import re
from typing import Any

from ptoc.backend.isa import DataType, Family, catalog, op, op_by_selector
from ptoc.backend.isa.schema import OpDef
from ptoc.backend.program import DATR_BY_ATTR, DATR_BY_NAME

from ..outcome import Untranslated
from ..values import AslRuntimeError, Bits, Enum, Opaque
from .core import BINDINGS, CONSTANTS, PtocModel, binding
from .tiles import data_type

OPS: tuple[OpDef, ...] = catalog.OPS
CONSTANTS["PTO_TILE_OPERATION_COUNT"] = len(OPS)
INDEX = {o.mnemonic: i for i, o in enumerate(OPS)}

#: classification[0] of the catalog -> ASL TileClass member
TILE_CLASSES = {
    "elementwise-tile-tile": "TileClass_ElementwiseTileTile",
    "tile-scalar-and-immediate": "TileClass_TileScalarAndImmediate",
    "reduce-and-expand": "TileClass_ReduceAndExpand",
    "irregular-and-complex": "TileClass_IrregularAndComplex",
    "layout-and-rearrangement": "TileClass_LayoutAndRearrangement",
    "memory-and-data-movement": "TileClass_MemoryAndDataMovement",
    "matrix-and-matrix-vector": "TileClass_MatrixAndMatrixVector",
}
PAD_UNIONS = {
    "pad-value": "TileDATRPadUnion_PadValue",
    "histogram-byte-id": "TileDATRPadUnion_HistogramByteId",
    "must-zero": "TileDATRPadUnion_MustZero",
}
HANDLER_NOTE = "the ASL's semantic-handler record is its internal dispatch"


def operation(index: Any) -> OpDef:
    i = index.value if isinstance(index, Bits) else index
    if not isinstance(i, int) or not 0 <= i < len(OPS):
        raise AslRuntimeError(f"operation index {index} outside the catalog")
    return OPS[i]


def asl_name(mnemonic: str) -> str:
    """The ASL identifier of a mnemonic (``MGATHER.MASK`` style names use ``_``)."""
    return re.sub(r"[^A-Za-z0-9]", "_", mnemonic)


def mnemonic_of(e: Any) -> str:
    """The mnemonic a ``TileOperation_<OP>`` member names."""
    if not isinstance(e, Enum) or e.type != "TileOperation":
        raise AslRuntimeError(f"{e} is not a TileOperation")
    return e.member


@binding("DecodeTileOperation")
def decode_tile_operation(m: PtocModel, family: Enum, code: Bits) -> int:
    fam = {
        "TileDecode_TEPL": Family.TEPL,
        "TileDecode_TLSU": Family.TLSU,
        "TileDecode_CUBE": Family.CUBE,
    }.get(family.name)
    if fam is None:
        raise AslRuntimeError(f"{family} is not a TileDecodeFamily")
    value = code.value
    if fam is not Family.TEPL:
        if value >> 10:
            return len(OPS)
        value &= 0x3FF
    o = op_by_selector(fam, value)
    return len(OPS) if o is None else INDEX[o.mnemonic]


@binding("TileOperationOfIndex")
def operation_of_index(m: PtocModel, index: Any) -> Enum:
    return Enum(f"TileOperation_{asl_name(operation(index).mnemonic)}")


@binding("TileEngineOfIndex")
def engine_of_index(m: PtocModel, index: Any) -> Enum:
    return Enum(f"TileEngine_{operation(index).engine.value}")


@binding("TileClassOfIndex")
def class_of_index(m: PtocModel, index: Any) -> Enum:
    return Enum(TILE_CLASSES[operation(index).classification[0]])


@binding("TileHandlerOfIndex")
def handler_of_index(m: PtocModel, index: Any) -> Opaque:
    operation(index)
    return Opaque(HANDLER_NOTE)


@binding("TileOperationDATRPadUnion")
def datr_pad_union(m: PtocModel, index: Any) -> Enum:
    return Enum(PAD_UNIONS[operation(index).pad_union])


def _datr_field(asl_enum: str) -> str:
    """The B.DATR field an ASL ``TileDATRField_<Name>`` names (ptoc's ``DATR_BY_NAME``)."""
    name = asl_enum.removeprefix("TileDATRField_")
    if name not in DATR_BY_NAME:
        raise KeyError(f"ASL B.DATR field {asl_enum} is not a field of B.DATR")
    return name


@binding("TileOperationDATRFieldApplicable")
def datr_field_applicable(m: PtocModel, index: Any, fieldname: Enum) -> bool:
    return _datr_field(fieldname.name) in operation(index).datr_fields


@binding("TileOperationDATRFieldsLegal")
def datr_fields_legal(
    m: PtocModel,
    index: Any,
    cmode: Bits,
    pad: Bits,
    sat: bool,
    canon: bool,
    dtype: Bits,
    rmode: Bits,
    layout: Bits,
) -> bool:
    allowed = operation(index).datr_fields
    # the ASL passes the fields in its own order; ptoc names each by DATR_BY_ATTR
    values = {"cmode": cmode, "pad": pad, "sat": sat, "canonicalize": canon, "dtype": dtype,
              "rmode": rmode, "layout": layout}  # fmt: skip
    present = {
        DATR_BY_ATTR[attr].name: bool(v) if isinstance(v, bool) else v.value != 0
        for attr, v in values.items()
    }
    return all(f in allowed for f, nonzero in present.items() if nonzero)


def _register_per_op() -> None:
    """``InstructionContractOperation_<OP>``, ``..Handler_<OP>``, ``..DataTypeLegal_<OP>``."""
    for o in OPS:
        name = asl_name(o.mnemonic)

        def operation_fn(m: PtocModel, _o: OpDef = o) -> Enum:
            return Enum(f"TileOperation_{asl_name(_o.mnemonic)}")

        def handler_fn(m: PtocModel) -> Opaque:
            return Opaque(HANDLER_NOTE)

        def dtype_fn(m: PtocModel, dt: Any, _o: OpDef = o) -> bool:
            if isinstance(dt, Bits):  # TLOAD/TSTORE/TPREFETCH take the raw 5-bit code
                try:
                    d = DataType(dt.value)
                except ValueError:
                    return False
                return d in _o.dtypes
            return data_type(dt) in _o.dtypes

        if o.family is Family.CUBE:

            def function_fn(m: PtocModel, _o: OpDef = o) -> int:
                return _o.function

            def shared_fn(m: PtocModel, _o: OpDef = o) -> bool:
                return _o.ios_legal

            BINDINGS[f"InstructionContractCubeFunction_{name}"] = function_fn
            BINDINGS[f"InstructionContractSharedOperandsAllowed_{name}"] = shared_fn
        BINDINGS[f"InstructionContractOperation_{name}"] = operation_fn
        BINDINGS[f"InstructionContractTileOperation_{name}"] = operation_fn
        BINDINGS[f"InstructionContractHandler_{name}"] = handler_fn
        BINDINGS[f"InstructionContractDataTypeLegal_{name}"] = dtype_fn


_register_per_op()


def _role_set(mnemonic: str, role: str) -> frozenset[DataType]:
    rules = op(mnemonic).type_rules
    if role not in rules:
        raise Untranslated(f"{mnemonic} {role} type set", "ptoc's catalog has no such rule")
    return rules[role]


@binding("InstructionContractIndexDataTypeLegal_TGATHER")
def tgather_index_type(m: PtocModel, dt: Enum) -> bool:
    return data_type(dt) in _role_set("TGATHER", "index")


@binding("InstructionContractValueDataTypeLegal_TGATHER")
def tgather_value_type(m: PtocModel, dt: Enum) -> bool:
    return data_type(dt) in op("TGATHER").dtypes


@binding("InstructionContractTypePairLegal_TSCATTER")
def tscatter_pair(m: PtocModel, value: Enum, index: Enum) -> bool:
    return (data_type(value), data_type(index)) in op("TSCATTER").type_pairs


@binding("InstructionContractSourceDataTypeLegal_THISTOGRAM")
def thistogram_source_type(m: PtocModel, dt: Enum) -> bool:
    return data_type(dt) in op("THISTOGRAM").dtypes


def _pair_rule(mnemonic: str, src: DataType, dst: DataType) -> bool:
    o = op(mnemonic)
    if o.type_pairs:
        return (src, dst) in o.type_pairs
    return src in o.dtypes and dst in _role_set(mnemonic, "dst")


@binding("InstructionContractDataTypesLegal_TQUANT")
def tquant_types(m: PtocModel, src: Enum, dst: Enum) -> bool:
    return _pair_rule("TQUANT", data_type(src), data_type(dst))


@binding("InstructionContractDataTypesLegal_TDEQUANT")
def tdequant_types(m: PtocModel, src: Enum, dst: Enum) -> bool:
    return _pair_rule("TDEQUANT", data_type(src), data_type(dst))
