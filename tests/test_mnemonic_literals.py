"""One source of truth for operations: outside ``backend/isa`` (and the generated ``pto``
dialect), code refers to catalog operations through the operation table or the op classes,
not by spelling mnemonic strings.

A handful of literals may remain where a string is the clearest name (the limit below);
the test names every file that spells one, so a new literal is a deliberate choice.
"""

from __future__ import annotations

import ast
from pathlib import Path

from ptoc.backend.isa import OPS

ROOT = Path(__file__).resolve().parents[1]
LIBRARY = ("backend", "runtime", "dialects", "passes", "ptoc")
#: generated from the catalog, or the catalog's own floor
EXEMPT = ("backend/isa/", "dialects/pto_ops.py")
LIMIT = 10


def _literals(path: Path) -> int:
    tree = ast.parse(path.read_text())
    return sum(
        1
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in OPS
    )


def test_library_code_names_operations_through_the_table() -> None:
    counts = {}
    for folder in LIBRARY:
        for path in sorted((ROOT / folder).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if rel.startswith(EXEMPT):
                continue
            if n := _literals(path):
                counts[rel] = n
    total = sum(counts.values())
    assert total <= LIMIT, f"{total} catalog mnemonic literals outside backend/isa: {counts}"


def test_the_counter_sees_a_literal(tmp_path: Path) -> None:
    p = tmp_path / "x.py"
    p.write_text('OP = "TADD"\nOTHER = "tadd"  # not a catalog spelling\n')
    assert _literals(p) == 1
