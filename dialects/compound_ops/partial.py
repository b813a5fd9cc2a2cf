"""``tile.partial``: TPARTADD/MUL/MAX/MIN where neither source need cover the destination
and either source may be empty (``docs/compound.md`` §14).

    %r = tile.partial max %a, %b pad -inf : (!A, !B) -> (!R)
    %r = tile.partial add %a, empty : (!A) -> (!R)

Both sources are anchored at [0, 0] inside the destination (the result type). Covered by
both: the seed TADD/TMUL/TMAX/TMIN element rule; by one: that element's bits; by none:
``pad`` (default: 0 for add/mul, -inf or the type minimum for max, +inf or the type
maximum for min). ``empty`` stands for a source with no valid element.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
from xdsl.dialects.builtin import StringAttr, UnitAttr
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import irdl_op_definition, opt_prop_def, prop_def
from xdsl.parser import Parser, UnresolvedOperand
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from ptoc.dialects import compound_ref as cr

from ..dtypes import data_type
from ..tile_base import Number, ScalarAttr, format_number, parse_number, scalar_bits, tile_type
from ..tile_types import TileType
from ._common import Arrays, CompoundOp, carrier_of

KINDS = ("add", "mul", "max", "min")
_FNS = {
    "add": cr.partial_add,
    "mul": cr.partial_mul,
    "max": cr.partial_max,
    "min": cr.partial_min,
}


@irdl_op_definition
class PartialOp(CompoundOp):
    """Partial elementwise add/mul/max/min over the result's valid shape (see module)."""

    name = "tile.partial"
    INTERFACE: ClassVar[str] = "partial"
    kind = prop_def(StringAttr)
    pad = opt_prop_def(ScalarAttr)
    lhs_empty = opt_prop_def(UnitAttr)
    rhs_empty = opt_prop_def(UnitAttr)

    def __init__(
        self,
        kind: str,
        lhs: SSAValue | None,
        rhs: SSAValue | None,
        result: TileType,
        pad: Number | None = None,
    ) -> None:
        super().__init__(
            operands=[[v for v in (lhs, rhs) if v is not None]],
            result_types=[[result]],
            properties={
                "kind": StringAttr(kind),
                "pad": None if pad is None else ScalarAttr(pad),
                "lhs_empty": UnitAttr() if lhs is None else None,
                "rhs_empty": UnitAttr() if rhs is None else None,
            },
        )

    @property
    def op_kind(self) -> str:
        return self.kind.data

    @property
    def lhs(self) -> SSAValue | None:
        return None if self.lhs_empty is not None else self.inputs[0]

    @property
    def rhs(self) -> SSAValue | None:
        if self.rhs_empty is not None:
            return None
        return self.inputs[0 if self.lhs_empty is not None else 1]

    @property
    def pad_value(self) -> Number:
        """The fill of uncovered positions (the interface default when omitted)."""
        if self.pad is not None:
            return self.pad.value
        dt = carrier_of(tile_type(self.outs[0]))
        v = cr.partial.default_pad(self.op_kind, dt)
        return float(v) if np.dtype(dt).kind not in "iu" else int(v)

    def verify_roles(self) -> None:
        if self.op_kind not in KINDS:
            raise VerifyException(
                f"tile.partial kind is add, mul, max or min, not {self.op_kind}"
            )
        want = (self.lhs_empty is None) + (self.rhs_empty is None)
        if len(self.inputs) != want:
            raise VerifyException(f"tile.partial has {want} nonempty sources as operands")
        rt = tile_type(self.outs[0])
        for v in self.inputs:
            if tile_type(v).dtype != rt.dtype:
                raise VerifyException("tile.partial sources and result share one DataType")
        if self.pad is not None:
            try:
                scalar_bits(data_type(rt.dtype), self.pad.value)
            except ValueError as e:
                raise VerifyException(f"tile.partial pad: {e}") from None

    def ref(self, args: Sequence[np.ndarray]) -> Arrays:
        rt = tile_type(self.outs[0])
        empty = np.zeros((0, 0), carrier_of(rt))
        it = iter(args)
        a = empty if self.lhs_empty is not None else next(it)
        b = empty if self.rhs_empty is not None else next(it)
        pad = None if self.pad is None else self.pad.value
        return (_FNS[self.op_kind](a, b, rt.valid, pad),)

    def print_operands(self, printer: Printer) -> None:
        printer.print_string(f" {self.op_kind} ")
        for i, v in enumerate((self.lhs, self.rhs)):
            if i:
                printer.print_string(", ")
            if v is None:
                printer.print_string("empty")
            else:
                printer.print_operand(v)
        if self.pad is not None:
            printer.print_string(f" pad {format_number(self.pad.value)}")

    @classmethod
    def parse_operands(cls, parser: Parser) -> tuple[list[UnresolvedOperand], dict[str, Any]]:
        kind = parser.parse_identifier()
        operands: list[UnresolvedOperand] = []
        present: list[bool] = []
        for i in range(2):
            if i:
                parser.parse_punctuation(",")
            if parser.parse_optional_keyword("empty") is not None:
                present.append(False)
            else:
                operands.append(parser.parse_unresolved_operand())
                present.append(True)
        pad = parse_number(parser) if parser.parse_optional_keyword("pad") else None
        return operands, {"kind": kind, "present": present, "pad": pad}

    @classmethod
    def build_parsed(
        cls, operands: list[SSAValue], results: list[Attribute], kw: dict[str, Any]
    ) -> PartialOp:
        it = iter(operands)
        lhs = next(it) if kw["present"][0] else None
        rhs = next(it) if kw["present"][1] else None
        rt = results[0]
        if not isinstance(rt, TileType):
            raise VerifyException("tile.partial produces a !tile.tile")
        return cls(kw["kind"], lhs, rhs, rt, kw["pad"])


PARTIAL_OPS = (PartialOp,)
