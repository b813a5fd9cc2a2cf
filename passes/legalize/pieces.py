"""Row-piece plumbing of ``legalize``: how an op over split tiles becomes one bundle per
piece. A piece covers a run of valid rows; operands with the driver's row count are
aligned piece by piece (re-cut with TEXTRACT when their pieces differ), others (column
broadcasts) are used whole.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

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
from .ctx import Cut, LegalizeCtx, Piece, TypeFacts, explicit_dims, std_dims, whole_cut


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
        return [whole_cut(rows, _tile(driver).extent[0])]
    return [Cut(r0, min(per, rows - r0), per, False) for r0 in range(0, rows, per)]


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


def piecewise(
    ctx: LegalizeCtx, op: Operation, driver: SSAValue, build: Build, df: TypeFacts | None = None
) -> None:
    """Lower ``op`` once per row piece of ``driver``: ``build(cut, srcs, result types)``
    appends the bundle(s) and returns the new results, recorded as pieces of ``op``'s.
    ``df``: the facts of the driver's type, if the caller has them."""
    if df is None:
        df = ctx.facts(driver._type)  # type: ignore[arg-type]  # (as _tile asserts)
    if _unsplit(ctx, op, df, build):
        return
    dr = df.valid[0]
    results = op.results
    tiles = [v for v in op._operands if type(v.type) is TileType]
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


def _unsplit(ctx: LegalizeCtx, op: Operation, df: TypeFacts, build: Build) -> bool:
    """:func:`piecewise` of an op none of whose tiles is split, the driver's type facts
    ``df``: what :func:`cuts` and :func:`aligned` give it (the one whole cut, on each
    tile operand's one piece), each result one piece of its valid rows. False, having
    done nothing, when a tile operand has several pieces or one in another extent than
    the whole tile's (which the general path aligns alike), or a result with the
    driver's valid rows splits."""
    srcs = []
    pieces = ctx.pieces
    for v in op._operands:  # (the operand tuple and the values' types: no accessors)
        if type(v._type) is TileType:
            ps = pieces.get(v)
            if ps is None or len(ps) != 1 or ps[0].extent:
                return False
            srcs.append(ps[0].value)
    results = op.results
    facts = []
    rtypes = []
    unfit = False
    for r in results:
        t = r._type  # (often the driver's type: an elementwise op's result drives it)
        f = df if t is df.type else ctx.facts(t)  # type: ignore[arg-type]  # (a tile)
        # a result that fits one allocation within the limit is one piece whether or not
        # it is kept whole (and has a descriptor); only another one needs its layout
        # (results have no pieces before their op is legalized)
        if not f.fits:
            if f.valid[0] == df.valid[0] and len(ctx.piece_types(op, r)) > 1:
                return False
            unfit = True
        facts.append(f)
        rtypes.append(f.descriptor)
    if unfit:
        for f in facts:
            assert f.descriptor is not None, f.type
    new = build(df.cut, srcs, rtypes)  # type: ignore[arg-type]  # (no None: see above)
    for r, v, f in zip(results, new, facts):
        v._name = r._name  # (copy_name)
        pieces[r] = (Piece(v, 0, f.valid[0]),)  # (a tuple: one object, not two)
    return True


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
