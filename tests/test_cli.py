"""The ptoc command line: asm, disasm, isa; exit codes and one-line errors."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from ptoc.backend import asm, encoding
from ptoc.cli import main

ROOT = Path(__file__).resolve().parents[1]


def test_asm_then_disasm_round_trips_the_example(tmp_path: Path, capsys) -> None:
    src = ROOT / "examples" / "vadd.s"
    out = tmp_path / "vadd.bin"
    assert main(["asm", str(src), "-o", str(out)]) == 0
    assert out.read_bytes() == encoding.encode(asm.parse(src.read_text()))
    assert main(["disasm", str(out)]) == 0
    printed = capsys.readouterr().out
    assert asm.parse(printed) == asm.parse(src.read_text())


def test_asm_error_is_one_line_with_exit_2(tmp_path: Path, capsys) -> None:
    bad = tmp_path / "bad.s"
    bad.write_text("BSTART.VEC TADD, FP32\nB.IOT T#1, mask=1111, last, ->T<11>\n")
    assert main(["asm", str(bad)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"{bad}:2: B.IOT SizeCode=11 is a reserved encoding (legal: 1..10)"


def test_disasm_of_unknown_word_names_offset(tmp_path: Path, capsys) -> None:
    b = tmp_path / "x.bin"
    b.write_bytes((1).to_bytes(4, "little") + (0xFFFFFFFB).to_bytes(4, "little"))
    assert main(["disasm", str(b)]) == 2
    err = capsys.readouterr().err
    assert "offset 0x4" in err and "0xfffffffb" in err


def test_isa_row_and_unknown_mnemonic(capsys) -> None:
    assert main(["isa", "TROWEXPANDMIN"]) == 0
    out = capsys.readouterr().out
    assert "SFU" in out and "0x04A" in out and "E4M3" in out
    assert main(["isa", "TQANT"]) == 2
    assert "did you mean TQUANT" in capsys.readouterr().err
    assert main(["isa"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 109


def test_isa_row_names_where_its_types_come_from(capsys) -> None:
    assert main(["isa", "TMAX"]) == 0
    out = capsys.readouterr().out
    assert "types from  ASL InstructionContractDataTypeLegal_TMAX" in out and "FP64" in out
    assert main(["isa", "TSORT"]) == 0
    assert "types from  seed D135" in capsys.readouterr().out


def test_console_script_never_prints_a_traceback(tmp_path: Path) -> None:
    missing = tmp_path / "nope.s"
    r = subprocess.run(
        [sys.executable, "-m", "ptoc.cli", "asm", str(missing)], capture_output=True, text=True
    )
    assert r.returncode == 2
    assert "Traceback" not in r.stderr and "cannot read" in r.stderr


# ------------------------------------------------------------------ issue 9 items 9, 19, 23, 24


def _one_line(capsys, message: str) -> None:  # type: ignore[no-untyped-def]
    err = capsys.readouterr().err
    assert message in err, err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_asm_output_paths(tmp_path: Path, capsys) -> None:
    src = ROOT / "examples" / "vadd.s"
    assert main(["asm", str(src), "-o", str(tmp_path)]) == 2
    _one_line(capsys, "cannot write: Is a directory")
    assert main(["asm", str(src), "-o", str(tmp_path / "missing" / "x.bin")]) == 2
    _one_line(capsys, "cannot write: No such file or directory")


def test_asm_refuses_a_header_form_of_another_engine(tmp_path: Path, capsys) -> None:
    """Item 19: BSTART.TEPL TLOAD, FP32 assembled to BSTART.VEC TADD, FP32."""
    bad = tmp_path / "t.s"
    bad.write_text("BSTART.TEPL TLOAD, FP32\nBSTOP\n")
    assert main(["asm", str(bad), "-o", str(tmp_path / "t.bin")]) == 2
    _one_line(capsys, f"{bad}:1: TLOAD is a TLSU operation, not a TEPL one")
    assert not (tmp_path / "t.bin").exists()


def test_disasm_then_asm_keeps_the_bytes_of_reserved_words(tmp_path: Path, capsys) -> None:
    """Item 24: disasm dropped a decoded BSTART.STD FALL offset (and printed reserved
    values the assembler refuses); disasm -> asm must give the same bytes."""
    # FALL with offset 5; BSTART.VEC TADD with the reserved DataType code 15; BSTOP
    words = [0x1001 | 5 << 15, 0x00019181 | 15 << 27, 0x00000001]
    data = b"".join(w.to_bytes(4, "little") for w in words)
    data += (0x3C | 3 << 14).to_bytes(2, "little") + (0x5016).to_bytes(2, "little")
    b = tmp_path / "r.bin"
    b.write_bytes(data)
    assert main(["disasm", str(b)]) == 0
    text = capsys.readouterr().out
    assert ".word 0x00029001  // BSTART.STD FALL, 5" in text
    assert ".word 0x78019181  // BSTART.VEC TADD, 15: " in text
    assert ".half 0xc03c  // C.B.DIMI 0, ->LB3" in text and "c.setret 0, ->ra" in text
    s = tmp_path / "r.s"
    s.write_text(text)
    assert main(["asm", str(s), "-o", str(tmp_path / "again.bin")]) == 0
    assert (tmp_path / "again.bin").read_bytes() == data


def test_verify_inputs_npy_and_bad_files(tmp_path: Path, capsys) -> None:
    """Item 9: --inputs x.npy raised TypeError; bad files raised BadZipFile/EOFError."""
    import numpy as np

    softmax = f"{ROOT / 'examples' / 'softmax.py'}::softmax"
    x = np.random.default_rng(1).standard_normal((8, 64)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    assert main(["verify", softmax, "--inputs", str(tmp_path / "x.npy")]) == 0
    assert "bit-exact" in capsys.readouterr().out
    vadd = f"{ROOT / 'examples' / 'vector_add.py'}::vector_add"
    assert main(["verify", vadd, "--inputs", str(tmp_path / "x.npy")]) == 2
    _one_line(capsys, "holds one array, but vector_add reads x, y: pass an .npz")
    (tmp_path / "empty.npz").write_bytes(b"")
    (tmp_path / "trunc.npz").write_bytes(b"PK\x03\x04" + b"\0" * 30)
    for name, message in [("empty.npz", "the file is empty"), ("trunc.npz", "not a readable")]:
        assert main(["verify", softmax, "--inputs", str(tmp_path / name)]) == 2
        _one_line(capsys, message)


def test_kernel_run_output_path_that_cannot_be_written(tmp_path: Path, capsys) -> None:
    """Item 23: ``-o DIR`` of ``ptoc run FILE.py`` raised IsADirectoryError."""
    kernel = f"{ROOT / 'examples' / 'softmax.py'}::softmax"
    assert main(["run", kernel, "-o", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err == f"--save {tmp_path}: is a folder; name a file to write\n"
