"""The tile dialect: types, scalar literals, syntax round trips and verifiers."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import Builtin
from xdsl.parser import Parser
from xdsl.utils.exceptions import VerifyException

from ptoc.backend.isa import DataType
from ptoc.dialects.tile import ALL_TILE_OPS, Tile
from ptoc.dialects.tile_base import ScalarAttr, TileOp, format_number, scalar_bits
from ptoc.dialects.tile_types import TensorType, TileType


@pytest.fixture
def ctx() -> Context:
    c = Context()
    for d in (Builtin, func.Func, Tile):
        c.load_dialect(d)
    return c


def test_tile_type_syntax(ctx: Context) -> None:
    t = TileType("FP16", (8, 64), (7, 60))
    assert str(t) == "!tile.tile<FP16, 8x64, valid 7x60>"
    assert Parser(ctx, str(t)).parse_attribute() == t
    assert t.valid_bytes == 7 * 60 * 2
    assert str(TileType("PRED", (4, 8))) == "!tile.tile<PRED, 4x8>"


def test_tensor_type_syntax(ctx: Context) -> None:
    t = TensorType("S16", (32, 48), 64)
    assert str(t) == "!tile.tensor<S16, 32x48, stride 64>"
    assert Parser(ctx, str(t)).parse_attribute() == t
    assert (t.row_stride_bytes, t.nbytes) == (128, (31 * 64 + 48) * 2)


@pytest.mark.parametrize(
    ("dtype", "value", "bits"),
    [
        (DataType.FP32, 0.1, 0x3DCCCCCD),
        (DataType.FP16, 0.1, 0x2E66),
        (DataType.BF16, 0.1, 0x3DCD),
        (DataType.FP32, -0.0, 0x80000000),
        (DataType.FP32, math.inf, 0x7F800000),
        (DataType.S8, -1, 0xFF),
        (DataType.U16, 65535, 0xFFFF),
        (DataType.S32, -(2**31), 0x80000000),
    ],
)
def test_scalar_bits(dtype: DataType, value: float, bits: int) -> None:
    assert scalar_bits(dtype, value) == bits


@pytest.mark.parametrize(
    ("dtype", "value"), [(DataType.S8, 128), (DataType.U8, -1), (DataType.S32, 0.5)]
)
def test_scalar_bits_rejects_unrepresentable_integers(dtype: DataType, value: float) -> None:
    with pytest.raises(ValueError):
        scalar_bits(dtype, value)


@given(st.floats(allow_nan=False) | st.integers(-(2**63), 2**64 - 1))
def test_scalar_literals_round_trip(value: float) -> None:
    ctx = Context()
    ctx.load_dialect(Tile)
    text = str(ScalarAttr(value))
    back = Parser(ctx, text).parse_attribute()
    assert isinstance(back, ScalarAttr)
    assert back.value == value and type(back.value) is type(value)
    if isinstance(value, float):
        assert math.copysign(1, back.value) == math.copysign(1, value)


def test_nan_literal() -> None:
    assert format_number(math.nan) == "nan"


def test_every_tile_op_has_a_docstring_and_reference() -> None:
    for cls in ALL_TILE_OPS:
        assert cls.__doc__, cls.name
        assert cls.reference is not TileOp.reference, cls.name


def test_verifier_rejects_mismatched_types(ctx: Context) -> None:
    text = """
    func.func @k(%x: !tile.tensor<FP32, 8x64>) {
      %a = tile.load %x[0, 0] : !tile.tensor<FP32, 8x64> -> !tile.tile<FP32, 8x64>
      %b = tile.load %x[0, 0] : !tile.tensor<FP32, 8x64> -> !tile.tile<FP32, 4x64>
      %c = "tile.add"(%a, %b) : (!tile.tile<FP32, 8x64>, !tile.tile<FP32, 4x64>)
        -> !tile.tile<FP32, 8x64>
      func.return
    }"""
    m = Parser(ctx, text).parse_module()
    with pytest.raises(VerifyException):
        m.verify()


def test_tile_value_shapes_are_independent_of_extent_rounding() -> None:
    t = TileType("FP32", (5, 33), (5, 30))
    assert t.extent == (5, 33) and t.valid == (5, 30)
    with pytest.raises(VerifyException, match="inside the extent"):
        TileType("FP32", (5, 33), (6, 30)).verify()
    assert np.dtype(np.float32).itemsize == 4
