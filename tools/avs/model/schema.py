"""Bindings of the ASL's bundle-schema predicates to ptoc's bundle acceptance.

``SelectedBundleClosed<Family>SchemaLegal(op)``, ``BundleOperationBindingsComplete(op)``
and their kin ask whether the open bundle -- its header (binding stream, B.IOR, B.DATR,
dimensions) and the descriptors of the tiles it binds -- is acceptable to the selected
operation. ptoc answers that question only as a whole, by executing the bundle: a
predicate is true exactly when a dry run of the open bundle on ptoc raises no fault
(nothing is published). A fault the ASL would attribute to another predicate (a type
ptoc rejects, say) therefore makes these predicates false too; the failure report names
ptoc's rule.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ptoc.backend.isa import TABLE, DataType, form
from ptoc.backend.isa.fields import LAYOUT_BY_NAME
from ptoc.backend.program import Datr, TileStart
from ptoc.runtime import Machine, MachineConfig, MachineFault
from ptoc.runtime.bundle import build_plan
from ptoc.runtime.engine import resolve_dims
from ptoc.runtime.ops import PREPARERS
from ptoc.runtime.spec import Spec
from ptoc.runtime.tiles import LAYOUT_TRANSFORMS

from ..outcome import Untranslated
from ..values import AslRuntimeError, Bits, Enum
from .bundle import current_start, headers
from .catalog import operation
from .core import PtocModel, RunResult, binding, model_variable
from .tiles import LAYOUT_NAMES, data_type, element_bits

_SCHEMA_PREDICATES = (
    "BundleOperationBindingsComplete",
    "SelectedBundleTileDataAttributesLegal",
    "SelectedBundleClosedBinarySchemaLegal",
    "SelectedBundleClosedUnarySchemaLegal",
    "SelectedBundleClosedTFMASchemaLegal",
    "SelectedBundleClosedQuantizationSchemaLegal",
    "SelectedBundleClosedGenerationSchemaLegal",
    "SelectedBundleClosedHistogramSchemaLegal",
    "SelectedBundleClosedReductionSchemaLegal",
    "SelectedBundleClosedSortingSchemaLegal",
    "SelectedBundleClosedPartialSchemaLegal",
    "SelectedBundleClosedExpansionSchemaLegal",
    "SelectedBundleClosedTCVTSchemaLegal",
    "SelectedBundleClosedTCMPSchemaLegal",
    "SelectedBundleClosedTSELSchemaLegal",
    "SelectedBundleClosedTileScalarBinarySchemaLegal",
    "SelectedBundleClosedTCMPSSchemaLegal",
    "SelectedBundleClosedTSELSSchemaLegal",
    "SelectedBundleClosedTEXPANDSSchemaLegal",
    "SelectedBundleComparisonDimensionsLegal",
    "BundleOperationGPRBindingValuesLegal",
)


def dry_run(m: PtocModel, start: TileStart | None = None) -> RunResult:
    """Run the open bundle (or its header under ``start``) on ptoc, publishing nothing."""
    start = start or current_start(m)
    if start is None or start.op is None:
        raise AslRuntimeError("no tile operation is selected")
    memory, shared = m.memory.copy(), dict(m.shared_tiles)
    result = m.run_bundle(start, headers(m))
    m.memory[:] = memory
    m.shared_tiles = shared
    return result


def static_preflight(m: PtocModel, start: TileStart) -> MachineFault | None:
    """The fault ptoc's header processing and the operation's static preparation (run
    before any source is read: bindings, B.IOR, B.DATR, DataType, dimensions) raise."""
    assert start.op is not None
    name = start.op.mnemonic
    plan = build_plan(start, tuple(headers(m)))
    machine = Machine(MachineConfig(gm_size=4096))
    for reg in range(1, 24):
        machine.state.gpr[:, reg] = np.uint64(m.gprs.items[m.agent].items[reg].value)
    try:
        plan.raise_fault()
        if plan.noop:
            return None
        executor = TABLE[name].executor
        if executor is None:
            raise Untranslated(f"ptoc executor: {name}", group="indexed GM transfers")
        PREPARERS[executor](Spec(plan, resolve_dims(machine.state, plan, name)))
    except MachineFault as f:
        return f
    return None


def _schema(m: PtocModel, index: Any = None) -> bool:
    """The predicate of operation ``index``: the open bundle under that operation's
    BSTART (the bundle's own DataType) is accepted by ptoc. The ASL's schema predicates
    check the descriptors of the tiles the bindings name only where those are allocated;
    when a named tile is not, ptoc is asked only for its static preflight."""
    start = current_start(m)
    if index is not None:
        o = operation(index)
        dtype = start.dtype if start is not None else 31
        start = TileStart(o.family, o.selector, dtype)
    if start is None or start.op is None:
        raise AslRuntimeError("no tile operation is selected")
    named = [
        b.fields[k]
        for b in m.bindings.items
        if b.fields["valid"]
        for k, v in (("source0", "source0_valid"), ("source1", "source1_valid"))
        if b.fields[v]
    ]
    partial = any(not m.tile(s).allocated for s in named)

    def fault() -> MachineFault | None:
        return static_preflight(m, start) if partial else dry_run(m, start).fault

    f = fault()
    m.last_rejection = "" if f is None else f"{type(f).fault.value}: {f.rule}"
    masked = f is not None and "does not support DataType" in f.rule
    if masked and m.accepted_with_any_type(lambda: fault() is None):
        assert f is not None
        m.type_masked.append((m.line, start.op.mnemonic, f.rule))
    return f is None


for _name in _SCHEMA_PREDICATES:
    binding(_name)(_schema)


@binding("SelectedBundleTileMasksLegal")
def masks_legal(m: PtocModel) -> bool:
    f = dry_run(m).fault
    return f is None or "differs from the bundle's mask" not in f.rule


@binding("CurrentBundleTileOperationDataTypeCode")
def current_dtype_code(m: PtocModel) -> Bits:
    start = current_start(m)
    if start is None:
        raise AslRuntimeError("no bundle is open")
    return Bits(5, start.dtype)


@binding("CurrentBundleDataTypeCode", harness=True)
def current_datr_dtype_code(m: PtocModel) -> Bits:
    """The B.DATR DataType field the bundle holds."""
    v = m.data_attributes.fields["data_type"]
    return v if isinstance(v, Bits) else Bits(5, int(v))


@binding("CurrentBundlePadValue", harness=True)
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
        raise Untranslated(f"layout {e.member}", group="CUBE engine")
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


@binding("TileDataTypeFromEncoding", "BundleTileDataType")
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
    """``_SystemRegisters``: ``core_state[36:32]`` is the sticky numeric status,
    ``tile_capacity`` the machine's per-PE Local capacity, and ``thread_id`` the reset
    value 0 of ptoc's one hardware thread."""

    def __init__(self, m: PtocModel) -> None:
        self.m = m

    def asl_get(self, name: str) -> Any:
        if name == "core_state":
            return CoreState(self.m)
        if name == "tile_capacity":
            return Bits(64, self.m.tile_capacity)
        if name == "thread_id":
            return Bits(64, 0)
        raise Untranslated(f"_SystemRegisters.{name}", "no ptoc counterpart is bound")

    def asl_set(self, name: str, value: Any) -> None:
        if name == "core_state":
            self.m.status = (value.value >> 32) & 0x1F
        elif name == "tile_capacity":
            self.m.tile_capacity = value.value
        elif name == "thread_id" and value.value == 0:
            pass  # ptoc runs one hardware thread: THREAD_ID keeps its reset value 0
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


@binding("SelectedBundleExpansionExponentialDifferenceTypes")
def expdif_types(m: PtocModel) -> tuple:
    """(legal, source type, destination type) of the open EXPDIF bundle, by ptoc's rules
    (BSTART DataType; B.DATR.DataType or the source type; ``expdif_types_legal``)."""
    from ptoc.backend.isa.semantics.expand import expdif_types_legal

    start = current_start(m)
    if start is None:
        raise AslRuntimeError("no bundle is open")
    spec = Spec(build_plan(start, tuple(headers(m))), (1, None, None))
    try:
        src = DataType(start.dtype)
        dst = spec.datr_dtype(src)
    except ValueError:
        return (False, Enum("TileDataType_FP64"), Enum("TileDataType_FP64"))
    ok = expdif_types_legal(src, dst) is None
    return (ok, Enum(f"TileDataType_{src.name}"), Enum(f"TileDataType_{dst.name}"))


@binding("BundleTileInstructionOperands")
def bundle_operands(m: PtocModel, index: Any) -> Any:
    """The operands the open bundle gives operation ``index``: its tile bindings and, for
    every B.IOR slot of ptoc's catalog, the GPR the slot reads or, with B.IOR omitted,
    the catalog's omission default."""
    from .direct import default_operands

    o = operation(index)
    rec = default_operands(m)
    f = rec.fields
    bindings = [b.fields for b in m.bindings.items if b.fields["valid"]]
    srcs = [
        b[k]
        for b in bindings
        for k, v in (("source0", "source0_valid"), ("source1", "source1_valid"))
        if b[v]
    ]
    dsts = [b["destination"] for b in bindings if b["destination_valid"]]
    names = [n for n, _ in o.operands]
    for i, s in enumerate(x for x in names if x.startswith("source")):
        if i < len(srcs):
            f[s] = srcs[i]
    for i, d in enumerate(x for x in names if x.startswith("destination")):
        if i < len(dsts):
            f[d] = dsts[i]
    ior = m.scalar_bindings.items[0].fields
    regs = [_int(ior["source0"]), _int(ior["source1"]), _int(ior["source2"])]
    for k, slot in enumerate(o.ior):
        field = slot.meaning.split(":", 1)[0].strip()
        if ior["valid"]:
            value = m.gprs.items[m.agent].items[regs[k]].value if regs[k] else 0
        else:
            value = slot.default if slot.default is not None else 0
        if field in ("flag0",):
            f[field] = bool(value)
        elif field in ("natural0", "natural1", "diagonal"):
            f[field] = value
        elif field in f:
            f[field] = Bits(64, value)
    return rec


def _int(v: Any) -> int:
    return v.value if isinstance(v, Bits) else int(v)
