"""Scalar instruction sequences that put a constant or an address into a GPR.

The forms are those of the catalog (DECISIONS D7): ``c.movi`` (signed 5-bit), ``lui``
(signed 20-bit, shifted left 12), ``addi`` (an *unsigned* 12-bit add), ``slli`` and
``add``. A signed 32-bit value is ``lui hi; addi lo`` with ``hi = v >> 12`` and
``lo = v & 0xFFF``; a 64-bit value builds its high word, then shifts in 12, 12 and 8 bits.

Every instruction built here meets every constraint of its catalog form
(:func:`ptoc.backend.encoding.field_violation`): ``c.movi`` cannot write ``ra`` (that
word is C.SETRET), so a small constant for ``ra`` takes the 32-bit path instead.
"""

from __future__ import annotations

from collections.abc import Callable

from ptoc.backend.encoding import field_violation
from ptoc.backend.isa import scalar_form
from ptoc.backend.isa.fields import GPR_BY_NAME
from ptoc.backend.program import Command, Scalar

from ..allocate.gprs import Binding
from ..allocate.gprs import Scalar as ScalarValue

ZERO = 0


def _s(mnemonic: str, **fields: int) -> Scalar:
    """A scalar instruction with every field of its catalog form, in form order; it must
    meet the form's constraints (a broken one is a compiler bug, not a user error).
    Commands are immutable: equal ones are one object (a kernel writes its registers
    with the same few instructions again and again)."""
    key = (mnemonic, *fields.items())
    c = _BUILT.get(key)
    if c is None:
        if len(_BUILT) >= _KEEP:
            _BUILT.clear()
        c = _BUILT[key] = _build(mnemonic, fields)
    return c


#: :func:`_s` by mnemonic and fields (as given), at most ``_KEEP`` of them
_BUILT: dict[tuple[object, ...], Scalar] = {}
_KEEP = 1 << 14


def _build(mnemonic: str, fields: dict[str, int]) -> Scalar:
    form = scalar_form(mnemonic)
    c = Scalar(form.mnemonic, tuple((fd.name, fields.get(fd.name, 0)) for fd in form.fields))
    rule = field_violation(c)
    if rule is not None:
        raise AssertionError(f"materialize built an illegal instruction: {rule}")
    return c


def _form(mnemonic: str, *names: str) -> Callable[..., Scalar]:
    """:func:`_s` of ``mnemonic`` with its fields given by position, in the order
    ``names``: memoized by the values alone (a flat tuple of ints hashes faster than
    :func:`_s`'s key of name-value pairs; an address is ``lui`` + ``addi`` + ``add`` of
    values seen before or new)."""
    built: dict[tuple[int, ...], Scalar] = {}

    def make(*values: int) -> Scalar:
        c = built.get(values)
        if c is None:
            if len(built) >= _KEEP:
                built.clear()
            c = built[values] = _s(mnemonic, **dict(zip(names, values, strict=True)))
        return c

    return make


_MOVI = _form("C.MOVI", "RegDst", "simm5")
_LUI = _form("LUI", "RegDst", "imm20")
_ADDI = _form("ADDI", "RegDst", "SrcL", "uimm12")
_SLLI = _form("SLLI", "RegDst", "SrcL", "shamt")
#: ``add rd, base, rd`` with the plain right operand (SrcRType 3) and no shift
_ADD = _form("ADD", "RegDst", "SrcL", "SrcR", "SrcRType", "shamt")

#: :func:`_legal` of ``c.movi rd, v`` by ``(rd, v)``
_MOVI_LEGAL: dict[tuple[int, int], bool] = {}


def _movi_legal(rd: int, v: int) -> bool:
    key = (rd, v)
    ok = _MOVI_LEGAL.get(key)
    if ok is None:
        ok = _MOVI_LEGAL[key] = _legal("C.MOVI", RegDst=rd, simm5=v)
    return ok


def _legal(mnemonic: str, **fields: int) -> bool:
    form = scalar_form(mnemonic)
    c = Scalar(form.mnemonic, tuple((fd.name, fields.get(fd.name, 0)) for fd in form.fields))
    return field_violation(c) is None


def _signed64(v: int) -> int:
    v &= (1 << 64) - 1
    return v - (1 << 64) if v >> 63 else v


def load_const(rd: int, value: int) -> list[Command]:
    """Instructions leaving the 64-bit pattern ``value`` in GPR ``rd``."""
    v = _signed64(value)
    if -16 <= v < 16 and _movi_legal(rd, v):
        return [_MOVI(rd, v)]
    if -(1 << 31) <= v < (1 << 31):
        hi, lo = v >> 12, v & 0xFFF
        if hi == 0:
            return [_ADDI(rd, ZERO, lo)]
        out: list[Command] = [_LUI(rd, hi & 0xFFFFF)]
        if lo:
            out.append(_ADDI(rd, rd, lo))
        return out
    low = v & 0xFFFFFFFF
    out = load_const(rd, v >> 32)
    for width, pos in ((12, 20), (12, 8), (8, 0)):
        out.append(_SLLI(rd, rd, width))
        chunk = (low >> pos) & ((1 << width) - 1)
        if chunk:
            out.append(_ADDI(rd, rd, chunk))
    return out


def materialize(rd: int, s: ScalarValue, abi: dict[Binding, str]) -> list[Command]:
    """Instructions that set GPR ``rd`` to scalar ``s`` (``abi`` maps bases to registers)."""
    if s.base is None:
        return load_const(rd, s.value)
    base = GPR_BY_NAME[abi[s.base]]
    if 0 <= s.value < 4096:
        return [_ADDI(rd, base, s.value)]
    # SrcRType 3 is the plain right operand (0 .sw, 1 .uw, 2 .neg: ASL
    # DecodeScalarBinaryRightModifier)
    out = load_const(rd, s.value)
    out.append(_ADD(rd, base, rd, 3, 0))
    return out
