"""Layout, indexed, sorting, partial, generation and quantization ops (TEPL Mode 3).

Each maps one-to-one onto a catalog operation; the reference is that operation's
numpy semantics. Scalars (multipliers, zero points, starts, diagonals) are compile-time
literals that ``legalize`` turns into GPR operands.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import numpy as np
from xdsl.dialects.builtin import I64, DenseArrayBase, IntegerAttr, UnitAttr, i64
from xdsl.ir import SSAValue
from xdsl.irdl import (
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from ptoc.backend.isa import DataType, TileFamily
from ptoc.backend.isa import op as catalog_op
from ptoc.backend.isa import row as optable_row
from ptoc.backend.isa.semantics import generate, indexed, layout

from .dtypes import data_type
from .tile_base import (
    RefEnv,
    RuleError,
    TileOp,
    derive_ops,
    export,
    op_name,
    sole_row,
    tile_type,
)
from .tile_types import TileType

_PURE = traits_def(Pure())


def _dt(v: SSAValue) -> DataType:
    return data_type(tile_type(v).dtype)


@irdl_op_definition
class TransOp(TileOp):
    """``%r = tile.trans %a : T -> Tt``: ``r[c, r] = a[r, c]`` bit-exact (TTRANS)."""

    MNEMONIC: ClassVar[str | None] = sole_row(TileFamily.TRANS).mnemonic
    name = op_name(MNEMONIC)
    src = operand_def(TileType)
    result = result_def(TileType)
    traits = _PURE
    assembly_format = "$src attr-dict `:` type($src) `->` type($result)"

    def __init__(self, src: SSAValue) -> None:
        t = tile_type(src)
        rt = TileType(t.dtype, t.extent[::-1], t.valid[::-1])
        super().__init__(operands=[src], result_types=[rt])

    def verify_(self) -> None:
        s, r = tile_type(self.src), tile_type(self.result)
        self.check_dtype(s.dtype)
        self.check_row_major(s, r)
        if r.dtype != s.dtype or r.valid != s.valid[::-1] or r.extent != s.extent[::-1]:
            raise VerifyException(f"tile.trans of {s} produces the transposed tile, not {r}")

    def reference(self, env: RefEnv, args: Sequence[np.ndarray]) -> tuple[np.ndarray, ...]:
        return (self.semantics(_dt(self.src), args[0])[0],)


@irdl_op_definition
class ConcatOp(TileOp):
    """``%r = tile.concat %a, %b : Ta, Tb -> T``: the columns of ``a`` then ``b``."""

    MNEMONIC: ClassVar[str | None] = sole_row(TileFamily.CONCAT).mnemonic
    name = op_name(MNEMONIC)
    lhs = operand_def(TileType)
    rhs = operand_def(TileType)
    result = result_def(TileType)
    traits = _PURE
    assembly_format = "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)"

    def __init__(self, lhs: SSAValue, rhs: SSAValue) -> None:
        a, b = tile_type(lhs), tile_type(rhs)
        cols = a.valid[1] + b.valid[1]
        rt = TileType(a.dtype, (a.extent[0], cols), (a.valid[0], cols))
        super().__init__(operands=[lhs, rhs], result_types=[rt])

    def verify_(self) -> None:
        a, b, r = tile_type(self.lhs), tile_type(self.rhs), tile_type(self.result)
        self.check_dtype(a.dtype)
        self.check_row_major(a, b, r)
        if not a.dtype == b.dtype == r.dtype:
            raise VerifyException("tile.concat operands and result share one DataType")
        rule = layout.tconcat_shapes_legal(a.valid, b.valid, r.valid)
        if rule is not None:
            raise RuleError(self.name, rule)

    def reference(self, env: RefEnv, args: Sequence[np.ndarray]) -> tuple[np.ndarray, ...]:
        return (self.semantics(_dt(self.lhs), args[0], args[1])[0],)


@irdl_op_definition
class ExtractOp(TileOp):
    """``%r = tile.extract %a[1, 0] : Ta -> T``: the result-shaped window of ``a`` at the
    (row, column) offsets (TEXTRACT)."""

    MNEMONIC: ClassVar[str | None] = sole_row(TileFamily.EXTRACT).mnemonic
    name = op_name(MNEMONIC)
    src = operand_def(TileType)
    offsets = prop_def(DenseArrayBase.constr(i64))
    result = result_def(TileType)
    traits = _PURE
    assembly_format = "$src `` $offsets attr-dict `:` type($src) `->` type($result)"

    def __init__(self, src: SSAValue, offsets: Sequence[int], result_type: TileType) -> None:
        super().__init__(
            operands=[src],
            result_types=[result_type],
            properties={"offsets": DenseArrayBase.from_list(i64, offsets)},
        )

    @property
    def offset(self) -> tuple[int, int]:
        r, c = self.offsets.get_values()
        return (int(r), int(c))

    def verify_(self) -> None:
        s, r = tile_type(self.src), tile_type(self.result)
        self.check_dtype(s.dtype)
        if len(self.offsets.get_values()) != 2 or r.dtype != s.dtype:
            raise VerifyException("tile.extract takes two offsets and keeps the DataType")
        rule = layout.textract_shape_legal(s.valid, r.valid, *self.offset)
        if rule is not None:
            raise RuleError(self.name, rule)

    def reference(self, env: RefEnv, args: Sequence[np.ndarray]) -> tuple[np.ndarray, ...]:
        r = tile_type(self.result)
        return (self.semantics(_dt(self.src), args[0], *self.offset, r.valid)[0],)


@irdl_op_definition
class SortOp(TileOp):
    """``%v, %i = tile.sort %a width 32 [descending] : T -> T, Ti``: stable sort of each
    row's groups of ``width`` columns; ``%i`` holds original column offsets (TSORT)."""

    MNEMONIC: ClassVar[str | None] = sole_row(TileFamily.SORT).mnemonic
    name = op_name(MNEMONIC)
    src = operand_def(TileType)
    width = prop_def(IntegerAttr[I64])
    descending = opt_prop_def(UnitAttr)
    values = result_def(TileType)
    indices = result_def(TileType)
    traits = _PURE
    assembly_format = (
        "$src `width` $width (`descending` $descending^)? attr-dict `:` type($src) `->` "
        "type($values) `,` type($indices)"
    )

    def __init__(self, src: SSAValue, width: int = 32, descending: bool = False) -> None:
        t = tile_type(src)
        super().__init__(
            operands=[src],
            result_types=[t, t.with_dtype("U32")],
            properties={
                "width": IntegerAttr(width, i64),
                "descending": UnitAttr() if descending else None,
            },
        )

    def verify_(self) -> None:
        s, v, i = tile_type(self.src), tile_type(self.values), tile_type(self.indices)
        self.check_dtype(s.dtype)
        self.check_row_major(s)
        if v != s or i != s.with_dtype("U32"):
            raise VerifyException("tile.sort results are the source type and its U32 twin")
        if not 1 <= self.width.value.data <= 64:
            raise VerifyException("tile.sort width is 1..64")

    def reference(self, env: RefEnv, args: Sequence[np.ndarray]) -> tuple[np.ndarray, ...]:
        w = self.width.value.data
        vals, idx, _ = self.semantics(_dt(self.src), args[0], w, self.descending is not None)
        return (vals, idx)


