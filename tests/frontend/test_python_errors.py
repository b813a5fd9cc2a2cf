"""Python errors of kernel code -- in a kernel body while it is traced, at the top level
of a kernel file, in an input generator -- are one located message, never a traceback:
exit 2 on the command line (130 for an interrupt)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import ptoc
from ptoc.cli import main

from .helpers import write_kernels

BODIES = """\
I = ptoc.Tensor[ptoc.fp32, 8, 64]


@ptoc.kernel
def undefined(x: I, out: I):
    pt.store(out, pt.load(x) * nothing_like_it)


@ptoc.kernel
def misspelt(x: I, out: I):
    pt.store(out, pt.exp2(pt.load(x)))


@ptoc.kernel
def keyword(x: I, out: I):
    pt.store(out, pt.load(x, row=(0, 8)))


@ptoc.kernel
def zerodiv(x: I, out: I):
    pt.store(out, pt.load(x) * (1 / 0))


class Unprintable(Exception):
    def __str__(self):
        raise RuntimeError("no")


@ptoc.kernel
def unprintable(x: I, out: I):
    raise Unprintable()


def helper(t):
    return t + {}["missing"]


@ptoc.kernel
def in_helper(x: I, out: I):
    pt.store(out, helper(pt.load(x)))


@ptoc.kernel
def exits(x: I, out: I):
    import sys

    sys.exit(4)


scale = 2.0


@ptoc.kernel
def close_name(x: I, out: I):
    pt.store(out, pt.load(x) * scael)
