"""The benchmark scripts keep working (timings are printed by benchmarks/run_all.py,
never asserted)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import (
    bench_asm,
    bench_compiler,
    bench_executor,
    bench_grid,
    bench_import,
    bench_loops,
    bench_matmul,
    bench_report,
)
from benchmarks.common import Row, as_json, best_each, per_call_pair, render, slug
from ptoc.backend.isa.semantics import matmul_kernels as kernels


def test_asm_benchmark_runs_on_a_small_program() -> None:
    rows = bench_asm.rows(bundles=300)
    assert len(rows) == 2 and all(r.value > 0 and r.baseline > 0 for r in rows)
    assert "asm+encode 300 bundles" in render(rows)


def test_executor_benchmark_runs_on_few_bundles() -> None:
    rows = bench_executor.rows(bundles=10)
    assert all(r.value > 0 and r.baseline > 0 for r in rows)
    assert [r.row_key for r in rows] == [
        "tadd_fresh", "tadd_same", "tadd_tiny", "tadd_nonfinite", "tadd_exact", "trowexpandmin",
        "tsort",
        "tmrgsort", "tmrgsort_argsort", "softmax_mix_fp32", "softmax_mix_fp16",
        "softmax_mix_bf16", "softmax_run",
    ]  # fmt: skip
    assert rows[0].goal == 1.5 and "TADD FP32 64x256 fresh source x10" in render(rows)


def test_best_each_alternates_the_runs_and_keeps_each_ones_best() -> None:
    """The measured work and its baselines take turns, round by round (so load on the
    host weighs on every side of a ratio alike), and each gets its own fastest run."""
    calls: list[str] = []
    ticks = iter(range(1000))
    spans = {"a": [5, 3, 4], "b": [2, 6, 1]}

    def clock() -> float:
        return float(next(ticks))

    def work(name: str):  # type: ignore[no-untyped-def]
        def run() -> None:
            calls.append(name)
            for _ in range(spans[name][calls.count(name) - 1] - 1):
                clock()  # the run takes this many ticks of the fake clock

        return run

    assert best_each((work("a"), work("b")), 3, clock) == [3.0, 1.0]
    assert calls == ["a", "b"] * 3


def test_per_call_pair_alternates_runs_of_calls() -> None:
    """Runs of ``calls`` calls of each side take turns, and each side's time is its
    fastest run divided by the calls."""
    calls: list[str] = []
    ticks = iter(range(1000))

    def clock() -> float:
        return float(next(ticks))

    def a() -> None:
        calls.append("a")
        clock()  # a call of ``a`` takes one tick more than one of ``b``

    def b() -> None:
        calls.append("b")

    assert per_call_pair(a, b, 4, 2, clock) == (1.25, 0.25)
    assert calls == ["a"] * 4 + ["b"] * 4 + ["a"] * 4 + ["b"] * 4


def test_row_keys_do_not_depend_on_the_counts() -> None:
    assert slug("random corpus x6 (tiny)") == slug("random corpus x24 (tiny)")
    assert slug("  <=16 live & fitting: 42 ops (tiny)") == "16_live_fitting_tiny"
    data = as_json([Row("TADD x5", 2.0, 1.0, "numpy", 1.5, key="tadd")])
    assert data == [{"key": "tadd", "name": "TADD x5", "seconds": 2.0,
                     "baseline_seconds": 1.0, "baseline": "numpy", "ratio": 2.0,
                     "goal": 1.5, "meets_goal": False, "note": ""}]  # fmt: skip
    twice = as_json([Row("mm", 1.0, 1.0, "np FP16"), Row("mm", 1.0, 2.0, "np f32")])
    assert [d["key"] for d in twice] == ["mm__np_fp16", "mm__np_f32"]


def test_import_benchmark_reports_what_the_command_line_loads() -> None:
    rows = bench_import.rows(repeat=1)
    assert [r.row_key for r in rows] == ["import_ptoc", "ptoc_help"]
    assert "xdsl" not in rows[1].note


def test_matmul_benchmark_runs_on_a_small_shape() -> None:
    rows = bench_matmul.rows(shapes=[(8, 8, 8)])
    # with the compiled kernels, a BF16 and an FP32 row also time the numpy fallbacks
    extra = (kernels.compiled_fold() is not None) + (kernels.compiled_fma() is not None)
    assert len(rows) == 8 + extra and all(r.value > 0 and r.baseline > 0 for r in rows)
    assert "matmul FP16 8x8x8" in render(rows)
    assert "matmul kernel BF16 8x8x8" in render(rows)  # the whole executor
    keys = [row["key"] for row in as_json(rows)]
    assert len(set(keys)) == len(keys)


def test_report_benchmark_runs_on_a_small_kernel() -> None:
    rows = bench_report.rows(blocks=3)
    assert len(rows) == 2 and all(r.value > 0 and r.baseline > 0 for r in rows)
    assert "report write, 21 bundles" in render(rows)


def test_grid_benchmark_runs_on_a_small_grid() -> None:
    rows = bench_grid.grid_rows(cores=4, adds=1) + bench_grid.sparse_rows(bundles=2)
    assert len(rows) == 3 and all(r.value > 0 and r.baseline > 0 for r in rows)
    text = render(rows)
    assert "grid 4 cores x 4 bundles, 2 workers" in text and "bit-identical" in text


def test_cluster_benchmark_runs_a_small_grid_and_campaign() -> None:
    """The grid and campaign rows on a 2-worker local Dask cluster (started in the row)."""
    rows = bench_grid.cluster_rows(cores=4, adds=1, runs=10)
    assert len(rows) == 2 and all(r.value > 0 and r.baseline > 0 for r in rows)
    text = render(rows)
    assert "grid 4 cores x 4 bundles, 2-worker local cluster" in text
    assert "bit-identical" in text
    assert "campaign 10 runs of softmax, 2-worker local cluster" in text
    assert "10 runs counted" in text


def test_loop_benchmark_runs_on_few_rows() -> None:
    rows = bench_loops.rows(rows=64)
    assert len(rows) == 3 and all(r.value > 0 and r.baseline > 0 for r in rows)
    assert "loop run, per bundle" in render(rows)


def test_the_compiles_in_a_row_row_times_the_loop_against_lone_compiles() -> None:
    row = bench_compiler._in_a_row(ops=70, compiles=2)
    assert row.row_key == "compile_in_a_row"
    assert row.value > 0 and row.baseline > 0
    assert "us/bundle" in row.note
