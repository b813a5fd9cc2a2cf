"""The operation table agrees with the catalog, the executor, the dialect and legalize."""

from __future__ import annotations

import pytest

import ptoc.lang as pt
from ptoc.backend.isa import (
    OPS,
    TABLE,
    Access,
    Executor,
    IorKind,
    LegalizeRule,
    OperandKind,
    TileFamily,
    catalog,
    row,
    rows,
)
from ptoc.backend.isa.optable import classify_ior
from ptoc.backend.isa.schema import IorSlot


def test_one_row_per_catalog_op_in_catalog_order() -> None:
    assert list(TABLE) == [o.mnemonic for o in catalog.OPS]
    for m, r in TABLE.items():
        assert r.op is OPS[m]  # the catalog record itself, never a copy
        assert r.mnemonic == m
        assert row(m.lower()) is r


@pytest.mark.parametrize("mnemonic", list(TABLE))
def test_binding_shape_agrees_with_catalog(mnemonic: str) -> None:
    r, o = TABLE[mnemonic], OPS[mnemonic]
    b = r.binding
    assert (b.sources, b.destinations) == (len(o.sources), len(o.destinations))
    assert (len(r.sources), len(r.destinations)) == (len(o.sources), len(o.destinations))
    assert b.ior_slots == len(o.ior) == len(r.ior)
    assert (b.ior_slots > 0) == o.ior_legal
    assert b.shared == o.ios_legal
    assert [s.slot for s in r.ior] == [s.field for s in o.ior]
    assert [s.default for s in r.ior] == [s.default for s in o.ior]
    assert [s.index for s in r.ior] == list(range(len(o.ior)))
    if b.iots is not None:
        assert sum(n for n, _ in b.iots) == b.sources
        assert sum(d for _, d in b.iots) == b.destinations
        assert all(n <= 2 for n, _ in b.iots)  # one B.IOT names at most two sources
    assert all(s.access is not Access.WRITE for s in r.sources)
    assert all(d.access is Access.WRITE for d in r.destinations)


def test_explicit_binding_groupings() -> None:
    assert row("TFMA").binding.iots == ((2, False), (1, True))
    assert row("TSEL").binding.iots == ((2, False), (1, True))
    assert row("TADD").binding.iots == ((2, True),)
    assert row("TLOAD").binding.iots == ((0, True),)
    assert row("TSTORE").binding.iots == ((1, False),)
    assert row("TSORT").binding.iots is None  # two destinations: any grouping


def test_every_executor_member_is_used_and_has_one_preparer() -> None:
    from ptoc.runtime.ops import PREPARERS

    assert {r.executor for r in TABLE.values()} - {None} == set(Executor)
    assert set(PREPARERS) == set(Executor)
    assert len(set(PREPARERS.values())) == len(Executor)  # one preparer per kind
    modelled = {r.mnemonic for r in TABLE.values() if r.executor is not None}
    unmodelled = set(TABLE) - modelled
    assert {r.mnemonic for r in rows(executor=Executor.MATMUL)} == {
        o.mnemonic for o in catalog.OPS if o.family.value == "CUBE"
    }
    assert unmodelled == {
        "MGATHER", "MSCATTER", "MGATHER_MASK", "MSCATTER_MASK", "MGATHER_CAS",
        "GMOV",
    }  # fmt: skip
    for m in unmodelled:
        r = TABLE[m]
        assert (r.semantics, r.tile, r.legalize, r.lang) == (None, None, None, None)


def test_semantics_present_for_every_computing_executed_op() -> None:
    # data movement lives in the executor's memory model; TIMG2COL is always illegal
    movement = {
        Executor.LOAD,
        Executor.STORE,
        Executor.MOV,
        Executor.PREFETCH,
        Executor.IMG2COL,
    }
    for r in TABLE.values():
        if r.executor is None or r.executor in movement:
            assert r.semantics is None, r.mnemonic
        else:
            assert callable(r.semantics), r.mnemonic


def test_semantics_callables_compute() -> None:
    import numpy as np

    from ptoc.backend.isa import DataType

    a = np.array([[[1, 2, 3]]], np.int32)
    b = np.array([[[4, 5, 6]]], np.int32)
    sem = row("TSUB").semantics
    assert sem is not None
    assert sem(DataType.S32, a, b)[0].tolist() == [[[-3, -3, -3]]]
    sem = row("TROWSUM").semantics
    assert sem is not None
    assert sem(DataType.S32, a)[0].tolist() == [[[6]]]


def test_lang_names_unique_valid_and_exported() -> None:
    names = [r.lang for r in TABLE.values() if r.lang is not None]
    assert len(names) == len(set(names))
    for n in names:
        assert n.isidentifier()
        assert n in pt.__all__, n
        assert callable(getattr(pt, n))


