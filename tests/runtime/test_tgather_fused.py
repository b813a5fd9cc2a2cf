"""The fused TGATHER (``ops/move_fused.py``) against the generic runner: the same tiles,
queues, status per PE and faults, for every value and index DataType, values of raw
bits (every binade, NaN payloads, +-0, infinities, subnormals), indices per PE and per
column (repeated rows: duplicates; the last valid row; past it and negative: faults),
index tiles of another shape and index types the operation rejects, value tiles with
fewer columns, every PE mask, sources allocated on fewer PEs than the bundle, and
little capacity; and the common case is fused."""

from __future__ import annotations

import numpy as np
from conftest import examples
from hypothesis import given
from hypothesis import strategies as st

from ptoc.backend.isa import DataType, info, op
from ptoc.backend.isa.semantics.indexed import GATHER_INDEX_DTYPES
from ptoc.runtime import Machine, MachineConfig
from ptoc.runtime.bundle import build_plan

from ._progs import sfu_or_vec, size_name, smallest_size
from .util import (
    MASKS,
    count_generic,
    pe_scalars,
    prog,
    small_machines,
    special_gm,
    tload_tile,
    two_loads_then,
    warm_outcome,
    whole_rows_col,
)

GM = 1 << 16
VALUE_TYPES = sorted(op("TGATHER").dtypes, key=lambda d: d.name)
#: the legal index types, and one of another width the operation rejects
INDEX_TYPES = [*sorted(GATHER_INDEX_DTYPES, key=lambda d: d.name), DataType.U16]
IDX_BASE = 0x8000  # the index tiles' GM (per PE: + pe * 2048)


def _program(dt: DataType, idx_dt: DataType, rv: int, cv: int, r: int, c: int, idx_r: int,
             load_mask: str, mask: str, repeat: int) -> tuple[str, int, int]:  # fmt: skip
    """The program, and the bytes its sources and each destination take."""
    return two_loads_then("TGATHER", dt, (dt, rv, cv, "T", "s0"), (idx_dt, idx_r, c, "N", "s1"),
                          r, c, "T#1, N#1", load_mask, mask, repeat)  # fmt: skip


@examples(200)  # (fast examples; the rarer rejections need more of them)
@given(data=st.data())
def test_fused_tgather_equals_the_generic_runner(data: st.DataObject) -> None:
    dt = data.draw(st.sampled_from(VALUE_TYPES))
    idx_dt = data.draw(st.sampled_from([*INDEX_TYPES[:-1], *INDEX_TYPES]))
    rv, r, c = (
        data.draw(st.integers(1, 6)),
        data.draw(st.integers(1, 5)),
        data.draw(st.integers(1, 16)),
    )
    cv = c + data.draw(st.sampled_from([0, 0, 3, -1]))  # (fewer columns: a fault)
    cv = max(cv, 1)
    idx_r = data.draw(st.sampled_from([r, r, r, r + 1]))  # (another shape: a fault)
    mask = data.draw(st.sampled_from(MASKS))
    load_mask = data.draw(st.sampled_from([mask, mask, "1111", "1000"]))
    ew, iw = info(dt).bits // 8, info(idx_dt).bits // 8
    regs = {"a0": [pe * 4096 for pe in range(4)],
            "a1": [IDX_BASE + pe * 2048 for pe in range(4)],
            "s0": [whole_rows_col(dt, cv) * ew] * 4,
            "s1": [whole_rows_col(idx_dt, c) * iw] * 4}  # fmt: skip
    gm = bytearray(special_gm(data.draw(st.binary(min_size=512, max_size=512)), GM))
    # indices: mostly rows of the value tile, sometimes the one past it or -1
    # (one kind of bad index per case: a negative one must not hide the one past the rows)
    bad = data.draw(st.sampled_from([0, rv, -1]))
    index = st.integers(0, rv - 1) | st.just(bad)
    for pe in range(4):
        n = whole_rows_col(idx_dt, c) * (idx_r + 1)
        ids = np.array(data.draw(st.lists(index, min_size=n, max_size=n)), np.int64)
        raw = ids.astype(f"<u{iw}", casting="unsafe").tobytes()
        at = IDX_BASE + pe * 2048
        gm[at : at + len(raw)] = raw
    text, loads, dest = _program(dt, idx_dt, rv, cv, r, c, idx_r, load_mask, mask,
                                 data.draw(st.integers(1, 5)))  # fmt: skip
    config = small_machines(data, loads, dest)
    assert warm_outcome(text, regs, bytes(gm), False, **config) == warm_outcome(
        text, regs, bytes(gm), True, **config
    )


