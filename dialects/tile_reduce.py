"""Reductions and expansions (TEPL Mode 2): ``tile.rowsum``, ``tile.colmax``,
``tile.rowexpandsub``, ``tile.rowexpand`` ... Row results are one column wide and col
results one row high; broadcasts are the matching one-column / one-row tiles.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ClassVar

import numpy as np
from xdsl.ir import SSAValue
from xdsl.irdl import (
    VarConstraint,
    base,
    irdl_op_definition,
    operand_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from ptoc.backend.isa import Axis, DataType, OperandKind, OpRow, TileFamily
from ptoc.backend.isa import row as optable_row

from .dtypes import data_type
from .tile_base import RefEnv, TileOp, derive_ops, export, op_name, sole_row, tile_type
from .tile_types import TileType

_PURE = traits_def(Pure())


def row_result_type(src: TileType, dtype: str | None = None) -> TileType:
    """The (R, 1) tile a row reduction of ``src`` produces."""
    return TileType(dtype or src.dtype, (src.extent[0], 1), (src.valid[0], 1))


def col_result_type(src: TileType, dtype: str | None = None) -> TileType:
    """The (1, C) tile a column reduction of ``src`` produces (same physical Col)."""
    return TileType(dtype or src.dtype, (1, src.extent[1]), (1, src.valid[1]))


def _semantics(mnemonic: str) -> Callable[..., Any]:
    """The operation table's numpy semantics of ``mnemonic``."""
    fn = optable_row(mnemonic).semantics
    assert fn is not None, mnemonic
    return fn


class ReduceOp(TileOp):
    """``%r = tile.<row|col><op> %a : T -> Tr``: a typed left fold along rows or columns
    in increasing index order (ARG variants: index of the first extremum, U32)."""

    src = operand_def(TileType)
    result = result_def(TileType)
    traits = _PURE
    assembly_format = "$src attr-dict `:` type($src) `->` type($result)"
    ROW: ClassVar[bool] = True
    ARG: ClassVar[bool] = False

    def __init__(self, src: SSAValue) -> None:
        t = tile_type(src)
        dtype = "U32" if self.ARG else None
        rt = row_result_type(t, dtype) if self.ROW else col_result_type(t, dtype)
        super().__init__(operands=[src], result_types=[rt])

    def verify_(self) -> None:
        s, r = tile_type(self.src), tile_type(self.result)
        self.check_dtype(s.dtype)
        self.check_row_major(s)
        want = "U32" if self.ARG else None
        expect = row_result_type(s, want) if self.ROW else col_result_type(s, want)
        if r != expect:
            raise VerifyException(f"{self.name} of {s} produces {expect}, not {r}")

    def reference(self, env: RefEnv, args: Sequence[np.ndarray]) -> tuple[np.ndarray, ...]:
        assert self.MNEMONIC is not None
        fn = _semantics(self.MNEMONIC)
        dt = data_type(tile_type(self.src).dtype)
        if self.ARG:
            return (fn(dt, args[0], DataType.U32)[0],)
        return (fn(dt, args[0])[0],)


def _axis_name(r: OpRow) -> str:
    return "Row" if r.axis is Axis.ROW else "Col"


#: ``RowSumOp`` ... ``ColArgminOp``: one per operation-table row of the REDUCE family
REDUCE_OPS: tuple[type[ReduceOp], ...] = derive_ops(
    ReduceOp,
    TileFamily.REDUCE,
    lambda r: f"{_axis_name(r)}{(r.arith or '').capitalize()}Op",
    lambda r: f"{r.mnemonic}: {'row' if r.axis is Axis.ROW else 'column'} {r.arith} reduction.",
    ROW=lambda r: r.axis is Axis.ROW,
    ARG=lambda r: r.destinations[0].kind is OperandKind.INDEX,
)
export(globals(), REDUCE_OPS)


def _check_bcast(op: TileOp, src: TileType, bcast: TileType, row: bool) -> None:
    if row:
        ok = bcast.valid == (src.valid[0], 1) and bcast.extent[1] == 1
        what = f"valid {src.valid[0]}x1 and one column"
    else:
        ok = bcast.valid == (1, src.valid[1]) and bcast.extent[1] == src.extent[1]
        what = f"valid 1x{src.valid[1]} and {src.extent[1]} columns"
    if not ok:
        raise VerifyException(f"{op.name} broadcast tile must have {what}, not {bcast}")


class ExpandBinaryOp(TileOp):
    """``%r = tile.rowexpand<op> %a, %b : T, Tb``: ``a[r, c] op b[r, 0]`` (row) or
    ``a[r, c] op b[0, c]`` (col), with the typed TADD/TSUB/... semantics."""

    T: ClassVar = VarConstraint("T", base(TileType))
    src = operand_def(T)
    bcast = operand_def(TileType)
    result = result_def(T)
    traits = _PURE
    assembly_format = "$src `,` $bcast attr-dict `:` type($src) `,` type($bcast)"
    ROW: ClassVar[bool] = True

    def __init__(self, src: SSAValue, bcast: SSAValue) -> None:
        super().__init__(operands=[src, bcast], result_types=[src.type])

    def verify_(self) -> None:
        s, b = tile_type(self.src), tile_type(self.bcast)
        self.check_dtype(s.dtype)
        self.check_row_major(s, b)
        if b.dtype != s.dtype:
            raise VerifyException(f"{self.name} broadcast DataType must be {s.dt.value}")
        _check_bcast(self, s, b, self.ROW)

    def reference(self, env: RefEnv, args: Sequence[np.ndarray]) -> tuple[np.ndarray, ...]:
        assert self.MNEMONIC is not None
        fn = _semantics(self.MNEMONIC)
        dt = data_type(tile_type(self.src).dtype)
        return (fn(dt, args[0], args[1])[0],)


