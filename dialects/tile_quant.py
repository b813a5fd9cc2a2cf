"""Quantization: ``tile.quant`` (TQUANT, FP32 -> S8/U8) and ``tile.dequant`` (TDEQUANT).

``%q = tile.quant %x mult 0.5 zp -3 rmode rne sat : T -> Tq`` computes
``q = round(x * mult + zp)``, the affine value exact and rounded once (D10; saturating
with ``sat``, else the low 8 bits);
``%y = tile.dequant %q mult 0.5 zp -3 : Tq -> T`` computes ``fl32((q - zp) * mult)``.
An omitted ``mult`` is 1.0 and an omitted ``zp`` is 0 (the catalog's B.IOR defaults).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import numpy as np
from xdsl.dialects.builtin import UnitAttr
from xdsl.ir import SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, opt_prop_def, result_def, traits_def
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from ptoc.backend.isa import DataType
from ptoc.backend.isa.semantics import quant

from .dtypes import data_type
from .modes import RMode, RModeAttr, rmode_code
from .tile_base import (
    Number,
    RefEnv,
    RuleError,
    ScalarAttr,
    TileOp,
    format_number,
    parse_number,
    scalar_bits,
    tile_type,
)
from .tile_types import TileType

#: raw FP32 bits of the default multiplier 1.0
MULTIPLIER_ONE = 0x3F800000


class QuantBase(TileOp):
    """Shared fields, scalars and syntax of TQUANT and TDEQUANT."""

    src = operand_def(TileType)
    multiplier = opt_prop_def(ScalarAttr)
    zero_point = opt_prop_def(ScalarAttr)
    rmode = opt_prop_def(RModeAttr)
    sat = opt_prop_def(UnitAttr)
    result = result_def(TileType)
    traits = traits_def(Pure())
    INT_SIDE: ClassVar[str] = "result"

    def __init__(
        self,
        src: SSAValue,
        dtype: str,
        multiplier: Number | None = None,
        zero_point: int | None = None,
        rmode: RMode | None = None,
        sat: bool = False,
    ) -> None:
        super().__init__(
            operands=[src],
            result_types=[tile_type(src).with_dtype(dtype)],
            properties={
                "multiplier": None if multiplier is None else ScalarAttr(multiplier),
                "zero_point": None if zero_point is None else ScalarAttr(zero_point),
                "rmode": None if rmode is None else RModeAttr(rmode),
                "sat": UnitAttr() if sat else None,
            },
        )

    @property
    def int_type(self) -> DataType:
        v = self.result if self.INT_SIDE == "result" else self.src
        return data_type(tile_type(v).dtype)

    @property
    def multiplier_bits(self) -> int:
        if self.multiplier is None:
            return MULTIPLIER_ONE
        return scalar_bits(DataType.FP32, self.multiplier.value)

    @property
    def zero_point_raw(self) -> int:
        """The 64-bit GPR value of the zero point (sign-extended, as the ASL reads it)."""
        zp = 0 if self.zero_point is None else int(self.zero_point.value)
        return zp & ((1 << 64) - 1)

    @property
    def has_scalars(self) -> bool:
        return self.multiplier is not None or self.zero_point is not None

    def verify_scalars(self) -> None:
        s, r = tile_type(self.src), tile_type(self.result)
        self.check_dtype(s.dtype, "source DataType")
        if (s.extent, s.valid) != (r.extent, r.valid):
            raise VerifyException(f"{self.name} keeps the tile shape")
        if self.zero_point is not None and not isinstance(self.zero_point.value, int):
            raise VerifyException(f"{self.name} zero point is an integer")
        legal = (
            quant.tquant_scalars_legal
            if self.INT_SIDE == "result"
            else (quant.tdequant_scalars_legal)
        )
        rule = legal(
            self.int_type,
            np.array([self.multiplier_bits], np.uint64),
            np.array([self.zero_point_raw], np.uint64),
        )
        if rule is not None:
            raise RuleError(self.name, rule)

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.src)
        if self.multiplier is not None:
            printer.print_string(f" mult {format_number(self.multiplier.value)}")
        if self.zero_point is not None:
            printer.print_string(f" zp {format_number(self.zero_point.value)}")
        if self.rmode is not None:
            printer.print_string(f" rmode {self.rmode.data.value}")
        if self.sat is not None:
            printer.print_string(" sat")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.src.type)
        printer.print_string(" -> ")
        printer.print_attribute(self.result.type)

    @classmethod
    def parse(cls, parser: Parser) -> QuantBase:
        src = parser.parse_unresolved_operand()
        mult = parse_number(parser) if parser.parse_optional_keyword("mult") else None
        zp = parse_number(parser) if parser.parse_optional_keyword("zp") else None
        rmode = parser.parse_str_enum(RMode) if parser.parse_optional_keyword("rmode") else None
        sat = parser.parse_optional_keyword("sat") is not None
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        st = parser.parse_type()
        parser.parse_punctuation("->")
        rt = parser.parse_type()
        if not isinstance(rt, TileType):
            parser.raise_error(f"{cls.name} produces a !tile.tile")
        op = cls(parser.resolve_operand(src, st), rt.dt.value, mult, zp, rmode, sat)  # type: ignore[arg-type]
        op.attributes |= attrs
        return op


@irdl_op_definition
class QuantOp(QuantBase):
    """TQUANT: FP32 -> S8/U8 by ``round(x * mult + zp)``, one rounding (D10)."""

    name = "tile.quant"
    MNEMONIC: ClassVar[str | None] = "TQUANT"
    INT_SIDE: ClassVar[str] = "result"

    def verify_(self) -> None:
        self.verify_scalars()
        if self.int_type not in (DataType.S8, DataType.U8):
            raise VerifyException("tile.quant produces S8 or U8")

    def reference(self, env: RefEnv, args: Sequence[np.ndarray]) -> tuple[np.ndarray, ...]:
        q, _ = self.semantics(
            self.int_type,
            args[0],
            env.gpr(self.multiplier_bits),
            env.gpr(self.zero_point_raw),
            rmode_code(self.rmode),
            self.sat is not None,
        )
        return (q,)


@irdl_op_definition
class DequantOp(QuantBase):
    """TDEQUANT: S8/U8 -> FP32 by ``fl32((q - zp) * mult)``."""

    name = "tile.dequant"
    MNEMONIC: ClassVar[str | None] = "TDEQUANT"
    INT_SIDE: ClassVar[str] = "source"

    def verify_(self) -> None:
        self.verify_scalars()
        if tile_type(self.result).dt.value != "FP32" or self.sat is not None:
            raise VerifyException("tile.dequant produces FP32 and does not saturate")

    def reference(self, env: RefEnv, args: Sequence[np.ndarray]) -> tuple[np.ndarray, ...]:
        y, _ = self.semantics(
            self.int_type,
            args[0],
            env.gpr(self.multiplier_bits),
            env.gpr(self.zero_point_raw),
            rmode_code(self.rmode),
        )
        return (y,)


QUANT_OPS: tuple[type[TileOp], ...] = (QuantOp, DequantOp)
