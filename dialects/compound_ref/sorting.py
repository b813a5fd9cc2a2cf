"""Reference semantics of the sort and merge compound interfaces (pto-isa TSORT32, TMRGSORT).

``sort32``, ``merge_sorted``, ``merge_blocks``, ``pack_records``, ``unpack_records``.
Records are ptoc's struct-of-arrays form (:class:`Records`); pto-isa's interleaved 8-byte
record bytes exist only at ``pack_records``/``unpack_records``. The order is the seed
order of ADR 0083 decisions 135/136 everywhere: stable, NaN last in both directions,
signed zeros equal, ties to the lower list (or block) index.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._common import (
    FP16,
    FP32,
    U32,
    CompoundError,
    Records,
    as_dtype,
    bits,
    check_sorted,
    from_bits,
    nonempty,
    records_of,
    stable_order,
    tile,
)

GROUP = 32  # TSORT32 group width (pto-isa VBS32)


def sort32(t: np.ndarray, payload: np.ndarray | None = None) -> Records:
    """pto-isa TSORT32: sort every 32-column group of each row descending, carrying payload.

    ``t`` is an FP32 or FP16 (R, C) tile. ``payload`` is a U32 (R, C) tile, a U32 (1, C)
    tile shared by every row (the NPU broadcast form), or None for the column index
    ``c`` (what pto-isa's tests pass: ``arange``). Groups start at column 0; the final
    group holds only the remaining ``C % 32`` elements (ADR 0083 TSORT; no padding
    records are produced). Within a group the sort is stable and descending, NaNs last
    in source order, +0 and -0 equal. Returns ``Records(values, payload)`` where record
    k of a group is ``(t[r, c], payload[r, c])`` for the element's original column c.
    """
    t = nonempty("t", tile("t", t, dtypes=(FP32, FP16)))
    rows, cols = t.shape
    if payload is None:
        p = np.broadcast_to(np.arange(cols, dtype=np.uint32), (rows, cols))
    else:
        payload = tile("payload", payload, dtypes=(U32,))
        if payload.shape == (1, cols):
            p = np.broadcast_to(payload, (rows, cols))
        elif payload.shape == (rows, cols):
            p = payload
        else:
            raise CompoundError(
                f"payload must have shape ({rows}, {cols}) or (1, {cols}), not {payload.shape}"
            )
    values = np.empty_like(t)
    out_p = np.empty((rows, cols), np.uint32)
    for start in range(0, cols, GROUP):
        stop = min(start + GROUP, cols)
        order = stable_order(t[:, start:stop], descending=True)
        values[:, start:stop] = np.take_along_axis(t[:, start:stop], order, axis=1)
        out_p[:, start:stop] = np.take_along_axis(p[:, start:stop], order, axis=1)
    return Records(values, out_p)


def _merge_permutation(
    values: list[np.ndarray], descending: bool
) -> tuple[np.ndarray, np.ndarray]:
    """(list id, index in list) of every output record of the stable multi-way merge.

    For sorted inputs, a stable merge with ties to the lower list index equals a stable
    sort of the concatenation ``L0 ++ L1 ++ ...`` under the seed order.
    """
    cat = np.concatenate([v.reshape(-1) for v in values])
    lid = np.concatenate([np.full(v.size, i, np.int64) for i, v in enumerate(values)])
    pos = np.concatenate([np.arange(v.size, dtype=np.int64) for v in values])
    order = stable_order(cat, descending)
    return lid[order], pos[order]


def merge_sorted(
    *lists: Any,
    descending: bool = True,
    top_k: int | None = None,
    exhausted: bool = False,
) -> tuple[Records | np.ndarray, tuple[int, ...]]:
    """pto-isa multi-list TMRGSORT: merge 2-4 sorted single-row lists.

    Every list is a (1, n) FP32/FP16 value tile or ``Records`` of such a tile and a U32
    (1, n) payload; all lists have the same kind and value type and are nonempty. Each
    list must already be sorted in the selected order (NaNs last), else CompoundError.
    The merge is stable: equal values (and NaNs) keep list order, lower list first.

    ``exhausted=True`` stops right after emitting the record that empties any list.
    ``top_k`` keeps only the first k records (1 <= k <= total records). Returns
    ``(out, counts)``: ``out`` is a (1, L) tile (or Records when the inputs are
    Records), ``counts[i]`` the records of list i that appear in ``out`` (sum = L).
    """
    if not 2 <= len(lists) <= 4:
        raise CompoundError(f"merge_sorted takes 2 to 4 lists, not {len(lists)}")
    split = [records_of(f"list {i}", x, rows_one=True) for i, x in enumerate(lists)]
    kinds = {p is None for _, p in split}
    if len(kinds) != 1:
        raise CompoundError("merge_sorted lists must all be value tiles or all be Records")
    dts = {v.dtype for v, _ in split}
    if len(dts) != 1:
        raise CompoundError(
            f"merge_sorted lists have different element types {sorted(map(str, dts))}"
        )
    values = [v.reshape(-1) for v, _ in split]
    for i, v in enumerate(values):
        check_sorted(f"list {i}", v, descending)
    lid, pos = _merge_permutation(values, descending)
    total = lid.size
    length = total
    if exhausted:
        # the output position of each list's last record; the first list to empty stops it
        last = [int(np.flatnonzero(lid == i)[-1]) for i in range(len(values))]
        length = min(last) + 1
    if top_k is not None:
        if isinstance(top_k, bool) or not isinstance(top_k, (int, np.integer)):
            raise CompoundError(f"top_k must be an integer, not {top_k!r}")
        if not 1 <= top_k <= total:
            raise CompoundError(f"top_k must be in 1..{total} (the total records), not {top_k}")
        length = min(length, int(top_k))
    lid, pos = lid[:length], pos[:length]
    counts = tuple(int(np.count_nonzero(lid == i)) for i in range(len(values)))
    out_v = np.empty((1, length), values[0].dtype)
    for i, v in enumerate(values):
        out_v[0, lid == i] = v[pos[lid == i]]
    if split[0][1] is None:
        return out_v, counts
    out_p = np.empty((1, length), np.uint32)
    for i, (_, p) in enumerate(split):
        out_p[0, lid == i] = p.reshape(-1)[pos[lid == i]]
    return Records(out_v, out_p), counts


def merge_blocks(records: Any, block: int, *, descending: bool = True) -> Records | np.ndarray:
    """pto-isa single-tile TMRGSORT(dst, src, blockLen): merge four sorted blocks per group.

    ``records`` is a (1, N) FP32/FP16 value tile or ``Records``. ``block`` is the block
    length in records (SoA elements); it must be a positive multiple of 32 for FP32 and
    of 16 for FP16, i.e. pto-isa's ``blockLen = block * 8 / sizeof(T)`` is a multiple of
    64. Every group of ``4 * block`` consecutive records, starting at record 0, holds
    four blocks that must each be sorted; they are merged stably (ties to the lower
    block) into the same span. The tail (``N % (4 * block)`` records) is a final
    partial group: its blocks of ``block`` records (the last one possibly shorter) are
    merged the same way. Returns the same kind as ``records``.
    """
    values, payload = records_of("records", records, rows_one=True)
    if isinstance(block, bool) or not isinstance(block, (int, np.integer)):
        raise CompoundError(f"block must be an integer, not {block!r}")
    unit = 32 if values.dtype == FP32 else 16
    if block <= 0 or block % unit:
        raise CompoundError(
            f"block must be a positive multiple of {unit} records for {values.dtype} "
            f"(pto-isa blockLen = block*8/sizeof(T) must be a multiple of 64), not {block}"
        )
    n = values.shape[1]
    v = values.reshape(-1)
    p = None if payload is None else payload.reshape(-1)
    out_v = v.copy()
    out_p = None if p is None else p.copy()
    span = 4 * int(block)
    for g in range(0, n, span):
        blocks = [v[s : min(s + block, n)] for s in range(g, min(g + span, n), block)]
        for b, blk in enumerate(blocks):
            check_sorted(f"block {b} of the group at record {g}", blk, descending)
        lid, pos = _merge_permutation(blocks, descending)
        src = g + lid * block + pos
        stop = g + src.size
        out_v[g:stop] = v[src]
        if out_p is not None:
            out_p[g:stop] = p[src]
    out_v = out_v.reshape(1, n)
    return out_v if out_p is None else Records(out_v, out_p.reshape(1, n))


def pack_records(records: Any, payload: np.ndarray | None = None) -> np.ndarray:
    """pto-isa's interleaved 8-byte records, as raw bits in the value's container width.

    ``pack_records(Records(v, p))`` or ``pack_records(v, p)``; ``v`` FP32 or FP16 (R, C),
    ``p`` U32 (R, C). FP32 -> uint32 (R, 2C): ``[bits(v), p]`` per record. FP16 -> uint16
    (R, 4C): ``[bits(v), 0, p & 0xFFFF, p >> 16]`` (little-endian ``[f16 | u16 0 | u32]``).
    The result's bytes are exactly pto-isa's dst tile bytes; ``.view(float32)`` /
    ``.view(float16)`` gives pto-isa's tile element type. Payloads are raw bits, never
    converted to the value type (the NPU encoding, not the CPU simulator's).
    """
    if payload is not None:
        records = Records(records, payload)
    if not isinstance(records, tuple):
        raise CompoundError("pack_records needs Records(values, payload) or (values, payload)")
    values, p = records_of("records", records)
    rows, cols = values.shape
    if values.dtype == FP32:
        out = np.empty((rows, 2 * cols), np.uint32)
        out[:, 0::2] = bits(values)
        out[:, 1::2] = p
        return out
    out16 = np.zeros((rows, 4 * cols), np.uint16)
    out16[:, 0::4] = bits(values)
    out16[:, 2::4] = (p & 0xFFFF).astype(np.uint16)
    out16[:, 3::4] = (p >> 16).astype(np.uint16)
    return out16


def unpack_records(t: np.ndarray, dtype: Any) -> Records:
    """Inverse of :func:`pack_records`: interleaved record bytes -> Records(values, payload).

    ``t`` is any 2-D tile whose rows are a whole number of 8-byte records (uint32 (R, 2C),
    uint16 or float16 (R, 4C), float32 (R, 2C), uint8 (R, 8C), ...); ``dtype`` is the
    record value type, FP32 or FP16. The two reserved bytes of FP16 records are ignored.
    """
    t = tile("t", t)
    dt = as_dtype(dtype)
    if dt not in (FP32, FP16):
        raise CompoundError(f"record value type must be FP32 or FP16, not {dt}")
    row_bytes = t.shape[1] * t.dtype.itemsize
    if row_bytes % 8:
        raise CompoundError(
            f"a row of {row_bytes} bytes is not a whole number of 8-byte records"
        )
    raw = np.ascontiguousarray(t).view(np.uint8).reshape(t.shape[0], row_bytes // 8, 8)
    payload = np.ascontiguousarray(raw[:, :, 4:8]).view("<u4").reshape(raw.shape[:2])
    k = dt.itemsize
    vbits = np.ascontiguousarray(raw[:, :, :k]).view(f"<u{k}").reshape(raw.shape[:2])
    return Records(from_bits(vbits, dt), payload.astype(np.uint32))
