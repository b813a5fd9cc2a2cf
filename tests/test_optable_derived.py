"""Everything derived from the operation table is there for every row, so adding an
operation to the table is checked here without naming it: its ``tile`` op class, its
legalize rule, its ``ptoc.lang`` function and that function's reference-page entry."""

from __future__ import annotations

import re

import pytest

import ptoc.lang as pt
from ptoc.backend.isa import TABLE, LegalizeRule, TileFamily, rows
from ptoc.dialects.tile import ALL_TILE_OPS, OP_CLASS
from ptoc.docgen import REFERENCE_PATH, TENSOR_TYPES, probe
from ptoc.lang.derived import DERIVED, FAMILIES, ROWS
from ptoc.passes.legalize import RULES, rule_of

TILE_ROWS = [r for r in TABLE.values() if r.tile is not None]
LANG_ROWS = [r for r in TABLE.values() if r.lang is not None]


@pytest.mark.parametrize("r", TILE_ROWS, ids=lambda r: r.mnemonic)
def test_every_tile_row_has_its_op_class(r) -> None:  # type: ignore[no-untyped-def]
    cls = OP_CLASS[r.mnemonic]
    assert cls in ALL_TILE_OPS
    assert r.mnemonic == cls.MNEMONIC
    assert cls.name == f"tile.{r.mnemonic[1:].lower()}" or r.tile is TileFamily.FULL
    assert cls.__doc__  # derived classes get the table's or the catalog's line
    assert cls.__module__.startswith("ptoc.dialects.tile_")


def test_op_classes_are_exactly_the_tile_rows() -> None:
    assert set(OP_CLASS) == {r.mnemonic for r in TILE_ROWS}


def test_every_legalize_rule_member_has_one_rule() -> None:
    assert set(RULES) == set(LegalizeRule)
    for member, fn in RULES.items():
        assert fn.__name__.lstrip("_") == member.value
    # every tile op's rule is the one its row names
    assert {r.legalize for r in TILE_ROWS} == set(LegalizeRule)
    for r in TILE_ROWS:
        op = OP_CLASS[r.mnemonic].__new__(OP_CLASS[r.mnemonic])
        assert rule_of(op) is RULES[r.legalize], r.mnemonic  # type: ignore[index]


@pytest.mark.parametrize("r", LANG_ROWS, ids=lambda r: r.lang)
def test_every_lang_row_has_its_exported_function(r) -> None:  # type: ignore[no-untyped-def]
    assert r.lang in pt.__all__
    assert callable(getattr(pt, r.lang))


def test_derived_functions_are_the_one_tile_lang_rows() -> None:
    want = [r.lang for f in FAMILIES for r in rows(tile=f) if r.lang]
    assert list(DERIVED) == want == [r.lang for r in ROWS]
    for name, fn in DERIVED.items():
        assert getattr(pt, name) is fn
        assert fn.__name__ == name and fn.__doc__


def _page_types() -> dict[str, str]:
    """``pt.NAME`` -> its ``types of ...`` line on the reference page."""
    text = REFERENCE_PATH.read_text()
    out = {}
    for m in re.finditer(r"^### `pt\.(\w+)\(.*?`\n(.*?)(?=^### |^## )", text, re.M | re.S):
        t = re.search(r"^\* types of [^:]+: (.*)$", m[2], re.M)
        out[m[1]] = t[1] if t else ""
    return out


def _names(types) -> str:  # type: ignore[no-untyped-def]
    if len(types) == len(TENSOR_TYPES):
        return "every tensor type"
    return ", ".join(d.name for d in types)


@pytest.mark.parametrize("r", ROWS, ids=lambda r: r.lang)
def test_derived_function_accepts_and_documents_its_rows_types(r) -> None:  # type: ignore[no-untyped-def]
    legal = [d for d in TENSOR_TYPES if d.datatype in r.op.dtypes]
    fn = DERIVED[r.lang]

    def call(pt, m, d):  # type: ignore[no-untyped-def]
        return fn(*(m(8, 64, d) for _ in r.sources))  # one equal-shape tile per source

    recorded = {d: probe(call, d) for d in TENSOR_TYPES}
    assert [d for d, ops in recorded.items() if ops is not None] == legal
    assert all(ops in (None, [r.mnemonic]) for ops in recorded.values())
    assert _page_types()[r.lang] == _names(legal)


def test_every_lang_row_is_on_the_reference_page() -> None:
    page = _page_types()
    assert {r.lang for r in LANG_ROWS} <= set(page)
