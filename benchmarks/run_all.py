"""Run every benchmark of the project and print one table.

python benchmarks/run_all.py [--quick] [--json [PATH]] [--only MODULE ...]

``--json`` also writes the table as JSON (default ``benchmarks/results.json``), one
object per row under its stable ``key`` (the same in quick and full runs).
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import Row, as_json, render

MODULES = [
    "bench_import",
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
    ap.add_argument(
        "--json", nargs="?", const="benchmarks/results.json", metavar="PATH",
        help="also write the table as JSON (default benchmarks/results.json)",
    )  # fmt: skip
    ap.add_argument("--only", nargs="+", metavar="MODULE", help="run only these modules")
    args = ap.parse_args(argv)
    rows: list[Row] = []
    for name in MODULES:
        if args.only and name not in args.only and name.removeprefix("bench_") not in args.only:
            continue
        try:
            mod = importlib.import_module(f"benchmarks.{name}")
        except ModuleNotFoundError as e:
            print(f"skipping {name}: {e}", file=sys.stderr)
            continue
        quick = {
            "bench_asm": {"bundles": 5_000},
            "bench_executor": {"bundles": 50},
            # (bench_compound: its full run is seconds; one repeat of a microsecond
            # row measured cold caches more than the row)
            "bench_import": {"repeat": 2},
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
    if args.json:
        data = as_json(rows)
        keys = [d["key"] for d in data]
        assert len(set(keys)) == len(keys), "benchmark rows share a key and a baseline"
        Path(args.json).write_text(json.dumps(data, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
