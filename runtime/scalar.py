"""Scalar instructions of standard blocks (``BSTART.STD FALL ... BSTOP``).

Semantics from ``asl/scalar/alu/*.asl`` and ``asl/scalar/model/alu/semantics.asl``:
64-bit two's-complement arithmetic that wraps; ``addi`` zero-extends ``uimm12``;
``andi``/``ori``/``xori`` sign-extend ``simm12``; ``lui`` sign-extends ``imm20`` and
shifts it left by 12; ``c.movi`` sign-extends ``simm5``; shifts use the 6-bit ``shamt``;
``add``/``sub`` transform SrcR by ``SrcRType`` (00 ``.sw`` sign-extends SrcR[31:0], 01
``.uw`` zero-extends it, 10 ``.neg`` negates, 11 none) and then shift it left by
``shamt``; ``mul`` keeps the low 64 bits.

Every PE runs the instruction on its own GPR file (all PEs at once, vectorised).
Register codes 1..23 are GPRs; RegDst 0 and 24..29 discard the result. The scalar
temporary queues (sources 24..31 = T#1..T#4, U#1..U#4; RegDst 30/31 push U/T) are not
modelled: such an instruction is rejected as unsupported before the block has effects.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ptoc.backend.isa.fields import GPR_COUNT
from ptoc.backend.program import Scalar

from .faults import MachineFault, unsupported

_U = np.uint64
_M32 = _U(0xFFFFFFFF)

#: mnemonic -> (register source fields, immediate field)
_FORMS: dict[str, tuple[tuple[str, ...], str | None]] = {
    "ADDI": (("SrcL",), "uimm12"),
    "ANDI": (("SrcL",), "simm12"),
    "ORI": (("SrcL",), "simm12"),
    "XORI": (("SrcL",), "simm12"),
    "SLLI": (("SrcL",), "shamt"),
    "SRLI": (("SrcL",), "shamt"),
    "SRAI": (("SrcL",), "shamt"),
    "LUI": ((), "imm20"),
    "C.MOVI": ((), "simm5"),
    "ADD": (("SrcL", "SrcR"), None),
    "SUB": (("SrcL", "SrcR"), None),
    "MUL": (("SrcL", "SrcR"), None),
}

ScalarStep = Callable[[np.ndarray], None]


def _sext(value: int, bits: int) -> int:
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >> (bits - 1) else value


def _word(value: int) -> np.uint64:
    return _U(value & 0xFFFF_FFFF_FFFF_FFFF)


def _prepare_right(r: np.ndarray, kind: int, shamt: int) -> np.ndarray:
    if kind == 0:  # .sw
        low = r & _M32
        r = np.where(low >> _U(31), low | _U(0xFFFFFFFF00000000), low)
    elif kind == 1:  # .uw
        r = r & _M32
    elif kind == 2:  # .neg
        r = _U(0) - r
    return r << _U(shamt)


def compile_scalar(c: Scalar) -> ScalarStep:
    """A function applying ``c`` to a ``(pes, 24)`` uint64 GPR array in place.

    Raises a MachineFault (unsupported scalar temporaries or mnemonic) at compile time,
    i.e. before the block has any effect.
    """
    form = _FORMS.get(c.mnemonic)
    if form is None:
        raise unsupported(f"scalar instruction {c.mnemonic.lower()}", c.mnemonic.lower())
    # an omitted field is zero, as the encoder writes it
    fields = dict(c.fields)
    srcs, imm_name = form
    regs = [fields.get(s, 0) for s in srcs]
    for s, reg in zip(srcs, regs, strict=True):
        if reg >= GPR_COUNT:
            raise unsupported(
                f"scalar temporary queue source {s}={reg} (T#/U# selectors 24..31)",
                c.mnemonic.lower(),
            )
    rd = fields.get("RegDst", 0)
    if rd >= 30:
        raise unsupported(
            f"scalar temporary queue destination RegDst={rd} (push to {'UT'[rd - 30]})",
            c.mnemonic.lower(),
        )
    if rd == 0 or rd >= GPR_COUNT:
        return lambda gpr: None  # RegDst 0 and 24..29 discard the result
    imm = fields.get(imm_name, 0) if imm_name else 0
    op = _operation(c.mnemonic, fields, imm)
    if not regs:
        value = op(None, None)

        def step_const(gpr: np.ndarray) -> None:
            gpr[:, rd] = value

        return step_const
    a = regs[0]
    b = regs[1] if len(regs) > 1 else None

    def step(gpr: np.ndarray) -> None:
        left = gpr[:, a]
        right = gpr[:, b] if b is not None else None
        result = op(left, right)
        gpr[:, rd] = result

    return step


def _operation(mnemonic: str, f: dict[str, int], imm: int) -> Callable:
    m = mnemonic
    if m == "LUI":
        v = _word(_sext(imm, 20) << 12)
        return lambda a, b: v
    if m == "C.MOVI":
        v = _word(_sext(imm, 5))
        return lambda a, b: v
    if m == "ADDI":
        u = _U(imm & 0xFFF)
        return lambda a, b: a + u
    if m in ("ANDI", "ORI", "XORI"):
        s = _word(_sext(imm, 12))
        fn = {"ANDI": np.bitwise_and, "ORI": np.bitwise_or, "XORI": np.bitwise_xor}[m]
        return lambda a, b: fn(a, s)
    if m in ("SLLI", "SRLI", "SRAI"):
        sh = _U(imm & 63)
        if m == "SLLI":
            return lambda a, b: a << sh
        if m == "SRLI":
            return lambda a, b: a >> sh
        return lambda a, b: (a.view(np.int64) >> np.int64(sh)).view(_U)
    if m in ("ADD", "SUB"):
        kind, shamt = f.get("SrcRType", 3), f.get("shamt", 0) & 31
        if m == "ADD":
            return lambda a, b: a + _prepare_right(b, kind, shamt)
        return lambda a, b: a - _prepare_right(b, kind, shamt)
    if m == "MUL":
        return lambda a, b: a * b
    raise AssertionError(m)  # pragma: no cover - _FORMS lists every mnemonic


def run_scalar_block(gpr: np.ndarray, steps: list[ScalarStep]) -> np.ndarray:
    """Apply compiled steps to a copy of ``gpr`` (the caller publishes it)."""
    out = gpr.copy()
    with np.errstate(over="ignore"):
        for step in steps:
            step(out)
    out[:, 0] = 0  # the zero register always reads 0
    return out


__all__ = ["MachineFault", "ScalarStep", "compile_scalar", "run_scalar_block"]