@irdl_op_definition
class MrgSortOp(TileOp):
    """``%m = tile.mrgsort %a, %b [descending] : Ta, Tb -> T``: stable merge of two
    sorted single-row tiles, ties from ``a`` first (TMRGSORT)."""

    MNEMONIC: ClassVar[str | None] = sole_row(TileFamily.MRGSORT).mnemonic
    name = op_name(MNEMONIC)
    lhs = operand_def(TileType)
    rhs = operand_def(TileType)
    descending = opt_prop_def(UnitAttr)
    result = result_def(TileType)
    traits = _PURE
    assembly_format = (
        "$lhs `,` $rhs (`descending` $descending^)? attr-dict `:` type($lhs) `,` type($rhs) "
        "`->` type($result)"
    )

    def __init__(self, lhs: SSAValue, rhs: SSAValue, descending: bool = False) -> None:
        a, b = tile_type(lhs), tile_type(rhs)
        n = a.valid[1] + b.valid[1]
        super().__init__(
            operands=[lhs, rhs],
            result_types=[TileType(a.dtype, (1, n))],
            properties={"descending": UnitAttr() if descending else None},
        )

    def verify_(self) -> None:
        a, b, r = tile_type(self.lhs), tile_type(self.rhs), tile_type(self.result)
        self.check_dtype(a.dtype)
        if not a.dtype == b.dtype == r.dtype or a.valid[0] != 1 or b.valid[0] != 1:
            raise VerifyException("tile.mrgsort merges single-row tiles of one DataType")
        n = a.valid[1] + b.valid[1]
        if r.valid != (1, n):
            raise VerifyException(f"tile.mrgsort result has valid shape 1x{n}")

    def reference(self, env: RefEnv, args: Sequence[np.ndarray]) -> tuple[np.ndarray, ...]:
        desc = self.descending is not None
        return (self.semantics(_dt(self.lhs), args[0], args[1], desc)[0],)


