"""Run every FileCheck test (``tests/filecheck/**/*.mlir``) from pytest.

Each file's ``// RUN:`` lines are shell pipelines; ``%s`` is the file. A pipeline of
``xdsl-opt`` and ``filecheck`` stages runs in this process (the same ``main`` functions
the console scripts call, with the same arguments, stdin and stdout), which saves the
interpreter start-up of every stage; any other pipeline runs in ``bash`` with the
interpreter's ``bin`` directory first on PATH. The console scripts themselves are run as
processes by ``test_xdsl_opt.py`` and by :func:`test_one_pipeline_as_a_process`.
"""

from __future__ import annotations

import io
import os
import shlex
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
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


def _run_stage(argv: list[str], stdin: str) -> tuple[int, str, str]:
    """One ``xdsl-opt`` or ``filecheck`` stage in this process: exit status, stdout, stderr."""
    from filecheck.main import main as filecheck_main
    from xdsl.xdsl_opt_main import xDSLOptMain

    out, err = io.StringIO(), io.StringIO()
    saved = sys.stdin
    sys.stdin = io.TextIOWrapper(io.BytesIO(stdin.encode()), encoding="utf-8")
    code = 0
    try:
        with redirect_stdout(out), redirect_stderr(err):
            try:
                if argv[0] == "xdsl-opt":
                    xDSLOptMain(args=argv[1:]).run()
                else:
                    filecheck_main(argv)
            except SystemExit as e:
                code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
            except Exception as e:  # an uncaught error: what the process would die of
                code = 1
                err.write(f"{type(e).__name__}: {e}\n")
    finally:
        sys.stdin = saved
    return code, out.getvalue(), err.getvalue()


def run_pipeline(cmd: str) -> tuple[int, str, str]:
    """Run a ``RUN:`` pipeline; in process when every stage is xdsl-opt or filecheck."""
    stages = [shlex.split(part) for part in cmd.split("|")]
    if all(st and st[0] in ("xdsl-opt", "filecheck") for st in stages):
        data, code, out, err = "", 0, "", ""
        for st in stages:
            code, out, err = _run_stage(st, data)
            if code != 0:
                break
            data = out
        return code, out, err
    return _run_process(cmd)


def _run_process(cmd: str) -> tuple[int, str, str]:
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    r = subprocess.run(
        ["bash", "-o", "pipefail", "-c", cmd],
        capture_output=True, text=True, env=env, timeout=300,
    )  # fmt: skip
    return r.returncode, r.stdout, r.stderr


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(ROOT)) for p in FILES])
def test_filecheck(path: Path) -> None:
    runs = run_lines(path)
    assert runs, f"{path} has no RUN line"
    for cmd in runs:
        code, out, err = run_pipeline(cmd)
        assert code == 0, f"RUN: {cmd}\n--- stdout\n{out}\n--- stderr\n{err}"


def test_one_pipeline_as_a_process() -> None:
    """The in-process runner and the console scripts agree on a passing and a failing
    pipeline (so a RUN line means the same in both)."""
    path = ROOT / "passes" / "legalize.mlir"
    cmd = run_lines(path)[0]
    assert _run_process(cmd)[0] == 0 == run_pipeline(cmd)[0]
    wrong = cmd.replace("filecheck", "filecheck --check-prefix=NO_SUCH_PREFIX")
    assert _run_process(wrong)[0] != 0 and run_pipeline(wrong)[0] != 0


def test_every_pass_has_positive_and_invalid_tests() -> None:
    names = {p.stem for p in FILES}
    for stem in ("legalize", "allocate", "emit", "tile_roundtrip", "pto_roundtrip"):
        assert stem in names
    for stem in ("legalize", "allocate", "emit", "tile", "pto"):
        assert f"{stem}_invalid" in names
