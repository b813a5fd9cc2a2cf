"""Start-up stays light: ``import ptoc`` and ``ptoc --help`` load neither the compiler
(xDSL), nor the ml_dtypes extension, nor the executor proper, nor the instruction
catalog, the operation table and its numpy semantics, the encoder, or ``numpy.random``;
they are imported on first use."""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("xdsl", "ml_dtypes", "networkx", "ptoc.passes", "ptoc.runtime.machine")
#: loaded by the first command that needs the catalog (the assembler, the executor, ...)
CATALOG = (
    "ptoc.backend.isa.catalog",
    "ptoc.backend.isa.optable",
    "ptoc.backend.isa.semantics.core",
    "ptoc.backend.encoding",
    "ptoc.runtime.memory",
    "numpy.random",
)


def _loaded(code: str, watch: tuple[str, ...] = HEAVY) -> set[str]:
    probe = f"{code}\nimport sys\nprint('loaded:', *(m for m in {watch!r} if m in sys.modules))"
    out = subprocess.run(
        [sys.executable, "-c", probe], check=True, capture_output=True, text=True
    ).stdout
    last = out.strip().splitlines()[-1]  # the command's own output comes first
    assert last.startswith("loaded:")
    return set(last.split()[1:])


def test_import_ptoc_loads_nothing_heavy() -> None:
    assert _loaded("import ptoc") == set()


HELP = (
    "import sys\nsys.argv = ['ptoc', '--help']\nfrom ptoc.cli import main\n"
    "try:\n    main()\nexcept SystemExit:\n    pass"
)


def test_ptoc_help_loads_nothing_heavy() -> None:
    assert _loaded(HELP) == set()


def test_import_and_help_leave_the_catalog_unloaded() -> None:
    assert _loaded("import ptoc", CATALOG) == set()
    assert _loaded(HELP, CATALOG) == set()


def test_catalog_names_load_on_first_use() -> None:
    code = (
        "import ptoc.backend.isa as isa\n"
        "assert isa.op('TADD').mnemonic == 'TADD' and 'TADD' in isa.OPS\n"
        "assert isa.row('TADD').mnemonic == 'TADD'\n"
        "assert isa.scalar_form('addi').mnemonic == 'ADDI'"
    )
    loaded = _loaded(code, CATALOG)
    assert {"ptoc.backend.isa.catalog", "ptoc.backend.isa.optable"} <= loaded
    assert "ptoc.backend.encoding" not in loaded


def test_first_use_loads_what_it_needs() -> None:
    code = (
        "import ptoc\nfrom ptoc.runtime import Machine\n"
        "from ptoc.backend.isa import DataType, info\n"
        "assert str(info(DataType.BF16).carrier) == 'bfloat16'\nMachine()"
    )
    assert _loaded(code) == {"ml_dtypes", "ptoc.runtime.machine"}
