"""Run every benchmark of the project and print one table.

python benchmarks/run_all.py [--quick]
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import Row, render

MODULES = [
    "bench_asm",
    "bench_executor",
    "bench_workflow",
    "bench_compiler",
    "bench_compound",
    "bench_matmul",
    "bench_cube",
    "bench_report",
    "bench_loops",
    "bench_grid",
]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="smaller sizes, for smoke runs")
    args = ap.parse_args(argv)
    rows: list[Row] = []
    for name in MODULES:
        try:
            mod = importlib.import_module(f"benchmarks.{name}")
        except ModuleNotFoundError as e:
            print(f"skipping {name}: {e}", file=sys.stderr)
            continue
        quick = {
            "bench_asm": {"bundles": 5_000},
            "bench_executor": {"bundles": 50},
            "bench_workflow": {"repeat": 1},
            "bench_compiler": {"kernels": 6},
            "bench_matmul": {"shapes": [(64, 64, 64)]},
            "bench_cube": {"shapes": [(16, 64, 64)]},
            "bench_report": {"blocks": 20},
            "bench_loops": {"rows": 256},
            "bench_grid": {"cores": 16, "runs": 100, "adds": 4, "bundles": 20},
        }
        rows += mod.rows(**(quick.get(name, {}) if args.quick else {}))
    print(render(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
