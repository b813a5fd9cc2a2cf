"""Compare, select and fill ``tile`` ops: TCMP/TCMPS produce a PRED tile (one bit per
element), TSEL/TSELS select with one, TEXPANDS (``tile.full``) fills a tile with a scalar.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import numpy as np
from xdsl.ir import SSAValue
from xdsl.irdl import (
    VarConstraint,
    base,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from ptoc.backend.isa import TileFamily
from ptoc.backend.isa.elements import PRED

from .dtypes import data_type, is_pred
from .modes import CMode, CModeAttr
from .tile_base import (
    Number,
    RefEnv,
    RuleError,
    ScalarAttr,
    TileOp,
    format_number,
    op_name,
    parse_number,
    scalar_bits,
    sole_row,
    tile_type,
)
from .tile_types import TileType

_PURE = traits_def(Pure())


def _dt(value: SSAValue):  # type: ignore[no-untyped-def]
    return data_type(tile_type(value).dtype)


def _same_shape(op: TileOp, a: TileType, b: TileType) -> None:
    if a.extent != b.extent or a.valid != b.valid or a.layout != b.layout:
        raise VerifyException(f"{op.name} operand and result must have the same shape")


@irdl_op_definition
class CmpOp(TileOp):
    """``%p = tile.cmp lt %a, %b : T -> P``: the predicate ``a CMODE b`` (TCMP)."""

    MNEMONIC: ClassVar[str | None] = sole_row(TileFamily.CMP).mnemonic
    name = op_name(MNEMONIC)
    T: ClassVar = VarConstraint("T", base(TileType))
    cmode = prop_def(CModeAttr)
    lhs = operand_def(T)
    rhs = operand_def(T)
    result = result_def(TileType)
    traits = _PURE
    assembly_format = "$cmode $lhs `,` $rhs attr-dict `:` type($lhs) `->` type($result)"

    def __init__(self, cmode: CMode, lhs: SSAValue, rhs: SSAValue) -> None:
        super().__init__(
            operands=[lhs, rhs],
            result_types=[tile_type(lhs).with_dtype(PRED.name)],
            properties={"cmode": CModeAttr(cmode)},
        )

    def verify_(self) -> None:
        s, r = tile_type(self.lhs), tile_type(self.result)
        self.check_dtype(s.dtype)
        if not is_pred(r.dtype):
            raise VerifyException("tile.cmp produces a PRED tile")
        _same_shape(self, s, r)

    def reference(self, env: RefEnv, args: Sequence[np.ndarray]) -> tuple[np.ndarray, ...]:
        return (self.semantics(_dt(self.lhs), args[0], args[1], self.cmode.data.code)[0],)


@irdl_op_definition
class CmpsOp(TileOp):
    """``%p = tile.cmps lt %a, 2.5 : T -> P``: the predicate ``a CMODE scalar`` (TCMPS)."""

    MNEMONIC: ClassVar[str | None] = sole_row(TileFamily.CMPS).mnemonic
    name = op_name(MNEMONIC)
    cmode = prop_def(CModeAttr)
    src = operand_def(TileType)
    scalar = prop_def(ScalarAttr)
    result = result_def(TileType)
    traits = _PURE

    def __init__(self, cmode: CMode, src: SSAValue, scalar: Number) -> None:
        super().__init__(
            operands=[src],
            result_types=[tile_type(src).with_dtype(PRED.name)],
            properties={"cmode": CModeAttr(cmode), "scalar": ScalarAttr(scalar)},
        )

    @property
    def bits(self) -> int:
        return scalar_bits(_dt(self.src), self.scalar.value)

    def verify_(self) -> None:
        s, r = tile_type(self.src), tile_type(self.result)
        self.check_dtype(s.dtype)
        if not is_pred(r.dtype):
            raise VerifyException("tile.cmps produces a PRED tile")
        _same_shape(self, s, r)
        try:
            _ = self.bits
        except ValueError as e:
            raise RuleError(self.name, str(e)) from None

    def reference(self, env: RefEnv, args: Sequence[np.ndarray]) -> tuple[np.ndarray, ...]:
        return (
            self.semantics(_dt(self.src), args[0], env.gpr(self.bits), self.cmode.data.code)[0],
        )

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.cmode.data.value} ")
        printer.print_operand(self.src)
        printer.print_string(f", {format_number(self.scalar.value)}")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.src.type)
        printer.print_string(" -> ")
        printer.print_attribute(self.result.type)

    @classmethod
    def parse(cls, parser: Parser) -> CmpsOp:
        cmode = parser.parse_str_enum(CMode)
        src = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        value = parse_number(parser)
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        t = parser.parse_type()
        parser.parse_punctuation("->")
        parser.parse_type()
        op = cls(cmode, parser.resolve_operand(src, t), value)
        op.attributes |= attrs
        return op


@irdl_op_definition
class SelOp(TileOp):
    """``%r = tile.sel %p, %a, %b : P, T``: ``p ? a : b`` bit-exact (TSEL)."""

    MNEMONIC: ClassVar[str | None] = sole_row(TileFamily.SEL).mnemonic
    name = op_name(MNEMONIC)
    T: ClassVar = VarConstraint("T", base(TileType))
    pred = operand_def(TileType)
    on_true = operand_def(T)
    on_false = operand_def(T)
    result = result_def(T)
    traits = _PURE
    assembly_format = (
        "$pred `,` $on_true `,` $on_false attr-dict `:` type($pred) `,` type($result)"
    )

    def __init__(self, pred: SSAValue, on_true: SSAValue, on_false: SSAValue) -> None:
        super().__init__(operands=[pred, on_true, on_false], result_types=[on_true.type])

    def verify_(self) -> None:
        p, r = tile_type(self.pred), tile_type(self.result)
        self.check_dtype(r.dtype)
        if not is_pred(p.dtype):
            raise VerifyException("tile.sel selects with a PRED tile")
        if p.valid != r.valid:
            raise VerifyException("tile.sel predicate and values must have one valid shape")

    def reference(self, env: RefEnv, args: Sequence[np.ndarray]) -> tuple[np.ndarray, ...]:
        return (self.semantics(_dt(self.result), *args)[0],)


@irdl_op_definition
class SelsOp(TileOp):
    """``%r = tile.sels %p, %a, 2.5 : P, T``: ``p ? a : scalar`` (TSELS)."""

    MNEMONIC: ClassVar[str | None] = sole_row(TileFamily.SELS).mnemonic
    name = op_name(MNEMONIC)
    T: ClassVar = VarConstraint("T", base(TileType))
    pred = operand_def(TileType)
    on_true = operand_def(T)
    scalar = prop_def(ScalarAttr)
    result = result_def(T)
    traits = _PURE

    def __init__(self, pred: SSAValue, on_true: SSAValue, scalar: Number) -> None:
        super().__init__(
            operands=[pred, on_true],
            result_types=[on_true.type],
            properties={"scalar": ScalarAttr(scalar)},
        )

    @property
    def bits(self) -> int:
        return scalar_bits(_dt(self.result), self.scalar.value)

    def verify_(self) -> None:
        p, r = tile_type(self.pred), tile_type(self.result)
        self.check_dtype(r.dtype)
        if not is_pred(p.dtype) or p.valid != r.valid:
            raise VerifyException("tile.sels selects with a PRED tile of the same valid shape")
        try:
            _ = self.bits
        except ValueError as e:
            raise RuleError(self.name, str(e)) from None

    def reference(self, env: RefEnv, args: Sequence[np.ndarray]) -> tuple[np.ndarray, ...]:
        return (self.semantics(_dt(self.result), args[0], args[1], env.gpr(self.bits))[0],)

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.pred)
        printer.print_string(", ")
        printer.print_operand(self.on_true)
        printer.print_string(f", {format_number(self.scalar.value)}")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.pred.type)
        printer.print_string(", ")
        printer.print_attribute(self.result.type)

    @classmethod
    def parse(cls, parser: Parser) -> SelsOp:
        pred = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        src = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        value = parse_number(parser)
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        pt = parser.parse_type()
        parser.parse_punctuation(",")
        t = parser.parse_type()
        op = cls(parser.resolve_operand(pred, pt), parser.resolve_operand(src, t), value)
        op.attributes |= attrs
        return op


@irdl_op_definition
class FullOp(TileOp):
    """``%r = tile.full 2.5 : T``: every valid element is the scalar (TEXPANDS)."""

    name = "tile.full"
    MNEMONIC: ClassVar[str | None] = sole_row(TileFamily.FULL).mnemonic
    scalar = prop_def(ScalarAttr)
    result = result_def(TileType)
    traits = _PURE

    def __init__(self, scalar: Number, result_type: TileType) -> None:
        super().__init__(result_types=[result_type], properties={"scalar": ScalarAttr(scalar)})

    @property
    def bits(self) -> int:
        return scalar_bits(_dt(self.result), self.scalar.value)

    def verify_(self) -> None:
        self.check_dtype(tile_type(self.result).dtype)
        try:
            _ = self.bits
        except ValueError as e:
            raise RuleError(self.name, str(e)) from None

    def reference(self, env: RefEnv, args: Sequence[np.ndarray]) -> tuple[np.ndarray, ...]:
        shape = (env.pes, *tile_type(self.result).valid)
        return (self.semantics(_dt(self.result), shape, env.gpr(self.bits))[0],)

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {format_number(self.scalar.value)}")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.result.type)

    @classmethod
    def parse(cls, parser: Parser) -> FullOp:
        value = parse_number(parser)
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        t = parser.parse_type()
        if not isinstance(t, TileType):
            parser.raise_error("tile.full produces a !tile.tile")
        op = cls(value, t)
        op.attributes |= attrs
        return op
