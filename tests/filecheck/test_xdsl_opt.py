"""``xdsl-opt`` with ptoc's passes as a user runs it: a pass given a kernel of the wrong
stage fails in one line (exit 2, no traceback), and the emitted program runs with
``ptoc run`` (``-t ptoc-asm`` writes it as a ``.s`` file)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ptoc.dialects.reference import run_reference
from ptoc.testing import KernelBuilder

KERNEL = """\
func.func @k(%x: !tile.tensor<FP32, 8x64>, %o: !tile.tensor<FP32, 8x64>) attributes {"tile.pes" = 2 : i64} {
  %t = tile.load %x[0, 0] pe [4, 0] : !tile.tensor<FP32, 8x64> -> !tile.tile<FP32, 4x64>
  %m = tile.rowmax %t : !tile.tile<FP32, 4x64> -> !tile.tile<FP32, 4x1>
  %e = tile.exp %t : !tile.tile<FP32, 4x64>
  %r = tile.rowexpandsub %e, %m : !tile.tile<FP32, 4x64>, !tile.tile<FP32, 4x1>
  tile.store %r, %o[0, 0] pe [4, 0] : !tile.tile<FP32, 4x64>, !tile.tensor<FP32, 8x64>
  func.return
}
"""  # noqa: E501


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    return subprocess.run(list(args), capture_output=True, text=True, env=env, timeout=300)


@pytest.mark.parametrize(
    ("passes", "message"),
    [
        ("ptoc-emit", "ptoc-emit: @k is tile IR, not allocated pto IR: run ptoc-legalize and "
         "ptoc-allocate first"),
        ("ptoc-allocate", "ptoc-allocate: @k is tile IR, not legalized pto IR: run "
         "ptoc-legalize first"),
        ("ptoc-legalize,ptoc-emit", "ptoc-emit: @k is legalized pto IR, not allocated pto IR: "
         "run ptoc-allocate first"),
    ],
)  # fmt: skip
def test_a_pass_at_the_wrong_stage_fails_in_one_line(
    tmp_path: Path, passes: str, message: str
) -> None:
    src = tmp_path / "k.mlir"
    src.write_text(KERNEL)
    r = _run("xdsl-opt", str(src), "-p", passes)
    assert r.returncode == 2
    assert r.stderr == f"xdsl-opt: error: {message}\n"
    assert r.stdout == ""


def test_the_emitted_text_runs_with_ptoc_run(tmp_path: Path) -> None:
    src, prog = tmp_path / "k.mlir", tmp_path / "k.s"
    src.write_text(KERNEL)
    r = _run("xdsl-opt", str(src), "-p", "ptoc-legalize,ptoc-allocate,ptoc-emit", "-t",
             "ptoc-asm", "-o", str(prog))  # fmt: skip
    assert r.returncode == 0, r.stderr
    header = prog.read_text().splitlines()[:3]
    assert header == [
        "# @k, allocated for hands=4,depth=16,capacity=262144,pes=4,gm_size=67108864",
        "# a0 = base of tensor x + 1024 bytes per PE",
        "# a1 = base of tensor o + 1024 bytes per PE",
    ]
    x = np.random.default_rng(0).standard_normal((8, 64)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "o.npy", np.zeros((8, 64), np.float32))
    r = _run(
        "ptoc", "run", str(prog),
        "--gpr", "0:a0=0x1000", "--gpr", "1:a0=0x1400",  # a0 + 1024 bytes on PE1
        "--gpr", "0:a1=0x2000", "--gpr", "1:a1=0x2400",
        "--gm", f"0x1000={tmp_path / 'x.npy'}", "--gm", f"0x2000={tmp_path / 'o.npy'}",
        "--save", str(tmp_path / "out.npz"),
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    got = np.load(tmp_path / "out.npz")["gm@0x2000"]
    kb = KernelBuilder("k", pes=2)
    xt, ot = kb.tensor("x", "FP32", (8, 64)), kb.tensor("o", "FP32", (8, 64))
    t = kb.load(xt, (4, 64), pe=(4, 0))
    kb.store(ot, kb.rowexpandsub(kb.exp(t), kb.rowmax(t)), pe=(4, 0))
    want = run_reference(kb.finish(), {"x": x})["o"]
    assert got.tobytes() == want.tobytes()


def test_ptoc_emit_validates_for_the_machine_the_kernel_was_allocated_for(
    tmp_path: Path,
) -> None:
    """``ptoc-emit`` replays the program through the allocation validator on the machine
    named by ``pto.machine``, as ``ptoc.compile`` does: an allocation that does not fit
    the machine it claims is refused, not printed."""
    src, allocated = tmp_path / "k.mlir", tmp_path / "allocated.mlir"
    src.write_text(KERNEL)
    r = _run("xdsl-opt", str(src), "-p", "ptoc-legalize,ptoc-allocate", "-o", str(allocated))
    assert r.returncode == 0, r.stderr
    text = allocated.read_text()
    assert 'pto.machine = "hands=4,depth=16,capacity=262144,pes=4,gm_size=67108864"' in text
    ok = _run("xdsl-opt", str(allocated), "-p", "ptoc-emit")
    assert ok.returncode == 0, ok.stderr
    allocated.write_text(text.replace("capacity=262144", "capacity=1024"))
    r = _run("xdsl-opt", str(allocated), "-p", "ptoc-emit")
    assert r.returncode == 2
    assert r.stderr.startswith("xdsl-opt: error: ") and r.stderr.count("\n") == 1, r.stderr
    assert "capacity" in r.stderr
    allocated.write_text(text.replace("depth=16", "depth=99"))
    r = _run("xdsl-opt", str(allocated), "-p", "ptoc-emit")
    assert r.returncode == 2
    assert "malformed pto.machine" in r.stderr and "depth=99" in r.stderr, r.stderr
