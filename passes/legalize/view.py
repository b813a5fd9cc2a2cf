"""The ``legalize`` rule of ``tile.view``: one TSTORE per source row piece into the PE's
scratch row, one TLOAD per result row piece out of it.

The view's bytes are the source's valid rectangle stored densely (row stride = valid
columns x element bytes); the result is loaded from ``offset + i * stride``. Both
bundles address the scratch tensor through ``pto.addr``, so the scheduler keeps every
access of the scratch area in program order (a store never passes an earlier load).

The pass dispatches to it by op class (``select``): ``tile.view`` is a lowering artefact,
not a catalog operation, so it has no operation-table row.
"""

from __future__ import annotations

from xdsl.ir import Operation, SSAValue

from ptoc.dialects.compound_ops.view import ViewOp, element_bytes
from ptoc.dialects.dtypes import data_type
from ptoc.dialects.tile_base import tile_type
from ptoc.dialects.tile_memory import LoadOp, StoreOp
from ptoc.dialects.tile_types import TensorType

from .ctx import LegalizeCtx, Piece, std_dims


def _scalars(
    ctx: LegalizeCtx, tensor: SSAValue, offset: int, rows: int, stride: int
) -> list[SSAValue]:
    tt = tensor.type
    assert isinstance(tt, TensorType)
    out = [ctx.addr(tensor, offset, tt.row_stride_bytes)]
    if rows > 1:
        out.append(ctx.const(stride))
    return out


def legalize_view(ctx: LegalizeCtx, op: Operation) -> None:
    """TSTORE the source pieces, TLOAD the result pieces (see the module docstring).

    Consecutive views of the same sources (no other view in between) store the image
    once: the scheduler keeps every access of the scratch tensor in program order, so
    the later loads still read that image."""
    assert isinstance(op, ViewOp)
    rt = tile_type(op.result)
    image = (op.scratch, tuple(op.srcs))
    stored = ctx.view_image == image
    ctx.view_image = image
    base = 0
    for src in () if stored else op.srcs:
        st = tile_type(src)
        src_row = st.valid[1] * element_bytes(st)
        for p in ctx.pieces[src]:
            ctx.emit(StoreOp.MNEMONIC, data_type(st.dtype), [p.value],
                     _scalars(ctx, op.scratch, base + p.row0 * src_row, p.rows, src_row),
                     source=op)  # fmt: skip
        base += op.tile_bytes(src)
    stride, offset = op.row_stride, op.byte_offset
    layout = ctx.piece_types(op, op.result)
    whole = len(layout) == 1
    pieces = []
    for r0, n, pt in layout:
        desc = ctx.descriptor(pt)
        new = ctx.emit(LoadOp.MNEMONIC, data_type(rt.dtype), [],
                       _scalars(ctx, op.scratch, offset + r0 * stride, n, stride),
                       std_dims(desc), None, [desc], op)  # fmt: skip
        v = new.results[0]
        v.name_hint = op.result.name_hint
        pieces.append(Piece(v, r0, n, 0 if whole else pt.extent[0]))
    ctx.pieces[op.result] = pieces
