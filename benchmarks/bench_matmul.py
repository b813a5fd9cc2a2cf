"""D11 matrix numerics (``ptoc.backend.isa.semantics.matmul.fold``) against ``np.matmul``.

Rows (printed by benchmarks/run_all.py, never asserted):

* FP16 and BF16 inputs, FP32 accumulation, 64x64x64 up to 256x256x512, against
  ``np.matmul`` on the same FP16/BF16 arrays and, for information, against ``np.matmul``
  of float32 copies (BLAS, a different rounding). The two same-type baselines differ in
  kind: numpy has no FP16 kernel and runs its generic loop, while ml_dtypes' matmul of
  BF16 arrays returns the float32 BLAS product of widened copies, so the BF16 row is
  the fold against BLAS. Goal from issue 11: at most 10x of ``np.matmul`` for FP16/BF16
  inputs. FP16/BF16 products of normal-range operands are exact FP32 values, so the fold
  is K FP32 additions per element in k order: the compiled kernel ``fold32.c`` where a C
  compiler exists (the note says which route ran), and the "numpy route" rows show the
  fallback (one outer product per block of k, one addition per k), which two memory
  passes over the M * N * K products bound at about 20x of BLAS.
* FP32 inputs against float32 ``np.matmul``: every step is an exact fused multiply-add,
  one ``fmaf`` in the compiled kernel ``fma32.c``; the "exact engine" rows (small shapes)
  show the numpy fallback (float64 TwoSum, round to odd, one FP32 rounding, about twenty
  vectorised float64 operations per k).
* S8 inputs against ``np.matmul`` of int32 copies (exact float64 BLAS per K chunk).
* "kernel" rows: the whole executor on a compiled ``c = a @ b`` kernel (FP16 and BF16
  in, FP32 out, one PE), ``ptoc.run`` of the warm program -- placement, the CUBE
  transport conversions of every chunk, the matrix bundles, D's way out through GM and
  the readback -- against ``np.matmul`` of the same arrays, both timed per call over
  :data:`KERNEL_CALLS` calls, their runs alternated.

Inputs are uniform in [-1, 1) (normal-range values, so the FP32-addition route applies
to FP16/BF16). Times are the best wall time of three runs (BLAS may use several threads,
whose CPU time process time would add up).
"""

from __future__ import annotations

import time

import ml_dtypes
import numpy as np

from ptoc.backend.isa import DataType
from ptoc.backend.isa.semantics import compiled
from ptoc.backend.isa.semantics import matmul_kernels as kernels
from ptoc.backend.isa.semantics.matmul import fold

from .common import Row, best_of, per_call_pair, slug

SHAPES = [(64, 64, 64), (128, 128, 128), (256, 256, 256), (256, 256, 512)]


def _time(fn) -> float:
    return best_of(fn, repeat=3, clock=time.perf_counter)


#: calls per timed repeat of the kernel rows: one call of a 64x64x64 product takes tens
#: of microseconds, where a single timed call mostly measures cold caches on both sides
KERNEL_CALLS = 20


