"""Bindings of the ASL's bundle-schema predicates to ptoc's static bundle preflight.

``SelectedBundleClosed<Family>SchemaLegal(op)``, ``BundleOperationBindingsComplete(op)``
and their kin ask whether the open bundle's header (binding stream, B.IOR, B.DATR,
dimensions) is acceptable to the selected operation. ptoc answers the same question in
one place: its header processing (``runtime.bundle.build_plan``) followed by the
operation handler's static preparation (``runtime.engine.HANDLERS[op](Spec)``), which runs
before any source is read. A predicate is true exactly when ptoc's static preflight of
the open bundle raises no fault. (ptoc's preflight also checks the BSTART DataType, so a
type ptoc rejects makes every schema predicate false.)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ptoc.backend.isa import DataType, form
from ptoc.backend.isa.fields import LAYOUT_BY_NAME
from ptoc.backend.program import Datr
from ptoc.runtime import Machine, MachineConfig, MachineFault
from ptoc.runtime.bundle import build_plan
from ptoc.runtime.engine import HANDLERS, resolve_dims
from ptoc.runtime.spec import Spec
from ptoc.runtime.tiles import LAYOUT_TRANSFORMS

from ..outcome import Untranslated
from ..values import AslRuntimeError, Bits, Enum
from .bundle import headers
from .catalog import operation
from .core import PtocModel, binding, model_variable
from .tiles import LAYOUT_NAMES, data_type, element_bits


def static_preflight(m: PtocModel) -> MachineFault | None:
    """The fault ptoc's static preflight raises for the open bundle, or None."""
    if m.start is None or m.start.op is None:
        raise AslRuntimeError("no tile operation is selected")
    name = m.start.op.mnemonic
    plan = build_plan(m.start, tuple(headers(m)))
    machine = Machine(MachineConfig(gm_size=4096))
    for reg in range(1, 24):
        machine.state.gpr[:, reg] = np.uint64(m.gprs.items[m.agent].items[reg].value)
    try:
        plan.raise_fault()
        if plan.noop:
            return None
        handler = HANDLERS.get(name)
        if handler is None:
            raise Untranslated(f"ptoc executor: {name}", "ptoc does not execute this operation")
        handler(Spec(plan, resolve_dims(machine.state, plan, name)))
    except MachineFault as f:
        return f
    return None


_SCHEMA_PREDICATES = (
    "BundleOperationBindingsComplete", "SelectedBundleTileDataAttributesLegal",
    "SelectedBundleClosedBinarySchemaLegal", "SelectedBundleClosedUnarySchemaLegal",
    "SelectedBundleClosedTFMASchemaLegal", "SelectedBundleClosedQuantizationSchemaLegal",
    "SelectedBundleClosedGenerationSchemaLegal", "SelectedBundleClosedHistogramSchemaLegal",
    "SelectedBundleClosedReductionSchemaLegal", "SelectedBundleClosedSortingSchemaLegal",
    "SelectedBundleClosedPartialSchemaLegal", "SelectedBundleClosedExpansionSchemaLegal",
    "SelectedBundleClosedTCVTSchemaLegal", "SelectedBundleClosedTCMPSchemaLegal",
    "SelectedBundleClosedTSELSchemaLegal", "SelectedBundleClosedTileScalarBinarySchemaLegal",
    "SelectedBundleClosedTCMPSSchemaLegal", "SelectedBundleClosedTSELSSchemaLegal",
    "SelectedBundleClosedTEXPANDSSchemaLegal", "SelectedBundleComparisonDimensionsLegal",
    "BundleOperationGPRBindingValuesLegal",
)  # fmt: skip


def _schema(m: PtocModel, index: Any = None) -> bool:
    if index is not None:
        o = operation(index)
        if m.start is None or m.start.op is None or m.start.op.mnemonic != o.mnemonic:
            raise AslRuntimeError(f"the open bundle does not select {o.mnemonic}")
    return static_preflight(m) is None


for _name in _SCHEMA_PREDICATES:
    binding(_name)(_schema)


@binding("SelectedBundleTileMasksLegal")
def masks_legal(m: PtocModel) -> bool:
    f = static_preflight(m)
    return f is None or "differs from the bundle's mask" not in f.rule


@binding("CurrentBundleTileOperationDataTypeCode", "CurrentBundleDataTypeCode")
def current_dtype_code(m: PtocModel) -> Bits:
    if m.start is None:
        raise AslRuntimeError("no bundle is open")
    return Bits(5, m.start.dtype)


@binding("CurrentBundlePadValue")
def current_pad_value(m: PtocModel) -> Enum:
    if not m.data_attributes_present:
        return Enum("TilePad_Null")
    code = m.data_attributes.fields["pad_value"].value
    return Enum(("TilePad_Zero", "TilePad_Max", "TilePad_Min", "TilePad_Null")[code])


# ----------------------------------------------------------------------------- catalog facts


