"""``python -m tools.avs --spec PTO-SPEC [--family tile/elementwise-tile-tile] [-v] [--json F]``

Runs the ISA authors' conformance tests of a pto-spec checkout against ptoc and prints,
per family, how many tests there are, how many the tool translated, passed, failed, and
how many are not applicable or untranslated (with their reasons). ``-v`` lists every
failure (test id, file:line, the assertion and ptoc's values) and every untranslated
test; ``-vv`` also prints the ptoc bundles a failing test ran. Exit status: 0 when no
translated test failed, 1 when one did, 2 for bad arguments.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .runner import OUTCOMES, Result, discover, lifted_type_check, run, summary, to_json


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tools.avs", description=__doc__.split("\n")[2])
    ap.add_argument("--spec", required=True, type=Path, help="a PTO-ISA/pto-spec checkout")
    ap.add_argument(
        "--family",
        default=None,
        help="a directory under tests/asl (default: tile); a file runs one test",
    )
    ap.add_argument("--id", action="append", default=[], help="run only these test ids")
    ap.add_argument("-v", "--verbose", action="count", default=0)
    ap.add_argument("--json", type=Path, default=None, help="write every result as JSON")
    ap.add_argument(
        "--lift-type-check",
        action="store_true",
        help="diagnostic: let ptoc's executor accept every BSTART DataType, to see what "
        "fails once the type sets are widened (the catalog predicates are unchanged)",
    )
    args = ap.parse_args(argv)
    try:
        cases = discover(args.spec, args.family)
    except (FileNotFoundError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if args.id:
        wanted = set(args.id)
        cases = [c for c in cases if c.id in wanted]
    if args.lift_type_check:
        with lifted_type_check():
            results = run(cases)
    else:
        results = run(cases)
    print(report(results, args.verbose))
    if args.json is not None:
        args.json.write_text(json.dumps(to_json(results), indent=1) + "\n", encoding="utf-8")
    return 1 if any(r.outcome == "failed" for r in results) else 0


def report(results: list[Result], verbose: int = 0) -> str:
    """The per-family table, the reasons, and (verbose) every failure."""
    sums = summary(results)
    cols = ("total", "translated", *OUTCOMES)
    width = max([len("family"), *(len(f) for f in sums)])
    lines = ["  ".join([f"{'family':<{width}}", *(f"{c:>12}" for c in cols)])]
    total = dict.fromkeys(cols, 0)
    for fam, f in sums.items():
        lines.append("  ".join([f"{fam:<{width}}", *(f"{f[c]:>12}" for c in cols)]))
        for c in cols:
            total[c] += f[c]
    lines.append("  ".join([f"{'all':<{width}}", *(f"{total[c]:>12}" for c in cols)]))
    skipped = sum(f["passed with skipped ASL-internal asserts"] for f in sums.values())
    if skipped:
        lines.append(
            f"({skipped} passed tests skipped assertions on ASL-internal dispatch "
            "records, which ptoc does not have)"
        )
    na: dict[str, int] = {}
    un: dict[str, int] = {}
    for f in sums.values():
        for k, v in f["not applicable reasons"].items():
            na[k] = na.get(k, 0) + v
        for k, v in f["untranslated bindings"].items():
            un[k] = un.get(k, 0) + v
    if na:
        lines.append("not applicable: " + ", ".join(f"{k} {v}" for k, v in na.items()))
    if un:
        lines.append("untranslated: " + ", ".join(f"{k} {v}" for k, v in un.items()))
    if verbose:
        for r in results:
            if r.outcome == "failed":
                lines.append(f"FAIL {r.id}  {r.file}:{r.line}: assert {r.text}")
                if r.detail:
                    lines.append(f"     ptoc: {r.detail}")
                if verbose > 1:
                    for b in r.bundles[-2:]:
                        lines.extend("     | " + ln for ln in b.splitlines())
        for r in results:
            for note in r.notes:
                lines.append(f"NOTE {r.id}  {r.file}: {note}")
        for r in results:
            if r.outcome == "untranslated":
                lines.append(
                    f"UNTRANSLATED {r.id}  {r.file}:{r.line}: {r.category}: {r.reason}"
                )
        if verbose > 1:
            for r in results:
                if r.outcome == "not applicable":
                    lines.append(f"N/A {r.id}  {r.file}: {r.category}: {r.reason}")
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
