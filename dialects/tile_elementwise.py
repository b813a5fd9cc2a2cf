"""Elementwise ``tile`` ops: tile-tile, tile-scalar, unary, FMA and convert (compare,
select and fill are in ``tile_compare`` and re-exported here). Each maps one-to-one onto
a VEC/SFU catalog operation (``MNEMONIC``) and its reference is that operation's numpy
semantics from ``ptoc.backend.isa.semantics``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ClassVar

import numpy as np
from xdsl.dialects.builtin import UnitAttr, i64
from xdsl.ir import SSAValue
from xdsl.irdl import (
    VarConstraint,
    base,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from ptoc.backend.isa import OpRow, TileFamily, info, legality
from ptoc.backend.isa import op as catalog_op
from ptoc.backend.isa import row as optable_row

from .dtypes import DType, data_type
from .modes import RModeAttr, rmode_code
from .tile_base import (
    Number,
    RefEnv,
    RuleError,
    ScalarAttr,
    TileOp,
    derive_ops,
    export,
    format_number,
    op_name,
    parse_number,
    scalar_bits,
    sole_row,
    tile_type,
)
from .tile_types import TileType

_PURE = traits_def(Pure())


def _dt(value: SSAValue):
    return data_type(tile_type(value).dtype)


# --------------------------------------------------------------------------- tile-tile


def _semantics(mnemonic: str | None) -> Callable[..., Any]:
    """The operation table's numpy semantics of ``mnemonic``."""
    assert mnemonic is not None
    fn = optable_row(mnemonic).semantics
    assert fn is not None, mnemonic
    return fn


class BinaryOp(TileOp):
    """``%r = tile.<op> %a, %b : T``: typed ``a op b`` elementwise on equal tile types."""

    T: ClassVar = VarConstraint("T", base(TileType))
    lhs = operand_def(T)
    rhs = operand_def(T)
    result = result_def(T)
    traits = _PURE
    assembly_format = "$lhs `,` $rhs attr-dict `:` type($result)"

    def __init__(self, lhs: SSAValue, rhs: SSAValue) -> None:
        super().__init__(operands=[lhs, rhs], result_types=[lhs.type])

    def verify_(self) -> None:
        t = tile_type(self.result)
        self.check_dtype(t.dtype)
        self.check_row_major(t)

    def reference(self, env: RefEnv, args: Sequence[np.ndarray]) -> tuple[np.ndarray, ...]:
        assert self.MNEMONIC is not None
        return (_semantics(self.MNEMONIC)(_dt(self.result), *args)[0],)


#: one-line docs by the operation table's ``arith`` kind (the catalog summary otherwise)
_BINARY_DOCS = {
    "add": "Typed sum ``a + b`` (integers wrap).",
    "sub": "Typed difference ``a - b``.",
    "mul": "Typed product ``a * b``.",
    "div": "Typed quotient ``a / b`` (integer zero divisor illegal).",
    "rem": "Typed remainder (signed: floor modulo).",
    "max": "Typed maximum (NaN and signed-zero rules of TMAX).",
    "min": "Typed minimum (NaN and signed-zero rules of TMIN).",
    "and": "Bitwise and.",
    "or": "Bitwise or.",
    "xor": "Bitwise exclusive or.",
    "shl": "Left shift by the low log2(width) bits of ``b``.",
    "shr": "Right shift (arithmetic when signed).",
}
_UNARY_DOCS = {
    "abs": "``|a|`` (floats: clears the sign bit).",
    "neg": "``-a`` (integers wrap; floats flip the sign bit).",
    "not": "Bitwise not.",
    "exp": "``exp(a)`` (reference profile: FP64 then one rounding).",
    "log": "``log(a)``.",
    "recip": "``1 / a``.",
    "sqrt": "``sqrt(a)``, correctly rounded.",
    "rsqrt": "``1 / sqrt(a)``.",
    "relu": "``max(a, 0)`` (negative and -0 give +0).",
}
_SCALAR_DOCS = {
    "add": "``a + s``.",
    "sub": "``a - s``.",
    "mul": "``a * s``.",
    "div": "``a / s`` (integer zero illegal).",
    "rem": "``a rem s``.",
    "and": "``a & s``.",
    "or": "``a | s``.",
    "xor": "``a ^ s``.",
    "shl": "``a << s``.",
    "shr": "``a >> s``.",
    "max": "``max(a, s)``.",
    "min": "``min(a, s)``.",
}


def _class_name(r: OpRow) -> str:
    """``TADD`` -> ``AddOp``, ``TADDS`` -> ``AddsOp``."""
    return f"{r.mnemonic[1:].capitalize()}Op"


