"""Row-piece plumbing of ``legalize``: how an op over split tiles becomes one bundle per
piece. A piece covers a run of valid rows; operands with the driver's row count are
aligned piece by piece (re-cut with TEXTRACT when their pieces differ), others (column
broadcasts) are used whole.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache

from xdsl.ir import Operation, SSAValue

from ptoc.backend.isa import DataType
from ptoc.backend.isa import op as catalog_op
from ptoc.dialects import tile_elementwise as ew
from ptoc.dialects import tile_fill as fill
from ptoc.dialects import tile_irregular as irr
from ptoc.dialects.dtypes import is_pred
from ptoc.dialects.pto_types import PtoTileType
from ptoc.dialects.tile_types import TileType

from ..diagnostics import fail, value_name
from ..geometry import pto_type
from .ctx import LegalizeCtx, Piece, TypeFacts, explicit_dims, std_dims


@dataclass(frozen=True)
class Cut:
    """One piece of an op's row range: rows ``row0 .. row0 + rows - 1``; ``extent`` is
    the piece's extent rows; ``whole`` when the op is not split at all."""

    row0: int
    rows: int
    extent: int
    whole: bool


def _tile(v: SSAValue) -> TileType:
    assert type(v.type) is TileType
    return v.type


def cuts(ctx: LegalizeCtx, op: Operation, driver: SSAValue) -> list[Cut]:
    """The op's row pieces: the finest split among its operands and results with the
    driver's rows (each split's pieces are power-of-two runs of rows from row 0, so the
    finest one cuts every other piece evenly and no piece outgrows its tile limit, while
    an operand with the finest split is used as it is); one whole cut if none is split."""
    rows = ctx.valid_rows(driver)
    per = 0
    for v in (*op._operands, *op.results):  # (the operand tuple: no view object)
        t = v.type
        if type(t) is not TileType or ctx.facts(t).valid[0] != rows:
            continue
        pieces = ctx.pieces.get(v)
        if pieces is not None:
            split = pieces[0].extent if len(pieces) > 1 else 0
        else:
            layout = ctx.piece_types(op, v)
            split = layout[0][2].extent[0] if len(layout) > 1 else 0
        if split and (per == 0 or split < per):
            per = split
    if per == 0:
        return [_whole_cut(rows, _tile(driver).extent[0])]
    return [Cut(r0, min(per, rows - r0), per, False) for r0 in range(0, rows, per)]


@cache
def _whole_cut(rows: int, extent: int) -> Cut:
    return Cut(0, rows, extent, True)


def piece_tile(ctx: LegalizeCtx, t: TileType, cut: Cut) -> TileType:
    """The tile type of ``t``'s part in ``cut`` (``t`` itself when nothing is split)."""
    if cut.whole:
        return t
    return ctx.piece_tile(t, cut.extent, cut.rows)


def aligned(
    ctx: LegalizeCtx, op: Operation, value: SSAValue, cut: Cut, driver_rows: int
) -> SSAValue:
    """``value``'s ``pto`` value for ``cut`` (whole when it is a broadcast)."""
    pieces = ctx.pieces[value]
    t = _tile(value)
    if ctx.facts(t).valid[0] != driver_rows:
        if len(pieces) != 1:
            raise fail(op, f"broadcast operand {value_name(value)} cannot be split")
        return pieces[0].value
    for p in pieces:  # the same rows in the same extent: the same physical shape
        if p.row0 == cut.row0 and p.rows == cut.rows and (p.extent == cut.extent or cut.whole):
            return p.value
    if is_pred(t.dtype):
        return remake_pred(ctx, op, value, cut)
    for p in pieces:  # a coarser piece holding the cut's rows
        if p.row0 <= cut.row0 and cut.row0 + cut.rows <= p.row0 + p.rows:
            return extract_rows(ctx, op, p.value, t, cut, cut.row0 - p.row0)
    raise fail(op, f"{value_name(value)} is split into row pieces that do not hold {cut}")


def remake_pred(ctx: LegalizeCtx, op: Operation, value: SSAValue, cut: Cut) -> SSAValue:
    """A predicate for ``cut``'s rows: its compare again, on those rows of the compare's
    sources (no selector cuts or copies a predicate tile)."""
    key = (value, cut.row0, cut.rows, cut.extent)
    done = ctx.remade.get(key)
    if done is not None:
        return done
    if value not in ctx.remake:
        raise fail(op, f"predicate {value_name(value)} cannot be cut into these row pieces")
    cmp, build = ctx.remake[value]
    rows = _tile(value).valid[0]
    srcs = [aligned(ctx, cmp, v, cut, rows) for v in cmp.operands if type(v.type) is TileType]
    new = build(cut, srcs, [ctx.descriptor(piece_tile(ctx, _tile(value), cut))])[0]
    ctx.remade[key] = new
    return new


