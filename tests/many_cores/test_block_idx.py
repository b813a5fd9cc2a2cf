"""``pt.block_idx()`` and ``pt.block_num()``: grid kernels that split their tensors over
the cores at run time (D13), bit-exact on every core count, serial or in workers, and the
race detector on overlapping blocks."""

from __future__ import annotations

import numpy as np
import pytest

import ptoc
import ptoc.lang as pt

F32 = ptoc.fp32


def _x(rows: int, cols: int) -> np.ndarray:
    return np.random.default_rng(rows).standard_normal((rows, cols)).astype(np.float32)


@ptoc.kernel(grid=16)
def row_blocks(x: ptoc.Tensor[F32, 256, 32], out: ptoc.Tensor[F32, 256, 32]):
    base = pt.block_idx() * 16  # core c: rows 16c .. 16c + 15, walked 8 at a time
    for i in pt.range(0, 16, 8):
        t = pt.load(x, rows=(base + i, 8))
        pt.store(out, pt.exp(t - pt.row_max(t)), rows=(base + i, 8))


def test_sixteen_cores_each_take_their_rows() -> None:
    x = _x(256, 32)
    got = ptoc.verify(row_blocks, x=x)["out"]
    one = ptoc.verify(row_blocks, x=x, grid=1)["out"]  # core 0 only: rows 0..15
    assert np.array_equal(got[:16], one[:16]) and not one[16:].any()
    assert got[16:].any()


def test_workers_give_identical_bytes() -> None:
    x = _x(256, 32)
    prog = ptoc.compile(row_blocks)
    serial = ptoc.run(prog, x=x)["out"]
    parallel = ptoc.run(prog, x=x, workers=2)["out"]
    assert serial.tobytes() == parallel.tobytes()


@ptoc.kernel(grid=4)
def last_core_only(x: ptoc.Tensor[F32, 8, 32], out: ptoc.Tensor[F32, 8, 32]):
    with pt.when(pt.block_idx() == pt.block_num() - 1):
        pt.store(out, pt.load(x) * 2.0)


@pytest.mark.parametrize("grid", [1, 2, 4])
def test_block_num_is_the_launch_size(grid: int) -> None:
    x = _x(8, 32)
    assert np.array_equal(ptoc.verify(last_core_only, x=x, grid=grid)["out"], x * 2)


@ptoc.kernel(grid=4)
def overlapping(x: ptoc.Tensor[F32, 64, 32], out: ptoc.Tensor[F32, 64, 32]):
    rows = pt.block_idx() * 8  # 16-row windows 8 rows apart: neighbours overlap
    pt.store(out, pt.load(x, rows=(rows, 16)), rows=(rows, 16))


def test_overlapping_blocks_are_a_race() -> None:
    with pytest.raises(ptoc.MachineFault, match="core"):
        ptoc.run(ptoc.compile(overlapping), x=_x(64, 32), check_races=True)
