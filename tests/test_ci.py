"""Issue 9 item 17: the test command's output ends with pytest's summary line."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_quiet_pytest_still_prints_the_pass_count(tmp_path: Path) -> None:
    """``python -m pytest -q`` with the project's configuration ends with "N passed"
    (an ``addopts = "-q"`` made it -qq, which prints no summary line at all)."""
    (tmp_path / "test_tiny.py").write_text(
        "def test_a():\n    pass\n\n\ndef test_b():\n    pass\n"
    )
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]
    ini = tmp_path / "pytest.ini"
    ini.write_text("[pytest]\naddopts = " + cfg["ini_options"].get("addopts", "") + "\n")
    r = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-c", str(ini), "-p", "no:cacheprovider",
         str(tmp_path / "test_tiny.py")],
        capture_output=True, text=True, cwd=tmp_path,
    )  # fmt: skip
    assert r.returncode == 0, r.stdout + r.stderr
    last = r.stdout.strip().splitlines()[-1]
    assert re.fullmatch(r"2 passed in [0-9.]+s", last), r.stdout


def test_ci_runs_the_tests_last() -> None:
    """So that a CI log ends with pytest's summary line, not with the linters' output."""
    lines = [
        ln.strip()
        for ln in (ROOT / ".ci" / "run").read_text().splitlines()
        if ln.strip() and not ln.strip().startswith("#")
    ]
    assert lines[-1] == "python -m pytest"
