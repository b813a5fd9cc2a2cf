"""The workflow benchmark keeps working (timings are printed, never asserted)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks import bench_workflow
from benchmarks.common import render


def test_workflow_benchmark_rows() -> None:
    rows = bench_workflow.rows(repeat=1)
    names = {r.name for r in rows}
    assert {"trace+compile softmax", "verify softmax"} <= names
    assert all(r.value > 0 and r.baseline > 0 for r in rows)
    assert "executor run" in render(rows)
