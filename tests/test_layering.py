"""The floors of DESIGN.md: each folder imports only the floors below it.

Every import counts: ``import a.b``, ``from a.b import c`` and relative imports, which are
resolved to absolute ``ptoc.<floor>...`` names from the importing file's package (so
``from ..passes import x`` in ``dialects/`` is caught), at module level or inside a
function. A floor may import the standard library, the third-party packages listed for it
and the ``ptoc`` packages listed for it, nothing else (not ``tests``, ``benchmarks`` or
``tools``).
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Floor:
    """A folder of the repository, the package it is installed as, and what it may import."""

    folder: str
    package: str
    #: ptoc packages it may import (itself included)
    ptoc: tuple[str, ...]
    #: third-party top-level packages it may import
    third_party: tuple[str, ...]
    #: ptoc packages it must not import although a broader entry of ``ptoc`` allows them
    never: tuple[str, ...] = ()
    #: (file, package): an optional extra that only this file of the floor may import
    #: (lazily, inside the functions that need it)
    extras: tuple[tuple[str, str], ...] = ()


NUMERIC = ("numpy", "ml_dtypes")

FLOORS = (
    # floor 1: the target; stdlib, numpy and ml_dtypes only (ptoc run starts fast)
    Floor("backend", "ptoc.backend", ("ptoc.backend",), NUMERIC),
    # floor 2: the machine model and executor, on the target only
    Floor("runtime", "ptoc.runtime", ("ptoc.runtime", "ptoc.backend"), NUMERIC),
    # floor 2: the tile and pto dialects, on the target only (never the runtime)
    Floor("dialects", "ptoc.dialects", ("ptoc.dialects", "ptoc.backend"), ("xdsl", *NUMERIC)),
    # floor 3: the passes; the only floor that uses networkx
    Floor(
        "passes",
        "ptoc.passes",
        ("ptoc.passes", "ptoc.dialects", "ptoc.runtime", "ptoc.backend"),
        ("xdsl", "networkx", *NUMERIC),
    ),
    # above the dialects: the public builder and random-kernel corpus for tests and fuzzing
    Floor(
        "ptoc/testing",
        "ptoc.testing",
        ("ptoc.testing", "ptoc.dialects", "ptoc.backend"),
        ("xdsl", *NUMERIC),
    ),
    # floor 4: the face (DSL, driver, CLI); every floor below, never the testing utilities
    # (the cluster campaigns use the optional extra ptoc[distributed])
    Floor(
        "ptoc",
        "ptoc",
        ("ptoc",),
        ("xdsl", *NUMERIC),
        never=("ptoc.testing",),
        extras=(("ptoc/campaign.py", "distributed"), ("ptoc/cluster.py", "distributed")),
    ),
)


def resolve(package: str, level: int, module: str | None) -> str:
    """The absolute name of ``from <level dots><module> import ...`` in ``package``."""
    parts = package.split(".")
    if level > len(parts):
        raise ValueError(f"relative import beyond the top of {package!r}")
    base = ".".join(parts[: len(parts) - level + 1])
    return f"{base}.{module}" if module else base


def _package_of(path: Path, floor: Floor, root: Path) -> str:
    """The package a file's relative imports are resolved in."""
    rel = path.relative_to(root / floor.folder).with_suffix("").parts
    # a module's own package; an ``__init__`` is its package (both: drop the last part)
    return ".".join([floor.package, *rel][:-1])


