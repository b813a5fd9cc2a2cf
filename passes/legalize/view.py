"""The ``legalize`` rule of ``tile.view``: one TSTORE per source row piece into the PE's
scratch row, one TLOAD per result row piece out of it.

The view's bytes are the source's valid rectangle stored densely (row stride = valid
columns x element bytes); the result is loaded from ``offset + i * stride``. Both
bundles address the scratch tensor through ``pto.addr``, so the scheduler keeps every
access of the scratch area in program order (a store never passes an earlier load).

A view of tiles loaded from a tensor that no op of the kernel writes, whose windows lie
back to back in it (whole rows, or one row each), reads that tensor instead: its bytes
there are the image the stores would write, and they stay so for the whole kernel (other
cores writing them would be a race, D13). The loads that fed only the view are then dead
code.

The pass dispatches to it by op class (``select``): ``tile.view`` is a lowering artefact,
not a catalog operation, so it has no operation-table row.
"""

from __future__ import annotations

from xdsl.ir import Operation, SSAValue

from ptoc.dialects.compound_ops.view import ViewOp, element_bytes, loaded_image, read_only
from ptoc.dialects.dtypes import data_type
from ptoc.dialects.tile_base import tile_type
from ptoc.dialects.tile_memory import LoadOp, StoreOp
from ptoc.dialects.tile_types import TensorType

from .ctx import LegalizeCtx, Piece, std_dims


def _scalars(
    ctx: LegalizeCtx, tensor: SSAValue, offset: int, rows: int, stride: int, pe_step: int
) -> list[SSAValue]:
    out = [ctx.addr(tensor, offset, pe_step)]
    if rows > 1:
        out.append(ctx.const(stride))
    return out


def forwarded(ctx: LegalizeCtx, op: ViewOp) -> tuple[SSAValue, int, int] | None:
    """``(tensor, byte offset, per-PE byte step)`` of the view's image inside a tensor
    (:func:`~ptoc.dialects.compound_ops.view.loaded_image`; each tensor asked once
    whether it is read-only), or None when it must be stored into the scratch area.
    (The old body's uses: legalize builds a new body and keeps the old one whole.)"""
    known = ctx.read_only

    def is_read_only(tensor: SSAValue) -> bool:
        got = known.get(tensor)
        if got is None:
            got = known[tensor] = read_only(tensor)
        return got

    return loaded_image(op.srcs, element_bytes(tile_type(op.result)), is_read_only)


def legalize_view(ctx: LegalizeCtx, op: Operation) -> None:
    """TSTORE the source pieces, TLOAD the result pieces (see the module docstring).

    Consecutive views of the same sources (no other view in between) store the image
    once: the scheduler keeps every access of the scratch tensor in program order, so
    the later loads still read that image."""
    assert isinstance(op, ViewOp)
    rt = tile_type(op.result)
    stride, offset = op.row_stride, op.byte_offset
    found = forwarded(ctx, op)
    if found is not None:
        tensor, base, pe_step = found
        offset += base
    else:
        tensor = op.scratch
        tt = tensor.type
        assert isinstance(tt, TensorType)
        pe_step = tt.row_stride_bytes
        _store_image(ctx, op, pe_step)
    layout = ctx.piece_types(op, op.result)
    whole = len(layout) == 1
    pieces = []
    for r0, n, pt in layout:
        desc = ctx.descriptor(pt)
        new = ctx.emit(LoadOp.MNEMONIC, data_type(rt.dtype), [],
                       _scalars(ctx, tensor, offset + r0 * stride, n, stride, pe_step),
                       std_dims(desc), None, [desc], op)  # fmt: skip
        v = new.results[0]
        v.name_hint = op.result.name_hint
        pieces.append(Piece(v, r0, n, 0 if whole else pt.extent[0]))
    ctx.pieces[op.result] = pieces


def _store_image(ctx: LegalizeCtx, op: ViewOp, pe_step: int) -> None:
    """The sources' pieces into the scratch area, unless the image there is theirs."""
    image = (op.scratch, tuple(op.srcs))
    stored = ctx.view_image == image
    ctx.view_image = image
    base = 0
    for src in () if stored else op.srcs:
        st = tile_type(src)
        src_row = st.valid[1] * element_bytes(st)
        for p in ctx.pieces[src]:
            ctx.emit(StoreOp.MNEMONIC, data_type(st.dtype), [p.value],
                     _scalars(ctx, op.scratch, base + p.row0 * src_row, p.rows, src_row,
                              pe_step),
                     source=op)  # fmt: skip
        base += op.tile_bytes(src)
