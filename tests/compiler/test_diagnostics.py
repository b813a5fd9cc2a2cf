"""A kernel that cannot fit fails with the value, its size and the capacity."""

from __future__ import annotations

import pytest

from ptoc.dialects.builder import KernelBuilder
from ptoc.passes.diagnostics import CompileError
from ptoc.passes.pipeline import compile_module
from ptoc.runtime import MachineConfig


def test_a_tile_larger_than_the_capacity_is_named() -> None:
    kb = KernelBuilder("huge")
    x = kb.tensor("x", "FP32", (128, 64))
    o = kb.tensor("o", "FP32", (64, 128))
    line = __import__("inspect").currentframe().f_lineno + 1  # type: ignore[union-attr]
    t = kb.load(x, (128, 64))
    kb.store(o, kb.trans(t))
    with pytest.raises(CompileError) as e:
        compile_module(kb.finish(), MachineConfig(capacity=16384))
    msg = str(e.value)
    assert f"{__file__}:{line}" in msg  # the kernel line of the value
    assert "the pto.tload result (!pto.tile<FP32, valid 128x64" in msg  # the value
    assert "32768 bytes" in msg and "16384" in msg  # its size and the capacity


def test_split_tiles_do_not_need_the_whole_capacity() -> None:
    """The same big tile is fine when only row-separable ops use it (legalize splits it)."""
    kb = KernelBuilder("rows")
    x = kb.tensor("x", "FP32", (128, 64))
    o = kb.tensor("o", "FP32", (128, 64))
    kb.store(o, kb.exp(kb.load(x, (128, 64))))
    ck = compile_module(kb.finish(), MachineConfig(capacity=16384))
    assert ck.report is not None and ck.report.peak_bytes <= 16384
