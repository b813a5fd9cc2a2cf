"""Bindings of the ASL's bundle state machine to ptoc's bundle processing.

A test builds a bundle either from raw command words (``ExecuteCommandInstruction``,
decoded by ptoc's decoder) or through the ASL's header setters (``AddBundleTileBinding``,
``SetBundleDimension``, ``SetBundleDataAttributeState``, ...). Every header command is
kept as the ptoc command it stands for; after each one ptoc's own header processing
(``ptoc.runtime.bundle.build_plan``) decides whether that command is rejected, and with
which fault class (the ASL rejects a header command when it is issued; ptoc raises the
same rule at commit, so the adapter asks ptoc at issue time). The ASL-visible records
(``_BundleTileBindings``, ``_BundleDimensions``, ...) are kept in step for the tests that
read them. ``ExecuteBundleTileOperation`` (and a BSTOP word) commits the bundle on ptoc
through :meth:`~tools.avs.model.core.PtocModel.run_bundle`.
"""

from __future__ import annotations

from typing import Any

from ptoc.backend.encoding import decode_command
from ptoc.backend.isa import DataType, Family, catalog, info
from ptoc.backend.isa.fields import MASK_TO_PEMODE, Hand
from ptoc.backend.program import (
    Command,
    Datr,
    Dim,
    Generic,
    Ior,
    Ios,
    Iot,
    ScalarStart,
    Stop,
    TileRef,
    TileStart,
)
from ptoc.runtime.bundle import build_plan, encoding_rule

from ..outcome import NotApplicable, Untranslated
from ..values import AslRuntimeError, Bits, Enum, Record
from .core import FAULT_NAMES, PtocModel, binding, binding_record, model_variable

EXECUTED = Enum("CommandExecution_Executed")
REJECTED = Enum("CommandExecution_Rejected")
CLASSES = {
    Family.TEPL: "BundleOperation_TileElement",
    Family.TLSU: "BundleOperation_TileMemory",
    Family.CUBE: "BundleOperation_TileMatrix",
}


def _int(v: Any) -> int:
    return v.value if isinstance(v, Bits) else int(v)


def not_modelled(forms: tuple[tuple[str, int, int, int], ...], value: int, bits: int) -> str:
    """The mnemonic of the catalog form ptoc does not list that the word is, or ""."""
    for mnemonic, length, mask, match in forms:
        if length == bits and value & mask == match:
            return mnemonic
    return ""


def headers(m: PtocModel) -> list[Command]:
    """The bundle's header commands as ptoc will see them, generated from the ASL-visible
    records (which a test may also write directly): B.DATR, B.DIM, B.IOR, B.IOT, then the
    other header commands (B.IOS, B.CATR, B.HINT) in issue order."""
    out: list[Command] = []
    if m.data_attributes_present:
        out.append(datr_command(m))
    for lb in range(3):
        if m.dimension_present.items[lb]:
            out.append(Dim(lb=lb, reg=0, imm=_int(m.dimensions.items[lb]) & 0xFFFF))
    rec = m.scalar_bindings.items[0].fields
    if rec["valid"]:
        out.append(
            Ior(
                _int(rec["source0"]),
                _int(rec["source1"]),
                _int(rec["source2"]),
                _int(rec["destination"]),
            )
        )
    for b in m.bindings.items:
        if b.fields["valid"]:
            out.append(iot_of(b))
    if m.zero_seen and not any(isinstance(c, Iot) for c in out):
        out.append(Iot((), 0, False, Hand.T, 1))
    out.extend(m.pending)
    return out


def iot_of(rec: Record) -> Iot:
    """The B.IOT a ``BundleTileBinding`` record stands for (sources name ASL slots)."""
    f = rec.fields
    srcs = []
    if f["source0_valid"]:
        srcs.append(TileRef.from_code(_int(f["source0"])))
    if f["source1_valid"]:
        if not f["source0_valid"]:
            raise NotApplicable(
                "asl-internal", "a binding of source1 without source0 has no B.IOT encoding"
            )
        srcs.append(TileRef.from_code(_int(f["source1"])))
    mask = _int(f["pe_mask"])
    if f["destination_valid"]:
        return Iot(
            tuple(srcs),
            mask,
            bool(f["last"]),
            Hand(_int(f["destination_hand"])),
            _int(f["destination_size"]),
        )
    if mask == 0 and not srcs:
        # PEMode 000 skips the binding before its operands are read; the encodable form
        # of the ASL's operand-less record carries a destination field
        return Iot((), 0, bool(f["last"]), Hand.T, 1)
    return Iot(tuple(srcs), mask, bool(f["last"]))


