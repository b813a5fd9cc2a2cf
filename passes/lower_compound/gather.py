"""Lowerings of the gather and scatter interfaces (``docs/compound.md`` §5-8).

ADR 0083 TGATHER and TSCATTER select *rows* (the column is the element's own), take
FP32/FP16/S32/S16/U32/U16 values (TSCATTER also 8-bit and BF16) and S32/U32 indices
(TSCATTER: an index as wide as the value), and TSCATTER rejects duplicate targets.

* ``gather_pattern``: the kept columns become rows of the transposed tile: TTRANS,
  TGATHER with the index ``k * period + offset`` (TCI, TSHLS, TADDS, TTRANS, TROWEXPAND),
  TTRANS. 8-bit values are widened with TCVT and narrowed back (exact). Types no row
  selector moves (BF16, FP8, E8M0 ...) with ``C % period == 0`` use two strided views
  instead (the GM scratch area: every ``period``-th element from ``offset``, then back to
  R x K); other widths are first viewed as the unsigned integer of their width.
* ``gather_flat``: the source viewed as one (R*C, 1) column (GM view), the offsets as
  one S32 column, one TGATHER, and a view back to the offsets' shape. A source over 32 KiB
  is gathered per 32 KiB chunk (clamped indices, TSEL of the hits) with an explicit range
  check (an out-of-range offset must still fault).
* ``gather_blocks``: the source viewed as U32 rows of 8 (one 32-byte block per row); the
  block index is the byte offset rotated right by 5 (TSHRS | TSHLS 27: an unaligned
  offset becomes an out-of-range row and faults); TROWEXPAND to 8 lanes, TGATHER, view.
* ``scatter_flat``: duplicates must be resolved before TSCATTER. Keys ``offset * N + k``
  (unique, exact in FP32 below 2**24) are sorted (TSORT in groups of 64, then a TMRGSORT
  tree); a key whose successor has another offset is its offset's last writer. Winners
  are scattered (TSCATTER of ``k + 1``, losers to distinct rows past the end), then the
  values are gathered by writer and selected against the fill (zeros or ``into``).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir import SSAValue

from ptoc.backend.isa.semantics.indexed import GATHER_VALUE_DTYPES
from ptoc.dialects import tile_elementwise as ew
from ptoc.dialects import tile_irregular as irr
from ptoc.dialects import tile_reduce as red
from ptoc.dialects.compound_ops.gather import (
    GatherBlocksOp,
    GatherFlatOp,
    GatherPatternOp,
    ScatterFlatOp,
)
from ptoc.dialects.compound_ops.view import loaded_image
from ptoc.dialects.modes import CMode
from ptoc.dialects.tile_types import TileType

from .build import Emit, dt, shape, uint_of_width, width

GATHERABLE = {d.name for d in GATHER_VALUE_DTYPES}
WIDEN = {"S8": "S16", "U8": "U16"}
#: largest per-PE bytes of one gather source (a whole allocation is 64 KiB)
CHUNK_BYTES = 32768
#: FP32 represents every integer below this exactly (scatter keys)
EXACT_FP32 = 1 << 24
U32_MAX = 0xFFFFFFFF


def _log2(n: int) -> int:
    assert n & (n - 1) == 0
    return n.bit_length() - 1


# --------------------------------------------------------------------------- helpers


def as_row_index(e: Emit, offsets: SSAValue) -> SSAValue:
    """Integer offsets as S32 (TCVT with saturation: an out-of-range value stays out of
    range)."""
    return offsets if dt(offsets) == "S32" else e.cvt(offsets, "S32", sat=True)


def to_column(e: Emit, t: SSAValue) -> SSAValue:
    """``t`` in row-major order as an (R*C, 1) column (a view; TTRANS for one row)."""
    rows, cols = shape(t)
    if cols == 1:
        return t
    if rows == 1:
        return e.trans(t)
    return e.view(t, dt(t), (rows * cols, 1))


def from_column(e: Emit, col: SSAValue, shp: tuple[int, int]) -> SSAValue:
    """Inverse of :func:`to_column`."""
    rows, cols = shp
    if cols == 1:
        return col
    if rows == 1:
        return e.trans(col)
    return e.view(col, dt(col), shp)


def gatherable(
    e: Emit, t: SSAValue, shp: tuple[int, int] | None = None
) -> tuple[SSAValue, str | None]:
    """``t`` in a DataType TGATHER moves, reshaped to ``shp`` (default: its own shape):
    itself, widened (8-bit integers, TCVT), or viewed as the unsigned integer of its
    width. Returns the tile and the DataType to narrow back to after gathering."""
    d = dt(t)
    shp = shp or shape(t)
    if d in GATHERABLE or d in WIDEN:
        src = t if shp == shape(t) else (to_column(e, t) if shp[1] == 1 else e.view(t, d, shp))
        return (src, None) if d in GATHERABLE else (e.cvt(src, WIDEN[d]), d)
    u = uint_of_width(width(t))
    v = e.view(t, u, shp)
    return (e.cvt(v, "U16"), "U8") if u == "U8" else (v, None)


def restore(e: Emit, g: SSAValue, narrow: str | None, dtype: str) -> SSAValue:
    """Undo :func:`gatherable` on a gathered tile (narrow back, then view as ``dtype``)."""
    if narrow is not None:
        g = e.cvt(g, narrow)
    if dt(g) != dtype:
        g = e.view(g, dtype, shape(g))
    return g


def source_chunks(
    e: Emit, t: SSAValue | list[SSAValue], lanes: int = 1
) -> tuple[list[SSAValue], int, str | None]:
    """The row-major bytes of ``t`` (or of several tiles of one element width, one after
    the other) as gatherable (rows, ``lanes``) tiles of at most :data:`CHUNK_BYTES` each
    (the last may be shorter). ``lanes == 1``: one element per row (8-bit elements
    widened to 16 bits, other non-gatherable types viewed as unsigned integers);
    ``lanes == 8``: one 32-byte block per row as U32. Returns (chunks, rows per chunk,
    the DataType to narrow gathered values back to)."""
    srcs = [t] if isinstance(t, SSAValue) else list(t)
    eb = width(srcs[0])
    nbytes = sum(shape(v)[0] * shape(v)[1] * eb for v in srcs)
    if lanes != 1:
        total = nbytes // (4 * lanes)
        per = max(1, CHUNK_BYTES // (4 * lanes))
        views = [
            e.view(srcs, "U32", (min(per, total - r0), lanes), offset=r0 * lanes * 4)
            for r0 in range(0, total, per)
        ]
        return views, per, None
    d = dt(srcs[0])
    n = nbytes // eb
    per = 1 << _log2_floor(max(1, CHUNK_BYTES // max(eb, 2)))
    if len(srcs) == 1 and n <= per:
        src, narrow = gatherable(e, srcs[0], (n, 1))
        return [src], per, narrow
    # several chunks are combined by integer arithmetic: unsigned views
    kind = uint_of_width(eb)
    wide = "U16" if kind == "U8" else None
    if d in WIDEN:
        kind, wide = d, WIDEN[d]
    out = []
    for r0 in range(0, n, per):
        v = e.view(srcs, kind, (min(per, n - r0), 1), offset=r0 * eb)
        out.append(v if wide is None else e.cvt(v, wide))
    return out, per, kind if wide else None


def identity(e: Emit, n: int, dtype: str) -> SSAValue:
    """The (n, n) identity of ``dtype`` (TTRI lower minus TTRI strictly lower)."""

    def make() -> SSAValue:
        lower = e.v(irr.TriOp(0, TileType(dtype, (n, n))))
        if n == 1:
            return lower
        return e.binary(ew.SubOp, lower, e.v(irr.TriOp(-1, TileType(dtype, (n, n)))))

    return e.cached(("identity", n, dtype), make)


def chunked_gather(
    e: Emit, rows_of: list[SSAValue], per: int, idx: SSAValue, lanes: int
) -> SSAValue:
    """Rows ``idx`` (an S32 (n, 1) column) of the concatenated ``rows_of`` chunks (``per``
    rows each but the last), ``lanes`` elements per row.

    One chunk: one TGATHER (an out-of-range index faults). Several chunks (integer
    DataTypes): every chunk gathers a local index; a TGATHER of the identity's column
    ``c`` by the chunk number ``idx >> log2(per)`` gives chunk ``c``'s one-hot column
    (and faults for a negative index or one past the last chunk); each chunk's rows are
    TROWEXPANDMUL-ed by their one-hot column and summed (exactly one term is nonzero).
    A full chunk (``per`` rows, a power of two) gathers ``idx & (per - 1)``, in range
    whatever ``idx`` holds and the same tile for every full chunk; a shorter last chunk
    gathers ``max(idx - c * per, 0)``, so an index past the end faults there. No
    predicate tiles."""
    n = shape(idx)[0]
    if len(rows_of) == 1:
        return e.gather(rows_of[0], e.rowexpand(idx, (n, lanes)))
    count = len(rows_of)
    d = dt(rows_of[0])
    chunk_of = e.scalar(ew.ShrsOp, idx, _log2(per))
    eye = identity(e, count, d)
    within: SSAValue | None = None  # the full chunks' expanded local index
    acc: SSAValue | None = None
    for c, src in enumerate(rows_of):
        if shape(src)[0] == per:
            if within is None:
                within = e.rowexpand(e.scalar(ew.AndsOp, idx, per - 1), (n, lanes))
            local = within
        else:
            local = e.rowexpand(e.scalar(ew.MaxsOp, e.scalar(ew.AddsOp, idx, -c * per), 0),
                                (n, lanes))  # fmt: skip
        g = e.gather(src, local)
        unit = e.cached(("unit", count, c, d), lambda c=c: e.extract(eye, (0, c), (count, 1)))
        part = e.expand(red.RowExpandMulOp, g, e.gather(unit, chunk_of))
        acc = part if acc is None else e.binary(ew.AddOp, acc, part)
    assert acc is not None
    return acc


def gather_rows(
    e: Emit, sources: list[SSAValue], per: int, idx: SSAValue, lanes: int
) -> list[SSAValue]:
    """Gather the rows an S32 (n, 1) ``idx`` column names from the source chunks, as
    (rows, ``lanes``) result chunks of at most :data:`CHUNK_BYTES` (in order)."""
    n = shape(idx)[0]
    out_per = max(1, CHUNK_BYTES // (4 * max(lanes, len(sources))))
    out = []
    for r0 in range(0, n, out_per):
        m = min(out_per, n - r0)
        ic = idx if n <= out_per else e.extract(idx, (r0, 0), (m, 1))
        out.append(chunked_gather(e, sources, per, ic, lanes))
    return out


def assemble(e: Emit, chunks: list[SSAValue], dtype: str, shp: tuple[int, int]) -> SSAValue:
    """Gathered column chunks, in order, as one ``dtype`` tile of shape ``shp``."""
    if len(chunks) == 1 and shape(chunks[0])[1] == 1:
        res = from_column(e, chunks[0], shp)
        return res if dt(res) == dtype else e.view(res, dtype, shp)
    return e.view(chunks, dtype, shp)


# --------------------------------------------------------------------------- pattern


def _pattern_index(e: Emit, k: int, period: int, off: int, rows: int) -> SSAValue:
    """U32 (k, rows): ``r * period + off`` in row r (TCI, TSHLS, TADDS, TTRANS, TROWEXPAND)."""

    def make() -> SSAValue:
        idx = e.iota(k, off) if period == 1 else e.scalar(ew.ShlsOp, e.iota(k), _log2(period))
        if period > 1 and off:
            idx = e.scalar(ew.AddsOp, idx, off)
        return e.rowexpand(e.trans(idx), (k, rows))

    return e.cached(("pattern", k, period, off, rows), make)


def lower_gather_pattern(e: Emit, op: GatherPatternOp) -> Sequence[SSAValue]:
    t = e.norm(op.inputs[0])
    period, off = op.period_offset
    rows, cols = shape(t)
    k = shape(op.outs[0])[1]
    want = dt(op.outs[0])
    if period == 1:
        return [t if dt(t) == want else e.view(t, want, shape(t))]
    d = dt(t)
    w = width(t)
    # the strided view: for the types TGATHER does not move, and for a tile loaded from
    # a tensor no op writes, whose view reads that tensor (one TLOAD, no store: cheaper
    # than the transposes and the gather)
    if cols % period == 0 and (
        (d not in GATHERABLE and d not in WIDEN) or loaded_image([t], w) is not None
    ):
        col = e.view(t, want, (rows * k, 1), offset=off * w, stride=period * w)
        return [from_column(e, col, (rows, k))]
    src, narrow = gatherable(e, t)
    g = e.trans(e.gather(e.trans(src), _pattern_index(e, k, period, off, rows)))
    return [restore(e, g, narrow, want)]


# --------------------------------------------------------------------------- flat gather


def lower_gather_flat(e: Emit, op: GatherFlatOp) -> Sequence[SSAValue]:
    t, offsets = e.norm(op.inputs[0]), e.norm(op.inputs[1])
    sources, per, narrow = source_chunks(e, t)
    idx = to_column(e, as_row_index(e, offsets))
    chunks = gather_rows(e, sources, per, idx, 1)
    if narrow is not None:
        chunks = [e.cvt(c, narrow) for c in chunks]
    return [assemble(e, chunks, dt(op.outs[0]), shape(op.outs[0]))]


def _log2_floor(n: int) -> int:
    return n.bit_length() - 1


# --------------------------------------------------------------------------- block gather


def lower_gather_blocks(e: Emit, op: GatherBlocksOp) -> Sequence[SSAValue]:
    t, offsets = e.norm(op.inputs[0]), e.norm(op.inputs[1])
    sources, per_chunk, _ = source_chunks(e, t, lanes=8)
    o = to_column(e, as_row_index(e, offsets))  # (R' * NB, 1) S32 byte offsets
    # rotate right by 5: the block index, or (unaligned) a row far out of range
    q = e.binary(ew.OrOp, e.scalar(ew.ShrsOp, o, 5), e.scalar(ew.ShlsOp, o, 27))
    chunks = gather_rows(e, sources, per_chunk, q, 8)
    return [e.view(chunks, dt(op.outs[0]), shape(op.outs[0]))]


# --------------------------------------------------------------------------- scatter


def _sort_keys(e: Emit, keys: SSAValue) -> SSAValue:
    """FP32 (1, N) keys sorted ascending: TSORT in groups of 64, then a TMRGSORT tree."""
    n = shape(keys)[1]
    s, _ = e.sort(keys, 64, descending=False)
    runs = [e.extract(s, (0, c), (1, min(64, n - c))) for c in range(0, n, 64)]
    while len(runs) > 1:
        nxt = [e.mrgsort(runs[i], runs[i + 1], False) for i in range(0, len(runs) - 1, 2)]
        if len(runs) % 2:
            nxt.append(runs[-1])
        runs = nxt
    return runs[0]


def _last_writers(e: Emit, off: SSAValue, k0: int, m: int) -> SSAValue:
    """S32 (m, 1): for each destination, 1 + the source index (``k0`` + position in
    ``off``, a (1, n) S32 row of offsets in source order) of its last writer, 0 if none."""
    n = shape(off)[1]
    keys = e.binary(ew.AddOp, e.scalar(ew.MulsOp, off, n), e.iota(n, 0, "S32"))
    ks = e.cvt(_sort_keys(e, e.cvt(keys, "FP32")), "S32")
    dest = e.scalar(ew.DivsOp, ks, n)
    k = e.scalar(ew.RemsOp, ks, n)
    if n > 1:
        nxt = e.concat(e.extract(dest, (0, 1), (1, n - 1)), e.full(-1, "S32", (1, 1)))
        win = e.cmp(CMode.NE, dest, nxt)  # the last key of its destination
        dest = e.sel(win, dest, e.iota(n, m, "S32"))  # losers: distinct rows past m
    writer = e.scalar(ew.AddsOp, k, k0 + 1)
    col = e.scatter(e.trans(writer), e.trans(dest), m + n)
    return e.extract(col, (0, 0), (m, 1))


def lower_scatter_flat(e: Emit, op: ScatterFlatOp) -> Sequence[SSAValue]:
    t, offsets = e.norm(op.inputs[0]), e.norm(op.inputs[1])
    rows, cols = shape(t)
    n = rows * cols
    out_shape = shape(op.outs[0])
    m = out_shape[0] * out_shape[1]
    off = as_row_index(e, offsets)
    off_row = off if rows == 1 else (e.trans(off) if cols == 1 else e.view(off, "S32", (1, n)))
    # every offset must address the destination: a TGATHER from an m-row tile faults if
    # not; its (zero) result is added to the offsets so that it is not dead code
    probe = e.gather(e.full(0, "S32", (m, 1)), e.trans(off_row))
    off_row = e.binary(ew.AddOp, off_row, e.trans(probe))
    per = max(64, (EXACT_FP32 // max(m, 1)) // 64 * 64)  # keys < 2**24 per source chunk
    writers: SSAValue | None = None
    for k0 in range(0, n, per):
        part = off_row if n <= per else e.extract(off_row, (0, k0), (1, min(per, n - k0)))
        w = _last_writers(e, part, k0, m)
        writers = w if writers is None else e.binary(ew.MaxOp, writers, w)
    assert writers is not None
    # one gather source: the fill (into's elements, or a single zero), then t's elements
    u = uint_of_width(width(t))
    fill = e.full(0, u, (1, 1)) if op.into is None else e.norm(op.into)
    if op.into is None:  # writers: 0 (the zero row) or k + 1
        idx = writers
    else:  # d if unwritten, else m + k: d + min(w, 1) * (m - 1 + w - d)
        d = e.trans(e.iota(m, 0, "S32"))
        step = e.binary(ew.SubOp, e.scalar(ew.AddsOp, writers, m - 1), d)
        idx = e.binary(ew.AddOp, d, e.binary(ew.MulOp, step, e.scalar(ew.MinsOp, writers, 1)))
    sources, chunk, narrow = source_chunks(e, [fill, t])
    chunks = gather_rows(e, sources, chunk, idx, 1)
    if narrow is not None:
        chunks = [e.cvt(c, narrow) for c in chunks]
    return [assemble(e, chunks, dt(op.outs[0]), out_shape)]


LOWERINGS = {
    GatherPatternOp: lower_gather_pattern,
    GatherFlatOp: lower_gather_flat,
    GatherBlocksOp: lower_gather_blocks,
    ScatterFlatOp: lower_scatter_flat,
}
