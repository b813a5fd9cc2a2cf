"""``tile.matmul``: syntax round trips, its verifier's rules, its reference (D11 over the
whole shape) and the ``pto`` CUBE tile type."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import Builtin
from xdsl.parser import Parser
from xdsl.utils.exceptions import VerifyException

from ptoc.backend.isa import DataType
from ptoc.backend.isa.cube import CubeLayout
from ptoc.backend.isa.semantics import fpatr as sf
from ptoc.backend.isa.semantics import matmul as sm
from ptoc.dialects.pto import Pto
from ptoc.dialects.pto_types import PtoTileType
from ptoc.dialects.tile import Tile
from ptoc.dialects.tile_base import RefEnv

D = DataType


@pytest.fixture
def ctx() -> Context:
    c = Context()
    for d in (Builtin, func.Func, Tile, Pto):
        c.load_dialect(d)
    return c


def _func(body: str, args: str) -> str:
    return f"func.func @k({args}) {{\n{body}\n  func.return\n}}"


ROUND_TRIPS = [
    ("%r = tile.matmul %a, %b : !tile.tile<FP16, 8x16>, !tile.tile<FP16, 16x24> "
     "-> !tile.tile<FP32, 8x24>", "%a : !tile.tile<FP16, 8x16>, %b : !tile.tile<FP16, 16x24>"),
    ("%r = tile.matmul %a, %b acc %c bias %d relu : !tile.tile<S8, 8x16>, "
     "!tile.tile<S8, 16x24> acc !tile.tile<S32, 8x24> bias !tile.tile<S32, 1x24> "
     "-> !tile.tile<S32, 8x24>",
     "%a : !tile.tile<S8, 8x16>, %b : !tile.tile<S8, 16x24>, %c : !tile.tile<S32, 8x24>, "
     "%d : !tile.tile<S32, 1x24>"),
    ("%r = tile.matmul mx %a, %b scale_a %s : !tile.tile<E4M3, 8x40>, "
     "!tile.tile<FP16, 40x24> scale_a !tile.tile<E8M0, 8x2> -> !tile.tile<FP32, 8x24>",
     "%a : !tile.tile<E4M3, 8x40>, %b : !tile.tile<FP16, 40x24>, %s : !tile.tile<E8M0, 8x2>"),
]  # fmt: skip


@pytest.mark.parametrize(("op", "args"), ROUND_TRIPS)
def test_syntax_round_trips(ctx: Context, op: str, args: str) -> None:
    f = Parser(ctx, _func("  " + op, args)).parse_op()
    f.verify()
    assert op in str(f)
    assert str(Parser(ctx, str(f)).parse_op()) == str(f)


@pytest.mark.parametrize(
    ("op", "args", "rule"),
    [
        ("%r = tile.matmul %a, %b : !tile.tile<FP16, 8x16>, !tile.tile<S8, 16x24> "
         "-> !tile.tile<FP32, 8x24>",
         "%a : !tile.tile<FP16, 8x16>, %b : !tile.tile<S8, 16x24>",
         "FP16 x S8 is not a legal CUBE matrix pair"),
        ("%r = tile.matmul %a, %b : !tile.tile<FP16, 8x16>, !tile.tile<FP16, 16x24> "
         "-> !tile.tile<FP16, 8x24>",
         "%a : !tile.tile<FP16, 8x16>, %b : !tile.tile<FP16, 16x24>",
         r"is FP32 \(the accumulator type"),
        ("%r = tile.matmul %a, %b : !tile.tile<FP16, 8x16>, !tile.tile<FP16, 12x24> "
         "-> !tile.tile<FP32, 8x24>",
         "%a : !tile.tile<FP16, 8x16>, %b : !tile.tile<FP16, 12x24>",
         "inner dimensions differ"),
        ("%r = tile.matmul mx %a, %b : !tile.tile<E4M3, 8x40>, !tile.tile<FP16, 40x24> "
         "-> !tile.tile<FP32, 8x24>",
         "%a : !tile.tile<E4M3, 8x40>, %b : !tile.tile<FP16, 40x24>",
         "an MX E4M3 a needs its E8M0 scales"),
        ("%r = tile.matmul mx %a, %b scale_a %s : !tile.tile<E4M3, 8x40>, "
         "!tile.tile<FP16, 40x24> scale_a !tile.tile<E8M0, 8x1> -> !tile.tile<FP32, 8x24>",
         "%a : !tile.tile<E4M3, 8x40>, %b : !tile.tile<FP16, 40x24>, "
         "%s : !tile.tile<E8M0, 8x1>", "must be a 8x2 E8M0 tile"),
    ],
)  # fmt: skip
def test_verifier_rules(ctx: Context, op: str, args: str, rule: str) -> None:
    f = Parser(ctx, _func("  " + op, args)).parse_op()
    with pytest.raises(VerifyException, match=rule):
        f.verify()


def test_reference_is_d11_over_the_whole_shape_per_pe(ctx: Context) -> None:
    """Per PE: one fold over all of K from the accumulator, then the bias, then ReLU."""
    op_text, args = ROUND_TRIPS[1]
    f = Parser(ctx, _func("  " + op_text, args)).parse_op()
    (op,) = [o for o in f.walk() if o.name == "tile.matmul"]
    rng = np.random.default_rng(1)
    a = rng.integers(-128, 128, (2, 8, 16)).astype(np.int8)
    b = rng.integers(-128, 128, (2, 16, 24)).astype(np.int8)
    c = rng.integers(-(2**31), 2**31, (2, 8, 24)).astype(np.int32)
    d = rng.integers(-(2**31), 2**31, (2, 1, 24)).astype(np.int32)
    (got,) = op.reference(RefEnv(2), [a, b, c, d])
    for p in range(2):
        want = (a[p].astype(np.int64) @ b[p].astype(np.int64) + c[p] + d[p]) % 2**32
        want = np.where(want >= 2**31, want - 2**32, want)
        want = np.maximum(want, 0)  # ReLU after the bias
        assert np.array_equal(got[p].astype(np.int64), want)
        r = sm.matmul(a[p], D.S8, b[p], D.S8, acc=c[p], bias=d[p], fpatr=sf.Fpatr(relu_mode=1))
        assert np.array_equal(got[p], r.d)


def test_pto_cube_tile_type(ctx: Context) -> None:
    t = PtoTileType.cube_tile("FP16", (20, 40), CubeLayout.M32, 6)
    assert str(t) == "!pto.tile<FP16, valid 20x40, CUBE_M32, 4KB>"
    assert t.cube is CubeLayout.M32 and t.rows == 32 and t.cols.data == 40
    assert Parser(ctx, str(t)).parse_attribute() == t
    t.verify()
    with pytest.raises(VerifyException, match="TileCubeRequiredBytes"):
        PtoTileType.cube_tile("FP32", (32, 64), CubeLayout.M32, 6).verify()  # 8 KiB > 4 KiB
    with pytest.raises(VerifyException, match="at most 16 valid rows"):
        PtoTileType.cube_tile("FP16", (17, 8), CubeLayout.M16, 6).verify()
