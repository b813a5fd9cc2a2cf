"""Start-up time: ``import ptoc`` and ``ptoc --help`` against ``import numpy``.

Each figure is the best wall time of a fresh interpreter running the statement, minus
the best time of a fresh interpreter that runs nothing (so only the import is counted);
the statements take turns, round by round, so that load on the host weighs on all alike.
The ``ptoc --help`` row also checks that the command line did not load xDSL (the note
says which heavy modules the statement imported).
"""

from __future__ import annotations

import subprocess
import sys
import time

from .common import Row

#: modules whose loading the notes report (the lazy ones)
HEAVY = ("xdsl", "ml_dtypes", "networkx", "ptoc.passes", "ptoc.runtime.machine")


def _spawn(code: str) -> tuple[float, str]:
    t0 = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True
    ).stdout
    return time.perf_counter() - t0, out


def _best(codes: list[str], repeat: int) -> list[tuple[float, str]]:
    """Per statement of ``codes``: the best wall time of ``repeat`` fresh interpreters
    and the last one's output. The statements take turns (each round runs every one), so
    a change in the host's load weighs on the baseline and the measured rows alike."""
    runs: list[list[tuple[float, str]]] = [[] for _ in codes]
    for _ in range(repeat):
        for k, code in enumerate(codes):
            runs[k].append(_spawn(code))
    return [(min(t for t, _ in r), r[-1][1]) for r in runs]


def _report(stmt: str) -> str:
    """``stmt`` followed by printing which of :data:`HEAVY` it loaded."""
    probe = f"import sys; print(','.join(m for m in {HEAVY!r} if m in sys.modules) or 'none')"
    return f"{stmt}\n{probe}"


def rows(repeat: int = 5) -> list[Row]:
    measured = (
        ("import_ptoc", "import ptoc", "import ptoc"),
        (
            "ptoc_help",
            "ptoc --help",
            "import sys; sys.argv = ['ptoc', '--help']\n"
            "from ptoc.cli import main\n"
            "try:\n    main()\nexcept SystemExit:\n    pass",
        ),
    )
    codes = ["pass", "import numpy", *(_report(stmt) for _, _, stmt in measured)]
    (bare, _), (numpy, _), *results = _best(codes, repeat)
    base = numpy - bare
    out = []
    for (key, label, _), (t, loaded) in zip(measured, results, strict=True):
        heavy = loaded.strip().splitlines()[-1] if loaded.strip() else "?"
        out.append(Row(label, t - bare, base, "import numpy", 2.0,
                       f"loads: {heavy}", key=key))  # fmt: skip
    return out


if __name__ == "__main__":
    from .common import render

    print(render(rows()))
