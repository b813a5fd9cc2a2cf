"""The kernel workflow on every example: trace + compile time, and ``ptoc verify`` time
against the executor alone.

For each example kernel (``examples/*.py``) two rows, both against the time the
executor takes to run the compiled bundles (``Machine.run``, inputs already placed):

* ``trace+compile NAME``: tracing the Python body and compiling it (no run);
* ``verify NAME``: what ``ptoc verify`` does -- trace, compile, run, reference, compare.

Examples that cannot be compiled yet (compound operations without a lower-compound pass)
are skipped with a note on stderr.
"""

from __future__ import annotations

import sys
from pathlib import Path

from ptoc.bench import measure
from ptoc.loader import import_file, kernels_in

from .common import Row

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def rows(repeat: int = 3) -> list[Row]:
    out: list[Row] = []
    for path in sorted(EXAMPLES.glob("*.py")):
        for k in kernels_in(import_file(path)).values():
            t = measure(k, repeat=repeat)
            if t.error:
                print(f"bench_workflow: skipping {k.name}: {t.error}", file=sys.stderr)
                continue
            note = f"{t.bundles} bundles, trace {t.trace * 1e3:.1f}ms"
            out.append(
                Row(f"trace+compile {k.name}", t.compile, t.run, "executor run", None, note)
            )
            out.append(Row(f"verify {k.name}", t.verify, t.run, "executor run", None,
                           f"reference {t.reference * 1e3:.1f}ms"))  # fmt: skip
    return out


if __name__ == "__main__":
    from .common import render

    print(render(rows()))
