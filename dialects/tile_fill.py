"""TINSERT, TFILLPAD and THISTOGRAM as ``tile`` ops.

``%r = tile.insert %old, %src[1, 2] : To, Ts`` is ``old`` with ``src`` written at the
(row, column) offsets; ``%r = tile.fillpad %a, 0.5 : Ta -> Tb`` widens ``a`` to the valid
shape of ``Tb``, filling the new elements with the scalar; ``%h = tile.histogram %src,
%filter byte 1 : Ts, Tf -> Th`` is the per-row inclusive prefix histogram of one byte.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import numpy as np
from xdsl.dialects.builtin import I64, DenseArrayBase, IntegerAttr, i64
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

from ptoc.backend.isa import DataType, TileFamily
from ptoc.backend.isa.semantics import generate, layout

from .dtypes import data_type
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


@irdl_op_definition
class InsertOp(TileOp):
    """``%r = tile.insert %old, %src[r, c] : To, Ts``: ``old`` with ``src`` at the offsets
    (TINSERT)."""

    MNEMONIC: ClassVar[str | None] = sole_row(TileFamily.INSERT).mnemonic
    name = op_name(MNEMONIC)
    T: ClassVar = VarConstraint("T", base(TileType))
    old = operand_def(T)
    src = operand_def(TileType)
    offsets = prop_def(DenseArrayBase.constr(i64))
    result = result_def(T)
    traits = _PURE
    assembly_format = "$old `,` $src `` $offsets attr-dict `:` type($old) `,` type($src)"

    def __init__(self, old: SSAValue, src: SSAValue, offsets: Sequence[int]) -> None:
        super().__init__(
            operands=[old, src],
            result_types=[old.type],
            properties={"offsets": DenseArrayBase.from_list(i64, list(offsets))},
        )

    @property
    def offset(self) -> tuple[int, int]:
        r, c = self.offsets.get_values()
        return (int(r), int(c))

    def verify_(self) -> None:
        o, s = tile_type(self.old), tile_type(self.src)
        self.check_dtype(o.dtype)
        self.check_row_major(o, s)
        if s.dtype != o.dtype or len(self.offsets.get_values()) != 2:
            raise VerifyException("tile.insert takes two offsets and keeps the DataType")
        rule = layout.tinsert_shape_legal(o.valid, s.valid, *self.offset)
        if rule is not None:
            raise RuleError(self.name, rule)

    def reference(self, env: RefEnv, args: Sequence[np.ndarray]) -> tuple[np.ndarray, ...]:
        dt = data_type(tile_type(self.old).dtype)
        return (self.semantics(dt, args[0], args[1], *self.offset)[0],)


@irdl_op_definition
class FillPadOp(TileOp):
    """``%r = tile.fillpad %a, 0.5 : Ta -> Tb``: ``a`` widened to ``Tb``'s valid shape,
    new elements the scalar (TFILLPAD)."""

    MNEMONIC: ClassVar[str | None] = sole_row(TileFamily.FILLPAD).mnemonic
    name = op_name(MNEMONIC)
    src = operand_def(TileType)
    scalar = prop_def(ScalarAttr)
    result = result_def(TileType)
    traits = _PURE

    def __init__(self, src: SSAValue, scalar: Number, result_type: TileType) -> None:
        super().__init__(
            operands=[src],
            result_types=[result_type],
            properties={"scalar": ScalarAttr(scalar)},
        )

    @property
    def bits(self) -> int:
        return scalar_bits(data_type(tile_type(self.result).dtype), self.scalar.value)

    def verify_(self) -> None:
        a, r = tile_type(self.src), tile_type(self.result)
        self.check_dtype(a.dtype)
        self.check_row_major(a, r)
        if a.dtype != r.dtype:
            raise VerifyException("tile.fillpad keeps the DataType")
        if any(
            x < y for x, y in zip((*r.valid, *r.extent), (*a.valid, *a.extent), strict=True)
        ):
            raise VerifyException("tile.fillpad result must contain the source")
        try:
            _ = self.bits
        except ValueError as e:
            raise RuleError(self.name, str(e)) from None

    def reference(self, env: RefEnv, args: Sequence[np.ndarray]) -> tuple[np.ndarray, ...]:
        r = tile_type(self.result)
        full, _ = self.semantics(data_type(r.dtype), args[0], env.gpr(self.bits), r.valid)
        return (full,)

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.src)
        printer.print_string(f", {format_number(self.scalar.value)}")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.src.type)
        printer.print_string(" -> ")
        printer.print_attribute(self.result.type)

    @classmethod
    def parse(cls, parser: Parser) -> FillPadOp:
        src = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        value = parse_number(parser)
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        st = parser.parse_type()
        parser.parse_punctuation("->")
        rt = parser.parse_type()
        if not isinstance(rt, TileType):
            parser.raise_error("tile.fillpad produces a !tile.tile")
        op = cls(parser.resolve_operand(src, st), value, rt)
        op.attributes |= attrs
        return op


@irdl_op_definition
class HistogramOp(TileOp):
    """``%h = tile.histogram %src, %filter byte 1 : Ts, Tf -> Th``: for every source row
    the inclusive prefix histogram (256 U32 bins) of byte ``byte`` of the values whose
    more significant bytes match the U8 filter (THISTOGRAM)."""

    MNEMONIC: ClassVar[str | None] = sole_row(TileFamily.HISTOGRAM).mnemonic
    name = op_name(MNEMONIC)
    src = operand_def(TileType)
    filter = operand_def(TileType)
    byte = prop_def(IntegerAttr[I64])
    result = result_def(TileType)
    traits = _PURE
    assembly_format = (
        "$src `,` $filter `byte` $byte attr-dict `:` type($src) `,` type($filter) `->` "
        "type($result)"
    )

    def __init__(self, src: SSAValue, filt: SSAValue, byte: int) -> None:
        s = tile_type(src)
        rt = TileType("U32", (s.extent[0], 256), (s.valid[0], 256))
        super().__init__(
            operands=[src, filt], result_types=[rt], properties={"byte": IntegerAttr(byte, i64)}
        )

    def verify_(self) -> None:
        s, f, r = tile_type(self.src), tile_type(self.filter), tile_type(self.result)
        self.check_dtype(s.dtype)
        if f.dt.value != "U8":
            raise VerifyException("tile.histogram filter is a U8 tile")
        if r != TileType("U32", (s.extent[0], 256), (s.valid[0], 256)):
            raise VerifyException(f"tile.histogram of {s} produces U32 {s.valid[0]}x256")
        rule = generate.thistogram_shapes_legal(
            data_type(s.dtype), s.valid, f.valid, self.byte.value.data
        )
        if rule is not None:
            raise RuleError(self.name, rule)

    def reference(self, env: RefEnv, args: Sequence[np.ndarray]) -> tuple[np.ndarray, ...]:
        dt = data_type(tile_type(self.src).dtype)
        b = self.byte.value.data
        filt = None if (dt, b) in ((DataType.U16, 1), (DataType.U32, 3)) else args[1]
        return (self.semantics(dt, args[0], filt, b)[0],)


FILL_OPS: tuple[type[TileOp], ...] = (InsertOp, FillPadOp, HistogramOp)
