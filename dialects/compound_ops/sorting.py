"""Compound sort and merge ops: ``tile.sort32``, ``tile.merge_sorted``,
``tile.merge_blocks``, ``tile.pack_records``, ``tile.unpack_records``.

Records are ptoc's struct-of-arrays form: a value tile plus a U32 payload tile of the same
shape (``docs/compound.md`` §1-4). Each op's reference is the ``compound_ref`` function of
the same name.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
from xdsl.dialects.builtin import I64, IntegerAttr, UnitAttr, i64
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import irdl_op_definition, opt_prop_def, prop_def
from xdsl.parser import Parser, UnresolvedOperand
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from ptoc.dialects import compound_ref as cr

from ..tile_base import tile_type
from ..tile_types import TileType
from ._common import (
    Arrays,
    CompoundOp,
    carrier_of,
    keyword_operand,
    keyword_operands,
    operand_list,
    print_keyword_operands,
)


def _records(values: np.ndarray, payload: np.ndarray | None) -> Any:
    return values if payload is None else cr.Records(values, payload)


@irdl_op_definition
class Sort32Op(CompoundOp):
    """``%v, %p = tile.sort32 %t [payload %idx]``: pto-isa TSORT32. Every 32-column group
    of each row sorted descending (stable, NaN last), carrying a U32 payload: ``%idx``
    (R x C, or 1 x C shared by every row) or, by default, the column index."""

    name = "tile.sort32"
    INTERFACE: ClassVar[str] = "sort32"

    def __init__(self, t: SSAValue, payload: SSAValue | None = None) -> None:
        tt = tile_type(t)
        shape = tt.valid
        super().__init__(
            operands=[[t] if payload is None else [t, payload]],
            result_types=[[TileType(tt.dtype, shape), TileType("U32", shape)]],
        )

    @property
    def payload(self) -> SSAValue | None:
        return self.inputs[1] if len(self.inputs) > 1 else None

    def verify_roles(self) -> None:
        if len(self.inputs) not in (1, 2):
            raise VerifyException("tile.sort32 takes a tile and an optional payload")

    def ref(self, args: Sequence[np.ndarray]) -> Arrays:
        return tuple(cr.sort32(args[0], args[1] if len(args) > 1 else None))

    def print_operands(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.inputs[0])
        print_keyword_operands(printer, "payload", self.inputs[1:])

    @classmethod
    def parse_operands(cls, parser: Parser) -> tuple[list[UnresolvedOperand], dict[str, Any]]:
        t = parser.parse_unresolved_operand()
        p = keyword_operand(parser, "payload")
        return [t] if p is None else [t, p], {}

    @classmethod
    def build_parsed(
        cls, operands: list[SSAValue], results: list[Attribute], kw: dict[str, Any]
    ) -> Sort32Op:
        return cls(operands[0], operands[1] if len(operands) > 1 else None)


@irdl_op_definition
class MergeSortedOp(CompoundOp):
    """``%m, [%p,] %n = tile.merge_sorted %a, %b[, %c, %d] [payloads ...] [ascending]
    [top_k K] [exhausted]``: pto-isa multi-list TMRGSORT.

    A stable merge of 2-4 sorted single-row lists (ties to the lower list, NaN last).
    Results: the merged values (1 x L), the merged payloads when the lists carry them,
    and the U32 counts (1 x lists): how many records of each list the output holds.
    ``L`` is ``top_k`` when given, else the total record count. With ``exhausted`` the
    merge stops after the record that empties any list; the positions past that point
    hold zero bits (static tile shapes: ``compound_ref`` returns the shorter prefix).
    """

    name = "tile.merge_sorted"
    INTERFACE: ClassVar[str] = "merge_sorted"
    lists = prop_def(IntegerAttr[I64])
    ascending = opt_prop_def(UnitAttr)
    top_k = opt_prop_def(IntegerAttr[I64])
    exhausted = opt_prop_def(UnitAttr)

    def __init__(
        self,
        lists: Sequence[SSAValue],
        payloads: Sequence[SSAValue] = (),
        *,
        descending: bool = True,
        top_k: int | None = None,
        exhausted: bool = False,
    ) -> None:
        k = len(lists)
        first = tile_type(lists[0])
        total = sum(tile_type(v).valid[1] for v in lists)
        length = total if top_k is None else int(top_k)
        results = [TileType(first.dtype, (1, length))]
        if payloads:
            results.append(TileType("U32", (1, length)))
        results.append(TileType("U32", (1, k)))
        super().__init__(
            operands=[[*lists, *payloads]],
            result_types=[results],
            properties={
                "lists": IntegerAttr(k, i64),
                "ascending": None if descending else UnitAttr(),
                "top_k": None if top_k is None else IntegerAttr(int(top_k), i64),
                "exhausted": UnitAttr() if exhausted else None,
            },
        )

    # ---------------------------------------------------------------- roles

    @property
    def k(self) -> int:
        return self.lists.value.data

    @property
    def list_values(self) -> tuple[SSAValue, ...]:
        return tuple(self.inputs[: self.k])

    @property
    def list_payloads(self) -> tuple[SSAValue, ...]:
        return tuple(self.inputs[self.k :])

    @property
    def descending(self) -> bool:
        return self.ascending is None

    @property
    def k_top(self) -> int | None:
        return None if self.top_k is None else self.top_k.value.data

    @property
    def is_exhausted(self) -> bool:
        return self.exhausted is not None

    @property
    def length(self) -> int:
        """The static output length (``top_k``, else every record)."""
        if self.k_top is not None:
            return self.k_top
        return sum(tile_type(v).valid[1] for v in self.list_values)

    def verify_roles(self) -> None:
        k = self.k
        if not 2 <= k <= 4:
            raise VerifyException(f"tile.merge_sorted merges 2 to 4 lists, not {k}")
        if len(self.inputs) not in (k, 2 * k):
            raise VerifyException(
                f"tile.merge_sorted takes {k} lists and optionally {k} payloads, not "
                f"{len(self.inputs)} operands"
            )

    def ref(self, args: Sequence[np.ndarray]) -> Arrays:
        k = self.k
        payloads = args[k:] if len(args) > k else [None] * k
        lists = [_records(v, p) for v, p in zip(args[:k], payloads, strict=True)]
        out, counts = cr.merge_sorted(
            *lists, descending=self.descending, top_k=self.k_top, exhausted=self.is_exhausted
        )
        parts = list(out) if isinstance(out, tuple) else [out]
        length = self.length
        padded = []
        for a in parts:  # positions past the exhausted stop hold zero bits
            z = np.zeros((1, length), a.dtype)
            z[:, : a.shape[1]] = a
            padded.append(z)
        return (*padded, np.array([counts], np.uint32))

    # ---------------------------------------------------------------- syntax

    def print_operands(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_list(self.list_values, printer.print_operand)
        print_keyword_operands(printer, "payloads", self.list_payloads)
        if not self.descending:
            printer.print_string(" ascending")
        if self.k_top is not None:
            printer.print_string(f" top_k {self.k_top}")
        if self.is_exhausted:
            printer.print_string(" exhausted")

    @classmethod
    def parse_operands(cls, parser: Parser) -> tuple[list[UnresolvedOperand], dict[str, Any]]:
        lists = operand_list(parser)
        payloads = keyword_operands(parser, "payloads")
        kw: dict[str, Any] = {"lists": len(lists)}
        kw["descending"] = parser.parse_optional_keyword("ascending") is None
        if parser.parse_optional_keyword("top_k") is not None:
            kw["top_k"] = parser.parse_integer(allow_negative=False)
        kw["exhausted"] = parser.parse_optional_keyword("exhausted") is not None
        return [*lists, *payloads], kw

    @classmethod
    def build_parsed(
        cls, operands: list[SSAValue], results: list[Attribute], kw: dict[str, Any]
    ) -> MergeSortedOp:
        k = kw.pop("lists")
        return cls(operands[:k], operands[k:], **kw)


@irdl_op_definition
class MergeBlocksOp(CompoundOp):
    """``%m [, %p] = tile.merge_blocks %v [payload %p] block B [ascending]``: pto-isa
    single-tile TMRGSORT. Every group of four sorted ``B``-record blocks of the single
    row is merged in place (a partial tail group merges the blocks it has)."""

    name = "tile.merge_blocks"
    INTERFACE: ClassVar[str] = "merge_blocks"
    block = prop_def(IntegerAttr[I64])
    ascending = opt_prop_def(UnitAttr)

    def __init__(
        self, values: SSAValue, block: int, payload: SSAValue | None = None, *,
        descending: bool = True,
    ) -> None:  # fmt: skip
        t = tile_type(values)
        results = [TileType(t.dtype, t.valid)]
        if payload is not None:
            results.append(TileType("U32", t.valid))
        super().__init__(
            operands=[[values] if payload is None else [values, payload]],
            result_types=[results],
            properties={
                "block": IntegerAttr(int(block), i64),
                "ascending": None if descending else UnitAttr(),
            },
        )

    @property
    def block_len(self) -> int:
        return self.block.value.data

    @property
    def descending(self) -> bool:
        return self.ascending is None

    @property
    def payload(self) -> SSAValue | None:
        return self.inputs[1] if len(self.inputs) > 1 else None

    def verify_roles(self) -> None:
        if len(self.inputs) not in (1, 2):
            raise VerifyException("tile.merge_blocks takes a tile and an optional payload")

    def ref(self, args: Sequence[np.ndarray]) -> Arrays:
        out = cr.merge_blocks(
            _records(args[0], args[1] if len(args) > 1 else None),
            self.block_len,
            descending=self.descending,
        )
        return tuple(out) if isinstance(out, tuple) else (out,)

    def print_operands(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.inputs[0])
        print_keyword_operands(printer, "payload", self.inputs[1:])
        printer.print_string(f" block {self.block_len}")
        if not self.descending:
            printer.print_string(" ascending")

    @classmethod
    def parse_operands(cls, parser: Parser) -> tuple[list[UnresolvedOperand], dict[str, Any]]:
        v = parser.parse_unresolved_operand()
        p = keyword_operand(parser, "payload")
        parser.parse_keyword("block")
        block = parser.parse_integer(allow_negative=True)
        desc = parser.parse_optional_keyword("ascending") is None
        return [v] if p is None else [v, p], {"block": block, "descending": desc}

    @classmethod
    def build_parsed(
        cls, operands: list[SSAValue], results: list[Attribute], kw: dict[str, Any]
    ) -> MergeBlocksOp:
        p = operands[1] if len(operands) > 1 else None
        return cls(operands[0], kw["block"], p, descending=kw["descending"])


@irdl_op_definition
class PackRecordsOp(CompoundOp):
    """``%r = tile.pack_records %v, %p``: pto-isa's interleaved 8-byte records as raw
    bits, U32 (R x 2C) for FP32 values, U16 (R x 4C) for FP16 values."""

    name = "tile.pack_records"
    INTERFACE: ClassVar[str] = "pack_records"

    def __init__(self, values: SSAValue, payload: SSAValue) -> None:
        t = tile_type(values)
        r, c = t.valid
        rt = (
            TileType("U32", (r, 2 * c)) if t.dt.value == "FP32" else TileType("U16", (r, 4 * c))
        )
        super().__init__(operands=[[values, payload]], result_types=[[rt]])

    def verify_roles(self) -> None:
        if len(self.inputs) != 2:
            raise VerifyException("tile.pack_records takes a value tile and a payload tile")

    def ref(self, args: Sequence[np.ndarray]) -> Arrays:
        return (cr.pack_records(cr.Records(args[0], args[1])),)

    @classmethod
    def build_parsed(
        cls, operands: list[SSAValue], results: list[Attribute], kw: dict[str, Any]
    ) -> PackRecordsOp:
        return cls(*operands)


@irdl_op_definition
class UnpackRecordsOp(CompoundOp):
    """``%v, %p = tile.unpack_records %t``: interleaved 8-byte records -> values (the
    first result's DataType, FP32 or FP16) and U32 payloads, (R x row_bytes/8) each."""

    name = "tile.unpack_records"
    INTERFACE: ClassVar[str] = "unpack_records"

    def __init__(self, t: SSAValue, dtype: str) -> None:
        tt = tile_type(t)
        r, c = tt.valid
        n = c * np.dtype(carrier_of(tt)).itemsize // 8
        super().__init__(
            operands=[[t]], result_types=[[TileType(dtype, (r, n)), TileType("U32", (r, n))]]
        )

    def verify_roles(self) -> None:
        if len(self.inputs) != 1 or len(self.outs) != 2:
            raise VerifyException("tile.unpack_records takes one tile and has two results")

    def ref(self, args: Sequence[np.ndarray]) -> Arrays:
        dt = carrier_of(tile_type(self.outs[0]))
        return tuple(cr.unpack_records(args[0], dt))

    @classmethod
    def build_parsed(
        cls, operands: list[SSAValue], results: list[Attribute], kw: dict[str, Any]
    ) -> UnpackRecordsOp:
        rt = results[0]
        assert isinstance(rt, TileType)
        return cls(operands[0], rt.dt.value)


SORTING_OPS = (Sort32Op, MergeSortedOp, MergeBlocksOp, PackRecordsOp, UnpackRecordsOp)
