"""The generated pto dialect: fresh, one op per catalog row, verified by the catalog."""

from __future__ import annotations

import subprocess
import sys

import pytest
from xdsl.dialects.builtin import DenseArrayBase, IntegerAttr, i64
from xdsl.ir import Attribute, Operation
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.test_value import create_ssa_value

from ptoc.backend.isa import OPS
from ptoc.dialects import generate_pto
from ptoc.dialects.dtypes import dtype_attr
from ptoc.dialects.pto import (
    PTO_OP_BY_MNEMONIC,
    ConstOp,
    MaterializeOp,
    ParamOp,
    ScratchAddrOp,
)
from ptoc.dialects.pto_base import release_segments, segments, unlinked
from ptoc.dialects.pto_ops import PTO_OPS
from ptoc.dialects.pto_types import GPR, PtoTileType


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


def _state(op: Operation) -> tuple[object, ...]:
    """An op's instance state that does not depend on object identity, keys in order."""
    d = vars(op)
    return (
        list(d),
        [v.type for v in op.results],
        [(type(u).__name__, u.index, u.operation is op) for u in op._operand_uses],
        dict(op.properties),
        dict(op.attributes),
        op.location,
        op._successors,
        op._successor_uses,
        op.regions,
        (op.parent, op._prev_op, op._next_op),
    )


def test_lean_init_builds_what_operation_init_builds() -> None:
    """``lean_init`` (the scalar ops' and ``PtoOp.make``'s constructor) leaves the same
    instance state, in the same order, as ``Operation.__init__`` and ``unlinked``."""
    gm = create_ssa_value(i64)
    gpr = ConstOp(3).result
    built = [
        (ConstOp(7), {"operands": (), "result_types": (GPR,)}),
        (ScratchAddrOp(64), {"operands": (), "result_types": (GPR,)}),
        (ParamOp(gm), {"operands": (gm,), "result_types": (GPR,)}),
        (MaterializeOp(gpr, "s1"), {"operands": (gpr,), "result_types": ()}),
    ]
    for op, args in built:
        ref = type(op).__new__(type(op))
        Operation.__init__(ref, properties=op.properties, **args)  # type: ignore[arg-type]
        unlinked(ref)
        assert _state(op) == _state(ref), type(op)
        assert list(op.operands) == list(args["operands"])
        assert all(r.op is op and r.index == i for i, r in enumerate(op.results))
    tadd = PTO_OP_BY_MNEMONIC["TADD"]
    a, b = create_ssa_value(TILE), create_ssa_value(TILE)
    props = {
        "dtype": dtype_attr("FP32"),
        "dims": DenseArrayBase.from_list(i64, [64, 8, -1]),
        "mask": IntegerAttr(1, i64),
    }
    op = tadd.make([a, b], [gpr], [TILE], dict(props))
    ref = tadd.create(operands=[a, b, gpr], result_types=[TILE], properties=dict(op.properties))
    unlinked(ref)
    made, generic = _state(op), _state(ref)
    # ``make`` also gives the op the key of the operand segments it keeps (none yet)
    assert made[0] == [*generic[0], "_segments"] and made[1:] == generic[1:]
    assert list(op.srcs) == [a, b] and list(op.scalars) == [gpr] and not op.dim_values
    kept = op._segments  # type: ignore[attr-defined]
    assert kept is not None and kept[0] is op._operands and list(ref.srcs) == [a, b]
    assert [u.operation for u in a.uses] == [ref, op]  # the newest use first, as xDSL links


def test_make_gives_each_op_the_properties_dict_built_for_it() -> None:
    """``make`` keeps the dict it is given (no copy: one per bundle) with the segment
    sizes added; ops made from their own dicts stay independent, and a clone's are its
    own."""
    tadd = PTO_OP_BY_MNEMONIC["TADD"]
    a, b = create_ssa_value(TILE), create_ssa_value(TILE)

    def props() -> dict[str, Attribute]:
        return {
            "dtype": dtype_attr("FP32"),
            "dims": DenseArrayBase.from_list(i64, [64, 8, -1]),
            "mask": IntegerAttr(1, i64),
        }

    mine = props()
    op, other = tadd.make([a, b], [], [TILE], mine), tadd.make([a, b], [], [TILE], props())
    assert op.properties is mine and list(mine)[-1] == "operandSegmentSizes"
    op.properties["mask"] = IntegerAttr(3, i64)
    assert other.mask == IntegerAttr(1, i64)
    copy = op.clone()
    copy.properties["mask"] = IntegerAttr(1, i64)
    assert op.mask == IntegerAttr(3, i64)


def test_materialize_ops_into_one_register_share_their_properties() -> None:
    """``pto.materialize`` ops into the same GPR hold one read-only properties mapping
    (built once; a write fails rather than reaching every such op); ops into another
    GPR and a clone hold their own."""
    v = ConstOp(3).result
    a, b, c = MaterializeOp(v, "s1"), MaterializeOp(v, "s1"), MaterializeOp(v, "s2")
    assert a.properties is b.properties and a.gpr.data == b.gpr.data == "s1"
    assert c.properties is not a.properties and c.gpr.data == "s2"
    with pytest.raises(TypeError):
        a.properties["gpr"] = c.gpr  # type: ignore[index]
    copy = a.clone()
    assert copy.properties == a.properties and copy.properties is not a.properties
    copy.properties["gpr"] = c.gpr
    assert copy.gpr.data == "s2" and a.gpr.data == b.gpr.data == "s1"


def test_lean_built_ops_share_one_read_only_empty_attribute_mapping() -> None:
    """The ops ``lean_init`` builds have no attributes, in one mapping that refuses a
    write (rather than giving the attribute to every such op); a clone's are its own."""
    a, b = ConstOp(1), ScratchAddrOp(64)
    assert a.attributes is b.attributes and not a.attributes
    with pytest.raises(TypeError):
        a.attributes["x"] = IntegerAttr(1, i64)  # type: ignore[index]
    copy = a.clone()
    copy.attributes["x"] = IntegerAttr(1, i64)
    assert "x" in copy.attributes and not a.attributes and not b.attributes


def test_kept_operand_segments_follow_operand_changes() -> None:
    """The segments a pto op keeps are cut again once xDSL replaces an operand, and
    ``release_segments`` drops them."""
    tadd = PTO_OP_BY_MNEMONIC["TADD"]
    a, b, c = (create_ssa_value(TILE) for _ in range(3))
    props = {
        "dtype": dtype_attr("FP32"),
        "dims": DenseArrayBase.from_list(i64, [64, 8, -1]),
        "mask": IntegerAttr(1, i64),
    }
    op = tadd.make([a, b], [], [TILE], props)
    assert list(op.srcs) == [a, b]
    b.replace_all_uses_with(c)
    assert list(op.srcs) == [a, c]
    op.operands = [c, a]
    assert list(op.srcs) == [c, a] and segments(op)[1] is op.srcs
    release_segments([op])
    assert op._segments is None  # type: ignore[attr-defined]
    assert list(segments(op)[1]) == [c, a] and op._segments is None  # type: ignore[attr-defined]