def extract_rows(
    ctx: LegalizeCtx, op: Operation, src: SSAValue, t: TileType, cut: Cut, offset: int
) -> SSAValue:
    """TEXTRACT the rows of ``cut``, which start ``offset`` rows into the tile or piece
    ``src`` (to align it with the op's finer pieces)."""
    rt = ctx.descriptor(piece_tile(ctx, t, cut))
    new = ctx.emit(
        irr.ExtractOp.MNEMONIC,
        t.dtype,
        [src],
        [ctx.const(offset), ctx.const(0)],
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
    df = ctx.facts(_tile(driver))
    dr = df.valid[0]
    results = op.results
    tiles = [v for v in op._operands if type(v.type) is TileType]
    srcs = _unsplit_sources(ctx, tiles)
    if srcs is not None:
        facts = _unsplit_results(ctx, op, dr)
        if facts is not None:
            cut = _whole_cut(dr, df.extent[0])
            _whole_piece(ctx, op, cut, srcs, facts, build)
            return
    outs: list[list[Piece]] = [[] for _ in results]
    # each result's type and valid rows (a result with other rows than the driver's, a
    # row reduction's say, is not split)
    rts = [(_tile(r), ctx.valid_rows(r)) for r in results]
    for cut in cuts(ctx, op, driver):
        srcs = [aligned(ctx, op, v, cut, dr) for v in tiles]
        rtypes = [ctx.descriptor(piece_tile(ctx, rt, cut) if n == dr else rt) for rt, n in rts]
        new = build(cut, srcs, rtypes)
        for i, v in enumerate(new):
            copy_name(v, results[i])
            n = rts[i][1]
            rows = cut.rows if n == dr else n
            outs[i].append(
                Piece(
                    v, cut.row0 if rows == cut.rows else 0, rows, 0 if cut.whole else cut.extent
                )
            )
    for r, ps in zip(results, outs, strict=True):
        ctx.pieces[r] = ps


def _unsplit_sources(ctx: LegalizeCtx, tiles: list[SSAValue]) -> list[SSAValue] | None:
    """The one piece of each tile operand, when each has one piece holding its valid
    rows (what :func:`aligned` gives them for the whole cut); None otherwise."""
    srcs = []
    pieces = ctx.pieces
    for v in tiles:
        ps = pieces.get(v)
        if ps is None or len(ps) != 1:
            return None
        p = ps[0]
        if p.row0 != 0 or p.rows != ctx.facts(v.type).valid[0]:  # type: ignore[arg-type]
            return None
        srcs.append(p.value)
    return srcs


def _unsplit_results(ctx: LegalizeCtx, op: Operation, rows: int) -> list[TypeFacts] | None:
    """The facts of each result when no result with ``rows`` valid rows is split (with
    unsplit operands, :func:`cuts` then gives the one whole cut); None otherwise."""
    out = []
    for r in op.results:
        f = ctx.facts(_tile(r))
        # a result that fits one allocation within the limit is one piece whether or not
        # it is kept whole; only another one needs its layout (results have no pieces
        # before their op is legalized)
        big = f.descriptor is None or f.nbytes > ctx.max_bytes
        if big and f.valid[0] == rows and len(ctx.piece_types(op, r)) > 1:
            return None
        out.append(f)
    return out


def _whole_piece(
    ctx: LegalizeCtx,
    op: Operation,
    cut: Cut,
    srcs: list[SSAValue],
    facts: list[TypeFacts],
    build: Build,
) -> None:
    """:func:`piecewise` of an op none of whose tiles is split: one bundle (or bundles)
    on the operands' single pieces, each result (of type facts ``facts``) one piece of
    its valid rows."""
    rtypes = []
    for f in facts:
        assert f.descriptor is not None, f.type
        rtypes.append(f.descriptor)
    new = build(cut, srcs, rtypes)
    pieces = ctx.pieces
    for r, v, f in zip(op.results, new, facts):
        copy_name(v, r)
        pieces[r] = [Piece(v, 0, f.valid[0])]


def copy_name(new: SSAValue, old: SSAValue) -> None:
    """Give ``new`` the name hint of ``old``: ``new.name_hint = old.name_hint`` without
    the setter's check of a name that was checked when ``old`` got it."""
    new._name = old._name  # valid: extracted when it was set


def assemble(ctx: LegalizeCtx, op: Operation, value: SSAValue) -> SSAValue:
    """One allocation holding every row piece of ``value``, for an op that cannot be
    split: TFILLPAD of the first piece to the whole tile, then a TINSERT of each further
    piece at its first row (or, for a DataType TFILLPAD lacks, TINSERTs into a TEXPANDS
    tile). The tile must fit one allocation."""
    done = ctx.assembled.get(value)
    if done is not None:
        return done
    t = _tile(value)
    if pto_type(t) is None or is_pred(t.dtype):
        raise fail(
            op, f"{value_name(value)} exceeds one allocation and {op.name} cannot be split"
        )
    rt, pieces = ctx.descriptor(t), ctx.pieces[value]
    dims = explicit_dims(rt)
    if DataType[t.dt.value] in catalog_op(fill.FillPadOp.MNEMONIC).dtypes:
        acc = ctx.emit(
            fill.FillPadOp.MNEMONIC, t.dtype, [pieces[0].value], [], dims, None, [rt], op
        ).results[0]
        rest = pieces[1:]
    else:
        acc = ctx.emit(ew.FullOp.MNEMONIC, t.dtype, [], [ctx.const(0)], std_dims(rt), None,
                       [rt], op).results[0]  # fmt: skip
        rest = pieces
    for p in rest:
        scalars = [ctx.const(p.row0), ctx.const(0)]
        acc = ctx.emit(fill.InsertOp.MNEMONIC, t.dtype, [acc, p.value], scalars, dims,
                       None, [rt], op).results[0]  # fmt: skip
    ctx.assembled[value] = acc
    return acc


def whole(ctx: LegalizeCtx, op: Operation, build: Build) -> None:
    """Lower an op that cannot be split: every tile operand (assembled from its row
    pieces if it has several) and result must fit one allocation."""
    srcs: list[SSAValue] = []
    for v in op.operands:
        if type(v.type) is TileType:
            ps = ctx.pieces[v]
            srcs.append(ps[0].value if len(ps) == 1 else assemble(ctx, op, v))
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
        copy_name(v, r)
        ctx.pieces[r] = [Piece(v, 0, ctx.valid_rows(r))]
