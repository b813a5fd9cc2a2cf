"""Start-up stays light: ``import ptoc`` and ``ptoc --help`` load neither the compiler
(xDSL), nor the ml_dtypes extension, nor the executor proper; they are imported on
first use."""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("xdsl", "ml_dtypes", "networkx", "ptoc.passes", "ptoc.runtime.machine")


def _loaded(code: str) -> set[str]:
    probe = f"{code}\nimport sys\nprint('loaded:', *(m for m in {HEAVY!r} if m in sys.modules))"
    out = subprocess.run(
        [sys.executable, "-c", probe], check=True, capture_output=True, text=True
    ).stdout
    last = out.strip().splitlines()[-1]  # the command's own output comes first
    assert last.startswith("loaded:")
    return set(last.split()[1:])


def test_import_ptoc_loads_nothing_heavy() -> None:
    assert _loaded("import ptoc") == set()


def test_ptoc_help_loads_nothing_heavy() -> None:
    code = (
        "import sys\nsys.argv = ['ptoc', '--help']\nfrom ptoc.cli import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass"
    )
    assert _loaded(code) == set()


def test_first_use_loads_what_it_needs() -> None:
    code = (
        "import ptoc\nfrom ptoc.runtime import Machine\n"
        "from ptoc.backend.isa import DataType, info\n"
        "assert str(info(DataType.BF16).carrier) == 'bfloat16'\nMachine()"
    )
    assert _loaded(code) == {"ml_dtypes", "ptoc.runtime.machine"}