def datr_command(m: PtocModel) -> Datr:
    f = m.data_attributes.fields
    return Datr(
        layout=_int(f["data_layout"]),
        dtype=_int(f["data_type"]),
        pad=_int(f["pad_value"]),
        cmode=_int(f["comparison_mode"]),
        rmode=_int(f["rounding_mode"]),
        sat=int(bool(f["saturating"])),
        canonicalize=int(bool(f["canonicalize"])),
    )


def header_fault(m: PtocModel, commands: list[Command]) -> str | None:
    """The ASL fault name ptoc's header processing raises at the last of ``commands``."""
    start = current_start(m)
    if start is None:
        return None
    plan = build_plan(start, tuple(commands))
    if plan.fault is not None and plan.fault_at == len(commands) - 1:
        return FAULT_NAMES.get(plan.fault[0].fault.value, plan.fault[0].fault.value)
    return None


def issue(m: PtocModel, c: Command, command: bool = False) -> bool:
    """Check one header command with ptoc's header processing before the test's records
    take it; on rejection record the fault ptoc raises at that command. A command word
    (``command``) outside an open bundle is a BundleControl fault; the ASL's record
    setters themselves do not look at the bundle state."""
    if command and not m.bundle_active:
        m.set_fault("Fault_BundleControl")
        return False
    fault = header_fault(m, [*headers(m), c])
    if fault is not None:
        m.set_fault(fault)
        return False
    return True


def current_start(m: PtocModel) -> TileStart | None:
    """The BSTART the ``_BundleOperation`` record describes (None: nothing selected)."""
    f = m.operation.fields
    if not f["valid"]:
        return m.start
    family = {v: k for k, v in CLASSES.items()}.get(f["operation_class"].name)
    if family is None:
        return None
    if f["mode_valid"]:
        selector = (_int(f["mode"]) << 5) | (_int(f["selector"]) & 0x1F)
    else:
        selector = _int(f["selector"])
    dtype = _int(f["data_type"]) if f["data_type_valid"] else 31
    return TileStart(family, selector, dtype)


def open_bundle(m: PtocModel, start: TileStart) -> None:
    """BSTART: close any open bundle, then start a new one selecting ``start``."""
    if m.bundle_active and m.start is not None:
        commit(m)
    m.reset_bundle()
    m.bundle_active = True
    m.start = start
    rec = m.operation.fields
    rec["valid"] = True
    rec["operation_class"] = Enum(CLASSES[start.family])
    rec["selector_valid"] = True
    rec["data_type_valid"] = True
    rec["data_type"] = Bits(5, start.dtype)
    if start.family is Family.TEPL:
        rec["mode_valid"] = True
        rec["mode"] = Bits(2, start.selector >> 5)
        rec["selector"] = Bits(10, start.selector & 0x1F)
    else:
        rec["mode_valid"] = False
        rec["selector"] = Bits(10, start.selector)


@binding("ExecuteCommandInstruction")
def execute_command_instruction(m: PtocModel, instruction: Bits, length: int) -> Enum:
    value = instruction.value & ((1 << length) - 1)
    c = decode_command(value, length)
    if c is None:
        unlisted = not_modelled(catalog.COMMAND_FORMS_NOT_MODELLED, value, length)
        if unlisted:
            raise Untranslated(
                "ExecuteCommandInstruction", f"{unlisted}: a command form ptoc does not list"
            )
        m.set_fault("Fault_IllegalInstruction")
        return REJECTED
    if isinstance(c, TileStart):
        if encoding_rule(c) is not None:
            m.set_fault("Fault_IllegalInstruction")
            return REJECTED
        open_bundle(m, c)
        return EXECUTED
    if isinstance(c, ScalarStart):
        raise Untranslated("scalar block", "ptoc runs BSTART.STD blocks only inside programs")
    if isinstance(c, Stop):
        if not m.bundle_active:  # a BSTOP outside any block (CompleteBundleAt)
            m.set_fault("Fault_BundleControl")
            return REJECTED
        ok = commit(m)
        m.reset_bundle()
        return EXECUTED if ok else REJECTED
    if isinstance(c, Datr):
        if not issue(m, c, command=True):
            return REJECTED
        set_attributes(
            m,
            Bits(5, c.dtype),
            Bits(5, c.layout),
            Bits(2, c.pad),
            Bits(3, c.cmode),
            Bits(3, c.rmode),
            bool(c.sat),
            bool(c.canonicalize),
        )
        m.data_attributes_present = True
        return EXECUTED
    if isinstance(c, Iot) and c.mask == 0:
        m.zero_seen = True
        return EXECUTED
    if isinstance(c, Ios) and c.mask == 0:
        # a strict no-op, inside a bundle header or not; it binds nothing
        if m.bundle_active:
            m.zero_seen = True
        return EXECUTED
    if not issue(m, c, command=True):
        return REJECTED
    mirror(m, c)
    return EXECUTED


