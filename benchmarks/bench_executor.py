"""Executor (``ptoc.runtime.Machine``) throughput against the same work done in numpy.

Rows (goals from the issue; printed by benchmarks/run_all.py, never asserted). Every
baseline does the same work as the bundles, for every PE, and nothing more:

* ``tadd_fresh`` (the headline): TADD FP32 64x256 on 4 PEs where one source is always
  the previous bundle's result, so every bundle reads a tile it has never seen (nothing
  per-tile is amortised) -- against ``4 * bundles`` numpy float32 additions. Goal 1.5x.
* ``tadd_same``: the same TADD re-reading the same two tiles every bundle. Goal 1.3x.
* ``tadd_tiny``: TADD FP32 1x8 (one PE of work is 8 additions): the per-bundle
  bookkeeping against one small numpy addition per bundle. Goal 10x (and 2 us/bundle).
* ``tadd_nonfinite``: TADD FP32 64x256 on sources of infinities and NaNs (what a chain
  of adds becomes past the overflow) against the same bundles on finite sources. Goal
  1.5x: special values take native passes, not the exact engine.
* ``tadd_exact``: TADD FP32 64x256 of small integers (every sum exact, so the NX status
  needs every element) against the same numpy additions. Goal 1.5x.
* ``trowexpandmin``: TROWEXPANDMIN FP32 64x64 against ``np.minimum`` of the tile and
  its broadcast column on all PEs. Goal 2x.
* ``tsort``: TSORT FP32 16x1024 sort_width 32 (values and U32 indices) against the
  faster of two correct numpy formulations: a stable ``np.argsort`` per group of 32 plus
  the gather of the values, and one unstable ``np.sort`` per row of a unique packed key
  (group, order key, column) plus the gather. Goal 1x.
* ``tmrgsort``: TMRGSORT FP32 of two sorted 2048-element rows against a
  ``np.searchsorted`` merge per PE (goal 1x) and against ``np.argsort(kind="stable")``
  of the concatenation plus the gather (goal 2x).
* ``softmax_mix_*``: TROWMAX, TROWEXPANDSUB, TEXP, TROWSUM, TROWEXPANDDIV on 64x64
  FP32/FP16/BF16 tiles against the same five steps in numpy float32 (for information).
* ``softmax_run``: a compiled row softmax through ``ptoc.run`` (a new Machine, GM
  placement, the run, reading the output back) against the numpy softmax. Goal 10x.

Each bundle program is assembled once and run once untimed (so the plan cache is warm and
the Python assembly is outside the timed region); the timed runs re-execute it. Times are
the best process CPU time of five runs, a row's runs alternated with its baseline's
(:func:`~benchmarks.common.best_each`). The 64x256 FP32 tiles are
64 KiB per PE, so with the architectural 256 KiB per PE only four fit: those rows run on
a machine of queue depth 2 (T keeps the two sources, U the last two results, the third
result evicts the first); TSORT runs at depth 1 (source, values, indices).
"""

from __future__ import annotations

import time
from collections.abc import Callable

import ml_dtypes
import numpy as np

from ptoc.backend.asm import parse
from ptoc.backend.isa import DataType, info
from ptoc.backend.isa.fields import SIZE_NAMES
from ptoc.backend.program import Program
from ptoc.runtime import Machine, MachineConfig

from .common import Row, best_each, best_pair

GM = 8 << 20
PES = 4


