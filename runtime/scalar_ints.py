"""Scalar blocks of plain integer forms on Python integers (a fast form of
:mod:`.scalar`).

The compiler's loop bookkeeping -- counters, bounds, addresses, the loop condition --
is a few ADDI/LUI/SLLI/ADD/SETC instructions per block. On the numpy path each costs four
array operations on a handful of PEs, so the block costs more than the tile bundles it
steers. Here the same instructions run on each PE's GPRs as Python integers.

:func:`compile_int_block` gives the fast form of a block only when every instruction is
one of the forms below and reads and writes GPRs alone (no temporary queue, no memory,
no floating point): then nothing but the GPRs and the block condition can change. The
semantics are those of :mod:`.scalar` (``ScalarBinary``, ``ApplyScalarRightModifier``,
``ExecuteSetCommit``), 64-bit wrapping; the modifier table is the one :func:`.scalar.
_modify` reads. A condition the PEs disagree on is left to the numpy path, which raises
the fault.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from ptoc.backend.isa.fields import GPR_COUNT
from ptoc.backend.program import Scalar

from .scalar import M64, MODIFIERS, Decoded, _sext, decode

#: one PE's GPRs as Python integers
Regs = list[int]
#: a step over every PE's GPRs: None, or for a condition setter the block condition;
#: DISAGREE when the PEs do not agree on it (the numpy path raises the fault)
IntStep = Callable[[list[Regs]], object]
DISAGREE = object()
_M32 = 0xFFFFFFFF


def _sext32(v: int) -> int:
    v &= _M32
    return (v - (1 << 32) if v >> 31 else v) & M64


def _signed(v: int) -> int:
    return v - (1 << 64) if v >> 63 else v


def _modifier(code: int, decoding: str) -> Callable[[int], int]:
    kind = MODIFIERS[decoding][code & 3]
    if kind == "sw":
        return _sext32
    if kind == "uw":
        return lambda v: v & _M32
    if kind == "neg":
        return lambda v: -v & M64
    if kind == "not":
        return lambda v: ~v & M64
    return lambda v: v


_BINARY: dict[str, Callable[[int, int], int]] = {
    "ADD": lambda a, b: (a + b) & M64,
    "SUB": lambda a, b: (a - b) & M64,
    "AND": lambda a, b: a & b,
    "OR": lambda a, b: a | b,
    "XOR": lambda a, b: a ^ b,
    "SLL": lambda a, b: (a << (b & 63)) & M64,
    "SRL": lambda a, b: a >> (b & 63),
    "SRA": lambda a, b: (_signed(a) >> (b & 63)) & M64,
}
_CONDITIONS: dict[str, Callable[[int, int], bool]] = {
    "EQ": lambda a, b: a == b,
    "NE": lambda a, b: a != b,
    "LT": lambda a, b: _signed(a) < _signed(b),
    "GE": lambda a, b: _signed(a) >= _signed(b),
    "LTU": lambda a, b: a < b,
    "GEU": lambda a, b: a >= b,
    "AND": lambda a, b: (a & b) != 0,
    "OR": lambda a, b: (a | b) != 0,
}
_IMMEDIATE = {"ADDI": "ADD", "SUBI": "SUB", "ANDI": "AND", "ORI": "OR", "XORI": "XOR"}
_SHIFT_IMMEDIATE = {"SLLI": "SLL", "SRLI": "SRL", "SRAI": "SRA"}
_REGISTER = ("ADD", "SUB", "AND", "OR", "XOR")


def _gpr(sel: int) -> bool:
    return 0 <= sel < GPR_COUNT


def _immediate_name(d: Decoded) -> str:
    (name,) = [fd.name for fd in d.form.fields if "imm" in fd.name]
    return name


def _store(d: Decoded) -> int | None:
    """The GPR a result goes to, 0 for a discarded one, None for a queue push."""
    rd = d.destination()
    if rd is None:
        return 0
    return rd if 0 < rd < GPR_COUNT else None


def _step(c: Scalar, pc: int) -> IntStep | None:
    """The fast form of one instruction, or None when it is not one of these forms."""
    d = decode(c, pc)
    m = c.mnemonic
    if m in _IMMEDIATE or m in _SHIFT_IMMEDIATE:
        op = _BINARY[_IMMEDIATE.get(m) or _SHIFT_IMMEDIATE[m]]
        imm = d.word(_immediate_name(d) if m in _IMMEDIATE else "shamt") & M64
        a, rd = d.source("SrcL"), _store(d)
        if not _gpr(a) or rd is None:
            return None
        return _write(rd, lambda r: op(r[a], imm))
    if m in _REGISTER:
        op = _BINARY[m]
        a, b, rd = d.source("SrcL"), d.source("SrcR"), _store(d)
        if not (_gpr(a) and _gpr(b)) or rd is None:
            return None
        modify = _modifier(
            d.fields.get("SrcRType", 0), "binary" if m in ("ADD", "SUB") else "logical"
        )
        sh = d.fields.get("shamt", 0) & 63
        return _write(rd, lambda r: op(r[a], (modify(r[b]) << sh) & M64))
    if m == "C.MOVI":
        rd, v = _store(d), d.word("simm5") & M64
        return None if rd is None else _write(rd, lambda r: v)
    if m == "LUI":
        rd, v = _store(d), (_sext(d.fields.get("imm20", 0), 20) << 12) & M64
        return None if rd is None else _write(rd, lambda r: v)
    if m.startswith("SETC."):
        return _setc(d, m)
    return None


def _write(rd: int, value: Callable[[Regs], int]) -> IntStep:
    if rd == 0:  # discarded (its sources are GPRs: nothing can fault)
        return lambda regs: None

    def step(regs: list[Regs]) -> None:
        for r in regs:
            r[rd] = value(r)

    return step


def _setc(d: Decoded, m: str) -> IntStep | None:
    cond = m.split(".")[-1]
    immediate = cond.endswith("I")
    test = _CONDITIONS.get(cond[:-1] if immediate else cond)
    a = d.source("SrcL")
    if test is None or not _gpr(a):
        return None
    right: Callable[[Regs], int]
    if immediate:
        v = (d.word(_immediate_name(d)) << (d.fields.get("shamt", 0) & 63)) & M64
        right = lambda r: v  # noqa: E731
    else:
        b = d.source("SrcR")
        if not _gpr(b):
            return None
        decoding = "compare-logical" if cond in ("AND", "OR") else "compare"
        modify = _modifier(d.fields.get("SrcRType", 0), decoding)
        right = lambda r: modify(r[b])  # noqa: E731

    def step(regs: list[Regs]) -> object:
        holds = {test(r[a], right(r)) for r in regs}
        return DISAGREE if len(holds) > 1 else holds.pop()

    return step


class IntBlock(NamedTuple):
    """A block's fast form: its steps and the GPRs they write (the ones to publish)."""

    steps: tuple[IntStep, ...]
    written: tuple[int, ...]


def compile_int_block(commands: list[Scalar], pcs: list[int]) -> IntBlock | None:
    """The fast form of a block of ``commands`` (at byte addresses ``pcs``), or None when
    one of them is not a plain integer form on GPRs."""
    steps = []
    written: set[int] = set()
    for c, pc in zip(commands, pcs, strict=True):
        step = _step(c, pc)
        if step is None:
            return None
        steps.append(step)
        if not c.mnemonic.startswith("SETC."):
            written.add(_store(decode(c, pc)) or 0)
    written.discard(0)
    return IntBlock(tuple(steps), tuple(sorted(written)))