def mirror(m: PtocModel, c: Command) -> None:
    """Keep the ASL-visible records in step with an accepted header command."""
    if isinstance(c, Dim):
        m.dimension_present.items[c.lb] = True
        m.dimensions.items[c.lb] = Bits(64, c.imm & 0xFFFF)
    elif isinstance(c, Ior):
        rec = m.scalar_bindings.items[0].fields
        rec.update(
            valid=True,
            destination=Bits(5, c.dst),
            source0=Bits(5, c.src0),
            source1=Bits(5, c.src1),
            source2=Bits(5, c.src2),
            source_count=3,
        )
    elif isinstance(c, Iot):
        add_binding_record(m, c)
    elif isinstance(c, (Ios, Generic)):
        m.pending.append(c)


def add_binding_record(m: PtocModel, c: Iot) -> None:
    for rec in m.bindings.items:
        if not rec.fields["valid"]:
            s = [r.code for r in c.srcs]
            rec.fields.update(
                valid=True,
                destination_valid=c.dst is not None,
                destination=0 if c.dst is None else int(c.dst),
                destination_hand=Bits(2, 0 if c.dst is None else int(c.dst)),
                destination_allocated_by_bundle=False,
                destination_size=c.size,
                pe_mask=Bits(4, c.mask),
                source0_valid=len(s) > 0,
                source1_valid=len(s) > 1,
                source0=s[0] if s else 0,
                source1=s[1] if len(s) > 1 else 0,
                last=c.last,
            )
            return


@binding("AddBundleTileBinding")
def add_bundle_tile_binding(
    m: PtocModel,
    dst_valid: bool,
    dst: int,
    size: int,
    mask: Bits,
    s0_valid: bool,
    s1_valid: bool,
    s0: int,
    s1: int,
    last: bool,
) -> None:
    if dst_valid and not 0 <= dst <= 3:
        raise NotApplicable("asl-internal", "a binding to destination hand > 3 has no encoding")
    if s1_valid and not s0_valid:
        raise NotApplicable(
            "asl-internal", "a binding of source1 without source0 has no B.IOT encoding"
        )
    if _int(mask) not in MASK_TO_PEMODE:
        raise NotApplicable(
            "asl-internal",
            f"a binding with PE mask {_int(mask):04b} has no B.IOT PEMode encoding "
            "(PTOv0PEMaskOfPEMode)",
        )
    rec = binding_record()
    rec.fields.update(
        valid=True,
        destination_valid=bool(dst_valid),
        destination=dst if dst_valid else 0,
        destination_hand=Bits(2, dst if dst_valid else 0),
        destination_size=size,
        pe_mask=Bits(4, _int(mask)),
        source0_valid=bool(s0_valid),
        source1_valid=bool(s1_valid),
        source0=_int(s0),
        source1=_int(s1),
        last=bool(last),
    )
    c = iot_of(rec)
    if c.mask == 0 or issue(m, c):
        slot = next((r for r in m.bindings.items if not r.fields["valid"]), None)
        if slot is None:
            m.set_fault("Fault_TileLegality")
            return
        slot.fields.update(rec.fields)


@binding("SetBundleDimension")
def set_bundle_dimension(m: PtocModel, index: int, value: Bits) -> None:
    c = Dim(lb=index, reg=0, imm=value.value & 0xFFFF)
    if issue(m, c):
        mirror(m, c)


@binding("SetBundleScalarBinding")
def set_bundle_scalar_binding(
    m: PtocModel, index: int, dst: Bits, s0: Bits, s1: Bits, s2: Bits, count: int
) -> None:
    if index != 0:
        raise NotApplicable("asl-internal", "B.IOR has one scalar binding record")
    c = Ior(_int(s0), _int(s1), _int(s2), _int(dst))
    if issue(m, c):
        mirror(m, c)


@binding("SetBundleDataAttributeState")
def set_attributes(
    m: PtocModel,
    dtype: Bits,
    layout: Bits,
    pad: Bits,
    cmode: Bits,
    rmode: Bits,
    sat: bool,
    canon: bool,
) -> None:
    m.data_attributes.fields.update(
        data_type_present=True,
        data_type=dtype,
        data_layout=layout,
        pad_value=pad,
        comparison_mode=cmode,
        rounding_mode=rmode,
        saturating=bool(sat),
        canonicalize=bool(canon),
    )


def _set_attributes_present(m: PtocModel, value: Any) -> None:
    m.data_attributes_present = bool(value)


model_variable(
    "_BundleDataAttributesPresent", lambda m: m.data_attributes_present, _set_attributes_present
)
model_variable("_BundleActive", lambda m: m.bundle_active)


