"""The op builder the compound lowerings share: direct ``tile`` ops inserted before the
compound op being lowered, with its source location, plus cached constant tiles and the
GM-scratch views.

Every tile the builder creates has extent == valid shape, so the types of generated
values always agree; :meth:`Emit.norm` copies an operand with a larger extent first.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from xdsl.ir import Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from ptoc.backend.isa import row as optable_row
from ptoc.dialects import tile_elementwise as ew
from ptoc.dialects import tile_irregular as irr
from ptoc.dialects import tile_quant as tq
from ptoc.dialects import tile_reduce as red
from ptoc.dialects.compound_ops.view import ViewOp, element_bytes
from ptoc.dialects.modes import CMode, RMode, RModeAttr
from ptoc.dialects.tile_base import Number, TileOp, tile_type
from ptoc.dialects.tile_types import TileType

from ..diagnostics import CompileError, fail


def by_arith(ops: Sequence[type[_OpT]], kind: str) -> type[_OpT]:
    """The op class of ``ops`` whose operation-table row has arithmetic ``kind``
    (``by_arith(ew.BINARY_OPS, "add")`` is ``ew.AddOp``)."""
    for c in ops:
        if c.MNEMONIC is not None and optable_row(c.MNEMONIC).arith == kind:
            return c
    raise KeyError(kind)


Shape = tuple[int, int]
_OpT = TypeVar("_OpT", bound=TileOp)


def ttype(v: SSAValue) -> TileType:
    return tile_type(v)


def shape(v: SSAValue) -> Shape:
    return tile_type(v).valid


def dt(v: SSAValue) -> str:
    return tile_type(v).dt.value


@dataclass
class Scratch:
    """The GM scratch tensor of a kernel: created on the first view, sized at the end."""

    make: Callable[[], SSAValue]
    value: SSAValue | None = None
    bytes: int = 0

    def get(self, nbytes: int) -> SSAValue:
        if self.value is None:
            self.value = self.make()
        self.bytes = max(self.bytes, nbytes)
        return self.value


@dataclass
class Emit:
    """Builds direct ops before ``anchor`` (the compound op being lowered)."""

    anchor: Operation
    scratch: Scratch
    #: bytes per PE of one compare-matrix chunk (merges)
    matrix_bytes: int = 16384
    consts: dict[tuple[object, ...], SSAValue] = field(default_factory=dict)
    count: int = 0

    # ------------------------------------------------------------------ plumbing

    def add(self, op: Operation) -> Operation:
        op.location = self.anchor.location
        Rewriter.insert_op(op, InsertPoint.before(self.anchor))
        self.count += 1
        return op

    def v(self, op: Operation) -> SSAValue:
        return self.add(op).results[0]

    def fail(self, rule: str) -> CompileError:
        return fail(self.anchor, rule)

    def norm(self, v: SSAValue) -> SSAValue:
        """``v`` itself when its extent is its valid shape, else a TEXTRACT copy."""
        t = ttype(v)
        if t.extent == t.valid:
            return v
        return self.extract(v, (0, 0), t.valid)

    # ------------------------------------------------------------------ constants

    def full(self, value: Number, dtype: str, shp: Sequence[int]) -> SSAValue:
        """A TEXPANDS tile (cached per value, type and shape)."""
        key = ("full", repr(value), dtype, tuple(shp))
        if key not in self.consts:
            self.consts[key] = self.v(ew.FullOp(value, TileType(dtype, tuple(shp))))
        return self.consts[key]

    def iota(self, n: int, start: int = 0, dtype: str = "U32") -> SSAValue:
        """One row ``start, start + 1, ...`` of ``n`` elements (TCI, cached)."""
        key = ("iota", n, start, dtype)
        if key not in self.consts:
            self.consts[key] = self.v(irr.CiOp(start, TileType(dtype, (1, n))))
        return self.consts[key]

    def cached(self, key: tuple[object, ...], make: Callable[[], SSAValue]) -> SSAValue:
        if key not in self.consts:
            self.consts[key] = make()
        return self.consts[key]

    # ------------------------------------------------------------------ elementwise

    def binary(self, op: type[ew.BinaryOp], a: SSAValue, b: SSAValue) -> SSAValue:
        return self.v(op(a, b))

    def scalar(self, op: type[ew.ScalarOp], a: SSAValue, s: Number) -> SSAValue:
        return self.v(op(a, s))

    def unary(self, op: type[ew.UnaryOp], a: SSAValue) -> SSAValue:
        return self.v(op(a))

    def cvt(
        self, a: SSAValue, dtype: str, rmode: RMode | None = None, sat: bool = False
    ) -> SSAValue:
        if dt(a) == dtype:
            return a
        return self.v(ew.CvtOp(a, dtype, None if rmode is None else RModeAttr(rmode), sat))

    def cmp(self, mode: CMode, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.v(ew.CmpOp(mode, a, b))

    def cmps(self, mode: CMode, a: SSAValue, s: Number) -> SSAValue:
        return self.v(ew.CmpsOp(mode, a, s))

    def sel(self, p: SSAValue, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.v(ew.SelOp(p, a, b))

    def sels(self, p: SSAValue, a: SSAValue, s: Number) -> SSAValue:
        return self.v(ew.SelsOp(p, a, s))

    def pred01(self, p: SSAValue, dtype: str = "U32") -> SSAValue:
        """1 where the predicate holds, else 0 (TSELS against a cached ones tile)."""
        return self.sels(p, self.full(1, dtype, shape(p)), 0)

    # ------------------------------------------------------------------ reduce / expand

    def reduce(self, op: type[red.ReduceOp], a: SSAValue) -> SSAValue:
        return self.v(op(a))

    def expand(self, op: type[red.ExpandBinaryOp], a: SSAValue, b: SSAValue) -> SSAValue:
        """``TROWEXPAND<op>`` / ``TCOLEXPAND<op>`` of ``a`` against the broadcast ``b``."""
        return self.v(op(a, b))

    def rowexpand(self, col: SSAValue, shp: Shape) -> SSAValue:
        """``dst[r, c] = col[r, 0]`` (TROWEXPAND)."""
        if shape(col) == tuple(shp):
            return col
        return self.v(red.RowExpandOp(col, TileType(dt(col), tuple(shp))))

    def colexpand(self, row: SSAValue, shp: Shape) -> SSAValue:
        """``dst[r, c] = row[0, c]`` (TCOLEXPAND)."""
        if shape(row) == tuple(shp):
            return row
        return self.v(red.ColExpandOp(row, TileType(dt(row), tuple(shp))))

    # ------------------------------------------------------------------ layout

    def trans(self, a: SSAValue) -> SSAValue:
        """TTRANS (one per value: the ops are pure, so a repeat reuses the first)."""
        return self.cached(("trans", a), lambda: self.v(irr.TransOp(a)))

    def concat(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.v(irr.ConcatOp(a, b))

    def concat_all(self, parts: Sequence[SSAValue]) -> SSAValue:
        """Columns of every part, left to right (TCONCAT chain)."""
        out = parts[0]
        for p in parts[1:]:
            out = self.concat(out, p)
        return out

    def extract(self, a: SSAValue, at: Sequence[int], shp: Sequence[int]) -> SSAValue:
        if tuple(at) == (0, 0) and tuple(shp) == ttype(a).extent == ttype(a).valid:
            return a
        return self.v(irr.ExtractOp(a, at, TileType(dt(a), tuple(shp))))

    def gather(self, values: SSAValue, index: SSAValue) -> SSAValue:
        return self.v(irr.GatherOp(values, index))

    def scatter(self, values: SSAValue, index: SSAValue, rows: int) -> SSAValue:
        return self.v(irr.ScatterOp(values, index, rows))

    def sort(self, a: SSAValue, width: int, descending: bool) -> tuple[SSAValue, SSAValue]:
        op = self.add(irr.SortOp(a, width, descending))
        return op.results[0], op.results[1]

    def mrgsort(self, a: SSAValue, b: SSAValue, descending: bool) -> SSAValue:
        return self.v(irr.MrgSortOp(a, b, descending))

    def part(self, kind: str, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.v(by_arith(irr.PART_OPS, kind)(a, b))

    # ------------------------------------------------------------------ quantization

    def quant(
        self, a: SSAValue, dtype: str, multiplier: Number | None = None, zp: int | None = None
    ) -> SSAValue:
        """TQUANT with RNE rounding and saturation."""
        return self.v(tq.QuantOp(a, dtype, multiplier, zp, RMode.RNE, sat=True))

    def dequant(
        self, q: SSAValue, multiplier: Number | None = None, zp: int | None = None
    ) -> SSAValue:
        return self.v(tq.DequantOp(q, "FP32", multiplier, zp))

    # ------------------------------------------------------------------ views

    def view(
        self,
        a: SSAValue | Sequence[SSAValue],
        dtype: str,
        shp: Sequence[int],
        offset: int = 0,
        stride: int | None = None,
    ) -> SSAValue:
        """A byte-exact reshape/bitcast of ``a`` (or of several tiles' bytes one after the
        other) through the GM scratch area (one TSTORE per source and one TLOAD; see
        ``tile.view``). The identity view is free."""
        srcs = [a] if isinstance(a, SSAValue) else list(a)
        rt = TileType(dtype, tuple(shp))
        if len(srcs) == 1 and offset == 0 and stride is None:
            src = ttype(srcs[0])
            if (src.dtype, src.valid, src.extent) == (rt.dtype, rt.valid, rt.extent):
                return srcs[0]
        nbytes = sum(ViewOp.tile_bytes(v) for v in srcs)
        scratch = self.scratch.get(nbytes)
        return self.v(ViewOp(srcs, scratch, rt, offset, stride))


def uint_of_width(nbytes: int) -> str:
    """The unsigned DataType of an element width in bytes."""
    return {1: "U8", 2: "U16", 4: "U32", 8: "U64"}[nbytes]


def width(v: SSAValue) -> int:
    """Bytes per element of a tile."""
    return element_bytes(ttype(v))
