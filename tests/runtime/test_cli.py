"""``ptoc run`` via run_main: exit codes, --gpr, --gm, --save, --trace."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import numpy as np

from ptoc.backend.encoding import encode
from ptoc.runtime.cli import run_main

from .util import prog

PROGRAM = """\
BSTART.STD FALL
addi zero, 32, ->a1
BSTOP
BSTART.TLOAD FP32
B.DIM zero, 8, ->LB0
B.DIM zero, 2, ->LB1
B.IOR a0, a1
B.IOT mask=1111, last, ->T<128B>
BSTOP
BSTART.SFU TEXP, FP32
B.DATR Zero
B.DIM zero, 8, ->LB0
B.DIM zero, 2, ->LB1
B.IOT T#1, mask=1111, last, ->U<128B>
BSTOP
BSTART.VEC TCMPS, FP32
B.DIM zero, 8, ->LB0
B.DIM zero, 2, ->LB1
B.IOT T#1, mask=1100, last, ->M<128B>
BSTOP
BSTART.TSTORE FP32
B.IOR a2, a1
B.IOT U#1, mask=1111, last
BSTOP
"""


def run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run_main(argv, out, err)
    return code, out.getvalue(), err.getvalue()


def setup(tmp_path: Path) -> tuple[Path, Path, np.ndarray]:
    x = np.linspace(-1, 1, 16, dtype=np.float32).reshape(2, 8)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "out.npy", np.zeros((2, 8), np.float32))
    s = tmp_path / "k.s"
    s.write_text(PROGRAM)
    return s, tmp_path / "x.npy", x


def test_run_and_save(tmp_path: Path) -> None:
    s, xin, x = setup(tmp_path)
    save = tmp_path / "r.npz"
    code, out, err = run(
        [
            str(s),
            "--gpr",
            "a0=0x1000",
            "--gpr",
            "a2=0x2000",
            "--gpr",
            "2:a0=0x3000",
            "--gm",
            f"0x1000={xin}",
            "--gm",
            f"0x3000={xin}",
            "--gm",
            f"0x2000={tmp_path / 'out.npy'}",
            "--save",
            str(save),
            "--machine",
            "depth=4",
        ]
    )
    assert code == 0, err
    assert "ran 4 bundles, 1 scalar block" in out  # the same counts as ptoc asm -v
    z = np.load(save)
    assert set(z.files) >= {
        "T#1",
        "T#1.defined",
        "U#1",
        "U#1.defined",
        "M#1",
        "status",
        "gm@0x1000",
        "gm@0x2000",
        "gm@0x3000",
    }
    assert z["T#1"].shape == (4, 2, 8) and z["T#1"].dtype == np.float32
    assert np.array_equal(z["T#1"][0], x) and np.array_equal(z["T#1"][2], x)
    exp_out = z["gm@0x2000"]
    assert exp_out.shape == (2, 8) and exp_out.dtype == np.float32
    assert np.array_equal(exp_out, z["U#1"][3])  # the last PE's store wins on shared memory
    m1 = z["M#1"]
    assert m1.dtype == bool and m1.shape == (4, 2, 8) and not m1[2:].any()  # mask 1100
    assert z["M#1.defined"][:2].all() and not z["M#1.defined"][2:].any()
    assert z["status"].dtype == np.uint8 and z["status"].shape == (4,)


def test_per_pe_gpr(tmp_path: Path) -> None:
    s, xin, x = setup(tmp_path)
    np.save(tmp_path / "y.npy", 2 * x)
    save = tmp_path / "r.npz"
    code, _, err = run(
        [
            str(s),
            "--gpr",
            "a0=0x1000",
            "--gpr",
            "1:a0=0x4000",
            "--gm",
            f"0x1000={xin}",
            "--gm",
            f"0x4000={tmp_path / 'y.npy'}",
            "--gpr",
            "a2=0x8000",
            "--save",
            str(save),
        ]
    )
    assert code == 0, err
    t = np.load(save)["T#1"]
    assert np.array_equal(t[0], x) and np.array_equal(t[1], 2 * x)


def test_trace_output(tmp_path: Path) -> None:
    s, xin, _ = setup(tmp_path)
    code, out, _ = run(
        [str(s), "--gpr", "a0=0x1000", "--gpr", "a2=0x2000", "--gm", f"0x1000={xin}", "--trace"]
    )
    assert code == 0
    # bundles and scalar blocks are numbered apart (docs/formats.md, "Counting")
    assert "[scalar 0] BSTART.STD" in out and "[0] TLOAD" in out and "[1] TEXP" in out
    assert "wrote T#1" in out and "read  T#1" in out


def test_binary_input(tmp_path: Path) -> None:
    b = tmp_path / "k.bin"
    b.write_bytes(encode(prog(PROGRAM)))
    code, _out, err = run([str(b), "--gpr", "a2=0x2000"])
    assert code == 0, err


def test_fault_exit_3(tmp_path: Path) -> None:
    s = tmp_path / "bad.s"
    s.write_text(PROGRAM.replace("B.IOR a2, a1", "B.IOR a2, a1\nB.IOR a2, a1"))
    code, _out, err = run([str(s)])
    assert code == 3
    # TSTORE is the fourth bundle (the scalar block before it is not a bundle)
    assert "Fault_BundleControl" in err and "bundle 3" in err and "TSTORE" in err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_memory_fault_exit_3(tmp_path: Path) -> None:
    s, _, _ = setup(tmp_path)
    code, _, err = run([str(s), "--gpr", "a0=0xfffffffffff0", "--machine", "gm_size=1M"])
    assert code == 3 and "Fault_DataPage" in err


def test_bad_input_exit_2(tmp_path: Path) -> None:
    s, xin, _ = setup(tmp_path)
    bad = tmp_path / "bad.s"
    bad.write_text("BSTART.VEC TFOO, FP32\n")
    cases = [
        [str(tmp_path / "missing.s")],
        [str(bad)],
        [str(s), "--gpr", "q9=1"],
        [str(s), "--gpr", "a0"],
        [str(s), "--gpr", "7:a0=1"],
        [str(s), "--machine", "depth=99"],
        [str(s), "--machine", "bogus=1"],
        [str(s), "--gm", f"0x1000={tmp_path / 'nothere.npy'}"],
        [str(s), "--gm", f"0xffffffff={xin}"],
        [str(s), "--nope"],
    ]
    for argv in cases:
        code, _, err = run(argv)
        assert code == 2, (argv, err)
        assert err.strip() and "Traceback" not in err
    code, _, err = run([str(bad)])
    assert "bad.s:1" in err  # the AsmError line
    odd = tmp_path / "odd.bin"
    odd.write_bytes(b"\x01\x02\x03")
    code, _, err = run([str(odd)])
    assert code == 2 and "offset" in err


def test_runtime_imports_no_forbidden_modules() -> None:
    code = (
        "import sys, ptoc.runtime, ptoc.runtime.cli\n"
        "bad = [m for m in sys.modules if m.split('.')[0] in ('xdsl', 'networkx') "
        "or m.startswith(('ptoc.dialects', 'ptoc.passes'))]\n"
        "print(','.join(bad))\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert r.stdout.strip() == ""


# ------------------------------------------------------------------ issue 9 items 9, 23, 24

STORE = """\
BSTART.TLOAD FP32
B.DIM zero, 8, ->LB0
B.DIM zero, 2, ->LB1
B.IOR a0, a2
B.IOT mask=1111, last, ->T<128B>
BSTOP
BSTART.VEC TADD, FP32
B.DIM zero, 8, ->LB0
B.DIM zero, 2, ->LB1
B.IOT T#1, T#1, mask=1111, last, ->T<128B>
BSTOP
BSTART.TSTORE FP32
B.IOR a1, a2
B.IOT T#1, mask=1000, last
BSTOP
"""
X = np.arange(16, dtype=np.float32).reshape(2, 8)


def _store(tmp_path: Path) -> Path:
    s = tmp_path / "st.s"
    s.write_text(STORE)
    return s


def one_line_exit_2(argv: list[str], message: str) -> None:
    code, _, err = run(argv)
    assert code == 2, (argv, err)
    assert message in err, err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_gm_from_npz_and_read_any_range(tmp_path: Path) -> None:
    """Item 9: --gm ADDR=FILE.npz placed nothing (the key names' bytes, in fact) and
    --save then crashed; --read saves any GM range."""
    s = _store(tmp_path)
    np.savez(tmp_path / "one.npz", x=X)
    np.savez(tmp_path / "two.npz", x=X, y=2 * X)
    save = tmp_path / "out.npz"
    for gm in (f"0x1000={tmp_path / 'one.npz'}", f"0x1000={tmp_path / 'two.npz'}:x"):
        code, out, err = run(
            [str(s), "--gpr", "a0=0x1000", "--gpr", "a1=0x2000", "--gpr", "a2=32", f"--gm={gm}",
             "--read", "0x2000:FP32:2x8", "--read", "0x1000:u8:4", "-o", str(save)]
        )  # fmt: skip
        assert code == 0, err
        assert "gm@0x2000: float32 (2, 8)" in out
        z = np.load(save)
        assert np.array_equal(z["gm@0x2000"], 2 * X)
        assert z["gm@0x1000"].dtype == np.uint8  # the explicit --read wins
        assert np.array_equal(z["gm@0x1000"], X.view(np.uint8).reshape(-1)[:4])


def test_gm_and_read_refusals(tmp_path: Path) -> None:
    s = _store(tmp_path)
    np.savez(tmp_path / "two.npz", x=X, y=2 * X)
    (tmp_path / "empty.npz").write_bytes(b"")
    np.save(tmp_path / "x.npy", X)
    (tmp_path / "trunc.npy").write_bytes((tmp_path / "x.npy").read_bytes()[:100])
    (tmp_path / "trunc.npz").write_bytes(b"PK\x03\x04" + b"\0" * 30)
    huge = b"\x93NUMPY\x01\x00" + (118).to_bytes(2, "little")
    huge += b"{'descr': '<f4', 'fortran_order': False, 'shape': (10000000000,), }".ljust(117)
    (tmp_path / "huge.npy").write_bytes(huge + b"\n")
    np.save(tmp_path / "obj.npy", np.array([None]), allow_pickle=True)
    base = [str(s), "--gpr", "a0=0x1000"]
    cases = [
        (f"0x1000={tmp_path / 'two.npz'}", "holds 2 arrays (x, y); name one"),
        (f"0x1000={tmp_path / 'two.npz'}:z", "has no array 'z'"),
        (f"0x1000={tmp_path / 'empty.npz'}", "the file is empty"),
        (f"0x1000={tmp_path / 'trunc.npy'}", "truncated"),
        (f"0x1000={tmp_path / 'trunc.npz'}", "not a readable .npz"),
        (f"0x1000={tmp_path / 'huge.npy'}", "declares 40000000000 bytes"),
        (f"0x1000={tmp_path / 'obj.npy'}", "object array"),
        (f"0x1000={tmp_path}", "it is a directory"),
        (f"0x{'f' * 100}={tmp_path / 'x.npy'}", "has more than 40 digits"),
        ("0x1000=", "is not ADDR=FILE"),
    ]
    for gm, message in cases:
        one_line_exit_2([*base, "--gm", gm], message)
    for spec, message in [
        ("0x2000:FP32", "is not ADDR:DTYPE:SHAPE"),
        ("0x2000:FP33:8", "unknown element type 'FP33'"),
        ("0x2000:complex64:8", "complex type"),
        ("0x2000:S4X2:8", "packs two elements per byte"),
        ("0x2000:FP32:8x-1", "the shape is sizes joined by x"),
        ("0x2000:FP32:\u0663", "the shape is sizes joined by x"),
        ("0x3fff000:FP32:8x1024", "outside the"),
    ]:
        one_line_exit_2([*base, "--read", spec], message)
    one_line_exit_2([*base, "--read", "0x10:u8:1", "--read", "0x10:fp32:1"], "twice")


def test_output_paths_that_cannot_be_written(tmp_path: Path) -> None:
    s = _store(tmp_path)
    one_line_exit_2([str(s), "--gpr", "a0=0x1000", "-o", str(tmp_path)], "Is a directory")
    one_line_exit_2(
        [str(s), "--gpr", "a0=0x1000", "--save", str(tmp_path / "no" / "x.npz")],
        "No such file or directory",
    )


def test_machine_and_program_refusals(tmp_path: Path) -> None:
    """Item 23: each of these raised from inside the library."""
    s = _store(tmp_path)
    for spec, message in [
        ("gm_size=2000G", "exceeds the 1024G"),
        ("gm_size=0x100000000000000000000", "exceeds the 1024G"),
        ("gm_size=2**80", "is not an integer"),
    ]:
        one_line_exit_2([str(s), "--machine", spec], message)
    for text, message in [
        ("BSTART.TEPL FOO, FP32\n", "unknown tile operation 'FOO'"),
        ("BSTART.VEC TADD, \u00b2\n", "unknown DataType"),
        ("BSTART.SYS RET\nBSTOP\n", "BSTART.SYS has no RET form"),
        ("B.DIM zero, " + "9" * 5000 + ", ->LB0\n", "more than 40 digits"),
        ("BSTART.TEPL TLOAD, FP32\nBSTOP\n", "TLOAD is a TLSU operation"),
    ]:
        bad = tmp_path / "bad.s"
        bad.write_text(text)
        one_line_exit_2([str(bad)], message)


def test_register_dim_on_a_two_pe_machine_is_a_fault(tmp_path: Path) -> None:
    s = tmp_path / "dim.s"
    s.write_text(
        "BSTART.STD FALL\nc.movi 8, ->a1\nBSTOP\nBSTART.TLOAD FP32\nB.DIM a1, 0, ->LB0\n"
        "B.DIM zero, 2, ->LB1\nB.IOR a0, zero\nB.IOT mask=1111, last, ->T<128B>\nBSTOP\n"
    )
    code, _, err = run([str(s), "--machine", "pes=2"])
    assert code == 3 and "Traceback" not in err and err.count("\n") == 1
    assert "Fault_TileLegality" in err and "selects PE3" in err
