"""One definition of "bundle" for every command (docs/formats.md, "Counting"): a bundle
is a tile bundle, one ``BSTART.<tile form>`` .. commit; scalar blocks (``BSTART.STD``)
are counted apart. verify, compile --emit bin / stats, asm -v, run (both forms),
ptoc.run and Program agree, and agree with a count of the text itself."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import ptoc
from ptoc.cli import main

ROOT = Path(__file__).resolve().parents[1]
TINY = "depth=4,capacity=16384"


def _counted(text: str) -> tuple[int, int]:
    """(tile bundles, scalar blocks) read off the assembly text, independently of ptoc."""
    starts = [ln.split()[0] for ln in text.splitlines() if ln.startswith("BSTART.")]
    scalar = sum(1 for s in starts if s == "BSTART.STD")
    return len(starts) - scalar, scalar


def _phrase(bundles: int, scalar: int) -> str:
    return f"{bundles} bundle{'s' * (bundles != 1)}, {scalar} scalar block{'s' * (scalar != 1)}"


@pytest.mark.parametrize(("name", "machine"), [("layernorm", None), ("embedding", TINY)])
def test_every_command_counts_the_same_bundles(tmp_path: Path, capsys, name, machine) -> None:
    kernel = f"{ROOT / 'examples' / name}.py::{name}"
    m = ["--machine", machine] if machine else []
    asm_file, bin_file = tmp_path / "k.s", tmp_path / "k.bin"
    assert main(["compile", kernel, "--emit", "asm", "--no-source", "-o", str(asm_file),
                 *m]) == 0  # fmt: skip
    bundles, scalar = _counted(asm_file.read_text())
    assert bundles > 0 and scalar > 0
    want = _phrase(bundles, scalar)
    capsys.readouterr()

    assert main(["compile", kernel, "--emit", "bin", "-o", str(bin_file), *m]) == 0
    assert f"{bin_file}: {want}, " in capsys.readouterr().err
    assert main(["compile", kernel, "--emit", "stats", *m]) == 0
    stats = capsys.readouterr().out
    assert re.search(rf"^bundles +{bundles} \(", stats, re.M)
    assert re.search(rf"^scalar blocks +{scalar}$", stats, re.M)
    assert main(["verify", kernel, *m]) == 0
    assert f"; {want} on " in capsys.readouterr().out
    assert main(["asm", "-v", str(asm_file), "-o", str(tmp_path / "again.bin")]) == 0
    assert f", {want}, " in capsys.readouterr().out
    assert main(["run", kernel, *m]) == 0
    assert f"{name}: ran {want}; status" in capsys.readouterr().out
    assert main(["run", str(bin_file), *m]) == 0  # no inputs: zeros, still every block
    assert f"{bin_file}: ran {want}; status" in capsys.readouterr().out

    k = ptoc.loader.load_kernel(kernel)
    prog = ptoc.compile(k, machine=machine)
    s = prog.stats()
    assert (s.bundles, s.scalar_blocks) == (bundles, scalar)
    assert s.bundles == sum(s.by_op.values()) + s.overhead_bundles
    assert (prog.program.bundle_count(), prog.program.scalar_block_count()) == (bundles, scalar)
    assert repr(prog) == f"<ptoc.Program {name}: {want}>"
    out = ptoc.run(prog, **k.random_inputs(0))
    assert (out.bundles, out.scalar_blocks) == (bundles, scalar)
    if machine:
        assert s.overhead_bundles > 0  # the allocator inserted a bundle on the tiny machine


def test_a_machine_fault_names_the_bundle_by_the_same_count(tmp_path: Path) -> None:
    """Fault locations count bundles and scalar blocks apart, like the totals."""
    from ptoc.backend.asm import parse
    from ptoc.runtime import Machine
    from ptoc.runtime.faults import MachineFault

    text = (
        "BSTART.STD FALL\nc.movi 3, ->a4\nBSTOP\n"
        "BSTART.VEC TEXPANDS, S32\nB.DIM zero, 8, ->LB0\nB.IOR a4\n"
        "B.IOT mask=1111, last, ->T<128B>\nBSTOP\n"
        "BSTART.VEC TADD, S32\nB.DIM zero, 8, ->LB0\nB.IOT T#1, T#5, mask=1111, last, "
        "->T<128B>\nBSTOP\n"
    )
    with pytest.raises(MachineFault) as info:
        Machine().run(parse(text))
    assert "at bundle 1, line 9 TADD" in str(info.value)
