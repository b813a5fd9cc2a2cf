"""Physical geometry depends on the extent only, and sizes are the smallest legal."""

from __future__ import annotations

import pytest

from ptoc.dialects.tile_types import TileType
from ptoc.passes.geometry import physical_shape, pto_type


@pytest.mark.parametrize(
    ("extent", "phys"),
    [
        ((8, 64), (8, 64)),
        ((5, 33), (8, 64)),
        ((8, 1), (128, 1)),
        ((1, 32), (4, 32)),
        ((1, 512), (1, 512)),
    ],
)
def test_physical_shape(extent: tuple[int, int], phys: tuple[int, int]) -> None:
    assert physical_shape(extent) == phys


@pytest.mark.parametrize("dtype", ["FP32", "FP16", "S8", "U32", "FP64", "PRED"])
def test_the_same_extent_gives_the_same_rows_and_cols_for_every_dtype(dtype: str) -> None:
    d = pto_type(TileType(dtype, (1, 32)))
    assert d is not None and d.cols.data == 32
    if dtype != "PRED":
        assert d.rows == 4


def test_sizes() -> None:
    sizes = {dt: pto_type(TileType(dt, (8, 64))).nbytes for dt in ("FP32", "FP16", "S8")}  # type: ignore[union-attr]
    assert sizes == {"FP32": 2048, "FP16": 1024, "S8": 512}
    assert pto_type(TileType("FP32", (512, 64))) is None
