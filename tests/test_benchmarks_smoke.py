"""The benchmark scripts keep working (timings are printed by benchmarks/run_all.py,
never asserted)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import bench_asm, bench_executor, bench_grid, bench_matmul, bench_report
from benchmarks.common import render


def test_asm_benchmark_runs_on_a_small_program() -> None:
    rows = bench_asm.rows(bundles=300)
    assert len(rows) == 2 and all(r.value > 0 and r.baseline > 0 for r in rows)
    assert "asm+encode 300 bundles" in render(rows)


def test_executor_benchmark_runs_on_few_bundles() -> None:
    rows = bench_executor.rows(bundles=10)
    assert len(rows) == 8 and all(r.value > 0 and r.baseline > 0 for r in rows)
    assert "TADD FP32 64x256 mask 1111 x10" in render(rows)


def test_matmul_benchmark_runs_on_a_small_shape() -> None:
    rows = bench_matmul.rows(shapes=[(8, 8, 8)])
    assert len(rows) == 6 and all(r.value > 0 and r.baseline > 0 for r in rows)
    assert "matmul FP16 8x8x8" in render(rows)


def test_report_benchmark_runs_on_a_small_kernel() -> None:
    rows = bench_report.rows(blocks=3)
    assert len(rows) == 2 and all(r.value > 0 and r.baseline > 0 for r in rows)
    assert "report write, 21 bundles" in render(rows)


def test_grid_benchmark_runs_on_a_small_grid() -> None:
    rows = bench_grid.grid_rows(cores=4, adds=1) + bench_grid.sparse_rows(bundles=2)
    assert len(rows) == 3 and all(r.value > 0 and r.baseline > 0 for r in rows)
    text = render(rows)
    assert "grid 4 cores x 4 bundles, 2 workers" in text and "bit-identical" in text