def test_operand_names_unique_per_row() -> None:
    for r in TABLE.values():
        names = [o.name for o in (*r.sources, *r.destinations)]
        assert len(names) == len(set(names)), r.mnemonic
        assert all(n.isidentifier() for n in names), r.mnemonic


def test_operand_kinds() -> None:
    assert row("TCMP").destinations[0].kind is OperandKind.PREDICATE
    assert row("TSEL").sources[row("TSEL").source_index("pred")].kind is OperandKind.PREDICATE
    assert row("TSORT").destinations[1].kind is OperandKind.INDEX
    assert row("TGATHER").sources[1].kind is OperandKind.INDEX
    assert row("TROWARGMAX").destinations[0].kind is OperandKind.INDEX
    assert row("TROWMAX").destinations[0].kind is OperandKind.VALUE
    assert row("TINSERT").sources[0].access is Access.READ_WRITE
    with pytest.raises(KeyError):
        row("TADD").source_index("pred")


def test_ior_kinds_classified_from_catalog_meanings() -> None:
    assert [s.kind for s in row("TLOAD").ior] == [IorKind.ADDRESS, IorKind.STRIDE]
    assert [s.kind for s in row("TQUANT").ior] == [IorKind.MULTIPLIER, IorKind.ZERO_POINT]
    assert [s.kind for s in row("TCI").ior] == [IorKind.START, IorKind.FLAG]
    assert [s.kind for s in row("TTRI").ior] == [IorKind.DIAGONAL, IorKind.FLAG]
    assert [s.kind for s in row("TEXTRACT").ior] == [IorKind.ROW, IorKind.COL]
    assert [s.kind for s in row("TSORT").ior] == [IorKind.FLAG]
    assert [s.kind for s in row("TADDS").ior] == [IorKind.SCALAR]
    assert [s.kind for s in row("TFILLPAD").ior] == [IorKind.PAD]
    assert row("TQUANT").ior_slot(IorKind.MULTIPLIER).default == 0x3F800000
    with pytest.raises(ValueError, match="unclassified"):
        classify_ior(IorSlot("RegSrc0", "mystery: something", 0))


def test_rows_filters_in_catalog_order() -> None:
    binary = rows(executor=Executor.BINARY)
    assert [r.mnemonic for r in binary][:3] == ["TADD", "TSUB", "TMUL"]
    assert all(r.tile is TileFamily.BINARY for r in binary)
    assert rows(executor=Executor.BINARY, legalize=LegalizeRule.TILE_SCALAR) == ()
    assert {r.mnemonic for r in rows(tile=TileFamily.QUANT)} == {"TQUANT", "TDEQUANT"}
    assert len(rows()) == len(TABLE)


def _tile_op_classes() -> list[type]:
    import ptoc.dialects.tile as tile_dialect
    from ptoc.dialects.tile_base import TileOp

    out = []
    for op in tile_dialect.Tile.operations:
        if issubclass(op, TileOp) and op.MNEMONIC is not None:
            out.append(op)
    return out


def _family_base(cls: type) -> str:
    from ptoc.dialects.tile_base import TileOp

    for c in cls.__mro__:
        if TileOp in c.__bases__:
            return c.__name__
    raise AssertionError(cls)


def test_tile_dialect_op_classes_agree_with_table() -> None:
    classes = _tile_op_classes()
    by_mnemonic = {c.MNEMONIC: c for c in classes}
    assert len(by_mnemonic) == len(classes)  # one class per operation
    modelled = {r.mnemonic for r in TABLE.values() if r.tile is not None}
    assert set(by_mnemonic) == modelled
    for m, cls in by_mnemonic.items():
        assert _family_base(cls) == TABLE[m].tile.value, m  # type: ignore[union-attr]
    assert {TABLE[m].tile for m in by_mnemonic} == set(TileFamily)


def test_legalize_rules_agree_with_table() -> None:
    from ptoc.passes.legalize import RULES, rule_of

    assert set(RULES) == set(LegalizeRule)  # one rule per member, keyed by the member
    for member, fn in RULES.items():
        assert fn.__name__.lstrip("_") == member.value, member
    seen = set()
    for cls in _tile_op_classes():
        r = TABLE[cls.MNEMONIC]
        assert r.legalize is not None, r.mnemonic
        assert rule_of(cls.__new__(cls)) is RULES[r.legalize], r.mnemonic
        seen.add(r.mnemonic)
    assert seen == {r.mnemonic for r in TABLE.values() if r.legalize is not None}
