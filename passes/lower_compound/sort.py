"""Lowerings of the sort and merge interfaces (``docs/compound.md`` §1-4).

* ``sort32``: TSORT (width 32, descending) gives the values and each element's offset in
  its group; adding the group base (TCI, TANDS, TCOLEXPAND, TADD) gives the source
  column, which is the default payload. A payload tile is permuted by that column with
  a transposed TGATHER (TTRANS, TGATHER, TTRANS).
* ``merge_sorted`` / ``merge_blocks``: the merged values come from a TMRGSORT tree
  (``k - 1`` bundles for ``k`` lists; TMRGSORT also rejects an unsorted list). Payloads and
  counts need every record's output position, which TMRGSORT does not report. For each
  pair of lists ``i < j`` one compare matrix (TROWEXPAND, TCOLEXPAND, TCMP, TSELS, chunked
  to ``matrix_bytes``) counts how many records of ``j`` strictly precede each record of
  ``i`` (TROWSUM) and how many of ``i`` are passed by each record of ``j`` (TCOLSUM); NaN
  records are fixed up on the count vectors. ``position = index + records of lower lists
  that precede or tie + records of higher lists that strictly precede`` is the stable
  merge order with ties to the lower list and NaN last. One TSCATTER (on transposed
  columns) routes the payloads; top-k is a TEXTRACT prefix; exhausted mode compares the
  positions with the stop position (one past the first list's last record).
* ``pack_records`` / ``unpack_records``: GM views (bitcast + interleave by TCONCAT of
  one-column tiles, or strided loads).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir import SSAValue

from ptoc.dialects import tile_elementwise as ew
from ptoc.dialects import tile_reduce as red
from ptoc.dialects.compound_ops.sorting import (
    MergeBlocksOp,
    MergeSortedOp,
    PackRecordsOp,
    Sort32Op,
    UnpackRecordsOp,
)
from ptoc.dialects.modes import CMode

from .build import Emit, dt, shape

GROUP = 32
U32_MAX = 0xFFFFFFFF


# --------------------------------------------------------------------------- sort32


def permute_rows(e: Emit, payload: SSAValue, cols: SSAValue) -> SSAValue:
    """``out[r, c] = payload[r, cols[r, c]]`` (U32): TTRANS, TGATHER, TTRANS."""
    return e.trans(e.gather(e.trans(payload), e.trans(cols)))


def lower_sort32(e: Emit, op: Sort32Op) -> Sequence[SSAValue]:
    t = e.norm(op.inputs[0])
    rows, cols = shape(t)
    values, offs = e.sort(t, GROUP, descending=True)
    if cols > GROUP:  # + group base (c & ~31)
        base = e.scalar(ew.AndsOp, e.iota(cols), U32_MAX & ~(GROUP - 1))
        offs = e.binary(ew.AddOp, offs, e.colexpand(base, (rows, cols)))
    if op.payload is None:
        return [values, offs]
    p = e.norm(op.payload)
    if shape(p)[0] != rows:
        p = e.colexpand(p, (rows, cols))
    return [values, permute_rows(e, p, offs)]


# --------------------------------------------------------------------------- merging


def merge_tree(e: Emit, lists: Sequence[SSAValue], descending: bool) -> SSAValue:
    """The merged values: ((L0 L1) L2) or ((L0 L1) (L2 L3)); ties take the left operand,
    so records of lower lists come first (TMRGSORT ``k - 1`` times). One list is merged
    with a one-element quiet NaN and cut back (TMRGSORT, TEXTRACT): a NaN goes last in
    both directions, so the list is unchanged, and TMRGSORT rejects it, before any
    effect, when it is not sorted, as the reference rejects it."""
    if len(lists) == 1:
        n = shape(lists[0])[1]
        nan = e.full(float("nan"), dt(lists[0]), (1, 1))
        return e.extract(e.mrgsort(lists[0], nan, descending), (0, 0), (1, n))
    if len(lists) == 4:
        left = e.mrgsort(lists[0], lists[1], descending)
        return e.mrgsort(left, e.mrgsort(lists[2], lists[3], descending), descending)
    out = lists[0]
    for x in lists[1:]:
        out = e.mrgsort(out, x, descending)
    return out


#: a merge of at most this many records takes its order from one TSORT of the lists
SORT_MERGE_MAX = 64


def _nan_vector(e: Emit, v: SSAValue) -> tuple[SSAValue, SSAValue]:
    """U32 (1, n): 1 where ``v`` is a NaN, and (1, 1): how many (TCMP, TSELS, TROWSUM)."""
    nan = e.pred01(e.cmp(CMode.NE, v, v))
    return nan, e.reduce(red.RowSumOp, nan)


def _indicator(e: Emit, a: SSAValue, bq: SSAValue, descending: bool) -> SSAValue:
    """U32 (n_a, w): 1 where number ``bq[q]`` strictly precedes number ``a[p]``.

    Between numbers that is ``b > a`` (descending) or ``b < a`` (ascending): one TCMP of
    the row-expanded column of ``a`` against the column-expanded ``bq``, turned into 0/1
    at once by TSELS (the predicate lives for one bundle, so it never needs a refresh).
    A comparison is pure: a NaN operand makes it false (NaN records are counted on the
    per-list vectors instead), +0 equals -0, and only a signalling NaN raises status (NV,
    which TMRGSORT raises for the same value anyway). No arithmetic on the values, so no
    NX, OF or NV can arise from the order computation."""
    n, w = shape(a)[1], shape(bq)[1]
    col = e.cached(("col", a), lambda: e.trans(a))
    x = e.cached(("rowexp", a, w), lambda: e.rowexpand(col, (n, w)))
    b = e.colexpand(bq, (n, w))
    return e.pred01(e.cmp(CMode.LT if descending else CMode.GT, x, b))


def _add(e: Emit, acc: SSAValue | None, x: SSAValue) -> SSAValue:
    return x if acc is None else e.binary(ew.AddOp, acc, x)


def matrix_positions(
    e: Emit, lists: Sequence[SSAValue], descending: bool, start: int = 0
) -> list[SSAValue]:
    """U32 (1, n_i): the output position (plus ``start``) of every record of every list.

    ``pos = index + records of lower lists + records of higher lists strictly before it
    - records of lower lists it strictly precedes``. Numbers are counted with one
    indicator matrix per pair of lists (chunked to ``e.matrix_bytes``; TROWSUM and
    TCOLSUM give both directions); a NaN record is preceded by every number of the
    higher lists and precedes nothing, which the per-list NaN vectors add."""
    k = len(lists)
    sizes = [shape(v)[1] for v in lists]
    col_acc: list[SSAValue | None] = [None] * k  # (n_i, 1): higher numbers before it
    row_acc: list[SSAValue | None] = [None] * k  # (1, n_i): lower numbers it passes
    for i in range(k):
        for j in range(i + 1, k):
            width = max(1, min(sizes[j], e.matrix_bytes // (4 * sizes[i])))
            cols = []
            for q0 in range(0, sizes[j], width):
                w = min(width, sizes[j] - q0)
                m = _indicator(e, lists[i], e.extract(lists[j], (0, q0), (1, w)), descending)
                col_acc[i] = _add(e, col_acc[i], e.reduce(red.RowSumOp, m))
                cols.append(e.reduce(red.ColSumOp, m))
            row_acc[j] = _add(e, row_acc[j], e.concat_all(cols))
    nans = [_nan_vector(e, v) for v in lists]
    out = []
    for i in range(k):
        low = None  # NaNs of the lower lists (a number passes each of them)
        for j in range(i):
            low = _add(e, low, nans[j][1])
        high = None  # NaNs of the higher lists
        for j in range(i + 1, k):
            high = _add(e, high, nans[j][1])
        # a NaN of list i is preceded by the numbers of the higher lists and passes no
        # NaN of a lower list: its correction is (n_high - high) + low
        factor = low
        if high is not None:
            n_high = sum(sizes[i + 1 :])
            minus_high = e.scalar(ew.MulsOp, high, U32_MAX)  # -high (U32 wraps)
            factor = e.scalar(ew.AddsOp, minus_high if low is None else e.binary(
                ew.AddOp, low, minus_high), n_high)  # fmt: skip
        pos = e.iota(sizes[i], start + sum(sizes[:i]))
        if factor is not None:
            pos = e.binary(ew.AddOp, pos, e.expand(red.RowExpandMulOp, nans[i][0], factor))
        if low is not None:
            pos = e.expand(red.RowExpandSubOp, pos, e.rowexpand(low, (1, 1)))
        ca, ra = col_acc[i], row_acc[i]
        if ca is not None:
            pos = e.binary(ew.AddOp, pos, e.trans(ca))
        if ra is not None:
            pos = e.binary(ew.SubOp, pos, ra)
        out.append(pos)
    return out


class MergeOrder:
    """Where every record of 2-4 sorted lists goes in their stable merge.

    Up to :data:`SORT_MERGE_MAX` records, one TSORT of the concatenated lists (stable,
    NaN last) gives the permutation directly: payloads are gathered by it and positions
    are its inverse (a TSCATTER of the indices). Beyond that, :func:`matrix_positions`.
    """

    def __init__(
        self, e: Emit, lists: Sequence[SSAValue], descending: bool, start: int = 0
    ) -> None:
        self.e, self.lists, self.descending, self.start = e, list(lists), descending, start
        self.sizes = [shape(v)[1] for v in lists]
        self.total = sum(self.sizes)
        self.by_sort = self.total <= SORT_MERGE_MAX
        self._perm: SSAValue | None = None
        self._pos: list[SSAValue] | None = None

    @property
    def perm(self) -> SSAValue:
        """U32 (1, T): the concatenated index of the record at each output position."""
        if self._perm is None:
            cat = self.e.concat_all(self.lists)
            _, self._perm = self.e.sort(cat, self.total, self.descending)
        return self._perm

    def positions(self) -> list[SSAValue]:
        """U32 (1, n_i) per list: each record's output position (plus ``start``)."""
        if self._pos is None:
            if self.by_sort:
                e, t = self.e, self.total
                inv = e.trans(e.scatter(e.trans(e.iota(t, self.start)), e.trans(self.perm), t))
                offs = [sum(self.sizes[:i]) for i in range(len(self.sizes))]
                self._pos = [
                    e.extract(inv, (0, o), (1, n))
                    for o, n in zip(offs, self.sizes, strict=True)
                ]
            else:
                self._pos = matrix_positions(self.e, self.lists, self.descending, self.start)
        return self._pos

    def route(self, payload: SSAValue) -> SSAValue:
        """The concatenated U32 ``payload`` (1, T) in merged order."""
        e = self.e
        if self.by_sort:
            return permute_rows(e, payload, self.perm)
        where = e.concat_all(self.positions())
        if self.start:
            where = e.scalar(ew.AddsOp, where, -self.start & U32_MAX)
        return e.trans(e.scatter(e.trans(payload), e.trans(where), self.total))


