"""``pt.prefetch``: TPREFETCH of a load's window, end to end (DSL, legalize, emit, run).

A prefetch produces nothing, so it must survive dead-code removal, bind no tile, and
leave the kernel's results exactly what they are without it.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import ptoc
from ptoc.backend.isa.fields import MODEL_TILE_ELEMENTS
from ptoc.runtime import Machine, MachineConfig

from .helpers import op_names, write_kernels

KERNEL = """\
X = ptoc.Tensor[ptoc.fp32, 256, 256]

@ptoc.kernel{pes}
def k(x: X, out: ptoc.Tensor[ptoc.fp32, 8, 64]):
    pt.prefetch(x, {window})
    t = pt.load(x, rows=(0, 8), cols=(0, 64))
    pt.store(out, t * 2.0)
"""


def _bundles(text: str) -> list[list[str]]:
    out: list[list[str]] = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("BSTART"):
            out.append([line])
        elif out and line and not line.startswith("//"):
            out[-1].append(line)
    return out


@pytest.mark.parametrize(
    ("window", "pes", "blocks"),
    [
        ("rows=(0, 8), cols=(0, 64)", "", 1),
        ("rows=(8, 16), cols=(32, 100), step=3", "", 1),
        ("", "", 2),  # 65536 elements: two blocks of 128 rows
        ("rows=(pt.pe() * 64, 64)", "(pes=4)", 1),
    ],
)
def test_a_prefetch_is_kept_binds_no_tile_and_changes_no_result(
    tmp_path: Path, window: str, pes: str, blocks: int
) -> None:
    src = KERNEL.format(window=window, pes=pes)
    if pes:  # every PE loads its own block of rows of x
        src = src.replace("rows=(0, 8), cols=(0, 64))", "rows=(pt.pe() * 8, 8), cols=(0, 64))")
    _, kernels = write_kernels(tmp_path, src)
    k = kernels["k"]
    assert op_names(k)[0] == "tile.prefetch"
    prog = ptoc.compile(k)
    pf = [b for b in _bundles(prog.asm()) if b[0].startswith("BSTART.TPREFETCH")]
    assert len(pf) == blocks
    for b in pf:
        assert b[0] == "BSTART.TPREFETCH FP32"
        assert not any(line.startswith("B.IOT") for line in b)
    x = np.random.default_rng(3).standard_normal((256, 256)).astype(np.float32)
    ptoc.verify(k, x=x)


def test_each_block_stays_within_one_tile_worth_of_elements(tmp_path: Path) -> None:
    _, kernels = write_kernels(tmp_path, KERNEL.format(window="", pes=""))
    for b in _bundles(ptoc.compile(kernels["k"]).asm()):
        if b[0].startswith("BSTART.TPREFETCH"):
            lbs = {}
            for line in b:
                if "->LB" in line:
                    lbs[line[-1]] = int(line.split(",")[-2].split()[-1])
            assert lbs["0"] * lbs["1"] <= MODEL_TILE_ELEMENTS


def test_the_program_prefetches_the_footprint_a_load_would_read(tmp_path: Path) -> None:
    """Run the compiled program on a memory that ends inside the prefetched rows 200..255
    of ``x`` (the load reads rows 0..7 only): the prefetch, and only it, faults."""
    _, kernels = write_kernels(tmp_path, KERNEL.format(window="rows=(200, 56)", pes=""))
    prog = ptoc.compile(kernels["k"])
    gm, row_bytes = 1 << 20, 256 * 4
    for rows_in_memory, faults in ((256, False), (255, True)):
        m = Machine(MachineConfig(gm_size=gm))
        m.set_gpr("a0", gm - rows_in_memory * row_bytes)  # x
        m.set_gpr("a1", 0x1000)  # out
        if faults:
            with pytest.raises(ptoc.MachineFault, match="TPREFETCH reads"):
                m.run(prog.program)
        else:
            m.run(prog.program)


def test_a_window_outside_the_tensor_is_a_located_error(tmp_path: Path) -> None:
    _, kernels = write_kernels(tmp_path, KERNEL.format(window="rows=(250, 8)", pes=""))
    with pytest.raises(ptoc.KernelError, match=r"pt.prefetch: the window rows 250..257") as e:
        kernels["k"].trace()
    assert "kern.py:8" in str(e.value)
