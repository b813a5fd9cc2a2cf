"""Row-piece plumbing of ``legalize``: how an op over split tiles becomes one bundle per
piece. A piece covers a run of valid rows; operands with the driver's row count are
aligned piece by piece (re-cut with TEXTRACT when their pieces differ), others (column
broadcasts) are used whole.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.ir import Operation, SSAValue

from ptoc.dialects.pto_types import PtoTileType
from ptoc.dialects.tile_types import TileType

from .diagnostics import fail, value_name
from .legalize_ctx import LegalizeCtx, Piece, explicit_dims


@dataclass(frozen=True)
class Cut:
    """One piece of an op's row range: rows ``row0 .. row0 + rows - 1``; ``extent`` is
    the piece's extent rows; ``whole`` when the op is not split at all."""

    row0: int
    rows: int
    extent: int
    whole: bool


def _tile(v: SSAValue) -> TileType:
    assert isinstance(v.type, TileType)
    return v.type


def cuts(ctx: LegalizeCtx, op: Operation, driver: SSAValue) -> list[Cut]:
    """The op's row pieces: those of a split operand with the driver's rows if there is
    one (so its pieces are used as they are), else the driver's own split."""
    rows = _tile(driver).valid[0]
    for v in op.operands:
        if isinstance(v.type, TileType) and _tile(v).valid[0] == rows:
            ps = ctx.pieces[v]
            if len(ps) > 1:
                return [Cut(p.row0, p.rows, p.extent, False) for p in ps]
    layout = ctx.piece_types(op, driver)
    whole = len(layout) == 1
    return [Cut(r0, n, t.extent[0], whole) for r0, n, t in layout]


def piece_tile(t: TileType, cut: Cut) -> TileType:
    """The tile type of ``t``'s part in ``cut`` (``t`` itself when nothing is split)."""
    if cut.whole:
        return t
    return TileType(t.dtype, (cut.extent, t.extent[1]), (cut.rows, t.valid[1]))


def aligned(
    ctx: LegalizeCtx, op: Operation, value: SSAValue, cut: Cut, driver_rows: int
) -> SSAValue:
    """``value``'s ``pto`` value for ``cut`` (whole when it is a broadcast)."""
    pieces = ctx.pieces[value]
    t = _tile(value)
    if t.valid[0] != driver_rows:
        if len(pieces) != 1:
            raise fail(op, f"broadcast operand {value_name(value)} cannot be split")
        return pieces[0].value
    for p in pieces:
        if p.row0 == cut.row0 and p.rows == cut.rows:
            return p.value
    if len(pieces) != 1:
        raise fail(op, f"{value_name(value)} is split into different row pieces")
    return extract_rows(ctx, op, pieces[0].value, t, cut)


def extract_rows(
    ctx: LegalizeCtx, op: Operation, src: SSAValue, t: TileType, cut: Cut
) -> SSAValue:
    """TEXTRACT rows ``cut`` out of an unsplit tile (to align it with split operands)."""
    rt = ctx.descriptor(piece_tile(t, cut))
    new = ctx.emit(
        "TEXTRACT",
        t.dtype,
        [src],
        [ctx.const(cut.row0), ctx.const(0)],
        # an omitted LB1/LB2 would inherit the source's ValidRow/Col (the generic
        # destination-shape path), not default to 1 / ValidCol: encode all three
        explicit_dims(rt),
        results=[rt],
        source=op,
    )
    return new.results[0]


Build = Callable[[Cut, list[SSAValue], list[PtoTileType]], Sequence[SSAValue]]


def piecewise(ctx: LegalizeCtx, op: Operation, driver: SSAValue, build: Build) -> None:
    """Lower ``op`` once per row piece of ``driver``: ``build(cut, srcs, result types)``
    appends the bundle(s) and returns the new results, recorded as pieces of ``op``'s."""
    dr = _tile(driver).valid[0]
    outs: list[list[Piece]] = [[] for _ in op.results]
    for cut in cuts(ctx, op, driver):
        srcs = [
            aligned(ctx, op, v, cut, dr) for v in op.operands if isinstance(v.type, TileType)
        ]
        rtypes = []
        for r in op.results:
            rt = _tile(r)
            rtypes.append(ctx.descriptor(piece_tile(rt, cut) if rt.valid[0] == dr else rt))
        new = build(cut, srcs, rtypes)
        for i, v in enumerate(new):
            v.name_hint = op.results[i].name_hint
            rows = (
                cut.rows
                if _tile(op.results[i]).valid[0] == dr
                else _tile(op.results[i]).valid[0]
            )
            outs[i].append(
                Piece(
                    v, cut.row0 if rows == cut.rows else 0, rows, 0 if cut.whole else cut.extent
                )
            )
    for r, ps in zip(op.results, outs, strict=True):
        ctx.pieces[r] = ps


def whole(ctx: LegalizeCtx, op: Operation, build: Build) -> None:
    """Lower an op that cannot be split: every tile operand and result must fit."""
    srcs: list[SSAValue] = []
    for v in op.operands:
        if isinstance(v.type, TileType):
            ps = ctx.pieces[v]
            if len(ps) != 1:
                raise fail(
                    op, f"{value_name(v)} exceeds one allocation and {op.name} cannot be split"
                )
            srcs.append(ps[0].value)
    rtypes = []
    for r in op.results:
        if len(ctx.piece_types(op, r)) != 1:
            raise fail(
                op,
                f"{value_name(r)} ({r.type}) exceeds one allocation and {op.name} "
                "cannot be split",
            )
        rtypes.append(ctx.descriptor(_tile(r)))
    cut = Cut(0, 0, 0, True)
    new = build(cut, srcs, rtypes)
    for r, v in zip(op.results, new, strict=True):
        v.name_hint = r.name_hint
        ctx.pieces[r] = [Piece(v, 0, _tile(r).valid[0])]