#: ``RowExpandAddOp`` ... ``ColExpandMinOp``: one per row of the EXPAND_BINARY family
EXPAND_BINARY_OPS: tuple[type[ExpandBinaryOp], ...] = derive_ops(
    ExpandBinaryOp,
    TileFamily.EXPAND_BINARY,
    lambda r: f"{_axis_name(r)}Expand{(r.arith or '').capitalize()}Op",
    lambda r: (
        f"{r.mnemonic}: {r.arith} against a "
        f"{'column' if r.axis is Axis.ROW else 'row'} broadcast."
    ),
    ROW=lambda r: r.axis is Axis.ROW,
)
export(globals(), EXPAND_BINARY_OPS)


class ExpandCopyOp(TileOp):
    """``%r = tile.rowexpand %b : Tb -> T``: broadcast a column (row) bit for bit."""

    bcast = operand_def(TileType)
    result = result_def(TileType)
    traits = _PURE
    assembly_format = "$bcast attr-dict `:` type($bcast) `->` type($result)"
    ROW: ClassVar[bool] = True

    def __init__(self, bcast: SSAValue, result_type: TileType) -> None:
        super().__init__(operands=[bcast], result_types=[result_type])

    def verify_(self) -> None:
        b, r = tile_type(self.bcast), tile_type(self.result)
        self.check_dtype(r.dtype)
        self.check_row_major(b, r)
        if b.dtype != r.dtype:
            raise VerifyException(f"{self.name} keeps the DataType")
        _check_bcast(self, r, b, self.ROW)

    def reference(self, env: RefEnv, args: Sequence[np.ndarray]) -> tuple[np.ndarray, ...]:
        assert self.MNEMONIC is not None
        fn = _semantics(self.MNEMONIC)
        r = tile_type(self.result)
        return (fn(data_type(r.dtype), None, args[0], r.valid)[0],)


@irdl_op_definition
class RowExpandOp(ExpandCopyOp):
    """TROWEXPAND: ``dst[r, c] = b[r, 0]``."""

    MNEMONIC: ClassVar[str | None] = sole_row(TileFamily.EXPAND_COPY, axis=Axis.ROW).mnemonic
    name = op_name(MNEMONIC)
    ROW: ClassVar[bool] = True


@irdl_op_definition
class ColExpandOp(ExpandCopyOp):
    """TCOLEXPAND: ``dst[r, c] = b[0, c]``."""

    MNEMONIC: ClassVar[str | None] = sole_row(TileFamily.EXPAND_COPY, axis=Axis.COL).mnemonic
    name = op_name(MNEMONIC)
    ROW: ClassVar[bool] = False


class ExpdifOp(TileOp):
    """``%r = tile.rowexpandexpdif %a, %b : T, Tb -> Td``: ``exp(a - b)`` against the
    broadcast, in the result DataType (FP16/BF16 sources may widen to FP32)."""

    src = operand_def(TileType)
    bcast = operand_def(TileType)
    result = result_def(TileType)
    traits = _PURE
    assembly_format = (
        "$src `,` $bcast attr-dict `:` type($src) `,` type($bcast) `->` type($result)"
    )
    ROW: ClassVar[bool] = True

    def __init__(self, src: SSAValue, bcast: SSAValue, dtype: str | None = None) -> None:
        t = tile_type(src)
        super().__init__(
            operands=[src, bcast], result_types=[t.with_dtype(dtype) if dtype else t]
        )

    def verify_(self) -> None:
        s, b, r = tile_type(self.src), tile_type(self.bcast), tile_type(self.result)
        assert self.MNEMONIC is not None
        from ptoc.backend.isa import op as catalog_op

        pairs = catalog_op(self.MNEMONIC).type_pairs
        if (data_type(s.dtype), data_type(r.dtype)) not in pairs:
            raise VerifyException(f"{self.name} does not convert {s.dt.value} to {r.dt.value}")
        if b.dtype != s.dtype or (s.extent, s.valid) != (r.extent, r.valid):
            raise VerifyException(f"{self.name} operands and result disagree in shape or type")
        self.check_row_major(s, b)
        _check_bcast(self, s, b, self.ROW)

    def reference(self, env: RefEnv, args: Sequence[np.ndarray]) -> tuple[np.ndarray, ...]:
        assert self.MNEMONIC is not None
        fn = _semantics(self.MNEMONIC)
        s, r = tile_type(self.src), tile_type(self.result)
        return (fn(data_type(s.dtype), data_type(r.dtype), args[0], args[1])[0],)


@irdl_op_definition
class RowExpandExpdifOp(ExpdifOp):
    """TROWEXPANDEXPDIF: ``exp(a[r, c] - b[r, 0])``."""

    MNEMONIC: ClassVar[str | None] = sole_row(TileFamily.EXPDIF, axis=Axis.ROW).mnemonic
    name = op_name(MNEMONIC)
    ROW: ClassVar[bool] = True


@irdl_op_definition
class ColExpandExpdifOp(ExpdifOp):
    """TCOLEXPANDEXPDIF: ``exp(a[r, c] - b[0, c])``."""

    MNEMONIC: ClassVar[str | None] = sole_row(TileFamily.EXPDIF, axis=Axis.COL).mnemonic
    name = op_name(MNEMONIC)
    ROW: ClassVar[bool] = False


REDUCE_EXPAND_OPS: tuple[type[TileOp], ...] = (
    *REDUCE_OPS,
    *EXPAND_BINARY_OPS,
    RowExpandOp,
    ColExpandOp,
    RowExpandExpdifOp,
    ColExpandExpdifOp,
)