def tie(e: Emit, values: SSAValue, payload: SSAValue) -> SSAValue:
    """``payload`` unchanged, but data-dependent on ``values`` (a TSEL of the payload
    with itself under ``values == values``), so the TMRGSORT tree that checks the lists'
    order stays live when only the payloads are used. A comparison raises no status but
    NV for a signalling NaN, which the merge raises anyway; the predicate is consumed by
    the next bundle (a long-lived predicate would need a TMOV refresh, which the
    executor refuses for predicates)."""
    return e.sel(e.cmp(CMode.EQ, values, values), payload, payload)


def lower_merge_sorted(e: Emit, op: MergeSortedOp) -> Sequence[SSAValue]:
    lists = [e.norm(v) for v in op.list_values]
    pays = [e.norm(v) for v in op.list_payloads]
    desc = op.descending
    sizes = [shape(v)[1] for v in lists]
    total, length = sum(sizes), op.length
    values = merge_tree(e, lists, desc)
    order = MergeOrder(e, lists, desc)
    payload = tie(e, values, order.route(e.concat_all(pays))) if pays else None
    stop: SSAValue | None = None  # (1, 1): the output length, when data-dependent
    if op.is_exhausted:
        pos = order.positions()
        lasts = [e.extract(p, (0, n - 1), (1, 1)) for p, n in zip(pos, sizes, strict=True)]
        first = lasts[0]
        for x in lasts[1:]:
            first = e.binary(ew.MinOp, first, x)
        stop = e.scalar(ew.AddsOp, first, 1)
        if op.k_top is not None:
            stop = e.scalar(ew.MinsOp, stop, op.k_top)
    if length < total:
        values = e.extract(values, (0, 0), (1, length))
        if payload is not None:
            payload = e.extract(payload, (0, 0), (1, length))
    if stop is not None:  # zero bits past the stop
        keep = e.cmp(CMode.LT, e.iota(length), e.rowexpand(stop, (1, length)))
        values = e.sels(keep, values, 0)
        if payload is not None:
            payload = e.sels(keep, payload, 0)
    if stop is not None:
        counts = [
            e.reduce(red.RowSumOp, e.pred01(e.cmp(CMode.LT, p, e.rowexpand(stop, (1, n)))))
            for p, n in zip(order.positions(), sizes, strict=True)
        ]
    elif length < total:
        counts = [
            e.reduce(red.RowSumOp, e.pred01(e.cmps(CMode.LT, p, length)))
            for p in order.positions()
        ]
    elif len(set(sizes)) == 1:
        counts = [e.full(sizes[0], "U32", (1, len(sizes)))]
    else:
        counts = [e.full(n, "U32", (1, 1)) for n in sizes]
    out = [values] + ([payload] if payload is not None else [])
    return [*out, e.concat_all(counts)]


