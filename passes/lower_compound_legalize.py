"""``legalize`` rules this pass family adds: ``tile.view``, and explicit dims for the
shape-source layout ops TEXTRACT and TCONCAT.

``tile.view``: one TSTORE per source row piece into the PE's scratch row, one TLOAD per
result row piece out of it.

The view's bytes are the source's valid rectangle stored densely (row stride = valid
columns x element bytes); the result is loaded from ``offset + i * stride``. Both
bundles address the scratch tensor through ``pto.addr``, so the scheduler keeps every
access of the scratch area in program order (a store never passes an earlier load).
TEXTRACT and TCONCAT take their destination shape from a *shape source*: the executor
(``runtime/ops/layout.py`` ``generic_shape``) defaults an omitted LB1 to the first
source's ValidRow and an omitted LB2 to its Col, not to 1 and ValidCol. The generic
rule (``legalize_ctx.std_dims``) omits LB1 = 1 and LB2 = ValidCol, which is right for the
standard schema but wrong here whenever the result's row count or physical Col differs
from the first source's (a column window, a one-row extract, a concatenation that
widens Col): the bundle then faults. The rules below emit LB0..LB2 explicitly for these
two operations (otherwise identical to ``legalize_rules``).

Registered with ``legalize``'s rule table when this module is imported (by
``lower_compound`` and by the ``ptoc-legalize`` entry of the pass universe).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir import Operation, SSAValue

from ptoc.dialects import tile_irregular as irr
from ptoc.dialects.compound_ops.view import ViewOp, element_bytes
from ptoc.dialects.dtypes import data_type
from ptoc.dialects.pto_types import PtoTileType
from ptoc.dialects.tile_base import tile_type
from ptoc.dialects.tile_types import TensorType

from .legalize_ctx import LegalizeCtx, Piece, std_dims
from .legalize_pieces import Cut, whole
from .legalize_rules import RULES


def _scalars(
    ctx: LegalizeCtx, tensor: SSAValue, offset: int, rows: int, stride: int
) -> list[SSAValue]:
    tt = tensor.type
    assert isinstance(tt, TensorType)
    out = [ctx.addr(tensor, offset, tt.row_stride_bytes)]
    if rows > 1:
        out.append(ctx.const(stride))
    return out


#: attribute of the LegalizeCtx recording the sources whose image the scratch holds
_IMAGE = "_ptoc_view_image"


def legalize_view(ctx: LegalizeCtx, op: Operation) -> None:
    """TSTORE the source pieces, TLOAD the result pieces (see the module docstring).

    Consecutive views of the same sources (no other view in between) store the image
    once: the scheduler keeps every access of the scratch tensor in program order, so
    the later loads still read that image."""
    assert isinstance(op, ViewOp)
    rt = tile_type(op.result)
    image = (op.scratch, tuple(op.srcs))
    stored = getattr(ctx, _IMAGE, None) == image
    setattr(ctx, _IMAGE, image)
    base = 0
    for src in () if stored else op.srcs:
        st = tile_type(src)
        src_row = st.valid[1] * element_bytes(st)
        for p in ctx.pieces[src]:
            ctx.emit("TSTORE", data_type(st.dtype), [p.value],
                     _scalars(ctx, op.scratch, base + p.row0 * src_row, p.rows, src_row),
                     source=op)  # fmt: skip
        base += op.tile_bytes(src)
    stride, offset = op.row_stride, op.byte_offset
    layout = ctx.piece_types(op, op.result)
    whole = len(layout) == 1
    pieces = []
    for r0, n, pt in layout:
        desc = ctx.descriptor(pt)
        new = ctx.emit("TLOAD", data_type(rt.dtype), [],
                       _scalars(ctx, op.scratch, offset + r0 * stride, n, stride),
                       std_dims(desc), None, [desc], op)  # fmt: skip
        v = new.results[0]
        v.name_hint = op.result.name_hint
        pieces.append(Piece(v, r0, n, 0 if whole else pt.extent[0]))
    ctx.pieces[op.result] = pieces


def _explicit_dims(t: PtoTileType) -> tuple[int, int, int]:
    vr, vc = t.valid
    return (vc, vr, t.cols.data)


def legalize_shape_source(ctx: LegalizeCtx, op: Operation) -> None:
    """TEXTRACT / TCONCAT with LB0 = ValidCol, LB1 = ValidRow, LB2 = Col all encoded."""
    assert isinstance(op, irr.ExtractOp | irr.ConcatOp)
    src_dt = data_type(tile_type(op.operands[0]).dtype)
    scalars: list[SSAValue] = []
    if isinstance(op, irr.ExtractOp):
        r, c = op.offset
        scalars = [ctx.const(r), ctx.const(c)]

    def build(cut: Cut, srcs: list[SSAValue], rtypes: list[PtoTileType]) -> Sequence[SSAValue]:
        dims = _explicit_dims(rtypes[0])
        return ctx.emit(op.MNEMONIC, src_dt, srcs, scalars, dims, None, rtypes, op).results

    whole(ctx, op, build)


RULES[ViewOp] = legalize_view
RULES[irr.ExtractOp] = legalize_shape_source
RULES[irr.ConcatOp] = legalize_shape_source
