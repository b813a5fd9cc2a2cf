"""A Python builder for ``tile`` kernels: shapes and DataTypes are inferred.

    kb = KernelBuilder("softmax", pes=4)
    x = kb.tensor("x", "FP32", (32, 64))
    out = kb.tensor("out", "FP32", (32, 64))
    t = kb.load(x, (8, 64), pe=(8, 0))          # rows 8*pe .. 8*pe+7 on each PE
    t = kb.rowexpandsub(t, kb.rowmax(t))
    e = kb.exp(t)
    kb.store(out, kb.rowexpanddiv(e, kb.rowsum(e)), pe=(8, 0))
    module = kb.finish()

Every op records the caller's ``file:line`` as its location, so diagnostics of later
passes point at the kernel source. Binary helpers accept a Python number for the
right operand (the tile-scalar form) and a one-column / one-row tile (the expansion form).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from pathlib import Path

from xdsl.dialects import func
from xdsl.dialects.builtin import (
    FileLineColLoc,
    IntAttr,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    i64,
)
from xdsl.ir import Block, Operation, Region, SSAValue

from ptoc.dialects import tile_elementwise as ew
from ptoc.dialects import tile_fill as fill
from ptoc.dialects import tile_irregular as irr
from ptoc.dialects import tile_quant as tq
from ptoc.dialects import tile_reduce as red
from ptoc.dialects.modes import CMode, RMode, RModeAttr
from ptoc.dialects.tile_base import Number, TileOp, tile_type
from ptoc.dialects.tile_memory import PES_ATTR, LoadOp, StoreOp
from ptoc.dialects.tile_types import TensorType, TileType

from .compound_builder import CompoundBuilder

_HERE = str(Path(__file__).resolve().parent)

_BINARY = {c.MNEMONIC: c for c in ew.BINARY_OPS}
_SCALAR = {c.MNEMONIC: c for c in ew.SCALAR_OPS}
_UNARY = {c.MNEMONIC: c for c in ew.UNARY_OPS}
_REDUCE = {c.MNEMONIC: c for c in red.REDUCE_OPS}
_EXPAND = {c.MNEMONIC: c for c in red.EXPAND_BINARY_OPS}
_PART = {c.MNEMONIC: c for c in irr.PART_OPS}


def _caller_location() -> FileLineColLoc | None:
    frame = inspect.currentframe()
    while frame is not None and frame.f_code.co_filename.startswith(_HERE):
        frame = frame.f_back
    if frame is None:
        return None
    return FileLineColLoc(
        StringAttr(frame.f_code.co_filename), IntAttr(frame.f_lineno), IntAttr(0)
    )


class KernelBuilder(CompoundBuilder):
    """Builds one kernel ``func.func`` op by op; :meth:`finish` returns the module."""

    def __init__(self, name: str, pes: int = 1) -> None:
        self.name = name
        self.pes = pes
        self._params: list[tuple[str, TensorType]] = []
        self._block = Block()
        self._module: ModuleOp | None = None

    # ------------------------------------------------------------------ plumbing

    def tensor(
        self, name: str, dtype: str, shape: Sequence[int], stride: int | None = None
    ) -> SSAValue:
        """Declare the next tensor parameter (a GM buffer) and return its value."""
        t = TensorType(dtype, shape, stride)
        arg = self._block.insert_arg(t, len(self._block.args))
        arg.name_hint = name
        self._params.append((name, t))
        return arg

    def add(self, a: SSAValue, b: SSAValue | Number) -> SSAValue:
        """``a + b``: tile-tile, tile-scalar or row/column expansion."""
        return self._arith("ADD", a, b)

    def emit(self, op: Operation) -> Operation:
        """Append a prebuilt op (the extension point for ops this class has no helper for)."""
        loc = _caller_location()
        if loc is not None:
            op.location = loc
        self._block.add_op(op)
        return op

    def _one(self, op: TileOp) -> SSAValue:
        return self.emit(op).results[0]

    def finish(self) -> ModuleOp:
        """Close the kernel with ``func.return`` and return its module (verified; later
        calls return the same module)."""
        if self._module is None:
            self._block.add_op(func.ReturnOp())
            f = func.FuncOp(self.name, ([t for _, t in self._params], []), Region(self._block))
            f.attributes[PES_ATTR] = IntegerAttr(self.pes, i64)
            self._module = ModuleOp([f])
        self._module.verify()
        return self._module

    # ------------------------------------------------------------------ memory

    def load(
        self,
        src: SSAValue,
        shape: Sequence[int],
        at: Sequence[int] = (0, 0),
        *,
        step: int = 1,
        pe: Sequence[int] | None = None,
        extent: Sequence[int] | None = None,
    ) -> SSAValue:
        """Load a ``shape`` window at ``at`` (rows ``step`` apart; ``pe`` per-PE offset)."""
        tt = src.type
        assert isinstance(tt, TensorType)
        t = TileType(tt.dtype, extent or shape, shape)
        return self._one(LoadOp(src, at, t, step, pe))

    def store(
        self,
        dst: SSAValue,
        value: SSAValue,
        at: Sequence[int] = (0, 0),
        *,
        step: int = 1,
        pe: Sequence[int] | None = None,
    ) -> None:
        self.emit(StoreOp(value, dst, at, step, pe))

    # ------------------------------------------------------------------ elementwise

    def _arith(self, kind: str, a: SSAValue, b: SSAValue | Number) -> SSAValue:
        if not isinstance(b, SSAValue):
            return self._one(_SCALAR[f"T{kind}S"](a, b))
        ta, tb = tile_type(a), tile_type(b)
        if ta.valid != tb.valid and tb.valid == (ta.valid[0], 1):
            return self._one(_EXPAND[red.RowExpandOp.MNEMONIC + kind](a, b))
        if ta.valid != tb.valid and tb.valid == (1, ta.valid[1]):
            return self._one(_EXPAND[red.ColExpandOp.MNEMONIC + kind](a, b))
        return self._one(_BINARY[f"T{kind}"](a, b))

    def binary(self, mnemonic: str, a: SSAValue, b: SSAValue | Number) -> SSAValue:
        """Any TADD-family op by catalog mnemonic (``TSHL``, ``TREM``, ...)."""
        return self._arith(mnemonic[1:], a, b)

    def unary(self, mnemonic: str, a: SSAValue) -> SSAValue:
        return self._one(_UNARY[mnemonic](a))

    def fma(self, a: SSAValue, b: SSAValue, c: SSAValue) -> SSAValue:
        return self._one(ew.FmaOp(a, b, c))

    def cvt(
        self, a: SSAValue, dtype: str, rmode: RMode | None = None, sat: bool = False
    ) -> SSAValue:
        return self._one(ew.CvtOp(a, dtype, None if rmode is None else RModeAttr(rmode), sat))

    def cmp(self, cmode: CMode, a: SSAValue, b: SSAValue | Number) -> SSAValue:
        if isinstance(b, SSAValue):
            return self._one(ew.CmpOp(cmode, a, b))
        return self._one(ew.CmpsOp(cmode, a, b))

    def sel(self, pred: SSAValue, a: SSAValue, b: SSAValue | Number) -> SSAValue:
        if isinstance(b, SSAValue):
            return self._one(ew.SelOp(pred, a, b))
        return self._one(ew.SelsOp(pred, a, b))

    def full(self, value: Number, dtype: str, shape: Sequence[int]) -> SSAValue:
        return self._one(ew.FullOp(value, TileType(dtype, shape)))

    # ------------------------------------------------------------------ reduce / expand

    def reduce(self, mnemonic: str, a: SSAValue) -> SSAValue:
        """``TROWSUM`` ... ``TCOLARGMIN`` by catalog mnemonic."""
        return self._one(_REDUCE[mnemonic](a))

    def expand(self, bcast: SSAValue, shape: Sequence[int], *, row: bool = True) -> SSAValue:
        """Broadcast a column (``row=True``) or a row to ``shape``."""
        b = tile_type(bcast)
        t = TileType(b.dtype, shape)
        return self._one(red.RowExpandOp(bcast, t) if row else red.ColExpandOp(bcast, t))

    def expdif(self, a: SSAValue, bcast: SSAValue, dtype: str | None = None) -> SSAValue:
        row = tile_type(bcast).valid[1] == 1 and tile_type(a).valid[1] != 1
        cls = red.RowExpandExpdifOp if row else red.ColExpandExpdifOp
        return self._one(cls(a, bcast, dtype))

    # ------------------------------------------------------------------ irregular

    def trans(self, a: SSAValue) -> SSAValue:
        return self._one(irr.TransOp(a))

    def concat(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self._one(irr.ConcatOp(a, b))

    def extract(self, a: SSAValue, at: Sequence[int], shape: Sequence[int]) -> SSAValue:
        return self._one(irr.ExtractOp(a, at, TileType(tile_type(a).dtype, shape)))

    def insert(self, old: SSAValue, src: SSAValue, at: Sequence[int]) -> SSAValue:
        return self._one(fill.InsertOp(old, src, at))

    def fillpad(self, a: SSAValue, value: Number, shape: Sequence[int]) -> SSAValue:
        """Widen ``a`` to valid ``shape`` (extent at least ``a``'s), new elements ``value``."""
        t = tile_type(a)
        extent = tuple(max(x, y) for x, y in zip(t.extent, shape, strict=True))
        return self._one(fill.FillPadOp(a, value, TileType(t.dtype, extent, shape)))

    def histogram(self, src: SSAValue, filt: SSAValue, byte: int) -> SSAValue:
        return self._one(fill.HistogramOp(src, filt, byte))

    def sort(
        self, a: SSAValue, width: int = 32, descending: bool = False
    ) -> tuple[SSAValue, SSAValue]:
        op = self.emit(irr.SortOp(a, width, descending))
        return op.results[0], op.results[1]

    def mrgsort(self, a: SSAValue, b: SSAValue, descending: bool = False) -> SSAValue:
        return self._one(irr.MrgSortOp(a, b, descending))

    def gather(self, values: SSAValue, index: SSAValue) -> SSAValue:
        return self._one(irr.GatherOp(values, index))

    def scatter(self, values: SSAValue, index: SSAValue, rows: int) -> SSAValue:
        return self._one(irr.ScatterOp(values, index, rows))

    def part(self, kind: str, a: SSAValue, b: SSAValue) -> SSAValue:
        """``kind`` is add, mul, max or min (TPARTADD ...)."""
        return self._one(_PART[f"TPART{kind.upper()}"](a, b))

    def iota(
        self, n: int, start: int = 0, descending: bool = False, dtype: str = "S32"
    ) -> SSAValue:
        return self._one(irr.CiOp(start, TileType(dtype, (1, n)), descending))

    def tri(
        self, shape: Sequence[int], diagonal: int = 0, upper: bool = False, dtype: str = "FP32"
    ) -> SSAValue:
        return self._one(irr.TriOp(diagonal, TileType(dtype, shape), upper))

    def quant(
        self,
        a: SSAValue,
        dtype: str = "S8",
        multiplier: Number | None = None,
        zero_point: int | None = None,
        rmode: RMode | None = None,
        sat: bool = True,
    ) -> SSAValue:
        return self._one(tq.QuantOp(a, dtype, multiplier, zero_point, rmode, sat))

    def dequant(
        self, q: SSAValue, multiplier: Number | None = None, zero_point: int | None = None
    ) -> SSAValue:
        return self._one(tq.DequantOp(q, "FP32", multiplier, zero_point))

    # convenience names for the catalog's most used ops
    def __getattr__(self, name: str) -> Callable[..., SSAValue]:
        mnemonic = "T" + name.upper().rstrip("_")
        if mnemonic in _BINARY or f"{mnemonic}S" in _SCALAR:
            return lambda a, b: self._arith(mnemonic[1:], a, b)
        if mnemonic in _SCALAR:
            return lambda a, s: self._one(_SCALAR[mnemonic](a, s))
        if mnemonic in _UNARY:
            return lambda a: self.unary(mnemonic, a)
        if mnemonic in _REDUCE:
            return lambda a: self.reduce(mnemonic, a)
        if mnemonic in _EXPAND:
            return lambda a, b: self._one(_EXPAND[mnemonic](a, b))
        raise AttributeError(name)
