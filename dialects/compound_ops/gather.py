"""Compound data-movement ops: ``tile.gather_pattern``, ``tile.gather_flat``,
``tile.gather_blocks``, ``tile.scatter_flat`` and ``tile.transpose``.

All of them move raw bits (``docs/compound.md`` §5-9); a result DataType that differs
from the source's (same width) reinterprets the bits, as pto-isa allows.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
from xdsl.dialects.builtin import StringAttr
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import irdl_op_definition, prop_def
from xdsl.parser import Parser, UnresolvedOperand
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from ptoc.dialects import compound_ref as cr
from ptoc.dialects.compound_ref.gather import PATTERN_CODES, PATTERNS

from ..tile_base import RuleError, tile_type
from ..tile_types import TileType
from ._common import Arrays, CompoundOp, carrier_of, keyword_operand, print_keyword_operands


def _result(results: list[Attribute], i: int = 0) -> TileType:
    rt = results[i]
    if not isinstance(rt, TileType):
        raise VerifyException("compound results are !tile.tile values")
    return rt


def pattern_name(pattern: str | int) -> str:
    """The canonical mask-pattern name (``P0101`` ...) of a name or pto-isa code."""
    if isinstance(pattern, int) and not isinstance(pattern, bool):
        name = PATTERN_CODES.get(pattern, str(pattern))
    else:
        name = str(pattern).upper()
    return name


@irdl_op_definition
class GatherPatternOp(CompoundOp):
    """``%r = tile.gather_pattern %t pattern P0101``: pto-isa mask-pattern TGATHER; the
    columns the pattern keeps, per row (R x K). A result DataType other than the
    source's (same width) reinterprets the bits."""

    name = "tile.gather_pattern"
    INTERFACE: ClassVar[str] = "gather_pattern"
    pattern = prop_def(StringAttr)

    def __init__(self, t: SSAValue, pattern: str | int, dtype: str | None = None) -> None:
        tt = tile_type(t)
        name = pattern_name(pattern)
        period, off = PATTERNS.get(name, (1, 0))
        r, c = tt.valid
        k = max(1, -(-(c - off) // period))
        rt = TileType(dtype or tt.dtype, (r, k))
        super().__init__(
            operands=[[t]], result_types=[[rt]], properties={"pattern": StringAttr(name)}
        )

    @property
    def period_offset(self) -> tuple[int, int]:
        return PATTERNS[self.pattern.data]

    def ref(self, args: Sequence[np.ndarray]) -> Arrays:
        dt = carrier_of(tile_type(self.outs[0]))
        return (cr.gather_pattern(args[0], self.pattern.data, dtype=dt),)

    def print_operands(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.inputs[0])
        printer.print_string(f" pattern {self.pattern.data}")

    @classmethod
    def parse_operands(cls, parser: Parser) -> tuple[list[UnresolvedOperand], dict[str, Any]]:
        t = parser.parse_unresolved_operand()
        parser.parse_keyword("pattern")
        return [t], {"pattern": parser.parse_identifier()}

    @classmethod
    def build_parsed(
        cls, operands: list[SSAValue], results: list[Attribute], kw: dict[str, Any]
    ) -> GatherPatternOp:
        return cls(operands[0], kw["pattern"], _result(results).dt.value)


@irdl_op_definition
class GatherFlatOp(CompoundOp):
    """``%r = tile.gather_flat %t, %offsets``: pto-isa index-form TGATHER,
    ``r[i, j] = t.flat[offsets[i, j]]`` (row-major offsets into the valid region)."""

    name = "tile.gather_flat"
    INTERFACE: ClassVar[str] = "gather_flat"

    def __init__(self, t: SSAValue, offsets: SSAValue) -> None:
        rt = TileType(tile_type(t).dtype, tile_type(offsets).valid)
        super().__init__(operands=[[t, offsets]], result_types=[[rt]])

    def verify_roles(self) -> None:
        if len(self.inputs) != 2:
            raise VerifyException("tile.gather_flat takes a tile and an offset tile")

    def ref(self, args: Sequence[np.ndarray]) -> Arrays:
        return (cr.gather_flat(args[0], args[1]),)

    @classmethod
    def build_parsed(
        cls, operands: list[SSAValue], results: list[Attribute], kw: dict[str, Any]
    ) -> GatherFlatOp:
        return cls(*operands)


@irdl_op_definition
class GatherBlocksOp(CompoundOp):
    """``%r = tile.gather_blocks %t, %byte_offsets``: pto-isa TGATHERB. Row i, block b of
    the result is the 32 bytes of ``t``'s row-major storage at ``byte_offsets[i, b]``."""

    name = "tile.gather_blocks"
    INTERFACE: ClassVar[str] = "gather_blocks"

    def __init__(self, t: SSAValue, byte_offsets: SSAValue) -> None:
        tt = tile_type(t)
        r, nb = tile_type(byte_offsets).valid
        per = max(1, 32 // np.dtype(carrier_of(tt)).itemsize)
        super().__init__(
            operands=[[t, byte_offsets]], result_types=[[TileType(tt.dtype, (r, nb * per))]]
        )

    def verify_roles(self) -> None:
        if len(self.inputs) != 2:
            raise VerifyException("tile.gather_blocks takes a tile and an offset tile")
        t = tile_type(self.inputs[0])
        nbytes = t.valid[0] * t.valid[1] * np.dtype(carrier_of(t)).itemsize
        if nbytes < 32:
            raise RuleError(self.name, f"the {nbytes}-byte source holds no 32-byte block")

    def ref(self, args: Sequence[np.ndarray]) -> Arrays:
        return (cr.gather_blocks(args[0], args[1]),)

    @classmethod
    def build_parsed(
        cls, operands: list[SSAValue], results: list[Attribute], kw: dict[str, Any]
    ) -> GatherBlocksOp:
        return cls(*operands)


@irdl_op_definition
class ScatterFlatOp(CompoundOp):
    """``%r = tile.scatter_flat %t, %offsets [into %old]``: NPU TSCATTER,
    ``r.flat[offsets[i, j]] = t[i, j]`` in row-major source order (the last writer wins);
    unwritten elements are +0 bits, or ``%old``'s. The result type gives the shape."""

    name = "tile.scatter_flat"
    INTERFACE: ClassVar[str] = "scatter_flat"

    def __init__(
        self,
        t: SSAValue,
        offsets: SSAValue,
        shape: Sequence[int] | None = None,
        into: SSAValue | None = None,
    ) -> None:
        tt = tile_type(t)
        if shape is None:
            assert into is not None, "scatter_flat needs a shape or an into tile"
            shape = tile_type(into).valid
        ops = [t, offsets] if into is None else [t, offsets, into]
        super().__init__(operands=[ops], result_types=[[TileType(tt.dtype, tuple(shape))]])

    @property
    def into(self) -> SSAValue | None:
        return self.inputs[2] if len(self.inputs) > 2 else None

    def verify_roles(self) -> None:
        if len(self.inputs) not in (2, 3):
            raise VerifyException(
                "tile.scatter_flat takes a tile, an offset tile and an optional into tile"
            )

    def ref(self, args: Sequence[np.ndarray]) -> Arrays:
        shape = tile_type(self.outs[0]).valid
        return (cr.scatter_flat(args[0], args[1], shape, args[2] if len(args) > 2 else None),)

    def print_operands(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_list(self.inputs[:2], printer.print_operand)
        print_keyword_operands(printer, "into", self.inputs[2:])

    @classmethod
    def parse_operands(cls, parser: Parser) -> tuple[list[UnresolvedOperand], dict[str, Any]]:
        t = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        off = parser.parse_unresolved_operand()
        into = keyword_operand(parser, "into")
        return [t, off] if into is None else [t, off, into], {}

    @classmethod
    def build_parsed(
        cls, operands: list[SSAValue], results: list[Attribute], kw: dict[str, Any]
    ) -> ScatterFlatOp:
        into = operands[2] if len(operands) > 2 else None
        return cls(operands[0], operands[1], _result(results).valid, into)


@irdl_op_definition
class TransposeOp(CompoundOp):
    """``%r = tile.transpose %t [scratch %tmp]``: pto-isa TTRANS(dst, src, tmp). The
    scratch tile is accepted and ignored (``docs/compound.md`` §9); a result DataType of
    the same width reinterprets the bits."""

    name = "tile.transpose"
    INTERFACE: ClassVar[str] = "transpose"

    def __init__(
        self, t: SSAValue, scratch: SSAValue | None = None, dtype: str | None = None
    ) -> None:
        tt = tile_type(t)
        r, c = tt.valid
        rt = TileType(dtype or tt.dtype, (c, r))
        super().__init__(
            operands=[[t] if scratch is None else [t, scratch]], result_types=[[rt]]
        )

    def verify_roles(self) -> None:
        if len(self.inputs) not in (1, 2):
            raise VerifyException("tile.transpose takes a tile and an optional scratch tile")

    def ref(self, args: Sequence[np.ndarray]) -> Arrays:
        dt = carrier_of(tile_type(self.outs[0]))
        return (cr.transpose(args[0], args[1] if len(args) > 1 else None, dtype=dt),)

    def print_operands(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.inputs[0])
        print_keyword_operands(printer, "scratch", self.inputs[1:])

    @classmethod
    def parse_operands(cls, parser: Parser) -> tuple[list[UnresolvedOperand], dict[str, Any]]:
        t = parser.parse_unresolved_operand()
        s = keyword_operand(parser, "scratch")
        return [t] if s is None else [t, s], {}

    @classmethod
    def build_parsed(
        cls, operands: list[SSAValue], results: list[Attribute], kw: dict[str, Any]
    ) -> TransposeOp:
        s = operands[1] if len(operands) > 1 else None
        return cls(operands[0], s, _result(results).dt.value)


GATHER_OPS = (GatherPatternOp, GatherFlatOp, GatherBlocksOp, ScatterFlatOp, TransposeOp)