def _size(dt: DataType, rows: int, cols: int) -> str:
    """The SizeCode name of a tile of exactly ``rows`` x ``cols`` (Col a power of two)."""
    nbytes = max(rows * cols * info(dt).bits // 8, 128)
    code = nbytes.bit_length() - 7
    assert 1 << (code + 6) == nbytes, "benchmark tiles have power-of-two byte sizes"
    return SIZE_NAMES[code]


def _machine(depth: int, arrays: list[tuple[np.ndarray, DataType]]) -> Machine:
    """A machine whose hand T holds ``arrays`` (each (P, R, C), last one = T#1)."""
    m = Machine(MachineConfig(depth=depth, gm_size=GM))
    text = ""
    for i, (a, dt) in enumerate(arrays):
        addr = 0x10000 + i * 0x100000
        _, r, c = a.shape
        row_bytes = c * a.dtype.itemsize
        for pe in range(PES):
            m.load_gm(addr + pe * r * row_bytes, np.ascontiguousarray(a[pe]))
            m.set_gpr(f"a{2 * i}", addr + pe * r * row_bytes, pe=pe)
        m.set_gpr(f"a{2 * i + 1}", row_bytes)
        text += (
            f"BSTART.TLOAD {dt.name}\nB.DIM zero, {c}, ->LB0\nB.DIM zero, {r}, ->LB1\n"
            f"B.IOR a{2 * i}, a{2 * i + 1}\nB.IOT mask=1111, last, ->T<{_size(dt, r, c)}>\n"
            "BSTOP\n"
        )
    m.run(parse(text))
    return m


def _repeat(text: str, n: int) -> Program:
    return parse(text * n)


def _against(
    m: Machine, program: Program, baseline: Callable[[], object], repeat: int = 5
) -> tuple[float, float]:
    """(executor, baseline) CPU seconds: the best of ``repeat`` runs of ``program`` on
    ``m`` and of ``baseline``, alternated (:func:`best_pair`), after a warm run. CPU time:
    everything measured here is single-threaded, and on a shared host wall time also
    counts other processes' time slices -- more of them for the long executor runs than
    for the short numpy baselines."""
    m.run(program)  # warm: plan cache, compiled steps
    return best_pair(lambda: m.run(program), baseline, repeat, time.process_time)


def _tadd_rows(
    bundles: int, rows: int, cols: int, depth: int, adds_per_bundle: int
) -> tuple[float, float]:
    """(executor seconds, numpy seconds) of ``bundles`` TADD FP32 bundles of rows x cols
    against ``adds_per_bundle`` numpy additions of one PE's rows x cols per bundle."""
    rng = np.random.default_rng(1)
    a = rng.standard_normal((PES, rows, cols)).astype(np.float32)
    b = rng.standard_normal((PES, rows, cols)).astype(np.float32)
    m = _machine(depth, [(a, DataType.FP32), (b, DataType.FP32)])
    body = (
        f"BSTART.VEC TADD, FP32\nB.DIM zero, {cols}, ->LB0\nB.DIM zero, {rows}, ->LB1\n"
        f"B.IOT T#2, T#1, mask=1111, last, ->U<{_size(DataType.FP32, rows, cols)}>\nBSTOP\n"
    )
    program = _repeat(body, bundles)
    pairs = [(a[pe].copy(), b[pe].copy()) for pe in range(adds_per_bundle)]

    def baseline() -> None:
        for _ in range(bundles):
            for x, y in pairs:
                x + y

    timed = _against(m, program, baseline)
    assert np.array_equal(m.tile("U#1").values, a + b)
    return timed


def _fresh_tadd(bundles: int) -> tuple[float, float]:
    """TADD FP32 64x256 where one source is always the previous result: a fresh tile per
    bundle (its NaN/Inf facts cannot be reused), against 4 numpy adds per bundle."""
    rng = np.random.default_rng(4)
    a = rng.standard_normal((PES, 64, 256)).astype(np.float32)
    b = (rng.standard_normal((PES, 64, 256)) * 1e-3).astype(np.float32)
    m = _machine(2, [(a, DataType.FP32), (b, DataType.FP32)])
    head = "BSTART.VEC TADD, FP32\nB.DIM zero, 256, ->LB0\nB.DIM zero, 64, ->LB1\n"
    m.run(parse(head + "B.IOT T#2, T#1, mask=1111, last, ->U<64KB>\nBSTOP\n"))
    program = _repeat(head + "B.IOT U#1, T#1, mask=1111, last, ->U<64KB>\nBSTOP\n", bundles)
    pairs = [(a[pe].copy(), b[pe].copy()) for pe in range(PES)]

    def baseline() -> None:
        for _ in range(bundles):
            for x, y in pairs:
                x + y

    return _against(m, program, baseline)


def _nonfinite_row(bundles: int) -> Row:
    """TADD FP32 64x256 whose sources hold only infinities and NaNs (a chain of adds
    past the overflow) against the same bundles on finite sources: the special values
    must cost about what ordinary ones do."""
    rng = np.random.default_rng(8)
    a = rng.standard_normal((PES, 64, 256)).astype(np.float32)
    b = rng.standard_normal((PES, 64, 256)).astype(np.float32)
    inf = np.where(a < 0, -np.inf, np.inf).astype(np.float32)
    nan = np.where(b < 0, np.nan, -np.inf).astype(np.float32)  # Inf - Inf: NaN too
    head = "BSTART.VEC TADD, FP32\nB.DIM zero, 256, ->LB0\nB.DIM zero, 64, ->LB1\n"
    program = _repeat(head + "B.IOT T#2, T#1, mask=1111, last, ->U<64KB>\nBSTOP\n", bundles)
    special = _machine(2, [(inf, DataType.FP32), (nan, DataType.FP32)])
    finite = _machine(2, [(a, DataType.FP32), (b, DataType.FP32)])
    finite.run(program)  # warm
    t_special, t_finite = _against(special, program, lambda: finite.run(program))
    return Row(f"TADD FP32 64x256 Inf/NaN sources x{bundles}", t_special, t_finite,
               "the same bundles on finite sources", 1.5, key="tadd_nonfinite")  # fmt: skip


def _exact_row(bundles: int) -> Row:
    """TADD FP32 64x256 of small integers, so every sum is exact: no result is inexact,
    which a sampled NX test cannot show (the whole tile has to be looked at), against
    the same additions in numpy."""
    rng = np.random.default_rng(9)
    a = rng.integers(-1000, 1000, (PES, 64, 256)).astype(np.float32)
    b = rng.integers(-1000, 1000, (PES, 64, 256)).astype(np.float32)
    m = _machine(2, [(a, DataType.FP32), (b, DataType.FP32)])
    head = "BSTART.VEC TADD, FP32\nB.DIM zero, 256, ->LB0\nB.DIM zero, 64, ->LB1\n"
    program = _repeat(head + "B.IOT T#2, T#1, mask=1111, last, ->U<64KB>\nBSTOP\n", bundles)
    pairs = [(a[pe].copy(), b[pe].copy()) for pe in range(PES)]

    def baseline() -> None:
        for _ in range(bundles):
            for x, y in pairs:
                x + y

    t, t_base = _against(m, program, baseline)
    assert np.array_equal(m.tile("U#1").values, a + b) and not m.status.any()
    return Row(f"TADD FP32 64x256 exact sums x{bundles}", t, t_base,
               f"{4 * bundles:,} numpy f32 adds", 1.5, "integers: no NX anywhere",
               key="tadd_exact")  # fmt: skip


def _rowexpand_row(bundles: int) -> Row:
    rng = np.random.default_rng(5)
    x = rng.standard_normal((PES, 64, 64)).astype(np.float32)
    col = rng.standard_normal((PES, 64, 1)).astype(np.float32)
    m = _machine(4, [(x, DataType.FP32), (col, DataType.FP32)])
    body = (
        "BSTART.SFU TROWEXPANDMIN, FP32\nB.DIM zero, 64, ->LB0\nB.DIM zero, 64, ->LB1\n"
        "B.IOT T#2, T#1, mask=1111, last, ->U<16KB>\nBSTOP\n"
    )

    def baseline() -> None:
        for _ in range(bundles):
            np.minimum(x, col)

    t, t_base = _against(m, _repeat(body, bundles), baseline)
    assert np.array_equal(m.tile("U#1").values, np.minimum(x, col))
    return Row(f"TROWEXPANDMIN FP32 64x64 x{bundles}", t, t_base,
               "np.minimum with the broadcast column", 2.0, key="trowexpandmin")  # fmt: skip


def _group_argsort(x: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray]:
    """Values and U32 in-group indices of a stable sort of each group of ``width``."""
    p, r, c = x.shape
    g = x.reshape(p, r, c // width, width)
    order = np.argsort(g, axis=-1, kind="stable")
    values = np.take_along_axis(g, order, axis=-1).reshape(x.shape)
    return values, order.astype(np.uint32).reshape(x.shape)


def _packed_sort(x: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray]:
    """The same result from one unstable sort per row of a unique uint64 key: group,
    then the float's monotone order key, then the column (finite data without NaN)."""
    bits = x.view(np.uint32).astype(np.int64)
    mag = bits & 0x7FFFFFFF
    key = np.where(bits >> 31, (1 << 31) - mag, (1 << 31) + mag).astype(np.uint64)
    col = np.arange(x.shape[-1], dtype=np.uint64)
    packed = ((col // np.uint64(width)) << np.uint64(48)) | (key << np.uint64(16)) | col
    order = (np.sort(packed, axis=-1) & np.uint64(0xFFFF)).astype(np.intp)
    values = np.take_along_axis(x, order, axis=-1)
    return values, (order % width).astype(np.uint32)


def _sort_rows(bundles: int) -> list[Row]:
    rng = np.random.default_rng(2)
    x = rng.standard_normal((PES, 16, 1024)).astype(np.float32)
    x[:, :, ::97] = 0.0  # ties (and +0 against -0) keep their order
    x[:, :, ::89] = -0.0
    m = _machine(1, [(x, DataType.FP32)])
    tsort = (
        "BSTART.SFU TSORT, FP32\nB.DIM zero, 32, ->LB0\n"
        "B.IOT T#1, mask=1111, ->U<64KB>\nB.IOT mask=1111, last, ->M<64KB>\nBSTOP\n"
    )
    sort_program = _repeat(tsort, bundles)
    m.run(sort_program)  # warm
    want_v, want_i = _group_argsort(x, 32)
    assert np.array_equal(m.tile("U#1").values.view(np.uint32), want_v.view(np.uint32))
    assert np.array_equal(m.tile("M#1").values, want_i)
    got_v, got_i = _packed_sort(x, 32)
    assert np.array_equal(got_v.view(np.uint32), want_v.view(np.uint32))
    assert np.array_equal(got_i, want_i)

    def base_sort() -> None:
        for _ in range(bundles):
            _group_argsort(x, 32)

    def base_packed() -> None:
        for _ in range(bundles):
            _packed_sort(x, 32)

    t_sort, t_argsort, t_packed = best_each(
        (lambda: m.run(sort_program), base_sort, base_packed), 5, time.process_time
    )
    t_base = min(t_argsort, t_packed)
    base_name = (
        "stable np.argsort per group + gather"
        if t_argsort <= t_packed
        else "np.sort of a packed unique key + gather"
    ) + " (the faster numpy)"
    n = 2048
    left = np.sort(rng.standard_normal((PES, 1, n)).astype(np.float32), axis=-1)
    right = np.sort(rng.standard_normal((PES, 1, n)).astype(np.float32), axis=-1)
    m2 = _machine(4, [(left, DataType.FP32), (right, DataType.FP32)])
    merge = "BSTART.SFU TMRGSORT, FP32\nB.IOT T#2, T#1, mask=1111, last, ->U<16KB>\nBSTOP\n"
    merge_program = _repeat(merge, bundles)
    m2.run(merge_program)  # warm
    both = np.concatenate([left, right], axis=2)
    assert np.array_equal(m2.tile("U#1").values, np.sort(both, axis=-1))
    pos = np.arange(n)

    def base_search() -> None:
        for _ in range(bundles):
            for pe in range(PES):
                lo, hi = left[pe, 0], right[pe, 0]
                at = np.searchsorted(lo, hi, side="right") + pos  # right after equal left
                out = np.empty(2 * n, np.float32)
                taken = np.zeros(2 * n, bool)
                taken[at] = True
                out[at] = hi
                out[~taken] = lo

    def base_argsort() -> None:
        for _ in range(bundles):
            order = np.argsort(both, axis=-1, kind="stable")
            np.take_along_axis(both, order, axis=-1)

    t_merge, t_search, t_stable = best_each(
        (lambda: m2.run(merge_program), base_search, base_argsort), 5, time.process_time
    )
    return [
        Row(f"TSORT FP32 16x1024 w32 x{bundles}", t_sort, t_base, base_name, 1.0,
            key="tsort"),
        Row(f"TMRGSORT FP32 2x2048 x{bundles}", t_merge, t_search,
            "np.searchsorted merge per PE", 1.0, key="tmrgsort"),
        Row(f"TMRGSORT FP32 2x2048 x{bundles} (argsort)", t_merge, t_stable,
            "stable np.argsort of the 4096 + gather", 2.0, key="tmrgsort_argsort"),
    ]  # fmt: skip


_SOFTMAX = (
    "BSTART.SFU TROWMAX, {dt}\nB.DIM zero, 64, ->LB0\nB.DIM zero, 64, ->LB1\n"
    "B.IOT T#1, mask=1111, last, ->U<{col}>\nBSTOP\n"
    "BSTART.SFU TROWEXPANDSUB, {dt}\nB.DIM zero, 64, ->LB0\nB.DIM zero, 64, ->LB1\n"
    "B.IOT T#1, U#1, mask=1111, last, ->M<{full}>\nBSTOP\n"
    "BSTART.SFU TEXP, {dt}\nB.DIM zero, 64, ->LB0\nB.DIM zero, 64, ->LB1\n"
    "B.IOT M#1, mask=1111, last, ->M<{full}>\nBSTOP\n"
    "BSTART.SFU TROWSUM, {dt}\nB.DIM zero, 64, ->LB0\nB.DIM zero, 64, ->LB1\n"
    "B.IOT M#1, mask=1111, last, ->U<{col}>\nBSTOP\n"
    "BSTART.SFU TROWEXPANDDIV, {dt}\nB.DIM zero, 64, ->LB0\nB.DIM zero, 64, ->LB1\n"
    "B.IOT M#1, U#1, mask=1111, last, ->N<{full}>\nBSTOP\n"
)

_CARRIER = {DataType.FP32: np.float32, DataType.FP16: np.float16,
            DataType.BF16: ml_dtypes.bfloat16}  # fmt: skip


def _softmax_row(dt: DataType, groups: int) -> Row:
    rng = np.random.default_rng(3)
    x = rng.standard_normal((PES, 64, 64)).astype(_CARRIER[dt])
    m = _machine(4, [(x, dt)])
    text = _SOFTMAX.format(dt=dt.name, col=_size(dt, 64, 1), full=_size(dt, 64, 64))
    xf = x.astype(np.float32)

    def baseline() -> None:
        for _ in range(groups):
            mx = xf.max(axis=-1, keepdims=True)
            e = np.exp(xf - mx)
            e / e.sum(axis=-1, keepdims=True)

    t, t_base = _against(m, _repeat(text, groups), baseline)
    return Row(f"softmax mix {dt.name} 64x64 x{groups} (5 bundles)", t, t_base,
               "same 5 steps in numpy f32", None, "information",
               key=f"softmax_mix_{dt.name.lower()}")  # fmt: skip


def _softmax_run(calls: int) -> Row:
    """``ptoc.run`` of a compiled 64x128 row softmax (new Machine, placement, run,
    output read back) against the numpy softmax of the same array."""
    import ptoc
    import ptoc.lang as pt

    rows, cols = 64, 128

    @ptoc.kernel
    def softmax(
        x: ptoc.Tensor[ptoc.fp32, rows, cols], out: ptoc.Tensor[ptoc.fp32, rows, cols]
    ) -> None:
        t = pt.load(x)
        e = pt.exp(t - pt.row_max(t))
        pt.store(out, e / pt.row_sum(e))

    x = np.random.default_rng(6).standard_normal((rows, cols)).astype(np.float32)
    prog = ptoc.compile(softmax)
    ptoc.run(prog, x=x)  # warm

    def run() -> None:
        for _ in range(calls):
            ptoc.run(prog, x=x)

    def baseline() -> None:
        for _ in range(calls):
            e = np.exp(x - x.max(axis=1, keepdims=True))
            e / e.sum(axis=1, keepdims=True)

    n = prog.program.bundle_count()
    t, t_base = best_pair(run, baseline, 5, time.process_time)
    return Row(f"softmax {rows}x{cols} via ptoc.run x{calls}", t, t_base,
               "numpy softmax", 10.0, f"{n} bundles per run", key="softmax_run")  # fmt: skip


def rows(bundles: int = 1000) -> list[Row]:
    t_fresh, base_fresh = _fresh_tadd(bundles)
    t_big, base_big = _tadd_rows(bundles, 64, 256, depth=2, adds_per_bundle=PES)
    t_small, base_small = _tadd_rows(bundles, 1, 8, depth=16, adds_per_bundle=1)
    per = t_small / bundles
    out = [
        Row(f"TADD FP32 64x256 fresh source x{bundles}", t_fresh, base_fresh,
            f"{4 * bundles:,} numpy f32 adds", 1.5, "headline: a new source each bundle",
            key="tadd_fresh"),
        Row(f"TADD FP32 64x256 same sources x{bundles}", t_big, base_big,
            f"{4 * bundles:,} numpy f32 adds", 1.3, key="tadd_same"),
        Row(f"TADD FP32 1x8 x{bundles} (per bundle)", t_small, base_small,
            f"{bundles:,} small numpy adds", 10.0,
            f"{per * 1e6:.1f} us/bundle (goal 2 us)", key="tadd_tiny"),
    ]  # fmt: skip
    out.append(_nonfinite_row(max(bundles // 10, 5)))
    out.append(_exact_row(max(bundles // 10, 5)))
    out.append(_rowexpand_row(bundles))
    out += _sort_rows(max(bundles // 20, 5))
    groups = max(bundles // 20, 5)
    out += [_softmax_row(dt, groups) for dt in (DataType.FP32, DataType.FP16, DataType.BF16)]
    out.append(_softmax_run(max(bundles // 20, 5)))
    return out
