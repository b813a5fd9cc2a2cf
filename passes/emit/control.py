"""Scalar code of run-time integers and loops: instruction selection and symbolic meaning.

A run-time integer (``arith`` op, loop index, scalar parameter) lives in the register
its ``pto.gpr`` attribute names; ``arith.constant`` loads its value, ``arith.addi`` /
``subi`` / ``muli`` are ``add`` / ``sub`` / ``mul`` of registers (``SrcRType`` 3: the
plain 64-bit right operand, ASL ``DecodeScalarBinaryRightModifier``), and a run-time
address ``pto.index base + (i * k ...)`` is ``slli`` / ``mul`` of each index into the
term register and ``add`` to the base. A loop is

    BSTART.STD FALL            i = lb
    BSTART.STD COND, exit      setc.ge i, ub      (no iteration: skip the body)
    body: ...bundles and scalar blocks...
    BSTART.STD COND, body      i += step; setc.lt i, ub
    exit:

Each value also has a *meaning* -- a polynomial in the loop indices and scalar
parameters (:class:`~ptoc.passes.allocate.gprs.Scalar` terms) -- that the allocation
validator checks the registers against.
"""

from __future__ import annotations

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import StringAttr
from xdsl.ir import BlockArgument, Operation, SSAValue

from ptoc.backend.isa.fields import CORE_COUNT_GPR, CORE_INDEX_GPR, GPR_BY_NAME
from ptoc.backend.isa.scalar_fp import FP32_DESTINATION, INT64_SOURCE
from ptoc.backend.program import Command
from ptoc.dialects.pto import IndexAddrOp
from ptoc.dialects.scalars import FP32_TYPE, CoreOp, FloatOp, IntToFloatOp, constant_value

from ..allocate.gprs import Binding
from ..allocate.gprs import Scalar as Sym
from .materialize import _s, load_const

GPR_ATTR = "pto.gpr"
M64 = (1 << 64) - 1


def reg_of(op: Operation) -> int:
    attr = op.attributes.get(GPR_ATTR)
    assert isinstance(attr, StringAttr), op
    return GPR_BY_NAME[attr.data]


