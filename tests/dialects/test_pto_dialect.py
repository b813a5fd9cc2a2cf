"""The generated pto dialect: fresh, one op per catalog row, verified by the catalog."""

from __future__ import annotations

import subprocess
import sys

import pytest
from xdsl.dialects.builtin import DenseArrayBase, IntegerAttr, i64
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.test_value import create_ssa_value

from ptoc.backend.isa import OPS
from ptoc.dialects import generate_pto
from ptoc.dialects.dtypes import dtype_attr
from ptoc.dialects.pto import PTO_OP_BY_MNEMONIC
from ptoc.dialects.pto_ops import PTO_OPS
from ptoc.dialects.pto_types import PtoTileType


def test_generated_module_is_fresh() -> None:
    assert generate_pto.TARGET.read_text() == generate_pto.render()
    r = subprocess.run(
        [sys.executable, "-m", "ptoc.dialects.generate_pto", "--check"], check=False
    )
    assert r.returncode == 0


def test_one_op_per_catalog_row() -> None:
    assert [c.MNEMONIC for c in PTO_OPS] == list(OPS)
    assert len({c.name for c in PTO_OPS}) == len(OPS)
    for c in PTO_OPS:
        assert c.__doc__ and c.MNEMONIC in c.__doc__


TILE = PtoTileType("FP32", (8, 64), 64, 5)


@pytest.mark.parametrize("mnemonic", [m for m in OPS if OPS[m].family.value == "TEPL"])
def test_source_count_is_the_catalog_role_count(mnemonic: str) -> None:
    o = OPS[mnemonic]
    dt = sorted(o.dtypes)[0].name
    wrong = len(o.sources) + 1
    op = PTO_OP_BY_MNEMONIC[mnemonic].build(
        operands=[[create_ssa_value(TILE) for _ in range(wrong)], [], []],
        result_types=[[TILE] * len(o.destinations)],
        properties={
            "dtype": dtype_attr(dt),
            "dims": DenseArrayBase.from_list(i64, [1, -1, -1]),
            "mask": IntegerAttr(15, i64),
        },
    )
    with pytest.raises(VerifyException, match=f"binds {len(o.sources)} Local source"):
        op.verify()


def test_pto_ops_have_no_defaults_to_fill() -> None:
    """``PtoOp.__post_init__`` skips IRDL's filling of absent properties and attributes
    with their defaults: no pto op has one, so the ops are those IRDL would build."""
    for c in PTO_OPS:
        d = c.get_irdl_definition()
        assert not [n for n, p in d.properties.items() if p.default_value is not None], c
        assert not [n for n, a in d.attributes.items() if a.default_value is not None], c
    op = PTO_OP_BY_MNEMONIC["TADD"].build(
        operands=[[create_ssa_value(TILE)] * 2, [], []],
        result_types=[[TILE]],
        properties={
            "dtype": dtype_attr("FP32"),
            "dims": DenseArrayBase.from_list(i64, [64, 8, -1]),
            "mask": IntegerAttr(1, i64),
        },
    )
    op.verify()
    assert set(op.properties) == {"dtype", "dims", "mask", "operandSegmentSizes"}
