"""The CUBE engine in the executor: one matrix bundle against ``np.matmul``.

Rows (printed by benchmarks/run_all.py, never asserted): the time of one TMATMUL bundle
(preflight, source snapshot, D11 fold per PE, atomic publication) on a 4-PE machine,
divided by four (per PE, the executor computes each PE's fold), side by side with
``np.matmul`` on the same FP16/BF16 arrays (FP16: numpy's generic loop, it has no FP16
BLAS; BF16: ml_dtypes widens to float32 and calls BLAS) and on float32 copies (BLAS),
and FP32 inputs (exact fused steps: the compiled fmaf kernel where it exists) against float32
``np.matmul``. Shapes run up to the largest single bundle: M <= 32 (CUBE_M32), D FP32
M32 needs 128*N bytes and B FP16 N8 about 2*K*N bytes of one 64 KiB tile, so
32 x 128 x 256 is the largest FP16 bundle with N = 128; larger products are K-chains
of ACC bundles (one bundle per K chunk). Inputs are uniform in [-1, 1).
"""

from __future__ import annotations

import time

import ml_dtypes
import numpy as np

from ptoc.backend.asm import parse
from ptoc.backend.isa import DataType
from ptoc.backend.isa.semantics import matmul_kernels as kernels
from ptoc.runtime import Machine, MachineConfig

from .common import Row, best_of

SHAPES = [(16, 64, 64), (32, 64, 64), (32, 128, 128), (32, 128, 256)]
_CARRIER = {DataType.FP16: np.float16, DataType.BF16: ml_dtypes.bfloat16,
            DataType.FP32: np.float32}  # fmt: skip
_SIZE = {256: "256B", 512: "512B", 1024: "1KB", 2048: "2KB", 4096: "4KB", 8192: "8KB",
         16384: "16KB", 32768: "32KB", 65536: "64KB"}  # fmt: skip


def _size(nbytes: int) -> str:
    return _SIZE[max(256, 1 << (nbytes - 1).bit_length())]


def _program(dt: DataType, m: int, n: int, k: int) -> tuple[str, str]:
    """(the two CUBE loads, the matrix bundle) for A at 0x0 and B at 0x40000."""
    bits = np.dtype(_CARRIER[dt]).itemsize
    layout = "ND2M16" if m <= 16 else "ND2M32"
    rows_a = 16 if m <= 16 else 32
    load = (
        f"BSTART.TLOAD {dt.name}\nB.DATR Layout={layout}, DataType=DTYPE_NONE\n"
        f"B.DIM zero, {k}, ->LB0\nB.DIM zero, {m}, ->LB1\nB.IOR zero, a1\n"
        f"B.IOT mask=1111, last, ->T<{_size(rows_a * k * bits)}>\nBSTOP\n"
        f"BSTART.TLOAD {dt.name}\nB.DATR Layout=ND2N8, DataType=DTYPE_NONE\n"
        f"B.DIM zero, {n}, ->LB0\nB.DIM zero, {k}, ->LB1\nB.IOR a2, a3\n"
        f"B.IOT mask=1111, last, ->N<{_size(k * n * bits)}>\nBSTOP\n"
    )
    mm = (
        f"BSTART.TMATMUL {dt.name}\nB.FPATR 0, 0, 0, 0, 0, 0, 0, 0, 0\n"
        f"B.DIM zero, {m}, ->LB0\nB.DIM zero, {n}, ->LB1\nB.DIM zero, {k}, ->LB2\n"
        f"B.IOT T#1, N#1, mask=1111, last, ->U<{_size(rows_a * n * 4)}>\nBSTOP\n"
    )
    return load, mm


def _bundle_time(dt: DataType, a: np.ndarray, b: np.ndarray) -> float:
    m, k = a.shape
    n = b.shape[1]
    machine = Machine(MachineConfig(gm_size=1 << 20))
    machine.load_gm(0, np.ascontiguousarray(a))
    machine.load_gm(0x40000, np.ascontiguousarray(b))
    machine.set_gpr("a1", k * a.itemsize)
    machine.set_gpr("a2", 0x40000)
    machine.set_gpr("a3", n * b.itemsize)
    load, mm = _program(dt, m, n, k)
    machine.run(parse(load))
    prog = parse(mm)
    machine.run(prog)  # warm the plan cache
    return best_of(lambda: machine.run(prog), repeat=3, clock=time.perf_counter) / 4


def rows(shapes: list[tuple[int, int, int]] | None = None) -> list[Row]:
    """Benchmark rows for each M x N x K bundle shape."""
    rng = np.random.default_rng(11)
    out: list[Row] = []
    for m, n, k in shapes or SHAPES:
        label = f"{m}x{n}x{k}"
        x = rng.uniform(-1, 1, (m, k))
        y = rng.uniform(-1, 1, (k, n))
        for dt in (DataType.FP16, DataType.BF16, DataType.FP32):
            if k * n * np.dtype(_CARRIER[dt]).itemsize > 65536:
                continue  # B does not fit one 64 KiB CUBE_N8 tile
            a, b = x.astype(_CARRIER[dt]), y.astype(_CARRIER[dt])
            ours = _bundle_time(dt, a, b)
            a32, b32 = a.astype(np.float32), b.astype(np.float32)
            blas = best_of(lambda a32=a32, b32=b32: np.matmul(a32, b32))
            if dt != DataType.FP32:
                same = best_of(lambda a=a, b=b: np.matmul(a, b))
                out.append(Row(f"TMATMUL bundle {dt.name} {label} /PE", ours, same,
                               f"np.matmul {dt.name}", goal=10.0))  # fmt: skip
            note = "exact fused steps" if dt == DataType.FP32 else ""
            if kernels.compiled_fold() is None:
                note = "; ".join(filter(None, [note, "numpy route"]))
            out.append(Row(f"TMATMUL bundle {dt.name} {label} /PE", ours, blas,
                           "np.matmul float32 (BLAS)", note=note))  # fmt: skip
    return out


if __name__ == "__main__":
    from .common import render

    print(render(rows()))