def lower_merge_blocks(e: Emit, op: MergeBlocksOp) -> Sequence[SSAValue]:
    v = e.norm(op.inputs[0])
    p = None if op.payload is None else e.norm(op.payload)
    desc, block = op.descending, op.block_len
    n = shape(v)[1]
    span = 4 * block
    groups: list[SSAValue] = []
    pos: list[SSAValue] = []
    for g in range(0, n, span):
        blocks = [
            e.extract(v, (0, s), (1, min(block, n - s)))
            for s in range(g, min(g + span, n), block)
        ]
        groups.append(merge_tree(e, blocks, desc))
        if p is None:
            continue
        if len(blocks) == 1:
            pos.append(e.iota(shape(blocks[0])[1], g))
        else:
            pos += MergeOrder(e, blocks, desc, start=g).positions()
    values = e.concat_all(groups)
    if p is None:
        return [values]
    where = e.concat_all(pos)
    routed = e.trans(e.scatter(e.trans(p), e.trans(where), n))
    return [values, tie(e, values, routed)]


# --------------------------------------------------------------------------- records


def lower_pack_records(e: Emit, op: PackRecordsOp) -> Sequence[SSAValue]:
    v, p = e.norm(op.inputs[0]), e.norm(op.inputs[1])
    rows, cols = shape(v)
    n = rows * cols
    out_rt = op.outs[0]
    if dt(v) == "FP32":
        lanes = [e.view(v, "U32", (n, 1)), e.view(p, "U32", (n, 1))]
        flat = e.concat_all(lanes)
        return [e.view(flat, dt(out_rt), shape(out_rt))]
    # FP16: [value bits, 0, payload low half, payload high half]
    lanes = [e.view(v, "U16", (n, 1)), e.full(0, "U16", (n, 1)), e.view(p, "U16", (n, 2))]
    return [e.view(e.concat_all(lanes), dt(out_rt), shape(out_rt))]


def _strided(e: Emit, t: SSAValue, dtype: str, rows: int, n: int, offset: int) -> SSAValue:
    """Every 8-byte record's field at ``offset`` as an (rows, n) tile."""
    col = e.view(t, dtype, (rows * n, 1), offset=offset, stride=8)
    if n == 1:
        return col
    if rows == 1:
        return e.trans(col)
    return e.view(col, dtype, (rows, n))


def lower_unpack_records(e: Emit, op: UnpackRecordsOp) -> Sequence[SSAValue]:
    t = e.norm(op.inputs[0])
    rows, n = shape(op.outs[0])
    return [_strided(e, t, dt(op.outs[0]), rows, n, 0), _strided(e, t, "U32", rows, n, 4)]


LOWERINGS = {
    Sort32Op: lower_sort32,
    MergeSortedOp: lower_merge_sorted,
    MergeBlocksOp: lower_merge_blocks,
    PackRecordsOp: lower_pack_records,
    UnpackRecordsOp: lower_unpack_records,
}
