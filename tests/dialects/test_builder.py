"""The builder infers shapes, DataTypes and the catalog form of binary operations."""

from __future__ import annotations

import pytest
from xdsl.dialects.builtin import FileLineColLoc

from ptoc.dialects import tile_elementwise as ew
from ptoc.dialects import tile_reduce as red
from ptoc.dialects.tile_types import TileType
from ptoc.testing import KernelBuilder


def test_binary_forms_are_inferred() -> None:
    kb = KernelBuilder("k")
    x = kb.tensor("x", "FP32", (8, 64))
    t = kb.load(x, (8, 64))
    ops = [
        kb.add(t, t).owner,
        kb.add(t, 2.0).owner,
        kb.sub(t, kb.rowmax(t)).owner,
        kb.mul(t, kb.colsum(t)).owner,
    ]
    assert [type(o) for o in ops] == [
        ew.AddOp,
        ew.AddsOp,
        red.EXPAND_BINARY_OPS[1],
        red.EXPAND_BINARY_OPS[8],
    ]
    assert kb.rowmax(t).type == TileType("FP32", (8, 1))
    assert kb.rowargmax(t).type == TileType("U32", (8, 1))
    assert kb.trans(t).type == TileType("FP32", (64, 8))
    kb.finish()


def test_ops_record_the_callers_line() -> None:
    kb = KernelBuilder("k")
    x = kb.tensor("x", "FP32", (8, 64))
    t = kb.load(x, (8, 64))
    loc = t.owner.location
    assert isinstance(loc, FileLineColLoc) and loc.filename.data == __file__


def test_unknown_helper_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError):
        KernelBuilder("k").frobnicate  # noqa: B018


def test_finish_is_idempotent() -> None:
    kb = KernelBuilder("k", pes=2)
    kb.tensor("x", "FP32", (8, 64))
    assert kb.finish() is kb.finish()
