"""Assembler and encoder throughput on a 100,000-bundle program.

Baseline: merely reading the same file and splitting its lines in Python.
Goal (issue): assemble + encode within 20x of the baseline.
"""

from __future__ import annotations

import random
import tempfile
from pathlib import Path

from ptoc.backend import asm, encoding

from .common import Row, best_of

OPS = [
    ("BSTART.VEC TADD, FP32", 2), ("BSTART.VEC TMUL, FP16", 2), ("BSTART.SFU TEXP, FP32", 1),
    ("BSTART.SFU TROWMAX, FP32", 1), ("BSTART.VEC TMAX, BF16", 2), ("BSTART.SFU TDIV, FP32", 2),
]  # fmt: skip


def make_program(bundles: int, seed: int = 0) -> str:
    """A realistic mix: loads, elementwise and reduction bundles, stores, scalar blocks."""
    rng = random.Random(seed)
    lines: list[str] = []
    for i in range(bundles):
        kind = rng.random()
        cols, rows = rng.choice([(64, 8), (256, 64), (32, 4), (128, 16)])
        if kind < 0.1:
            lines += ["BSTART.STD FALL", f"addi zero, {rng.randrange(4096)}, ->a4",
                      "lui 0x3f800, ->a5", "BSTOP"]  # fmt: skip
            continue
        if kind < 0.3:
            lines += ["BSTART.TLOAD FP32", f"B.DIM zero, {cols}, ->LB0",
                      f"B.DIM zero, {rows}, ->LB1", f"B.IOR a{i % 4}",
                      "B.IOT mask=1111, last, ->T<64KB>", "BSTOP"]  # fmt: skip
            continue
        start, n = rng.choice(OPS)
        srcs = ", ".join(f"{rng.choice('TUMN')}#{rng.randint(1, 16)}" for _ in range(n))
        dst = rng.choice("TUMN")
        lines += [start, f"C.B.DIMI {min(cols, 255)}, ->LB0", f"B.DIM zero, {rows}, ->LB1",
                  f"B.IOT {srcs}, mask=1111, last, ->{dst}<64KB>", "BSTOP"]  # fmt: skip
    return "\n".join(lines) + "\n"


def rows(bundles: int = 100_000) -> list[Row]:
    text = make_program(bundles)
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "big.s"
        path.write_text(text)

        def baseline() -> None:
            for line in path.read_text().splitlines():
                line.split()

        def assemble() -> None:
            encoding.encode(asm.parse(path.read_text(), file=str(path)))

        def disassemble() -> None:
            asm.format_program(encoding.decode(data))

        data = encoding.encode(asm.parse(text))
        base = best_of(baseline)
        t_asm = best_of(assemble)
        t_dis = best_of(disassemble)
    rate = f"{bundles / t_asm:,.0f} bundles/s"
    return [
        Row(f"asm+encode {bundles:,} bundles", t_asm, base, "read+split lines", 20.0, rate),
        Row(f"decode+print {bundles:,} bundles", t_dis, base, "read+split lines"),
    ]