@binding("InstallBundleOperationDescriptor")
def install_descriptor(m: PtocModel, desc: Record) -> None:
    f = desc.fields
    cls = f["operation_class"].name
    family = {v: k for k, v in CLASSES.items()}.get(cls)
    if family is None:
        raise AslRuntimeError(f"operation class {cls} selects no tile operation")
    if f["mode_valid"]:
        selector = (_int(f["mode"]) << 5) | (_int(f["selector"]) & 0x1F)
    else:
        selector = _int(f["selector"])
    start = TileStart(family, selector, _int(f["data_type"]))
    m.reset_bundle()
    m.bundle_active = True
    m.start = start
    m.operation = desc.asl_copy()


@binding("ResetBundleControlState", harness=True)
def reset_bundle_control_state(m: PtocModel) -> None:
    """No bundle open and no header state (the Shared register file, the tiles and the
    fault stay as they are)."""
    m.reset_bundle()


@binding("ExecuteBundleTileOperation")
def execute_bundle_tile_operation(m: PtocModel) -> bool:
    return commit(m)


def note_floating_matrix(m: PtocModel, start: TileStart) -> None:
    """Remember a committed CUBE bundle with a floating AType or BType (see the runner)."""
    if start.family is not Family.CUBE:
        return
    b_code = m.data_attributes.fields["data_type"] if m.data_attributes_present else None
    try:
        a_t = DataType(start.dtype)
        b_t = a_t if b_code is None else DataType(_int(b_code))
    except ValueError:
        return
    if info(a_t).is_float or info(b_t).is_float:
        m.floating_matrix = (a_t.name, b_t.name)


def commit(m: PtocModel) -> bool:
    """Run the open bundle on ptoc and publish its destinations into ASL slots."""
    effective = any(isinstance(c, Ios) and c.mask for c in m.pending) or any(
        r.fields["valid"] for r in m.bindings.items
    )
    if m.zero_seen and not effective:
        return True  # PE_MASK 0000 only: a strict no-op before anything else
    start = current_start(m)
    if start is None:
        m.set_fault("Fault_BundleControl")
        return False
    if start.op is None:
        m.set_fault("Fault_IllegalInstruction")
        return False
    result = m.run_bundle(start, headers(m))
    if result.fault is not None:
        m.set_fault(result.fault_name)
        if "does not support DataType" in result.fault.rule:
            note_type_masking(m, start, result.fault.rule)
        return False
    note_floating_matrix(m, start)
    # a bundle whose every mask is zero is a no-op: its B.IOS sources stay unconsumed
    m.shared_consumed = any(isinstance(c, (Ios, Iot)) and c.mask for c in headers(m))
    records = [
        r
        for r in m.bindings.items
        if r.fields["valid"] and r.fields["destination_valid"] and _int(r.fields["pe_mask"])
    ]
    reserved: set[int] = set()
    for rec, tile in zip(records, result.destinations):
        hand = _int(rec.fields["destination_hand"])
        slot = next(
            (
                s
                for s in range(hand * 16, hand * 16 + 16)
                if not m.tiles[s].allocated and s not in reserved
            ),
            None,
        )
        if slot is None:
            raise NotApplicable(
                "D1 relative queues",
                f"the 16 ASL slots of hand {Hand(hand).name} are full; ptoc's queue "
                "evicts its oldest entry instead of faulting",
            )
        reserved.add(slot)
        mask = _int(rec.fields["pe_mask"])
        m.tiles[slot] = m.read_back(tile, mask, m.tiles[slot])
        m.alloc_masks[slot] = Bits(4, mask)
        rec.fields["destination"] = slot
        rec.fields["destination_allocated_by_bundle"] = True
    m.status |= result.status
    return True


def note_type_masking(m: PtocModel, start: TileStart, rule: str) -> None:
    """Record a rejection that only ptoc's DataType set causes (a dry run with the type
    check lifted is accepted), so a reviewer sees which expected faults the type set
    alone produced."""
    if m.accepted_with_any_type(lambda: m.run_bundle(start, headers(m)).fault is None):
        assert start.op is not None
        m.type_masked.append((m.line, start.op.mnemonic, rule))


@binding("BundleTileBindingCount")
def binding_count(m: PtocModel) -> int:
    return sum(1 for r in m.bindings.items if r.fields["valid"])


@binding("SelectedBundleTileMaskIsZero")
def mask_is_zero(m: PtocModel) -> bool:
    valid = [r for r in m.bindings.items if r.fields["valid"]]
    if valid:
        return all(_int(r.fields["pe_mask"]) == 0 for r in valid)
    return m.zero_seen


__all__ = ["commit", "current_start", "headers", "issue"]