class Scalars:
    """Registers and meanings of a kernel's run-time integers."""

    def __init__(self, abi: dict[Binding, str]) -> None:
        #: scalar parameter (block argument index) -> its ABI register
        self.params = {b.tensor: GPR_BY_NAME[r] for b, r in abi.items() if b.scalar}
        self.loops: dict[scf.ForOp, int] = {}
        #: the value of each scalar load, named for the validator (``load0``, ...)
        self.loaded: dict[SSAValue, str] = {}

    def reg(self, v: SSAValue) -> int:
        """The register holding run-time integer ``v``."""
        if isinstance(v, BlockArgument):
            owner = v.block.parent_op()
            if isinstance(owner, scf.ForOp):
                return reg_of(owner)
            return self.params[v.index]
        assert isinstance(v.owner, Operation)
        if isinstance(v.owner, CoreOp):  # the grid ABI's register (D13)
            return GPR_BY_NAME[CORE_COUNT_GPR if v.owner.is_count else CORE_INDEX_GPR]
        return reg_of(v.owner)

    def meaning(self, v: SSAValue, names: dict[SSAValue, str]) -> Sym:
        """``v`` as a polynomial of the loop indices and scalar parameters (None: a value
        no polynomial describes -- a minimum, an FP32 result -- which the validator knows
        as unknown)."""
        if isinstance(v, BlockArgument):
            owner = v.block.parent_op()
            name = names[v] if isinstance(owner, scf.ForOp) else f"param{v.index}"
            return Sym(0, None, ((name, 1),))
        c = constant_value(v)
        if c is not None:
            return Sym(c & M64)
        if v in self.loaded:
            return Sym(0, None, ((self.loaded[v], 1),))
        if isinstance(v.owner, CoreOp):
            return Sym(0, None, (("cores" if v.owner.is_count else "core", 1),))
        op = v.owner
        assert isinstance(op, Operation)
        if not isinstance(op, (arith.AddiOp, arith.SubiOp, arith.MuliOp)):
            return None  # type: ignore[return-value]  # min/max, FP32: not a polynomial
        a, b = (self.meaning(x, names) for x in op.operands)
        if a is None or b is None:
            return None  # type: ignore[return-value]
        if isinstance(op, arith.AddiOp):
            return poly_add(a, b)
        if isinstance(op, arith.SubiOp):
            return poly_add(a, poly_scale(b, -1))
        return poly_mul(a, b)

    # ------------------------------------------------------------------ instructions

    def code(self, op: Operation) -> list[Command]:
        """The instructions of an ``arith`` op (its result into its register); a
        comparison has none: its conditional's guard compares (:func:`skip_when`)."""
        if isinstance(op, (arith.CmpiOp, CoreOp)):
            return []
        rd = reg_of(op)
        c = constant_value(op.results[0])
        if c is not None:
            return load_const(rd, c)
        if isinstance(op, IntToFloatOp):  # the signed 64-bit value to FP32
            x = self.reg(op.source)
            src, dst = INT64_SOURCE, FP32_DESTINATION
            return [_s("SCVTF", RegDst=rd, SrcL=x, SrcType=src, DstType=dst)]
        if isinstance(op, FloatOp):  # FP32 on the registers' low words
            a, b = self.reg(op.lhs), self.reg(op.rhs)
            return [_s(op.mnemonic, RegDst=rd, SrcL=a, SrcR=b, SrcType=FP32_TYPE)]
        a, b = (self.reg(v) for v in op.operands)
        if isinstance(op, arith.AddiOp):
            return [_s("ADD", RegDst=rd, SrcL=a, SrcR=b, SrcRType=3, shamt=0)]
        if isinstance(op, arith.SubiOp):
            return [_s("SUB", RegDst=rd, SrcL=a, SrcR=b, SrcRType=3, shamt=0)]
        if isinstance(op, (arith.MinSIOp, arith.MaxSIOp)):  # signed, as the i64 values
            name = "MIN" if isinstance(op, arith.MinSIOp) else "MAX"
            return [_s(name, RegDst=rd, SrcL=a, SrcR=b)]
        assert isinstance(op, arith.MuliOp), op
        return [_s("MUL", RegDst=rd, SrcL=a, SrcR=b)]

    def index_code(self, op: IndexAddrOp, term: int) -> list[Command]:
        """``rd = base + sum(index * scale)`` with ``term`` as scratch."""
        rd = reg_of(op)
        base_attr = op.attributes["pto.base"]
        assert isinstance(base_attr, StringAttr)
        acc = GPR_BY_NAME[base_attr.data]
        out: list[Command] = []
        for v, k in op.terms:
            x = self.reg(v)
            if k & (k - 1) == 0:
                shift = k.bit_length() - 1
                out.append(_s("SLLI", RegDst=term, SrcL=x, shamt=shift))
            else:
                out.extend(load_const(term, k))
                out.append(_s("MUL", RegDst=term, SrcL=x, SrcR=term))
            out.append(_s("ADD", RegDst=rd, SrcL=acc, SrcR=term, SrcRType=3, shamt=0))
            acc = rd
        return out


#: the guard of ``pt.when(a <cmp> b)`` branches past the body when the comparison fails:
#: (condition setter, operands swapped) per ``arith.cmpi`` predicate (there is no
#: SETC.LE / SETC.GT: swap the operands of GE / LT)
SKIP = {
    "slt": ("SETC.GE", False),
    "sge": ("SETC.LT", False),
    "sle": ("SETC.LT", True),
    "sgt": ("SETC.GE", True),
    "eq": ("SETC.NE", False),
    "ne": ("SETC.EQ", False),
}


# --------------------------------------------------------------------------- polynomials


def _terms(d: dict[str, int]) -> tuple[tuple[str, int], ...]:
    return tuple(sorted((k, c & M64) for k, c in d.items() if c & M64))


def poly_add(a: Sym, b: Sym) -> Sym:
    if a.base is not None and b.base is not None:
        raise ValueError("two address bases")
    d = dict(a.terms)
    for k, c in b.terms:
        d[k] = d.get(k, 0) + c
    return Sym((a.value + b.value) & M64, a.base or b.base, _terms(d))


def poly_scale(a: Sym, k: int) -> Sym:
    if a.base is not None:
        raise ValueError("a scaled address base")
    return Sym((a.value * k) & M64, None, _terms({m: c * k for m, c in a.terms}))


def poly_mul(a: Sym, b: Sym) -> Sym:
    if a.base is not None or b.base is not None:
        raise ValueError("a product of an address base")
    d: dict[str, int] = {}
    if a.value:
        for m, c in b.terms:
            d[m] = d.get(m, 0) + a.value * c
    if b.value:
        for m, c in a.terms:
            d[m] = d.get(m, 0) + b.value * c
    for ma, ca in a.terms:
        for mb, cb in b.terms:
            m = "*".join(sorted((*ma.split("*"), *mb.split("*"))))
            d[m] = d.get(m, 0) + ca * cb
    return Sym((a.value * b.value) & M64, None, _terms(d))