def rows(shapes: list[tuple[int, int, int]] | None = None) -> list[Row]:
    """Benchmark rows for each M x N x K shape."""
    rng = np.random.default_rng(11)
    out: list[Row] = []
    add_route = "compiled" if kernels.compiled_fold() is not None else "numpy"
    fma_route = "compiled" if kernels.compiled_fma() is not None else "exact engine"
    for m, n, k in shapes or SHAPES:
        a = rng.uniform(-1, 1, (m, k))
        b = rng.uniform(-1, 1, (k, n))
        label = f"{m}x{n}x{k}"
        for dt, carrier in ((DataType.FP16, np.float16), (DataType.BF16, ml_dtypes.bfloat16)):
            a_c, b_c = a.astype(carrier), b.astype(carrier)
            a32, b32 = a_c.astype(np.float32), b_c.astype(np.float32)
            ours = _time(lambda a_c=a_c, b_c=b_c, dt=dt: fold(a_c, dt, b_c, dt))
            same = _time(lambda a_c=a_c, b_c=b_c: np.matmul(a_c, b_c))
            blas = _time(lambda a32=a32, b32=b32: np.matmul(a32, b32))
            name = f"matmul {dt.name} {label}"
            out.append(Row(name, ours, same, f"np.matmul {dt.name}", goal=10.0, note=add_route))
            out.append(Row(name, ours, blas, "np.matmul float32 (BLAS)", note=add_route))
            if dt == DataType.BF16 and add_route == "compiled":
                with compiled.suspended():
                    slow = _time(lambda a_c=a_c, b_c=b_c, dt=dt: fold(a_c, dt, b_c, dt))
                key = f"{slug(name)}_numpy_route"
                out.append(
                    Row(
                        name,
                        slow,
                        blas,
                        "np.matmul float32 (BLAS)",
                        note="numpy route",
                        key=key,
                    )
                )
        a32, b32 = a.astype(np.float32), b.astype(np.float32)
        blas = _time(lambda a32=a32, b32=b32: np.matmul(a32, b32))
        ours = _time(lambda a32=a32, b32=b32: fold(a32, DataType.FP32, b32, DataType.FP32))
        name = f"matmul FP32 {label}"
        out.append(Row(name, ours, blas, "np.matmul float32 (BLAS)", note=fma_route))
        if fma_route == "compiled" and m * n * k <= 128**3:
            with compiled.suspended():
                slow = _time(
                    lambda a32=a32, b32=b32: fold(a32, DataType.FP32, b32, DataType.FP32)
                )
            out.append(
                Row(
                    name,
                    slow,
                    blas,
                    "np.matmul float32 (BLAS)",
                    note="exact engine",
                    key=f"{slug(name)}_exact_engine",
                )
            )
        a8 = rng.integers(-128, 128, (m, k)).astype(np.int8)
        b8 = rng.integers(-128, 128, (k, n)).astype(np.int8)
        ours = _time(lambda a8=a8, b8=b8: fold(a8, DataType.S8, b8, DataType.S8))
        ref = _time(lambda a8=a8, b8=b8: np.matmul(a8.astype(np.int32), b8.astype(np.int32)))
        out.append(Row(f"matmul S8 {label}", ours, ref, "np.matmul int32"))
        out.extend(kernel_rows(m, n, k, a, b))
    return out


def kernel_rows(m: int, n: int, k: int, a: np.ndarray, b: np.ndarray) -> list[Row]:
    """The executor running a compiled ``a @ b`` kernel, per input type."""
    import ptoc
    import ptoc.lang as pt

    out = []
    for dt, carrier, t in (
        (DataType.FP16, np.float16, ptoc.fp16),
        (DataType.BF16, ml_dtypes.bfloat16, ptoc.bf16),
    ):

        def body(x, y, c):  # type: ignore[no-untyped-def]
            pt.store(c, pt.load(x) @ pt.load(y))

        body.__annotations__ = {
            "x": ptoc.Tensor[t, m, k],
            "y": ptoc.Tensor[t, k, n],
            "c": ptoc.Tensor[ptoc.fp32, m, n],
        }
        prog = ptoc.compile(ptoc.kernel(body, name="gemm"))
        x, y = a.astype(carrier), b.astype(carrier)
        ptoc.run(prog, x=x, y=y)  # warm: plans and kernels built
        ours, same = per_call_pair(
            lambda prog=prog, x=x, y=y: ptoc.run(prog, x=x, y=y),
            lambda x=x, y=y: np.matmul(x, y),
            KERNEL_CALLS,
        )
        bundles = prog.stats().bundles
        out.append(
            Row(
                f"matmul kernel {dt.name} {m}x{n}x{k}",
                ours,
                same,
                f"np.matmul {dt.name}",
                goal=10.0,
                note=f"ptoc.run, {bundles} bundles",
            )
        )
    return out


if __name__ == "__main__":
    from .common import render

    print(render(rows()))
