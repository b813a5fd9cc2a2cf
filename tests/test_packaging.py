"""Every package directory is listed in pyproject.toml, so `pip install .` (not only the
editable install) ships it."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_every_package_directory_is_installed() -> None:
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(cfg["packages"])
    mapping = cfg["package-dir"]
    missing = []
    for name, folder in mapping.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT / folder)
            pkg = ".".join([name, *rel.parts]) if rel.parts else name
            if pkg not in listed:
                missing.append(pkg)
    assert not missing, f"add to [tool.setuptools] packages: {sorted(missing)}"


def test_kernel_sources_ship_with_the_package() -> None:
    # compiled.py builds <name>.c from its own directory, with the headers it includes,
    # so a wheel needs both
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    here = ROOT / "backend/isa/semantics"
    sources = sorted(p.name for p in here.glob("*.c"))
    assert sources, "no kernel sources found"
    assert sorted(p.name for p in here.glob("*.h")) == ["ieee_env.h"]
    assert cfg["package-data"]["ptoc.backend.isa.semantics"] == ["*.c", "*.h"]