@binding("InstructionContractComparisonCodeLegal_TCMP", "TileComparisonCodeLegal")
def comparison_code_legal(m: PtocModel, code: Bits) -> bool:
    return form("B.DATR").field("CMode").legal(code.value)


def _layout(e: Enum, side: int) -> Enum:
    code = LAYOUT_BY_NAME.get(e.member)
    if code is None:
        raise AslRuntimeError(f"{e} is not a TileDataLayout")
    pair = LAYOUT_TRANSFORMS.get(code)
    if pair is None:
        raise Untranslated(f"layout {e.member}", "ptoc models no CUBE cell layouts")
    return Enum(f"TileLayout_{LAYOUT_NAMES[pair[side]]}")


@binding("TileDataLayoutSourceLayout")
def layout_source(m: PtocModel, e: Enum) -> Enum:
    return _layout(e, 0)


@binding("TileDataLayoutDestinationLayout")
def layout_destination(m: PtocModel, e: Enum) -> Enum:
    return _layout(e, 1)


@binding("TileFractalInnerElements")
def fractal_inner_elements(m: PtocModel, dt: Enum) -> int:
    from ptoc.runtime.tiles import fractal_inner

    return fractal_inner(element_bits(data_type(dt)))


@binding("TileStorageBytes")
def storage_bytes(m: PtocModel, rows: int, cols: int, dt: Enum) -> int:
    from ptoc.backend.isa import info

    return info(data_type(dt)).storage_bytes(rows * cols)


@binding("TileElementBits")
def tile_element_bits(m: PtocModel, dt: Enum) -> int:
    return element_bits(data_type(dt))


@binding("TileElementBytes")
def tile_element_bytes(m: PtocModel, dt: Enum) -> int:
    return max(1, element_bits(data_type(dt)) // 8)


@binding("TilePadValueForDataType")
def pad_value_for_type(m: PtocModel, pad: Enum, dt: Enum) -> Bits:
    from .harness import pad_word

    return Bits(64, pad_word(pad.name, data_type(dt)))


@binding("TileDataTypeToEncoding")
def dtype_to_encoding(m: PtocModel, dt: Enum) -> Bits:
    return Bits(5, int(data_type(dt)))


@binding("TileDataTypeFromEncoding")
def dtype_from_encoding(m: PtocModel, code: Bits) -> Enum:
    try:
        return Enum(f"TileDataType_{DataType(code.value).name}")
    except ValueError:
        raise AslRuntimeError(f"DataType code {code.value} is reserved") from None


@binding("TileDataTypeEncodingValid")
def dtype_encoding_valid(m: PtocModel, code: Bits) -> bool:
    return code.value in {int(d) for d in DataType}


@binding("InstructionContractDestinationDataType_TCVT")
def tcvt_destination_type(m: PtocModel, src: Enum, present: bool, code: Bits) -> Enum:
    """ptoc's rule (``Spec.datr_dtype``): a present concrete B.DATR.DataType, else the
    source type."""
    from ptoc.backend.encoding import tile_start

    start = tile_start("TCVT", int(data_type(src)))
    cmds = (Datr(dtype=code.value),) if present else ()
    spec = Spec(build_plan(start, cmds), (1, None, None))
    try:
        return Enum(f"TileDataType_{spec.datr_dtype(data_type(src)).name}")
    except ValueError:
        raise AslRuntimeError(f"DataType code {code.value} is reserved") from None


# ----------------------------------------------------------------------------- registers


class SystemRegisters:
    """``_SystemRegisters``: ``core_state[36:32]`` is the sticky numeric status, and
    ``tile_capacity`` the machine's per-PE Local capacity."""

    def __init__(self, m: PtocModel) -> None:
        self.m = m

    def asl_get(self, name: str) -> Any:
        if name == "core_state":
            return CoreState(self.m)
        if name == "tile_capacity":
            return Bits(64, self.m.tile_capacity)
        raise Untranslated(f"_SystemRegisters.{name}", "no ptoc counterpart is bound")

    def asl_set(self, name: str, value: Any) -> None:
        if name == "core_state":
            self.m.status = (value.value >> 32) & 0x1F
        elif name == "tile_capacity":
            self.m.tile_capacity = value.value
        else:
            raise Untranslated(f"_SystemRegisters.{name}", "no ptoc counterpart is bound")


class CoreState:
    """``CORE_STATE`` with only the numeric status field [36:32] bound."""

    def __init__(self, m: PtocModel) -> None:
        self.m = m

    def asl_value(self) -> Bits:
        return Bits(64, self.m.status << 32)

    def asl_slice(self, hi: int, lo: int) -> Bits:
        return self.asl_value().slice(hi, lo)

    def asl_setslice(self, hi: int, lo: int, value: Any) -> None:
        word = self.asl_value().with_slice(hi, lo, value)
        if word.value & ~(0x1F << 32):
            raise Untranslated("CORE_STATE", "only the numeric status bits [36:32] are bound")
        self.m.status = (word.value >> 32) & 0x1F


model_variable("_SystemRegisters", lambda m: SystemRegisters(m))
