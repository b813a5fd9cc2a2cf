"""Run every FileCheck test (``tests/filecheck/**/*.mlir``) from pytest.

Each file's ``// RUN:`` lines are shell pipelines; ``%s`` is the file. They run with the
interpreter's ``bin`` directory first on PATH so ``xdsl-opt`` and ``filecheck`` come
from the same environment as the installed ptoc (its ``xdsl.universe`` entry point).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent
FILES = sorted(ROOT.rglob("*.mlir"))


def run_lines(path: Path) -> list[str]:
    lines = []
    for line in path.read_text().splitlines():
        if "RUN:" in line:
            lines.append(line.split("RUN:", 1)[1].strip().replace("%s", str(path)))
    return lines


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(ROOT)) for p in FILES])
def test_filecheck(path: Path) -> None:
    runs = run_lines(path)
    assert runs, f"{path} has no RUN line"
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    for cmd in runs:
        r = subprocess.run(
            ["bash", "-o", "pipefail", "-c", cmd],
            capture_output=True, text=True, env=env, timeout=300,
        )  # fmt: skip
        assert r.returncode == 0, f"RUN: {cmd}\n--- stdout\n{r.stdout}\n--- stderr\n{r.stderr}"


def test_every_pass_has_positive_and_invalid_tests() -> None:
    names = {p.stem for p in FILES}
    for stem in ("legalize", "allocate", "emit", "tile_roundtrip", "pto_roundtrip"):
        assert stem in names
    for stem in ("legalize", "allocate", "emit", "tile", "pto"):
        assert f"{stem}_invalid" in names