"""


@pytest.fixture
def bodies(tmp_path: Path):
    return write_kernels(tmp_path, BODIES)


@pytest.mark.parametrize(
    ("name", "line", "col", "message", "hint"),
    [
        ("undefined", 9, 32, "NameError: name 'nothing_like_it' is not defined", None),
        ("misspelt", 14, 19, "AttributeError: module 'ptoc.lang' has no attribute 'exp2'",
         "did you mean pt.exp? (docs/reference.md lists every ptoc.lang function)"),
        ("keyword", 19, 19, "TypeError: load() got an unexpected keyword argument 'row'",
         "did you mean rows=? The signature is pt.load(t, rows=None, cols=None, *, step=1, "
         "valid_rows=None, valid_cols=None)"),
        ("zerodiv", 24, 33, "ZeroDivisionError: division by zero", None),
        ("unprintable", 34, 5,
         "Unprintable (its message cannot be shown: __str__ raised RuntimeError)", None),
        ("in_helper", 38, 16, "KeyError: 'missing'", None),  # the helper's own line
        ("exits", 50, 5, "SystemExit: 4",
         "a kernel body runs once, while ptoc traces it; it cannot exit the program"),
        ("close_name", 58, 32, "NameError: name 'scael' is not defined", "did you mean scale?"),
    ],
)  # fmt: skip
def test_a_python_error_in_a_kernel_body_is_a_located_kernel_error(
    bodies, name: str, line: int, col: int, message: str, hint: str | None
) -> None:
    path, kernels = bodies
    with pytest.raises(ptoc.KernelError) as info:
        ptoc.compile(kernels[name])
    e = info.value
    assert (e.file, e.line, e.col) == (str(path), line, col)
    assert e.message == f"{message} (while tracing the kernel {name})"
    assert e.hint == hint or (hint is None and e.hint is None)
    text = str(e)
    assert text.startswith(f"{path}:{line}:{col}: error: {message}")
    assert "^" in text.splitlines()[2]  # the caret line under the source line
    assert "Traceback" not in text and "/ptoc/" not in text


def test_every_entry_point_reports_the_body_error(bodies) -> None:
    _, kernels = bodies
    k = kernels["undefined"]
    for call in (lambda: k.trace(), lambda: ptoc.reference(k), lambda: ptoc.verify(k)):
        with pytest.raises(ptoc.KernelError, match="NameError: name 'nothing_like_it'"):
            call()


def test_the_command_line_exits_2_with_one_message(bodies, capsys) -> None:
    path, _ = bodies
    for name in ("undefined", "misspelt", "keyword", "zerodiv", "unprintable", "exits"):
        for command in ("compile", "verify", "run"):
            assert main([command, f"{path}::{name}"]) == 2, (command, name)
            err = capsys.readouterr().err
            assert err.startswith(f"{path}:"), err
            assert "Traceback" not in err and "site-packages" not in err


def test_keyboard_interrupt_in_a_kernel_body_exits_130(tmp_path: Path, capsys) -> None:
    path, _ = write_kernels(
        tmp_path,
        """\
        @ptoc.kernel
        def stop(x: ptoc.Tensor[ptoc.fp32, 8, 64], out: ptoc.Tensor[ptoc.fp32, 8, 64]):
            raise KeyboardInterrupt
        """,
    )
    assert main(["verify", f"{path}::stop"]) == 130
    err = capsys.readouterr().err
    assert err == f"ptoc: {path}:6:5: interrupted while tracing the kernel stop\n"


@pytest.mark.parametrize(
    ("top", "status", "needle"),
    [
        ("import sys\nsys.exit(0)\n", 2, ":5: the kernel file called sys.exit(0)"),
        ("import sys\nsys.exit('bye')\n", 2, ":5: the kernel file called sys.exit('bye')"),
        ("raise KeyboardInterrupt\n", 130, ":4: interrupted while importing the kernel file"),
        ("class E(Exception):\n    def __str__(self):\n        raise ValueError\n\n"
         "raise E()\n", 2,
         ":8: importing the kernel file failed: E (its message cannot be shown: __str__ "
         "raised ValueError)"),
        ("1 / 0\n", 2, ":4: importing the kernel file failed: ZeroDivisionError: division "
         "by zero"),
    ],
)  # fmt: skip
def test_kernel_file_top_level(tmp_path: Path, capsys, top: str, status: int, needle: str):
    path = tmp_path / "top.py"
    path.write_text("import ptoc\nimport ptoc.lang as pt\n\n" + top)
    assert main(["compile", f"{path}::k"]) == status
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{path}{needle}" in err, err


def test_seed_must_be_non_negative(capsys) -> None:
    softmax = str(Path(__file__).resolve().parents[2] / "examples" / "softmax.py")
    assert main(["verify", softmax, "--seed", "-1"]) == 2
    assert capsys.readouterr().err == "ptoc verify: --seed is a non-negative integer, not -1\n"
    assert main(["verify", softmax, "--runs", "0"]) == 2
    assert capsys.readouterr().err == "ptoc verify: --runs must be at least 1, not 0\n"
    assert main(["run", softmax, "--seed", "-1"]) == 2
    assert "--seed is a non-negative integer, not -1" in capsys.readouterr().err
    k = ptoc.loader.load_kernel(softmax)
    with pytest.raises(ptoc.InputError, match="non-negative integer, not -1"):
        k.random_inputs(-1)
    with pytest.raises(ptoc.InputError, match="non-negative integer, not -1"):
        ptoc.verify(k, seed=-1)


def test_input_generator_errors_are_one_input_error(tmp_path: Path, capsys) -> None:
    path, kernels = write_kernels(
        tmp_path,
        """\
        @ptoc.kernel
        def k(x: ptoc.Tensor[ptoc.fp32, 8, 64], out: ptoc.Tensor[ptoc.fp32, 8, 64]):
            pt.store(out, pt.load(x))


        @k.inputs
        def _gen(rng):
            return {"x": rng.standard_normal((8, 64)) / undefined}
        """,
    )
    with pytest.raises(ptoc.InputError) as info:
        kernels["k"].random_inputs(0)
    assert str(info.value) == (
        f"{path}:11:49: the input generator of k raised NameError: name 'undefined' is not "
        "defined"
    )
    assert main(["verify", f"{path}::k"]) == 2


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["-o", "{tmp}"], "-o {tmp}: is a folder; name a file to write"),
        (["-o", "{tmp}/missing/x.bin", "--emit", "bin"],
         "-o {tmp}/missing/x.bin: the folder {tmp}/missing does not exist"),
        (["--dump-dir", "{tmp}/file.txt"],
         "--dump-dir {tmp}/file.txt: is a file; name a folder to write to"),
    ],
)  # fmt: skip
def test_compile_output_paths(tmp_path: Path, capsys, args: list[str], needle: str) -> None:
    (tmp_path / "file.txt").write_text("")
    softmax = str(Path(__file__).resolve().parents[2] / "examples" / "softmax.py")
    argv = ["compile", softmax, *(a.format(tmp=tmp_path) for a in args)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err == needle.format(tmp=tmp_path) + "\n"


def test_dump_dir_that_is_a_file_from_python(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("")
    k = ptoc.loader.load_kernel(
        str(Path(__file__).resolve().parents[2] / "examples" / "softmax.py")
    )
    with pytest.raises(ptoc.errors.OutputError, match="is a file; name a folder"):
        ptoc.compile(k, dump_dir=tmp_path / "f")


def test_console_script_prints_no_traceback_for_body_errors(bodies) -> None:
    path, _ = bodies
    exe = Path(sys.executable).with_name("ptoc")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "ptoc.cli"]
    r = subprocess.run([*cmd, "verify", f"{path}::misspelt"], capture_output=True, text=True)
    assert r.returncode == 2
    assert "Traceback" not in r.stderr and "hint: did you mean pt.exp?" in r.stderr
