"""Bindings of the ASL's scalar instruction entry point to ptoc's scalar executor.

``ExecuteScalarInstruction(instruction, length)`` (``asl/scalar/model/dispatch/
top-level.asl``) decodes the word with ptoc's decoder and runs it with
:func:`ptoc.runtime.scalar.compile_scalar` on the current memory agent's GPR file and the
test's model memory (``_Memory``), at the address ``ReadTPC()`` names (which SETRET and
the PC-relative loads read). ptoc runs a scalar instruction inside a block and publishes
nothing when it faults, so the binding writes the GPRs and memory back only on success;
a fault becomes ``_LastFault`` and ``ScalarExecution_Rejected``, and a successful
instruction advances TPC by its length, as the ASL does.

The scalar temporary queues are the model's ``squeue`` arrays, in ptoc's layout. What
ptoc does not model stays untranslated: words of forms ptoc's catalog does not list (the
48-bit HL forms, atomics, floating point, SYS, jumps inside a block) and the condition
setters, which ptoc accepts only inside a ``BSTART.STD COND`` block of a program.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ptoc.backend.encoding import Undecodable, command_form_values, decode_word
from ptoc.backend.isa import catalog
from ptoc.backend.isa.schema import CommandForm
from ptoc.backend.program import Scalar
from ptoc.runtime import MachineFault, UnsupportedOperation
from ptoc.runtime.scalar import (
    ScalarContext,
    compile_scalar,
    is_condition_setter,
    run_scalar_block,
)

from ..outcome import Untranslated
from ..values import AslRuntimeError, Bits, Enum, Opaque
from .bundle import not_modelled
from .catalog import asl_name
from .core import BINDINGS, CONSTANTS, FAULT_NAMES, MEMORY_BYTES, PtocModel, binding

EXECUTED = Enum("ScalarExecution_Executed")
REJECTED = Enum("ScalarExecution_Rejected")


def _int(v: Any) -> int:
    return v.value if isinstance(v, Bits) else int(v)


def _tpc(m: PtocModel) -> int:
    return _int(m.globals.get("tpc", 0))


@binding("ReadTPC", harness=True)
def read_tpc(m: PtocModel) -> Bits:
    return Bits(64, _tpc(m))


@binding("WriteTPC", harness=True)
def write_tpc(m: PtocModel, value: Any) -> None:
    m.globals["tpc"] = _int(value) & ((1 << 64) - 1)


@binding("ExecuteScalarInstruction")
def execute_scalar_instruction(m: PtocModel, instruction: Bits, length: int) -> Enum:
    m.consulted = True
    bits = _int(length)
    value = _int(instruction) & ((1 << bits) - 1)
    try:
        c = decode_word(value, bits)
    except Undecodable:
        if not not_modelled(catalog.SCALAR_FORMS_NOT_MODELLED, value, bits):
            m.set_fault("Fault_IllegalInstruction")  # no form of the catalog decodes it
            return REJECTED
        raise Untranslated(
            "ExecuteScalarInstruction", group="scalar forms not modelled"
        ) from None
    if not isinstance(c, Scalar):
        raise Untranslated("ExecuteScalarInstruction", group="scalar forms not modelled")
    if is_condition_setter(c):
        raise Untranslated(
            "ExecuteScalarInstruction",
            "ptoc runs a condition setter only inside a BSTART.STD COND block of a program",
        )
    pc = _tpc(m)
    try:
        step = compile_scalar(c, pc)
    except UnsupportedOperation as e:
        raise Untranslated("ExecuteScalarInstruction", e.rule) from None
    pe = _int(m.agent)
    gpr = np.array([[_int(v) for v in m.gprs.items[pe].items]], np.uint64)
    ctx = ScalarContext(gpr, m.memory, MEMORY_BYTES, m.squeue.copy(), m.squeue_valid.copy())
    try:
        run_scalar_block(ctx, [step])
    except MachineFault as f:
        m.set_fault(FAULT_NAMES.get(f.fault.value, f.fault.value))
        return REJECTED
    for r in range(1, gpr.shape[1]):
        m.gprs.items[pe].items[r] = Bits(64, int(ctx.gpr[0, r]))
    assert ctx.squeue is not None and ctx.squeue_valid is not None
    m.squeue, m.squeue_valid = ctx.squeue, ctx.squeue_valid
    m.globals["tpc"] = (pc + bits // 8) & ((1 << 64) - 1)
    return EXECUTED


def _queue(use_t: Any) -> int:
    return 0 if bool(use_t) else 1


@binding("PushTemporaryQueue", harness=True)
def push_queue(m: PtocModel, use_t: Any, value: Any) -> None:
    ctx = ScalarContext(
        np.zeros((1, 24), np.uint64), m.memory, MEMORY_BYTES, m.squeue, m.squeue_valid
    )
    ctx.write(31 if bool(use_t) else 30, np.uint64(_int(value) & ((1 << 64) - 1)))


@binding("ReadTemporaryQueue", harness=True)
def read_queue(m: PtocModel, use_t: Any, index: Any) -> Bits:
    return Bits(64, int(m.squeue[0, _queue(use_t), _int(index)]))


@binding("TemporaryQueueSourceAvailable", harness=True)
def queue_available(m: PtocModel, use_t: Any, index: Any) -> bool:
    return bool(m.squeue_valid[_queue(use_t), _int(index)])


# ---------------------------------------------------------------------- decode

FORMS = {f.form_id: f for f in catalog.SCALAR_FORMS}
BY_INDEX = {i: FORMS[k] for k, i in catalog.SCALAR_FORM_INDEX.items()}
CONSTANTS["PTO_SCALAR_FORM_COUNT"] = catalog.SCALAR_FORM_COUNT
HANDLER_NOTE = "the ASL's scalar semantic-handler record is its internal dispatch"


def _form(index: Any) -> CommandForm:
    i = _int(index)
    f = BY_INDEX.get(i)
    if f is None:
        raise Untranslated("scalar form index", group="scalar forms not modelled")
    return f


@binding("DecodeScalarForm")
def decode_scalar_form(m: PtocModel, instruction: Bits, length: int) -> int:
    """The catalog position of the form ptoc's decoder reads the word as (the ASL's
    ``DecodeScalarForm``); a word no ptoc form reads is a form ptoc does not list."""
    bits = _int(length)
    value = _int(instruction) & ((1 << bits) - 1)
    try:
        c = decode_word(value, bits)
    except Undecodable:
        if not not_modelled(catalog.SCALAR_FORMS_NOT_MODELLED, value, bits):
            return catalog.SCALAR_FORM_COUNT  # no form of the catalog decodes it
        raise Untranslated("DecodeScalarForm", group="scalar forms not modelled") from None
    if not isinstance(c, Scalar):
        return catalog.SCALAR_FORM_COUNT
    form, _ = command_form_values(c)
    return catalog.SCALAR_FORM_INDEX[form.form_id]


@binding("ScalarOperationOfForm")
def operation_of_form(m: PtocModel, index: Any) -> Enum:
    return Enum(f"ScalarOperation_{asl_name(_form(index).mnemonic)}")


@binding("ScalarHandlerOfForm")
def handler_of_form(m: PtocModel, index: Any) -> Opaque:
    _form(index)
    return Opaque(HANDLER_NOTE)


@binding("DecodeScalarOperandRaw")
def operand_raw(m: PtocModel, instruction: Bits, index: Any, name: Enum) -> Bits:
    """The raw (unsigned) value of one field of the word, as the form's pieces give it."""
    f = _form(index)
    field = name.name.removeprefix("ScalarField_")
    try:
        fd = f.field(field)
    except KeyError:
        raise AslRuntimeError(f"{f.mnemonic} has no field {field}") from None
    raw = fd.extract(_int(instruction)) & ((1 << fd.width) - 1)
    return Bits(48, raw)


