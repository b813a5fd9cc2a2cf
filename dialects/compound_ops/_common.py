"""Shared machinery of the compound ``tile`` ops: one operand list, one result list,
role keywords in the custom syntax, and a reference that is a ``compound_ref`` function.

Every compound op keeps its operands in one variadic list (``inputs``) and its results
in another (``outs``); the op class names the role of each position (a list, its
payload, an ``into`` tile ...) from its properties. The custom syntax spells the roles
with keywords and ends with the functional type of the operands and results::

    %v, %p = tile.sort32 %t payload %idx : (!tile.tile<FP32, 4x64>,
        !tile.tile<U32, 4x64>) -> (!tile.tile<FP32, 4x64>, !tile.tile<U32, 4x64>)

The reference of an op is its ``compound_ref`` function applied to each PE's 2-D valid
arrays. The verifier runs that same function on zero tiles of the operand shapes, so the
static rules of the interface (types, shapes, patterns, block sizes) are checked by the
one definition that states them, and the declared result types must equal what the
function returns.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import traits_def, var_operand_def, var_result_def
from xdsl.parser import Parser, UnresolvedOperand
from xdsl.printer import Printer
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from ptoc.backend.isa import DataType, info
from ptoc.dialects.compound_ref import CompoundError

from ..dtypes import data_type, is_pred
from ..tile_base import CompoundTileOp, RefEnv, RuleError, tile_type
from ..tile_types import TileType

Arrays = tuple[np.ndarray, ...]


def carrier_of(t: TileType) -> np.dtype:
    """The numpy carrier of a tile's DataType; VerifyException for a DataType whose
    carrier does not hold it exactly (packed 4-bit, HiF8, TF32 ...) or a predicate."""
    if is_pred(t.dtype):
        raise VerifyException("compound interfaces do not take predicate tiles")
    ti = info(data_type(t.dtype))
    if not ti.exact_carrier or ti.bits < 8:
        raise VerifyException(
            f"compound interfaces take tiles whose DataType has an exact numpy carrier, "
            f"not {t.dt.value}"
        )
    return ti.carrier


def datatype_of_array(a: np.ndarray) -> DataType:
    """The DataType a ``compound_ref`` result array stands for (its exact carrier)."""
    for dt in DataType:
        ti = info(dt)
        if ti.exact_carrier and ti.bits >= 8 and ti.carrier == a.dtype:
            return dt
    raise VerifyException(f"no DataType has the carrier {a.dtype}")


def result_type(a: np.ndarray) -> TileType:
    """The tile type of a reference result: its DataType and shape (extent = valid)."""
    return TileType(datatype_of_array(a).name, a.shape)


class CompoundOp(CompoundTileOp):
    """Base of the per-interface compound ops (see the module docstring)."""

    inputs = var_operand_def(TileType)
    outs = var_result_def(TileType)
    traits = traits_def(Pure())

    #: the interface name in ``ptoc.dialects.compound_ref`` (for messages)
    INTERFACE: ClassVar[str] = ""

    # ---------------------------------------------------------------- semantics

    def ref(self, args: Sequence[np.ndarray]) -> Arrays:
        """The ``compound_ref`` call on one PE's 2-D arrays (in operand order)."""
        raise NotImplementedError

    def reference(self, env: RefEnv, args: Sequence[np.ndarray]) -> Arrays:
        outs: list[Arrays] = []
        for pe in range(env.pes):
            try:
                outs.append(self.ref([a[pe] for a in args]))
            except CompoundError as e:
                raise CompoundError(e.rule, op=self.name) from None
        return tuple(np.stack([o[k] for o in outs]) for k in range(len(self.outs)))

    def zero_inputs(self) -> list[np.ndarray]:
        return [np.zeros(tile_type(v).valid, carrier_of(tile_type(v))) for v in self.inputs]

    def expected_types(self) -> list[TileType]:
        """Result types the interface gives for the operand types (VerifyException when
        the interface rejects them)."""
        try:
            outs = self.ref(self.zero_inputs())
        except CompoundError as e:
            raise RuleError(self.name, e.rule) from None
        return [result_type(a) for a in outs]

    def verify_(self) -> None:
        self.verify_roles()
        want = self.expected_types()
        got = [tile_type(r) for r in self.outs]
        if len(want) != len(got):
            raise VerifyException(f"{self.name} has {len(want)} results, not {len(got)}")
        for i, (w, g) in enumerate(zip(want, got, strict=True)):
            if (w.dtype, w.valid) != (g.dtype, g.valid):
                raise VerifyException(
                    f"{self.name} result {i} is {w.dt.value} {w.valid[0]}x{w.valid[1]}, "
                    f"not {g.dt.value} {g.valid[0]}x{g.valid[1]}"
                )

    def verify_roles(self) -> None:
        """Operand-count and property checks before the reference runs."""

    # ---------------------------------------------------------------- syntax

    def print_operands(self, printer: Printer) -> None:
        """Everything between the op name and the attribute dictionary."""
        printer.print_string(" ")
        printer.print_list(self.inputs, printer.print_operand)

    def print(self, printer: Printer) -> None:
        self.print_operands(printer)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_function_type([v.type for v in self.inputs], [r.type for r in self.outs])

    @classmethod
    def parse_operands(cls, parser: Parser) -> tuple[list[UnresolvedOperand], dict[str, Any]]:
        """The operands (in ``inputs`` order) and the constructor keywords."""
        return _operand_list(parser), {}

    @classmethod
    def build_parsed(
        cls, operands: list[SSAValue], results: list[Attribute], kw: dict[str, Any]
    ) -> CompoundOp:
        """The op from resolved operands, result types and parsed keywords."""
        raise NotImplementedError

    @classmethod
    def parse(cls, parser: Parser) -> CompoundOp:
        unresolved, kw = cls.parse_operands(parser)
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        ft = parser.parse_function_type()
        if len(ft.inputs.data) != len(unresolved):
            parser.raise_error(
                f"{cls.name} has {len(unresolved)} operands but the type lists "
                f"{len(ft.inputs.data)}"
            )
        operands = [
            parser.resolve_operand(u, t)
            for u, t in zip(unresolved, ft.inputs.data, strict=True)
        ]
        results = list(ft.outputs.data)
        built = cls.build_parsed(operands, results, kw)
        # keep the written result types (the verifier then judges them)
        op = cls.create(
            operands=list(built.operands),
            result_types=results,
            properties=dict(built.properties),
            attributes=attrs,
        )
        built.erase()
        return op


def _operand_list(parser: Parser) -> list[UnresolvedOperand]:
    first = parser.parse_optional_unresolved_operand()
    if first is None:
        return []
    out = [first]
    while parser.parse_optional_punctuation(","):
        out.append(parser.parse_unresolved_operand())
    return out


def operand_list(parser: Parser) -> list[UnresolvedOperand]:
    """A comma-separated (possibly empty) list of operands."""
    return _operand_list(parser)


def keyword_operand(parser: Parser, keyword: str) -> UnresolvedOperand | None:
    """``keyword %v`` if present."""
    if parser.parse_optional_keyword(keyword) is None:
        return None
    return parser.parse_unresolved_operand()


def keyword_operands(parser: Parser, keyword: str) -> list[UnresolvedOperand]:
    """``keyword %a, %b, ...`` if present."""
    if parser.parse_optional_keyword(keyword) is None:
        return []
    return _operand_list(parser)


def print_keyword_operands(printer: Printer, keyword: str, values: Sequence[SSAValue]) -> None:
    if values:
        printer.print_string(f" {keyword} ")
        printer.print_list(values, printer.print_operand)
