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
from typing import Any, NamedTuple

from ptoc.backend.isa.fields import GPR_COUNT
from ptoc.backend.program import Scalar

from .scalar import M64, MODIFIERS, Decoded, _sext, decode

#: one PE's GPRs as Python integers
Regs = list[int]
#: a block's fast form on one PE's GPRs (written in place): the outcome of each of its
#: condition setters, in order
IntRun = Callable[[Regs], tuple[bool, ...]]
_M32 = 0xFFFFFFFF


def _sext32(v: int) -> int:
    v &= _M32
    return (v - (1 << 32) if v >> 31 else v) & M64


def _signed(v: int) -> int:
    return v - (1 << 64) if v >> 63 else v


# The forms as Python expressions over ``{a}`` and ``{b}`` (each a register read or a
# constant): a block becomes one function (:func:`_function`), so an instruction costs
# one statement, not a chain of closures; every result is a 64-bit word.
_MODIFIED = {
    "sw": "_sext32({v})",
    "uw": "({v} & 0xFFFFFFFF)",
    "neg": "(-{v} & M64)",
    "not": "(~{v} & M64)",
    None: "{v}",
}
_BINARY = {
    "ADD": "({a} + {b}) & M64",
    "SUB": "({a} - {b}) & M64",
    "AND": "{a} & {b}",
    "OR": "{a} | {b}",
    "XOR": "{a} ^ {b}",
    "SLL": "({a} << ({b} & 63)) & M64",
    "SRL": "{a} >> ({b} & 63)",
    "SRA": "(_signed({a}) >> ({b} & 63)) & M64",
}
_CONDITIONS = {
    "EQ": "{a} == {b}",
    "NE": "{a} != {b}",
    "LT": "_signed({a}) < _signed({b})",
    "GE": "_signed({a}) >= _signed({b})",
    "LTU": "{a} < {b}",
    "GEU": "{a} >= {b}",
    "AND": "({a} & {b}) != 0",
    "OR": "({a} | {b}) != 0",
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


def _modified(code: int, decoding: str, v: str) -> str:
    return _MODIFIED[MODIFIERS[decoding][code & 3]].format(v=v)


def _statement(c: Scalar, pc: int) -> tuple[str, int] | None:
    """One instruction as ``(statement, written GPR)``: an assignment to ``r[rd]`` (0:
    a discarded result, no statement: its sources are GPRs, nothing can fault), or for a
    condition setter an expression of the condition (written GPR -1); None when it is not
    one of these forms."""
    d = decode(c, pc)
    m = c.mnemonic
    if m.startswith("SETC."):
        cond = _setc(d, m)
        return None if cond is None else (cond, -1)
    value: str
    if m in _IMMEDIATE or m in _SHIFT_IMMEDIATE:
        op = _BINARY[_IMMEDIATE.get(m) or _SHIFT_IMMEDIATE[m]]
        imm = d.word(_immediate_name(d) if m in _IMMEDIATE else "shamt") & M64
        a = d.source("SrcL")
        if not _gpr(a):
            return None
        value = op.format(a=f"r[{a}]", b=str(imm))
    elif m in _REGISTER:
        a, b = d.source("SrcL"), d.source("SrcR")
        if not (_gpr(a) and _gpr(b)):
            return None
        decoding = "binary" if m in ("ADD", "SUB") else "logical"
        right = _modified(d.fields.get("SrcRType", 0), decoding, f"r[{b}]")
        sh = d.fields.get("shamt", 0) & 63
        value = _BINARY[m].format(a=f"r[{a}]", b=f"(({right} << {sh}) & M64)")
    elif m == "C.MOVI":
        value = str(d.word("simm5") & M64)
    elif m == "LUI":
        value = str((_sext(d.fields.get("imm20", 0), 20) << 12) & M64)
    else:
        return None
    rd = _store(d)
    if rd is None:
        return None
    return (f"r[{rd}] = {value}" if rd else "", rd)


def _setc(d: Decoded, m: str) -> str | None:
    cond = m.split(".")[-1]
    immediate = cond.endswith("I")
    test = _CONDITIONS.get(cond[:-1] if immediate else cond)
    a = d.source("SrcL")
    if test is None or not _gpr(a):
        return None
    if immediate:
        right = str((d.word(_immediate_name(d)) << (d.fields.get("shamt", 0) & 63)) & M64)
    else:
        b = d.source("SrcR")
        if not _gpr(b):
            return None
        decoding = "compare-logical" if cond in ("AND", "OR") else "compare"
        right = _modified(d.fields.get("SrcRType", 0), decoding, f"r[{b}]")
    return test.format(a=f"r[{a}]", b=right)


class IntBlock(NamedTuple):
    """A block's fast form: the function that runs it on one PE's GPRs, and the GPRs it
    writes (the ones to publish)."""

    run: IntRun
    written: frozenset[int]


_NAMESPACE = {"M64": M64, "_sext32": _sext32, "_signed": _signed}


def _function(lines: list[str], conditions: list[str]) -> IntRun:
    """The block's statements as one function of ``r`` (a PE's GPRs, written in place)
    returning its conditions: built from the fixed templates above and integer fields
    only, so the source holds nothing but register indices and constants."""
    body = [f"    {line}" for line in lines]
    body.append(f"    return ({''.join(c + ', ' for c in conditions)})")
    source = "def block(r):\n" + "\n".join(body) + "\n"
    scope: dict[str, Any] = dict(_NAMESPACE)
    exec(compile(source, "<integer block>", "exec"), scope)
    block: IntRun = scope["block"]
    return block


def compile_int_block(commands: list[Scalar], pcs: list[int]) -> IntBlock | None:
    """The fast form of a block of ``commands`` (at byte addresses ``pcs``), or None when
    one of them is not a plain integer form on GPRs."""
    lines: list[str] = []
    conditions: list[str] = []
    written: set[int] = set()
    for c, pc in zip(commands, pcs, strict=True):
        got = _statement(c, pc)
        if got is None:
            return None
        text, rd = got
        if rd < 0:  # a condition: evaluated where it stands, among the assignments
            conditions.append(f"c{len(conditions)}")
            lines.append(f"c{len(conditions) - 1} = {text}")
        elif rd:
            lines.append(text)
            written.add(rd)
    return IntBlock(_function(lines, conditions), frozenset(written))