def test_the_common_case_takes_the_fused_form(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    build_plan.cache_clear()  # (equal bundles share one plan: start from none)
    generic = count_generic(monkeypatch)
    text, _, _ = _program(DataType.FP32, DataType.U32, 4, 8, 2, 8, 2, "1111", "1111", 1)
    program = prog(text)
    Machine(MachineConfig(gm_size=GM)).run(program)  # prepares the plans
    m = Machine(MachineConfig(gm_size=GM))
    m.set_gpr("s0", 32)
    m.set_gpr("s1", 32)
    m.set_gpr("a1", IDX_BASE)
    m.load_gm(0, np.arange(32, dtype=np.float32))
    idx = np.array([[3, 2, 1, 0, 0, 1, 2, 3], [1] * 8], np.uint32)
    m.load_gm(IDX_BASE, idx)
    generic.clear()
    m.run(program)
    vals = np.arange(32, dtype=np.float32).reshape(4, 8)
    want = np.take_along_axis(vals, idx.astype(np.int64), axis=0)
    assert np.array_equal(m.tile("U#1").values[0], want)
    assert generic == []


def _constant_index_program(dt: DataType, idx_dt: DataType, rvs: tuple[int, ...], c: int,
                            r: int, tci: bool, mask: str, repeat: int) -> str:  # fmt: skip
    """A constant index tile (TCI from a1: one row ``a1 + k``; else TEXPANDS of a1: every
    element ``a1``), then for each value ValidRow of ``rvs`` a TLOAD of the value tile
    and ``repeat`` TGATHERs of it by that index tile (equal bundles: one plan)."""
    icol = whole_rows_col(idx_dt, c)
    rows = 1 if tci else r
    isize = size_name(smallest_size(idx_dt, rows, icol))
    if tci:
        text = f"""\
        {sfu_or_vec("TCI")} TCI, {idx_dt.name}
        C.B.DIMI {c}, ->LB0
        B.IOR a1, zero
        B.IOT mask={mask}, last, ->N<{isize}>
        BSTOP
        """
    else:
        text = f"""\
        {sfu_or_vec("TEXPANDS")} TEXPANDS, {idx_dt.name}
        C.B.DIMI {c}, ->LB0
        C.B.DIMI {rows}, ->LB1
        C.B.DIMI {icol}, ->LB2
        B.IOR a1
        B.IOT mask={mask}, last, ->N<{isize}>
        BSTOP
        """
    col, dcol = whole_rows_col(dt, c), whole_rows_col(dt, c)
    dsize = size_name(smallest_size(dt, rows, dcol))
    for rv in rvs:
        text += tload_tile(dt, rv, c, col, size_name(smallest_size(dt, rv, col)), base="a0",
                           mask=mask, hand="T")  # fmt: skip
        text += (
            f"""\
        BSTART.SFU TGATHER, {dt.name}
        C.B.DIMI {c}, ->LB0
        C.B.DIMI {rows}, ->LB1
        C.B.DIMI {dcol}, ->LB2
        B.IOT T#1, N#1, mask={mask}, last, ->U<{dsize}>
        BSTOP
        """
            * repeat
        )
    return text


@examples(100)
@given(data=st.data())
def test_constant_index_tiles_keep_their_checked_offsets(data: st.DataObject) -> None:
    """An index tile the memo keeps (:attr:`Tile.origin`) gathers with offsets computed
    once per value-tile geometry: the same outcome as the generic runner for indices in
    range, past the value tile's ValidRow and negative (kept as "out of range": the
    generic path raises), value tiles of several ValidRows gathered by one index tile,
    and bundles repeated (the kept offsets are used).

    Mutation-checked: keying the kept offsets without the value tile's ValidRow, or
    keeping them for a tile that is not constant, fails this test."""
    dt = data.draw(st.sampled_from(VALUE_TYPES))
    idx_dt = data.draw(st.sampled_from(sorted(GATHER_INDEX_DTYPES, key=lambda d: d.name)))
    c, r = data.draw(st.integers(1, 12)), data.draw(st.integers(1, 4))
    # value tiles of one physical Rows and several ValidRows (5 and 6: 8 rows of FP32)
    rv = data.draw(st.integers(1, 8))
    rvs = data.draw(st.sampled_from([(rv,), (rv, rv), (rv, max(1, rv - 1)), (rv, rv + 1)]))
    tci = data.draw(st.booleans())
    mask = data.draw(st.sampled_from(MASKS))
    # index starts: rows of the value tiles, the last row of one past the other's last,
    # sometimes a negative one or one far past them
    edges = st.sampled_from(sorted({v for r in rvs for v in (r - 1, r)}))
    far = st.sampled_from([(1 << 32) - 1, (1 << 64) - 1, 1 << 31])
    start = data.draw(st.sampled_from([edges, edges, st.integers(0, 8), far]))
    regs = {"a0": [pe * 4096 for pe in range(4)],
            "a1": pe_scalars(data, start),
            "s0": [whole_rows_col(dt, c) * (info(dt).bits // 8)] * 4}  # fmt: skip
    gm = special_gm(data.draw(st.binary(min_size=512, max_size=512)), GM)
    text = _constant_index_program(
        dt, idx_dt, rvs, c, r, tci, mask, data.draw(st.integers(1, 3))
    )
    config = {"gm_size": GM, "depth": 4, "pes": data.draw(st.sampled_from([4, 4, 2]))}
    build_plan.cache_clear()  # (equal bundles share one plan: start from none)
    assert warm_outcome(text, regs, gm, False, **config) == warm_outcome(
        text, regs, gm, True, **config
    )


def _column_program(dt: DataType, idx_dt: DataType, rv: int, r: int, mask: str,
                    load_mask: str, repeat: int) -> str:  # fmt: skip
    """One-column tiles of Col 1 (a flat gather's chunks): the value column (``rv``
    rows), the index column (``r`` rows) and ``repeat`` TGATHERs into an ``r`` x 1
    column."""
    text = ""
    for ldt, rows, base, hand, stride in (
        (dt, rv, "a0", "T", "s0"),
        (idx_dt, r, "a1", "N", "s1"),
    ):
        size = size_name(smallest_size(ldt, rows, 1))
        text += tload_tile(ldt, rows, 1, 1, size, base=base, mask=load_mask, hand=hand,
                           stride=stride)  # fmt: skip
    dsize = size_name(smallest_size(dt, r, 1))
    return text + (
        f"""\
        BSTART.SFU TGATHER, {dt.name}
        C.B.DIMI 1, ->LB0
        C.B.DIMI {r}, ->LB1
        C.B.DIMI 1, ->LB2
        B.IOT T#1, N#1, mask={mask}, last, ->U<{dsize}>
        BSTOP
        """
        * repeat
    )


@examples(100)
@given(data=st.data())
def test_column_tiles_gather_like_the_generic_runner(data: st.DataObject) -> None:
    """One-column value and index tiles of Col 1 on one PE take ``take``'s own bounds
    check (``move_fused``): the same outcome as the generic runner for indices in range,
    the value tile's ValidRow (one past its last row) and negative ones, and on several
    PEs or sources on fewer PEs."""
    dt = data.draw(st.sampled_from(VALUE_TYPES))
    idx_dt = data.draw(st.sampled_from(sorted(GATHER_INDEX_DTYPES, key=lambda d: d.name)))
    rv, r = data.draw(st.integers(1, 40)), data.draw(st.integers(1, 40))
    mask = data.draw(st.sampled_from(["1000", "0100", "0001", "1000", *MASKS]))
    load_mask = data.draw(st.sampled_from([mask, mask, "1111", "1000"]))
    ew, iw = info(dt).bits // 8, info(idx_dt).bits // 8
    regs = {"a0": [pe * 4096 for pe in range(4)],
            "a1": [IDX_BASE + pe * 2048 for pe in range(4)],
            "s0": [ew] * 4, "s1": [iw] * 4}  # fmt: skip
    gm = bytearray(special_gm(data.draw(st.binary(min_size=512, max_size=512)), GM))
    # indices in range (the last row among them), and in half the cases one bad one:
    # the value tile's ValidRow (one past its last row), far past it, or negative
    bad = data.draw(st.sampled_from([None, None, rv, -1, rv + 1000]))
    index = st.integers(0, rv - 1) | st.just(rv - 1)
    for pe in range(4):
        ids = np.array(data.draw(st.lists(index, min_size=r, max_size=r)), np.int64)
        if bad is not None:
            ids[data.draw(st.integers(0, r - 1))] = bad
        raw = ids.astype(f"<u{iw}", casting="unsafe").tobytes()
        at = IDX_BASE + pe * 2048
        gm[at : at + len(raw)] = raw
    text = _column_program(dt, idx_dt, rv, r, mask, load_mask, data.draw(st.integers(1, 3)))
    config = {"gm_size": GM, "depth": 4}
    build_plan.cache_clear()
    assert warm_outcome(text, regs, bytes(gm), False, **config) == warm_outcome(
        text, regs, bytes(gm), True, **config
    )
