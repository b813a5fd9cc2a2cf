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
    assert err == f"{bad}:2: SizeCode 11 is reserved here (legal SizeCodes: 1..10)"


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
