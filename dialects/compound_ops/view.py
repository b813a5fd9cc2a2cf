"""``tile.view``: reinterpret the bytes of tiles as another shape and DataType.

ADR 0083 has no reshape or bitcast selector (TRESHAPE is deleted), so a view is a
round trip through global memory: each source's valid rectangle is stored densely (row
after row, the sources one after the other) into a per-PE scratch area, and the result
is loaded back from it::

    %u = tile.view %t via %scratch offset 4 stride 8
        : !tile.tile<FP32, 4x16>, !tile.tensor<U8, 1x256> -> !tile.tile<U32, 32x1>
    %w = tile.view %a, %b via %scratch
        : !tile.tile<U32, 4x8>, !tile.tile<U32, 4x8>, !tile.tensor<U8, 1x256>
        -> !tile.tile<U16, 4x32>

Let ``B`` be the sources' valid elements as bytes in row-major order, concatenated in
operand order. Element ``(i, j)``
of the result is the value of the result DataType whose bytes start at
``offset + i * stride + j * width`` of ``B`` (``offset`` defaults to 0 and ``stride`` to
the result's dense row size). Every byte the result reads lies inside ``B``. It is a
bit copy: no conversion, NaN payloads and signed zeros are kept.

``%scratch`` is a U8 tensor of at least one row per PE; row ``p`` is PE ``p``'s scratch
area (``legalize`` turns the view into one TSTORE and one TLOAD of it, per row piece).
``lower-compound`` creates it as a kernel parameter when a lowering needs a view.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import ClassVar

import numpy as np
from xdsl.dialects.builtin import I64, IntegerAttr, i64
from xdsl.ir import SSAValue
from xdsl.irdl import (
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import MemoryReadEffect, MemoryWriteEffect, Pure
from xdsl.utils.exceptions import VerifyException

from ..dtypes import carrier, element_bits, is_pred
from ..tile_base import RefEnv, TileOp, tile_type
from ..tile_memory import LoadOp, kernel_pes
from ..tile_types import TensorType, TileType

#: name of the scratch tensor parameter that ``lower-compound`` adds for its views
SCRATCH_NAME = "ptoc_scratch"


def element_bytes(t: TileType) -> int:
    """Bytes per element of a tile that a view can move (whole-byte DataTypes only)."""
    if is_pred(t.dtype) or element_bits(t.dtype) % 8:
        raise VerifyException(f"tile.view moves whole bytes; {t.dt.value} elements are not")
    return element_bits(t.dtype) // 8


def read_only(tensor: SSAValue) -> bool:
    """No op of the kernel writes ``tensor``: every use reads memory and none writes it."""
    return all(
        u.operation.has_trait(MemoryReadEffect) and not u.operation.has_trait(MemoryWriteEffect)
        for u in tensor.uses
    )


def loaded_image(
    srcs: Sequence[SSAValue],
    result_bytes: int,
    is_read_only: Callable[[SSAValue], bool] = read_only,
) -> tuple[SSAValue, int, int] | None:
    """Where the image a view of ``srcs`` stores lies in a tensor already:
    ``(tensor, byte offset, per-PE byte step)``, or None.

    Every source is a static ``tile.load`` (no run-time index or count) of the same
    tensor that no op writes (``is_read_only``), with the same per-PE step; each window is
    dense there (one row, or rows of the tensor's whole stride) and starts where the
    previous one ends. The view's elements (``result_bytes`` each) are no wider than the
    tensor's, so its addresses keep the alignment the loads already need. Its bytes there
    are then the image the scratch stores would write, for the whole kernel (other cores
    writing them would be a race, D13)."""
    tensor = None
    start = end = pe_step = 0
    for src in srcs:
        load = src.owner
        if type(load) is not LoadOp or load.dyn is not None or load.vaxes is not None:
            return None
        tt = load.source.type
        assert isinstance(tt, TensorType)
        st = tile_type(src)
        eb = element_bytes(st)
        rows, cols = st.valid
        row_bytes = tt.row_stride_bytes
        if rows > 1 and (cols * eb != row_bytes or load.row_step != 1):
            return None
        (r0, c0), (pr, pc) = load.origin, load.pe_offsets
        at, step = r0 * row_bytes + c0 * eb, pr * row_bytes + pc * eb
        if tensor is None:
            if result_bytes > eb or not is_read_only(load.source):
                return None
            tensor, start, pe_step = load.source, at, step
        elif load.source is not tensor or step != pe_step or at != end:
            return None
        end = at + rows * cols * eb
    if tensor is None:
        return None
    return tensor, start, pe_step


@irdl_op_definition
class ViewOp(TileOp):
    """A byte-exact reshape/bitcast through a GM scratch area (see the module)."""

    name = "tile.view"
    MNEMONIC: ClassVar[str | None] = None
    srcs = var_operand_def(TileType)
    scratch = operand_def(TensorType)
    offset = opt_prop_def(IntegerAttr[I64])
    stride = opt_prop_def(IntegerAttr[I64])
    result = result_def(TileType)
    traits = traits_def(Pure())

    def __init__(
        self,
        src: SSAValue | Sequence[SSAValue],
        scratch: SSAValue,
        result_type: TileType,
        offset: int = 0,
        stride: int | None = None,
    ) -> None:
        super().__init__(
            operands=[[src] if isinstance(src, SSAValue) else list(src), scratch],
            result_types=[result_type],
            properties={
                "offset": IntegerAttr(offset, i64) if offset else None,
                "stride": None if stride is None else IntegerAttr(stride, i64),
            },
        )

    # ---------------------------------------------------------------- geometry

    @property
    def byte_offset(self) -> int:
        return 0 if self.offset is None else self.offset.value.data

    @property
    def row_stride(self) -> int:
        """Bytes between result rows in the stored image."""
        if self.stride is not None:
            return self.stride.value.data
        t = tile_type(self.result)
        return t.valid[1] * element_bytes(t)

    @staticmethod
    def tile_bytes(v: SSAValue) -> int:
        t = tile_type(v)
        return t.valid[0] * t.valid[1] * element_bytes(t)

    @property
    def src_bytes(self) -> int:
        return sum(self.tile_bytes(v) for v in self.srcs)

    def verify_(self) -> None:
        r = tile_type(self.result)
        if not self.srcs:
            raise VerifyException("tile.view has at least one source")
        self.check_row_major(r, *(tile_type(v) for v in self.srcs))
        eb = element_bytes(r)
        off, stride = self.byte_offset, self.row_stride
        if off < 0 or stride < 0 or off % eb or stride % eb:
            raise VerifyException(
                f"tile.view offset {off} and stride {stride} must be nonnegative multiples "
                f"of the {eb}-byte result element"
            )
        rows, cols = r.valid
        end = off + (rows - 1) * stride + cols * eb
        if end > self.src_bytes:
            raise VerifyException(
                f"tile.view reads bytes up to {end} of a {self.src_bytes}-byte source"
            )
        tt = self.scratch.type
        assert isinstance(tt, TensorType)
        if tt.dt.value != "U8" or tt.dims[0] < kernel_pes(self) or tt.dims[1] < self.src_bytes:
            raise VerifyException(
                f"tile.view needs a U8 scratch tensor of {kernel_pes(self)} row(s) of "
                f"{self.src_bytes} bytes, not {tt}"
            )

    def reference(self, env: RefEnv, args: Sequence[np.ndarray]) -> tuple[np.ndarray, ...]:
        r = tile_type(self.result)
        eb = element_bytes(r)
        pes = args[0].shape[0]
        raw = np.concatenate(
            [np.ascontiguousarray(a).view(np.uint8).reshape(pes, -1) for a in args], axis=1
        )
        rows, cols = r.valid
        start = self.byte_offset + self.row_stride * np.arange(rows)[:, None]
        idx = start + np.arange(cols * eb)[None, :]
        out = raw[:, idx.reshape(-1)].reshape(pes, rows, cols * eb)
        return (np.ascontiguousarray(out).view(carrier(r.dtype)),)

    # ---------------------------------------------------------------- syntax

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_list(self.srcs, printer.print_operand)
        printer.print_string(" via ")
        printer.print_operand(self.scratch)
        if self.offset is not None:
            printer.print_string(f" offset {self.byte_offset}")
        if self.stride is not None:
            printer.print_string(f" stride {self.stride.value.data}")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        for v in self.srcs:
            printer.print_attribute(v.type)
            printer.print_string(", ")
        printer.print_attribute(self.scratch.type)
        printer.print_string(" -> ")
        printer.print_attribute(self.result.type)

    @classmethod
    def parse(cls, parser: Parser) -> ViewOp:
        srcs = [parser.parse_unresolved_operand()]
        while parser.parse_optional_punctuation(","):
            srcs.append(parser.parse_unresolved_operand())
        parser.parse_keyword("via")
        scratch = parser.parse_unresolved_operand()
        offset = 0
        if parser.parse_optional_keyword("offset") is not None:
            offset = parser.parse_integer(allow_negative=False)
        stride = None
        if parser.parse_optional_keyword("stride") is not None:
            stride = parser.parse_integer(allow_negative=False)
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        sts = []
        for _ in srcs:
            sts.append(parser.parse_type())
            parser.parse_punctuation(",")
        tt = parser.parse_type()
        parser.parse_punctuation("->")
        rt = parser.parse_type()
        if not isinstance(rt, TileType):
            parser.raise_error("tile.view produces a !tile.tile")
        operands = [parser.resolve_operand(u, t) for u, t in zip(srcs, sts, strict=True)]
        op = cls(operands, parser.resolve_operand(scratch, tt), rt, offset, stride)
        op.attributes |= attrs
        return op
