"""The floors of DESIGN.md: each folder imports only the floors below it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RULES = {
    # folder: prefixes it must not import
    "backend": ("xdsl", "networkx", "ptoc.runtime", "ptoc.dialects", "ptoc.passes", "ptoc.cli"),
    "runtime": ("xdsl", "networkx", "ptoc.dialects", "ptoc.passes"),
    "dialects": ("networkx", "ptoc.runtime", "ptoc.passes"),
}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


@pytest.mark.parametrize("folder", sorted(RULES))
def test_folder_imports_respect_the_floors(folder: str) -> None:
    bad = []
    for path in sorted((ROOT / folder).rglob("*.py")):
        for name in _imports(path):
            if name.startswith(RULES[folder]):
                bad.append(f"{path.relative_to(ROOT)} imports {name}")
    assert not bad, "\n".join(bad)


def test_no_generic_top_level_packages_installed() -> None:
    import importlib.util

    for name in ("backend", "runtime", "dialects", "passes"):
        spec = importlib.util.find_spec(name)
        assert spec is None or "site-packages" not in str(spec.origin), name
