"""``ptoc compile``, ``ptoc verify``, ``ptoc run FILE.py::KERNEL`` and ``ptoc bench``:
outputs, exit codes (0 ok, 1 mismatch, 2 bad input, 3 fault) and one-message errors."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import ptoc
from ptoc.backend import asm, encoding
from ptoc.cli import main
from ptoc.cli_kernel import Progress

ROOT = Path(__file__).resolve().parents[2]
SOFTMAX = str(ROOT / "examples" / "softmax.py") + "::softmax"

BAD = """\
import numpy as np
import ptoc
import ptoc.lang as pt

I = ptoc.Tensor[ptoc.s32, 8, 64]


@ptoc.kernel
def intdiv(x: I, y: I, out: I):
    pt.store(out, pt.load(x) / pt.load(y))


@intdiv.inputs
def _zeros(rng):
    return {"x": np.ones((8, 64), np.int32), "y": np.zeros((8, 64), np.int32)}


@ptoc.kernel
def typo(x: I, out: I):
    pt.store(out, pt.exp(pt.load(x)))
"""


@pytest.fixture
def bad(tmp_path: Path) -> Path:
    p = tmp_path / "bad.py"
    p.write_text(BAD)
    return p


def test_compile_emit_asm_prints_readable_bundles(capsys) -> None:
    assert main(["compile", SOFTMAX, "--emit", "asm"]) == 0
    out = capsys.readouterr().out
    assert "BSTART.SFU TROWMAX, FP32" in out and "BSTART.TLOAD FP32" in out
    assert "softmax.py:" in out and "pt.load(x)" in out  # kernel line comments
    assert asm.parse(out) == ptoc.compile(ptoc.loader.load_kernel(SOFTMAX)).program


@pytest.mark.parametrize(
    ("emit", "needle"),
    [("tile", "tile.rowmax"), ("lower-compound", "tile.rowexpanddiv"),
     ("legalize", "pto.trowmax"), ("pto", "refs"), ("stats", "peak bytes/PE")],
)  # fmt: skip
def test_compile_emits_every_stage(capsys, emit: str, needle: str) -> None:
    assert main(["compile", SOFTMAX, "--emit", emit]) == 0
    assert needle in capsys.readouterr().out


def test_compile_bin_and_dump_dir(tmp_path: Path, capsys) -> None:
    out = tmp_path / "s.bin"
    dump = tmp_path / "dump"
    assert (
        main(["compile", SOFTMAX, "--emit", "bin", "-o", str(out), "--dump-dir", str(dump)])
        == 0
    )
    k = ptoc.loader.load_kernel(SOFTMAX)
    assert encoding.decode(out.read_bytes()) == ptoc.compile(k).program
    assert len(list(dump.iterdir())) == 5
    assert main(["compile", SOFTMAX, "--print-ir-after-all", "-o", str(tmp_path / "s.s")]) == 0
    assert capsys.readouterr().err.count("IR Dump After") == 5


def test_verify_many_seeds_with_progress(capsys) -> None:
    assert main(["verify", SOFTMAX, "--seed", "3", "--runs", "4", "--progress"]) == 0
    cap = capsys.readouterr()
    assert cap.out.startswith("softmax: bit-exact in 4 runs (seeds 3..6)")
    assert "[" + "#" * 24 + "] 4/4" in cap.err


def test_verify_many_seeds_of_a_kernel_with_scalar_parameters(capsys) -> None:
    """A kernel taking run-time scalars (no shape) verifies over many seeds, here on the
    tiny machine, where the attention loop keeps part of its carried state spilled."""
    spec = str(ROOT / "examples" / "attention.py") + "::attention_loop_d128"
    assert main(["verify", spec, "--runs", "2", "--machine", "depth=4,capacity=16384"]) == 0
    assert capsys.readouterr().out.startswith("attention_loop_d128: bit-exact in 2 runs")


def test_verify_inputs_from_npz(tmp_path: Path, capsys) -> None:
    x = np.random.default_rng(9).standard_normal((8, 64)).astype(np.float32)
    np.savez(tmp_path / "in.npz", x=x)
    assert main(["verify", SOFTMAX, "--inputs", str(tmp_path / "in.npz")]) == 0
    assert "bit-exact in inputs" in capsys.readouterr().out


def test_verify_tiny_machine(capsys) -> None:
    assert main(["verify", SOFTMAX, "--machine", "depth=4,capacity=16384"]) == 0
    assert "depth=4,capacity=16384" in capsys.readouterr().out


def test_verify_mismatch_exits_1_with_bit_patterns(capsys, monkeypatch) -> None:
    import ptoc.execute

    real = ptoc.execute.reference_of

    def off_by_one_ulp(k, arrays, grid=None):
        out = real(k, arrays, grid)
        out["out"] = out["out"].copy()
        out["out"].view(np.uint32)[2, 5] += 1
        return out

    monkeypatch.setattr(ptoc.execute, "reference_of", off_by_one_ulp)
    assert main(["verify", SOFTMAX]) == 1
    err = capsys.readouterr().err
    assert err.startswith("verify softmax (seed 0): the machine differs from the reference in "
                          "1 of 512 elements of 'out'")  # fmt: skip
    assert "out[2, 5]: machine " in err and "), reference " in err


def test_faults_exit_3_naming_the_kernel_line(bad: Path, capsys) -> None:
    assert main(["verify", f"{bad}::intdiv"]) == 3  # the reference meets the rule first
    assert f"{bad}:10:19: fault: TDIV has an integer zero divisor" in capsys.readouterr().err
    assert main(["run", f"{bad}::intdiv"]) == 3  # the machine faults
    err = capsys.readouterr().err
    assert err.startswith("Fault_TileLegality at bundle") and "TDIV" in err
    assert f"from the kernel at {bad}:10:19" in err


def test_bad_input_exits_2_with_one_message(bad: Path, tmp_path: Path, capsys) -> None:
    assert main(["compile", f"{bad}::typo"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"{bad}:20:19: error: pt.exp does not accept s32 tiles")
    assert main(["compile", f"{bad}::intdvi"]) == 2
    assert "has no kernel 'intdvi' (did you mean intdiv?)" in capsys.readouterr().err
    assert main(["compile", str(bad)]) == 2
    assert "defines 2 kernels; name one" in capsys.readouterr().err
    assert main(["verify", str(tmp_path / "missing.py")]) == 2
    assert "no such file" in capsys.readouterr().err
    broken = tmp_path / "broken.py"
    broken.write_text("import ptoc\n\nx = 1 +\n")
    assert main(["compile", str(broken)]) == 2
    assert f"{broken}:3: SyntaxError" in capsys.readouterr().err
    assert main(["compile", SOFTMAX, "--machine", "depth=99"]) == 2
    assert "depth=99 is outside 1..16" in capsys.readouterr().err


def test_run_kernel_saves_outputs(tmp_path: Path, capsys) -> None:
    out = tmp_path / "out.npz"
    assert main(["run", SOFTMAX, "--seed", "2", "-o", str(out)]) == 0
    assert "out: float32 (8, 64)" in capsys.readouterr().out
    k = ptoc.loader.load_kernel(SOFTMAX)
    want = ptoc.reference(k, **k.random_inputs(2))["out"]
    assert np.load(out)["out"].tobytes() == want.tobytes()


def test_bench_prints_a_table(capsys) -> None:
    assert main(["bench", SOFTMAX, "--repeat", "1"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].split()[:4] == ["kernel", "trace", "compile", "run"]
    assert out.splitlines()[2].startswith("softmax")


def test_progress_line_redraws_in_place() -> None:
    buf = io.StringIO()
    p = Progress("verify k", 4, True, buf)
    for i in range(1, 5):
        p.update(i)
    p.close()
    text = buf.getvalue()
    assert text.count("\r") == 4 and text.endswith("\n") and "4/4" in text
    quiet = io.StringIO()
    Progress("x", 3, False, quiet).update(1)
    assert quiet.getvalue() == ""


def _ptoc() -> list[str]:
    """The installed console script (or the module, where no script sits beside python)."""
    exe = Path(sys.executable).with_name("ptoc")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "ptoc.cli"]


def test_readme_command_as_a_new_user_runs_it(tmp_path: Path) -> None:
    """The README's main command after installation: verify the softmax example."""
    r = subprocess.run([*_ptoc(), "verify", "examples/softmax.py::softmax", "--runs", "3"],
                       cwd=ROOT, capture_output=True, text=True)  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("softmax: bit-exact in 3 runs")
    r = subprocess.run([*_ptoc(), "compile", "examples/softmax.py::softmax", "--emit", "asm"],
                       cwd=ROOT, capture_output=True, text=True)  # fmt: skip
    assert r.returncode == 0 and "BSTART.SFU TEXP, FP32" in r.stdout


def test_console_script_never_prints_a_traceback(bad: Path) -> None:
    for args in (["compile", f"{bad}::typo"], ["verify", f"{bad}::intdiv"],
                 ["run", f"{bad}::intdiv"]):  # fmt: skip
        r = subprocess.run([*_ptoc(), *args], capture_output=True, text=True)
        assert r.returncode in (2, 3)
        assert "Traceback" not in r.stderr and "/ptoc/" not in r.stderr, r.stderr