def _register_per_form() -> None:
    """``InstructionContractOperation_<M>``, ``..Handler_<M>`` and the AGU record
    (``..AGUAction_<M>``, ``..AGUSizeBytes_<M>`` ...) from ptoc's catalog."""
    for mnemonic, a in catalog.SCALAR_AGU.items():
        name = asl_name(mnemonic)
        values: dict[str, Any] = {
            "Action": Enum(f"ScalarAGU_{a.action}"),
            "AddressKind": Enum(f"ScalarAGU_{a.address_kind}"),
            "SizeBytes": a.size_bytes,
            "OffsetScale": a.offset_scale,
            "UpdateMode": Enum(f"AddressUpdate_{a.update_mode}"),
            "SignedLoad": a.signed_load,
            "PrefetchReturnsAddress": False,  # no listed form is a prefetch
        }
        for key, v in values.items():
            BINDINGS[f"InstructionContractAGU{key}_{name}"] = lambda m, _v=v: _v
    for f in catalog.SCALAR_FORMS:
        name = asl_name(f.mnemonic)
        member = Enum(f"ScalarOperation_{name}")
        BINDINGS.setdefault(f"InstructionContractOperation_{name}", lambda m, _e=member: _e)
        BINDINGS.setdefault(
            f"InstructionContractHandler_{name}", lambda m: Opaque(HANDLER_NOTE)
        )


_register_per_form()
