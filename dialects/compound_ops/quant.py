"""Compound quantization ops: ``tile.quantize_rows``, ``tile.dequantize_rows``,
``tile.quantize_mx``, ``tile.dequantize_mx`` (``docs/compound.md`` §10-13).

The row-varying forms take per-row FP32 parameters as (R x 1) tiles, or a compile-time
scalar that every row shares (the scalar affine form; its reference is the same
``quantize_rows`` with that value in every row).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import irdl_op_definition, opt_prop_def
from xdsl.parser import Parser, UnresolvedOperand
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from ptoc.dialects import compound_ref as cr

from ..tile_base import Number, ScalarAttr, format_number, parse_number, tile_type
from ..tile_types import TileType
from ._common import Arrays, CompoundOp, carrier_of

Param = SSAValue | Number


class AffineRowsOp(CompoundOp):
    """Shared roles and syntax of ``quantize_rows`` / ``dequantize_rows``: the source,
    then a ``scale`` and an optional ``offset``, each an (R x 1) FP32 tile or a scalar."""

    scale = opt_prop_def(ScalarAttr)
    offset = opt_prop_def(ScalarAttr)

    def _setup(
        self, src: SSAValue, scale: Param, offset: Param | None, result: TileType
    ) -> None:
        operands = [src]
        props: dict[str, Attribute | None] = {"scale": None, "offset": None}
        if isinstance(scale, SSAValue):
            operands.append(scale)
        else:
            props["scale"] = ScalarAttr(scale)
        if isinstance(offset, SSAValue):
            operands.append(offset)
        elif offset is not None:
            props["offset"] = ScalarAttr(offset)
        super().__init__(operands=[operands], result_types=[[result]], properties=props)

    # ---------------------------------------------------------------- roles

    @property
    def src(self) -> SSAValue:
        return self.inputs[0]

    @property
    def scale_tile(self) -> SSAValue | None:
        return self.inputs[1] if self.scale is None else None

    @property
    def offset_tile(self) -> SSAValue | None:
        if self.offset is not None:
            return None
        k = 1 if self.scale is not None else 2
        return self.inputs[k] if len(self.inputs) > k else None

    @property
    def has_offset(self) -> bool:
        return self.offset is not None or self.offset_tile is not None

    def verify_roles(self) -> None:
        want = 1 + (self.scale is None)
        extra = len(self.inputs) - want
        if extra < 0 or extra > (1 if self.offset is None else 0):
            raise VerifyException(
                f"{self.name} takes a tile, a scale (tile or scalar) and an optional offset"
            )

    def params(self, args: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray | None]:
        """The (R, 1) FP32 scale and offset columns of one PE (scalars broadcast)."""
        rows = args[0].shape[0]
        k = 1
        if self.scale is None:
            scale, k = args[1], 2
        else:
            scale = np.full((rows, 1), np.float32(self.scale.value), np.float32)
        offset: np.ndarray | None = None
        if self.offset is not None:
            offset = np.full((rows, 1), np.float32(self.offset.value), np.float32)
        elif len(args) > k:
            offset = args[k]
        return scale, offset

    # ---------------------------------------------------------------- syntax

    def print_operands(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.src)
        printer.print_string(" scale ")
        if self.scale is not None:
            printer.print_string(format_number(self.scale.value))
        else:
            assert self.scale_tile is not None
            printer.print_operand(self.scale_tile)
        if self.offset is not None:
            printer.print_string(f" offset {format_number(self.offset.value)}")
        elif self.offset_tile is not None:
            printer.print_string(" offset ")
            printer.print_operand(self.offset_tile)

    @classmethod
    def parse_operands(cls, parser: Parser) -> tuple[list[UnresolvedOperand], dict[str, Any]]:
        operands = [parser.parse_unresolved_operand()]
        kw: dict[str, Any] = {}
        for name in ("scale", "offset"):
            if name == "scale":
                parser.parse_keyword("scale")
            elif parser.parse_optional_keyword("offset") is None:
                continue
            v = parser.parse_optional_unresolved_operand()
            if v is None:
                kw[name] = parse_number(parser)
            else:
                operands.append(v)
                kw[name] = len(operands) - 1  # the operand position
                kw[f"{name}@"] = True
        return operands, kw


@irdl_op_definition
class QuantizeRowsOp(AffineRowsOp):
    """``%q = tile.quantize_rows %x scale %s [offset %o] : ... -> S8|U8``: pto-isa TQUANT
    INT8_SYM/ASYM with per-row (or scalar) parameters,
    ``q = sat(rne(fl32(fl32(x * s) + o)))``."""

    name = "tile.quantize_rows"
    INTERFACE: ClassVar[str] = "quantize_rows"

    def __init__(
        self, x: SSAValue, scale: Param, offset: Param | None = None, dtype: str = "S8"
    ) -> None:
        self._setup(x, scale, offset, TileType(dtype, tile_type(x).valid))

    def ref(self, args: Sequence[np.ndarray]) -> Arrays:
        scale, offset = self.params(args)
        dt = carrier_of(tile_type(self.outs[0]))
        return (cr.quantize_rows(args[0], scale, offset, dt),)

    @classmethod
    def build_parsed(
        cls, operands: list[SSAValue], results: list[Attribute], kw: dict[str, Any]
    ) -> QuantizeRowsOp:
        scale, offset = _params_from(operands, kw)
        rt = results[0]
        assert isinstance(rt, TileType)
        return cls(operands[0], scale, offset, rt.dt.value)


@irdl_op_definition
class DequantizeRowsOp(AffineRowsOp):
    """``%y = tile.dequantize_rows %q scale %s [offset %o]``: pto-isa TDEQUANT with
    per-row (or scalar) parameters, ``y = fl32(fl32(q - o) * s)`` (S8/U8/S16 -> FP32)."""

    name = "tile.dequantize_rows"
    INTERFACE: ClassVar[str] = "dequantize_rows"

    def __init__(self, q: SSAValue, scale: Param, offset: Param | None = None) -> None:
        self._setup(q, scale, offset, TileType("FP32", tile_type(q).valid))

    def ref(self, args: Sequence[np.ndarray]) -> Arrays:
        scale, offset = self.params(args)
        return (cr.dequantize_rows(args[0], scale, offset),)

    @classmethod
    def build_parsed(
        cls, operands: list[SSAValue], results: list[Attribute], kw: dict[str, Any]
    ) -> DequantizeRowsOp:
        scale, offset = _params_from(operands, kw)
        return cls(operands[0], scale, offset)


def _params_from(operands: list[SSAValue], kw: dict[str, Any]) -> tuple[Param, Param | None]:
    """Scale and offset from parsed keywords: an operand position (int, as the parser
    records it) or a number (a scalar literal)."""

    def pick(name: str) -> Param | None:
        if name not in kw:
            return None
        v = kw[name]
        if isinstance(v, int) and not isinstance(v, bool) and f"{name}@" in kw:
            return operands[v]
        return v

    return pick("scale"), pick("offset")  # type: ignore[return-value]


@irdl_op_definition
class QuantizeMxOp(CompoundOp):
    """``%e, %s, %amax, %scaling = tile.quantize_mx %x``: OCP MXFP8 (pto-isa A5 TQUANT
    MXFP8). 32-column groups share an E8M0 exponent; elements become saturated E4M3."""

    name = "tile.quantize_mx"
    INTERFACE: ClassVar[str] = "quantize_mx"

    def __init__(self, x: SSAValue) -> None:
        r, c = tile_type(x).valid
        g = max(1, c // 32)
        super().__init__(
            operands=[[x]],
            result_types=[[
                TileType("E4M3", (r, c)), TileType("E8M0", (r, g)),
                TileType("FP32", (r, g)), TileType("FP32", (r, g)),
            ]],
        )  # fmt: skip

    def ref(self, args: Sequence[np.ndarray]) -> Arrays:
        return tuple(cr.quantize_mx(args[0]))

    @classmethod
    def build_parsed(
        cls, operands: list[SSAValue], results: list[Attribute], kw: dict[str, Any]
    ) -> QuantizeMxOp:
        return cls(operands[0])


@irdl_op_definition
class DequantizeMxOp(CompoundOp):
    """``%y = tile.dequantize_mx %elements, %scales``: ``fl32(elements * 2**(scales -
    127))`` -> fp32 per 32-column group, the inverse of ``quantize_mx`` (E4M3 or U8
    elements, E8M0 or U8 scales)."""

    name = "tile.dequantize_mx"
    INTERFACE: ClassVar[str] = "dequantize_mx"

    def __init__(self, elements: SSAValue, scales: SSAValue) -> None:
        super().__init__(
            operands=[[elements, scales]],
            result_types=[[TileType("FP32", tile_type(elements).valid)]],
        )

    def verify_roles(self) -> None:
        if len(self.inputs) != 2:
            raise VerifyException("tile.dequantize_mx takes an element tile and a scale tile")

    def ref(self, args: Sequence[np.ndarray]) -> Arrays:
        return (cr.dequantize_mx(args[0], args[1]),)

    @classmethod
    def build_parsed(
        cls, operands: list[SSAValue], results: list[Attribute], kw: dict[str, Any]
    ) -> DequantizeMxOp:
        return cls(*operands)


QUANT_OPS = (QuantizeRowsOp, DequantizeRowsOp, QuantizeMxOp, DequantizeMxOp)