@irdl_op_definition
class GatherOp(TileOp):
    """``%r = tile.gather %v, %idx : Tv, Ti -> T``: ``r[i, c] = v[idx[i, c], c]`` (TGATHER)."""

    MNEMONIC: ClassVar[str | None] = sole_row(TileFamily.GATHER).mnemonic
    name = op_name(MNEMONIC)
    values = operand_def(TileType)
    index = operand_def(TileType)
    result = result_def(TileType)
    traits = _PURE
    assembly_format = (
        "$values `,` $index attr-dict `:` type($values) `,` type($index) `->` type($result)"
    )

    def __init__(self, values: SSAValue, index: SSAValue) -> None:
        v, i = tile_type(values), tile_type(index)
        rt = TileType(v.dtype, i.extent, i.valid)
        super().__init__(operands=[values, index], result_types=[rt])

    def verify_(self) -> None:
        v, i, r = tile_type(self.values), tile_type(self.index), tile_type(self.result)
        rule = indexed.tgather_types_legal(data_type(v.dtype), data_type(i.dtype))
        if rule is not None:
            raise RuleError(self.name, rule)
        if r != TileType(v.dtype, i.extent, i.valid) or i.valid[1] > v.valid[1]:
            raise VerifyException("tile.gather result takes the index shape within the values")

    def reference(self, env: RefEnv, args: Sequence[np.ndarray]) -> tuple[np.ndarray, ...]:
        return (self.semantics(_dt(self.values), _dt(self.index), args[0], args[1])[0],)


@irdl_op_definition
class ScatterOp(TileOp):
    """``%r = tile.scatter %v, %idx : Tv, Ti -> T``: a zero tile with ``r[idx[i, c], c] =
    v[i, c]``; duplicate targets are illegal (TSCATTER)."""

    MNEMONIC: ClassVar[str | None] = sole_row(TileFamily.SCATTER).mnemonic
    name = op_name(MNEMONIC)
    values = operand_def(TileType)
    index = operand_def(TileType)
    result = result_def(TileType)
    traits = _PURE
    assembly_format = (
        "$values `,` $index attr-dict `:` type($values) `,` type($index) `->` type($result)"
    )

    def __init__(self, values: SSAValue, index: SSAValue, rows: int) -> None:
        v = tile_type(values)
        rt = TileType(v.dtype, (rows, v.extent[1]), (rows, v.valid[1]))
        super().__init__(operands=[values, index], result_types=[rt])

    def verify_(self) -> None:
        v, i, r = tile_type(self.values), tile_type(self.index), tile_type(self.result)
        rule = indexed.tscatter_types_legal(data_type(v.dtype), data_type(i.dtype))
        if rule is not None:
            raise RuleError(self.name, rule)
        if i.valid != v.valid or r.dtype != v.dtype or r.valid[1] != v.valid[1]:
            raise VerifyException("tile.scatter index matches the values; result keeps columns")

    def reference(self, env: RefEnv, args: Sequence[np.ndarray]) -> tuple[np.ndarray, ...]:
        r = tile_type(self.result)
        res = self.semantics(
            _dt(self.values), _dt(self.index), args[0], args[1], r.valid[0], r.valid
        )
        return (res[0][:, : r.valid[0], : r.valid[1]],)


class PartOp(TileOp):
    """``%r = tile.part<op> %a, %b : Ta, Tb -> T``: union of two origin-anchored
    rectangles; the typed op where both cover, a bit copy where one does (TPART*)."""

    lhs = operand_def(TileType)
    rhs = operand_def(TileType)
    result = result_def(TileType)
    traits = _PURE
    assembly_format = "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)"

    def __init__(self, lhs: SSAValue, rhs: SSAValue) -> None:
        a, b = tile_type(lhs), tile_type(rhs)
        big = a if a.valid[0] >= b.valid[0] and a.valid[1] >= b.valid[1] else b
        super().__init__(operands=[lhs, rhs], result_types=[big])

    def verify_(self) -> None:
        a, b, r = tile_type(self.lhs), tile_type(self.rhs), tile_type(self.result)
        self.check_dtype(a.dtype)
        self.check_row_major(a, b, r)
        if not a.dtype == b.dtype == r.dtype:
            raise VerifyException(f"{self.name} operands and result share one DataType")
        from ptoc.backend.isa.semantics.partial import tpart_shapes_legal

        rule = tpart_shapes_legal(a.valid, b.valid, r.valid)
        if rule is not None:
            raise RuleError(self.name, rule)

    def reference(self, env: RefEnv, args: Sequence[np.ndarray]) -> tuple[np.ndarray, ...]:
        assert self.MNEMONIC is not None
        fn = optable_row(self.MNEMONIC).semantics
        assert fn is not None
        return (fn(_dt(self.lhs), args[0], args[1], tile_type(self.result).valid)[0],)


