"""KernelBuilder methods for the compound interfaces (mixed into ``KernelBuilder``).

    v, idx = kb.sort32(x)                       # Records as two tiles
    top, pay, counts = kb.merge_sorted([a, b], payloads=[pa, pb], top_k=16)
    q = kb.quantize_rows(x, scale_col, dtype="S8")

Results mirror ``compound_ref``: a Records result is a ``(values, payload)`` pair of
tiles; ``merge_sorted`` returns ``(values, [payload,] counts)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from xdsl.ir import Operation, SSAValue

from ptoc.dialects.compound_ops.gather import (
    GatherBlocksOp,
    GatherFlatOp,
    GatherPatternOp,
    ScatterFlatOp,
    TransposeOp,
)
from ptoc.dialects.compound_ops.partial import PartialOp
from ptoc.dialects.compound_ops.quant import (
    DequantizeMxOp,
    DequantizeRowsOp,
    QuantizeMxOp,
    QuantizeRowsOp,
)
from ptoc.dialects.compound_ops.sorting import (
    MergeBlocksOp,
    MergeSortedOp,
    PackRecordsOp,
    Sort32Op,
    UnpackRecordsOp,
)
from ptoc.dialects.tile_base import Number, tile_type
from ptoc.dialects.tile_types import TileType

if TYPE_CHECKING:

    class _Base:
        def emit(self, op: Operation) -> Operation: ...

else:
    _Base = object


class CompoundBuilder(_Base):
    """The compound-interface helpers of :class:`ptoc.testing.KernelBuilder`."""

    def _results(self, op: Operation) -> tuple[SSAValue, ...]:
        return tuple(self.emit(op).results)

    # ------------------------------------------------------------------ sorting

    def sort32(self, t: SSAValue, payload: SSAValue | None = None) -> tuple[SSAValue, SSAValue]:
        """pto-isa TSORT32: ``(values, payload)`` (payload default: the column index)."""
        v, p = self._results(Sort32Op(t, payload))
        return v, p

    def merge_sorted(
        self,
        lists: Sequence[SSAValue],
        payloads: Sequence[SSAValue] = (),
        *,
        descending: bool = True,
        top_k: int | None = None,
        exhausted: bool = False,
    ) -> tuple[SSAValue, ...]:
        """Multi-list TMRGSORT: ``(values, [payload,] counts)``."""
        op = MergeSortedOp(lists, payloads, descending=descending, top_k=top_k,
                           exhausted=exhausted)  # fmt: skip
        return self._results(op)

    def merge_blocks(
        self,
        values: SSAValue,
        block: int,
        payload: SSAValue | None = None,
        *,
        descending: bool = True,
    ) -> tuple[SSAValue, ...]:
        """Single-tile TMRGSORT of four ``block``-record blocks per group."""
        return self._results(MergeBlocksOp(values, block, payload, descending=descending))

    def pack_records(self, values: SSAValue, payload: SSAValue) -> SSAValue:
        return self._results(PackRecordsOp(values, payload))[0]

    def unpack_records(self, t: SSAValue, dtype: str = "FP32") -> tuple[SSAValue, SSAValue]:
        v, p = self._results(UnpackRecordsOp(t, dtype))
        return v, p

    # ------------------------------------------------------------------ gathers

    def gather_pattern(
        self, t: SSAValue, pattern: str | int, dtype: str | None = None
    ) -> SSAValue:
        return self._results(GatherPatternOp(t, pattern, dtype))[0]

    def gather_flat(self, t: SSAValue, offsets: SSAValue) -> SSAValue:
        return self._results(GatherFlatOp(t, offsets))[0]

    def gather_blocks(self, t: SSAValue, byte_offsets: SSAValue) -> SSAValue:
        return self._results(GatherBlocksOp(t, byte_offsets))[0]

    def scatter_flat(
        self,
        t: SSAValue,
        offsets: SSAValue,
        shape: Sequence[int] | None = None,
        into: SSAValue | None = None,
    ) -> SSAValue:
        return self._results(ScatterFlatOp(t, offsets, shape, into))[0]

    def transpose(
        self, t: SSAValue, scratch: SSAValue | None = None, dtype: str | None = None
    ) -> SSAValue:
        """pto-isa TTRANS(dst, src, tmp) (the scratch tile is ignored)."""
        return self._results(TransposeOp(t, scratch, dtype))[0]

    # ------------------------------------------------------------------ quantization

    def quantize_rows(
        self,
        t: SSAValue,
        scale: SSAValue | Number,
        offset: SSAValue | Number | None = None,
        dtype: str = "S8",
    ) -> SSAValue:
        return self._results(QuantizeRowsOp(t, scale, offset, dtype))[0]

    def dequantize_rows(
        self,
        q: SSAValue,
        scale: SSAValue | Number,
        offset: SSAValue | Number | None = None,
    ) -> SSAValue:
        return self._results(DequantizeRowsOp(q, scale, offset))[0]

    def quantize_mx(self, t: SSAValue) -> tuple[SSAValue, SSAValue, SSAValue, SSAValue]:
        """``(elements, scales, amax, scaling)``."""
        e, s, a, g = self._results(QuantizeMxOp(t))
        return e, s, a, g

    def dequantize_mx(self, elements: SSAValue, scales: SSAValue) -> SSAValue:
        return self._results(DequantizeMxOp(elements, scales))[0]

    # ------------------------------------------------------------------ partial

    def partial(
        self,
        kind: str,
        a: SSAValue | None,
        b: SSAValue | None,
        shape: Sequence[int] | None = None,
        pad: Number | None = None,
        dtype: str | None = None,
    ) -> SSAValue:
        """``partial_<kind>`` (add/mul/max/min); ``None`` is an empty source. ``shape``
        defaults to the bounding box of the sources; ``dtype`` is needed only when both
        are empty."""
        srcs = [s for s in (a, b) if s is not None]
        if shape is None:
            shape = (
                max(tile_type(s).valid[0] for s in srcs),
                max(tile_type(s).valid[1] for s in srcs),
            )
        d = dtype or tile_type(srcs[0]).dt.value
        return self._results(PartialOp(kind, a, b, TileType(d, tuple(shape)), pad))[0]