def imports(path: Path, package: str) -> set[str]:
    """Every absolute module name ``path`` imports (relative imports resolved)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0:
                assert node.module is not None
                names.add(node.module)
                continue
            base = resolve(package, node.level, node.module)
            if node.module:
                names.add(base)
            else:  # ``from . import x``: x may be a submodule
                names.update(f"{base}.{a.name}" for a in node.names)
    return names


def _within(name: str, packages: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in packages)


def _allowed(floor: Floor, name: str, file: str = "") -> bool:
    top = name.split(".")[0]
    if top == "ptoc":
        return _within(name, floor.ptoc) and not _within(name, floor.never)
    if (file, top) in floor.extras:
        return True
    return top in sys.stdlib_module_names or top in floor.third_party


def _floor_of(path: Path, root: Path) -> Floor | None:
    """The most specific floor whose folder holds ``path``."""
    best = None
    for floor in FLOORS:
        if path.is_relative_to(root / floor.folder) and (
            best is None or len(floor.folder) > len(best.folder)
        ):
            best = floor
    return best


def violations(root: Path) -> list[str]:
    """``file imports name`` for every import that leaves the floors of its file."""
    bad = []
    for floor in FLOORS:
        for path in sorted((root / floor.folder).rglob("*.py")):
            if _floor_of(path, root) is not floor:
                continue
            file = path.relative_to(root).as_posix()
            for name in sorted(imports(path, _package_of(path, floor, root))):
                if not _allowed(floor, name, file):
                    bad.append(f"{file} imports {name}")
    return bad


def test_every_floor_folder_exists() -> None:
    for floor in FLOORS:
        assert (ROOT / floor.folder / "__init__.py").is_file(), floor.folder


def test_imports_respect_the_floors() -> None:
    bad = violations(ROOT)
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize(
    ("package", "level", "module", "expected"),
    [
        ("ptoc.passes.legalize", 1, "ctx", "ptoc.passes.legalize.ctx"),
        ("ptoc.passes.legalize", 2, "diagnostics", "ptoc.passes.diagnostics"),
        ("ptoc.passes.legalize", 3, "cli", "ptoc.cli"),
        ("ptoc.dialects", 2, "runtime.machine", "ptoc.runtime.machine"),
        ("ptoc.dialects", 1, None, "ptoc.dialects"),
    ],
)
def test_relative_imports_resolve_from_the_files_package(
    package: str, level: int, module: str | None, expected: str
) -> None:
    assert resolve(package, level, module) == expected


def test_relative_import_beyond_the_top_is_an_error() -> None:
    with pytest.raises(ValueError, match="beyond the top"):
        resolve("ptoc", 2, "x")


def test_a_relative_import_that_crosses_a_floor_is_reported(tmp_path: Path) -> None:
    """A fake tree: relative imports that reach a higher floor, the runtime from the
    dialects, or the testing utilities from the face, are violations; those within the
    allowed floors are not."""
    files = {
        "dialects/__init__.py": "from . import tile\n",
        "dialects/tile.py": "from ..backend import isa\n",
        "dialects/sub/__init__.py": "from .. import tile\n",
        "dialects/sub/bad.py": (
            "from ...passes.legalize import legalize_func\n"
            "from ..reference import run\n"
            "def f():\n    from ... import runtime\n"
        ),
        "backend/__init__.py": "",
        "backend/enc.py": "from .isa import op\nfrom ..dialects import pto\n",
        "ptoc/__init__.py": "",
        "ptoc/driver.py": "from .passes import pipeline\nfrom .testing import random_kernel\n",
        "ptoc/testing/__init__.py": "from ..dialects import tile\nfrom ..passes import emit\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    assert sorted(violations(tmp_path)) == [
        "backend/enc.py imports ptoc.dialects",
        "dialects/sub/bad.py imports ptoc.passes.legalize",
        "dialects/sub/bad.py imports ptoc.runtime",
        "ptoc/driver.py imports ptoc.testing",
        "ptoc/testing/__init__.py imports ptoc.passes",
    ]


def test_the_real_tree_relative_imports_are_seen() -> None:
    """The floors test reads the relative imports of the repository, resolved."""
    select = ROOT / "passes" / "legalize" / "select.py"
    names = imports(select, _package_of(select, FLOORS[3], ROOT))
    assert {"ptoc.passes.legalize.ctx", "ptoc.passes.diagnostics"} <= names


def test_no_generic_top_level_packages_installed() -> None:
    import importlib.util

    for name in ("backend", "runtime", "dialects", "passes", "testing"):
        spec = importlib.util.find_spec(name)
        assert spec is None or "site-packages" not in str(spec.origin), name
