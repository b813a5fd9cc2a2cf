"""The fused TSCATTER (``ops/irregular.py``) against the generic runner: the same tiles,
queues, status per PE and faults, for every value DataType with each index DataType
(the legal pairs and pairs of another width), values of raw bits (every binade, NaN
payloads, +-0, infinities, subnormals), indices per PE and per column (distinct rows,
two elements selecting one target, the row past the destination and negative rows:
faults), index tiles of another shape, a destination ValidCol other than the
sources', every PE mask, sources allocated on fewer PEs than the bundle, smaller
machines and little capacity; and the common case is fused."""

from __future__ import annotations

import contextlib

import numpy as np
from conftest import examples
from hypothesis import given
from hypothesis import strategies as st

from ptoc.backend.isa import DataType, info, op
from ptoc.backend.isa.semantics.indexed import SCATTER_INDEX_DTYPES
from ptoc.runtime import Machine, MachineConfig
from ptoc.runtime.bundle import build_plan
from ptoc.runtime.faults import MachineFault
from ptoc.runtime.ops import irregular

from .util import (
    MASKS,
    count_fused,
    prog,
    small_machines,
    special_gm,
    two_loads_then,
    warm_outcome,
    whole_rows_col,
)

GM = 1 << 16
#: the value types whose elements are whole bytes (GM moves bytes)
VALUE_TYPES = sorted(
    (d for d in op("TSCATTER").dtypes if info(d).bits in (8, 16, 32, 64)), key=lambda d: d.name
)
#: every index type some value type pairs with
INDEX_TYPES = sorted(set().union(*SCATTER_INDEX_DTYPES.values()), key=lambda d: d.name)
IDX_BASE = 0x8000  # the index tiles' GM (per PE: + pe * 2048)


def _program(dt: DataType, idx_dt: DataType, rv: int, c: int, r: int, dc: int, idx_r: int,
             load_mask: str, mask: str, repeat: int) -> tuple[str, int, int]:  # fmt: skip
    """The program, and the bytes its sources and each destination take."""
    return two_loads_then("TSCATTER", dt, (dt, rv, c, "T", "s0"), (idx_dt, idx_r, c, "N", "s1"),
                          r, dc, "T#1, N#1", load_mask, mask, repeat)  # fmt: skip


@examples(200)  # (fast examples; the rarer rejections need more of them)
@given(data=st.data())
def test_fused_tscatter_equals_the_generic_runner(data: st.DataObject) -> None:
    dt = data.draw(st.sampled_from(VALUE_TYPES))
    legal = sorted(SCATTER_INDEX_DTYPES[dt], key=lambda d: d.name)
    idx_dt = data.draw(st.sampled_from([*legal, *legal, *INDEX_TYPES]))
    rv, r, c = (
        data.draw(st.integers(1, 5)),
        data.draw(st.integers(1, 6)),
        data.draw(st.integers(1, 16)),
    )
    dc = data.draw(st.sampled_from([c, c, c, c + 1]))  # (another ValidCol: a fault)
    idx_r = data.draw(st.sampled_from([rv, rv, rv, rv + 1]))  # (another shape: a fault)
    mask = data.draw(st.sampled_from(MASKS))
    load_mask = data.draw(st.sampled_from([mask, mask, "1111", "1000"]))
    ew, iw = info(dt).bits // 8, info(idx_dt).bits // 8
    regs = {"a0": [pe * 4096 for pe in range(4)],
            "a1": [IDX_BASE + pe * 2048 for pe in range(4)],
            "s0": [whole_rows_col(dt, c) * ew] * 4,
            "s1": [whole_rows_col(idx_dt, c) * iw] * 4}  # fmt: skip
    gm = bytearray(special_gm(data.draw(st.binary(min_size=512, max_size=512)), GM))
    # indices per column: mostly distinct destination rows (a permutation), sometimes
    # any row (two elements on one target), the row past the destination or -1
    bad = data.draw(st.sampled_from([0, 0, 0, 1, 2]))
    for pe in range(4):
        n = whole_rows_col(idx_dt, c) * (idx_r + 1)
        ids = np.zeros(n, np.int64).reshape(idx_r + 1, -1)
        for col in range(ids.shape[1]):
            if bad == 1:
                ids[:, col] = data.draw(
                    st.lists(st.integers(0, r - 1) | st.sampled_from([r, -1]),
                             min_size=idx_r + 1, max_size=idx_r + 1)
                )  # fmt: skip
            else:
                rows = data.draw(st.permutations(range(max(r, idx_r + 1))))
                ids[:, col] = rows[: idx_r + 1]
        raw = ids.reshape(-1).astype(f"<u{iw}", casting="unsafe").tobytes()
        at = IDX_BASE + pe * 2048
        gm[at : at + len(raw)] = raw
    text, loads, dest = _program(dt, idx_dt, rv, c, r, dc, idx_r, load_mask, mask,
                                 data.draw(st.integers(1, 5)))  # fmt: skip
    config = small_machines(data, loads, dest)
    assert warm_outcome(text, regs, bytes(gm), False, **config) == warm_outcome(
        text, regs, bytes(gm), True, **config
    )


def test_the_common_case_takes_the_fused_form(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    build_plan.cache_clear()  # (equal bundles share one plan: start from none)
    published = count_fused(monkeypatch, irregular)
    text, _, _ = _program(DataType.FP32, DataType.U32, 2, 8, 4, 8, 2, "1111", "1111", 1)
    program = prog(text)
    with contextlib.suppress(MachineFault):  # (zero indices: two elements on one target)
        Machine(MachineConfig(gm_size=GM)).run(program)  # prepares the plans
    m = Machine(MachineConfig(gm_size=GM))
    m.set_gpr("s0", 32)
    m.set_gpr("s1", 32)
    m.set_gpr("a1", IDX_BASE)
    m.load_gm(0, np.arange(16, dtype=np.float32))
    idx = np.array([[3, 2, 1, 0, 0, 1, 2, 3], [1, 0, 3, 2, 2, 3, 0, 1]], np.uint32)
    m.load_gm(IDX_BASE, idx)
    m.run(program)
    vals = np.arange(16, dtype=np.float32).reshape(2, 8)
    want = np.zeros((4, 8), np.float32)
    for rr in range(2):
        want[idx[rr], np.arange(8)] = vals[rr]
    assert np.array_equal(m.tile("U#1").values[0], want)
    assert published == ["FP32"]