def _doc(docs: dict[str, str]) -> Callable[[OpRow], str]:
    return lambda r: docs.get(r.arith or "", r.op.summary)


#: ``AddOp`` ... ``MinOp``: one per operation-table row of the BINARY family
BINARY_OPS: tuple[type[BinaryOp], ...] = derive_ops(
    BinaryOp, TileFamily.BINARY, _class_name, _doc(_BINARY_DOCS)
)
export(globals(), BINARY_OPS)


# --------------------------------------------------------------------------- unary


class UnaryOp(TileOp):
    """``%r = tile.<op> %a : T``: a typed unary function elementwise."""

    T: ClassVar = VarConstraint("T", base(TileType))
    src = operand_def(T)
    result = result_def(T)
    traits = _PURE
    assembly_format = "$src attr-dict `:` type($result)"

    def __init__(self, src: SSAValue) -> None:
        super().__init__(operands=[src], result_types=[src.type])

    def verify_(self) -> None:
        t = tile_type(self.result)
        self.check_dtype(t.dtype)
        self.check_row_major(t)

    def reference(self, env: RefEnv, args: Sequence[np.ndarray]) -> tuple[np.ndarray, ...]:
        assert self.MNEMONIC is not None
        return (_semantics(self.MNEMONIC)(_dt(self.result), *args)[0],)


#: ``AbsOp`` ... ``ReluOp``: one per operation-table row of the UNARY family
UNARY_OPS: tuple[type[UnaryOp], ...] = derive_ops(
    UnaryOp, TileFamily.UNARY, _class_name, _doc(_UNARY_DOCS)
)
export(globals(), UNARY_OPS)


# --------------------------------------------------------------------------- tile-scalar


class ScalarOp(TileOp):
    """``%r = tile.<op>s %a, 2.5 : T``: typed ``a op scalar`` with a compile-time scalar.

    The scalar denotes the element-type value it rounds to (RNE for floats; integers
    must be representable), exactly the raw bits the bundle reads from its GPR. With a
    run-time scalar, ``tile.<op>s %a, %s : T`` (``%s`` an ``i64`` -- a scalar parameter
    of the tile's element type -- whose low bits are the scalar's raw bits).
    """

    T: ClassVar = VarConstraint("T", base(TileType))
    src = operand_def(T)
    value = var_operand_def(i64)
    scalar = opt_prop_def(ScalarAttr)
    result = result_def(T)
    traits = _PURE

    def __init__(self, src: SSAValue, scalar: Number | SSAValue) -> None:
        if isinstance(scalar, SSAValue):
            super().__init__(operands=[src, [scalar]], result_types=[src.type])
            return
        super().__init__(
            operands=[src, []],
            result_types=[src.type],
            properties={"scalar": ScalarAttr(scalar)},
        )

    @property
    def runtime(self) -> SSAValue | None:
        """The run-time scalar (None: the compile-time ``scalar``)."""
        return self.value[0] if self.value else None

    @property
    def bits(self) -> int:
        assert self.scalar is not None, "a run-time scalar has no compile-time bits"
        return scalar_bits(_dt(self.result), self.scalar.value)

    def verify_(self) -> None:
        t = tile_type(self.result)
        self.check_dtype(t.dtype)
        self.check_row_major(t)
        if (self.scalar is None) == (self.runtime is None) or len(self.value) > 1:
            raise VerifyException(f"{self.name} has one scalar: a number or a run-time value")
        if self.runtime is not None:
            return
        try:
            bits = self.bits
        except ValueError as e:
            raise RuleError(self.name, str(e)) from None
        if (
            optable_row(self.MNEMONIC).arith in ("div", "rem")
            and bits == 0
            and not info(_dt(self.src)).is_float
        ):
            raise VerifyException(f"{self.name} has an integer zero divisor")

    def reference(self, env: RefEnv, args: Sequence[np.ndarray]) -> tuple[np.ndarray, ...]:
        assert self.MNEMONIC is not None
        dt = _dt(self.result)
        if self.runtime is not None:
            bits = int(env.scalars[self.runtime]) & ((1 << info(dt).bits) - 1)
        else:
            bits = self.bits
        return (_semantics(self.MNEMONIC)(dt, args[0], env.gpr(bits))[0],)

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.src)
        if self.runtime is not None:
            printer.print_string(", ")
            printer.print_operand(self.runtime)
        else:
            assert self.scalar is not None
            printer.print_string(f", {format_number(self.scalar.value)}")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.result.type)

    @classmethod
    def parse(cls, parser: Parser) -> ScalarOp:
        src = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        runtime = parser.parse_optional_unresolved_operand()
        value = parse_number(parser) if runtime is None else None
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        t = parser.parse_type()
        scalar = value if runtime is None else parser.resolve_operand(runtime, i64)
        op = cls(parser.resolve_operand(src, t), scalar)  # type: ignore[arg-type]
        op.attributes |= attrs
        return op