#: ``PartAddOp`` ... ``PartMinOp``: one per operation-table row of the PART family
PART_OPS: tuple[type[PartOp], ...] = derive_ops(
    PartOp,
    TileFamily.PART,
    lambda r: f"Part{(r.arith or '').capitalize()}Op",
    lambda r: f"{r.mnemonic}: partial {r.arith} of two anchored rectangles.",
)
export(globals(), PART_OPS)


def _check_generated(op: TileOp, t: TileType) -> None:
    assert op.MNEMONIC is not None
    if data_type(t.dtype) not in catalog_op(op.MNEMONIC).dtypes:
        raise VerifyException(f"{op.name} does not produce {t.dt.value}")


@irdl_op_definition
class CiOp(TileOp):
    """``%r = tile.ci start 5 [descending] : T``: one row ``start + k`` (or ``- k``),
    wrapping at the element width (TCI)."""

    MNEMONIC: ClassVar[str | None] = sole_row(TileFamily.CI).mnemonic
    name = op_name(MNEMONIC)
    start = prop_def(IntegerAttr[I64])
    descending = opt_prop_def(UnitAttr)
    result = result_def(TileType)
    traits = _PURE
    assembly_format = "`start` $start (`descending` $descending^)? attr-dict `:` type($result)"

    def __init__(self, start: int, result_type: TileType, descending: bool = False) -> None:
        super().__init__(
            result_types=[result_type],
            properties={
                "start": IntegerAttr(start, i64),
                "descending": UnitAttr() if descending else None,
            },
        )

    def verify_(self) -> None:
        t = tile_type(self.result)
        _check_generated(self, t)
        if t.valid[0] != 1:
            raise VerifyException("tile.ci produces one row")

    def reference(self, env: RefEnv, args: Sequence[np.ndarray]) -> tuple[np.ndarray, ...]:
        t = tile_type(self.result)
        start = env.gpr(self.start.value.data)
        direction = env.gpr(int(self.descending is not None))
        return (self.semantics(data_type(t.dtype), t.valid, start, direction)[0],)


@irdl_op_definition
class TriOp(TileOp):
    """``%r = tile.tri diagonal 0 [upper] : T``: 1 where ``c <= r + diagonal`` (lower) or
    ``c >= r + diagonal`` (upper), else 0 (TTRI)."""

    MNEMONIC: ClassVar[str | None] = sole_row(TileFamily.TRI).mnemonic
    name = op_name(MNEMONIC)
    diagonal = prop_def(IntegerAttr[I64])
    upper = opt_prop_def(UnitAttr)
    result = result_def(TileType)
    traits = _PURE
    assembly_format = "`diagonal` $diagonal (`upper` $upper^)? attr-dict `:` type($result)"

    def __init__(self, diagonal: int, result_type: TileType, upper: bool = False) -> None:
        super().__init__(
            result_types=[result_type],
            properties={
                "diagonal": IntegerAttr(diagonal, i64),
                "upper": UnitAttr() if upper else None,
            },
        )

    def verify_(self) -> None:
        _check_generated(self, tile_type(self.result))
        if abs(self.diagonal.value.data) > generate.DIAGONAL_LIMIT:
            raise VerifyException("tile.tri diagonal is outside -65535..65535")

    def reference(self, env: RefEnv, args: Sequence[np.ndarray]) -> tuple[np.ndarray, ...]:
        t = tile_type(self.result)
        diag = env.gpr(self.diagonal.value.data)
        orient = env.gpr(int(self.upper is not None))
        return (self.semantics(data_type(t.dtype), t.valid, diag, orient)[0],)


IRREGULAR_OPS: tuple[type[TileOp], ...] = (
    TransOp,
    ConcatOp,
    ExtractOp,
    SortOp,
    MrgSortOp,
    GatherOp,
    ScatterOp,
    *PART_OPS,
    CiOp,
    TriOp,
)