#: ``AddsOp`` ... ``MinsOp``: one per operation-table row of the SCALAR family
SCALAR_OPS: tuple[type[ScalarOp], ...] = derive_ops(
    ScalarOp, TileFamily.SCALAR, _class_name, _doc(_SCALAR_DOCS)
)
export(globals(), SCALAR_OPS)


# --------------------------------------------------------------------------- others


@irdl_op_definition
class FmaOp(TileOp):
    """``%r = tile.fma %a, %b, %c : T``: fused ``a * b + c`` with one rounding (TFMA)."""

    MNEMONIC: ClassVar[str | None] = sole_row(TileFamily.FMA).mnemonic
    name = op_name(MNEMONIC)
    T: ClassVar = VarConstraint("T", base(TileType))
    a = operand_def(T)
    b = operand_def(T)
    c = operand_def(T)
    result = result_def(T)
    traits = _PURE
    assembly_format = "$a `,` $b `,` $c attr-dict `:` type($result)"

    def __init__(self, a: SSAValue, b: SSAValue, c: SSAValue) -> None:
        super().__init__(operands=[a, b, c], result_types=[a.type])

    def verify_(self) -> None:
        self.check_dtype(tile_type(self.result).dtype)
        self.check_row_major(tile_type(self.result))

    def reference(self, env: RefEnv, args: Sequence[np.ndarray]) -> tuple[np.ndarray, ...]:
        return (_semantics(self.MNEMONIC)(_dt(self.result), *args)[0],)


def _same_shape(op: TileOp, a: TileType, b: TileType) -> None:
    if a.extent != b.extent or a.valid != b.valid or a.layout != b.layout:
        raise VerifyException(f"{op.name} operand and result must have the same shape")


@irdl_op_definition
class CvtOp(TileOp):
    """``%r = tile.cvt %a [rmode rtz] [sat] : T1 -> T2``: convert to the result DataType
    (TCVT; RMode default RTZ float->int, RNE otherwise; ``sat`` saturates)."""

    MNEMONIC: ClassVar[str | None] = sole_row(TileFamily.CVT).mnemonic
    name = op_name(MNEMONIC)
    src = operand_def(TileType)
    rmode = opt_prop_def(RModeAttr)
    sat = opt_prop_def(UnitAttr)
    result = result_def(TileType)
    traits = _PURE
    assembly_format = (
        "$src (`rmode` $rmode^)? (`sat` $sat^)? attr-dict `:` type($src) `->` type($result)"
    )

    def __init__(
        self,
        src: SSAValue,
        dtype: DType | str,
        rmode: RModeAttr | None = None,
        sat: bool = False,
    ) -> None:
        t = tile_type(src)
        super().__init__(
            operands=[src],
            result_types=[t.with_dtype(dtype)],
            properties={"rmode": rmode, "sat": UnitAttr() if sat else None},
        )

    def verify_(self) -> None:
        s, r = tile_type(self.src), tile_type(self.result)
        self.check_dtype(s.dtype, "source DataType")
        self.check_dtype(r.dtype, "result DataType")
        # the catalog's type-pair rule (an E8M0 result takes FP32, FP16 or BF16 sources)
        o = catalog_op(self.MNEMONIC)
        rule = legality.source_dtype_for(o, data_type(s.dtype), data_type(r.dtype))
        if rule is not None:
            raise RuleError(self.name, rule)
        _same_shape(self, s, r)

    def reference(self, env: RefEnv, args: Sequence[np.ndarray]) -> tuple[np.ndarray, ...]:
        res = _semantics(self.MNEMONIC)(
            _dt(self.src),
            args[0],
            _dt(self.result),
            rmode_code(self.rmode),
            self.sat is not None,
        )
        return (res[0],)


from .tile_compare import CmpOp, CmpsOp, FullOp, SelOp, SelsOp  # noqa: E402  (re-export)

OTHER_ELEMENTWISE_OPS: tuple[type[TileOp], ...] = (
    FmaOp,
    CvtOp,
    CmpOp,
    CmpsOp,
    SelOp,
    SelsOp,
    FullOp,
)
