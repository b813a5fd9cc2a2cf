"""``MachineState.push_one`` (the fused runners' one-step publication) against the
commit's ``check_push`` + ``apply_push``: for any sequence of tiles of mixed masks and
capacities pushed into the hands of a small machine -- full queues releasing a tile of
another size, capacity faults included -- it accepts exactly the pushes the commit
accepts and leaves the same queues and per-PE usage."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from ptoc.backend.isa import DataType
from ptoc.runtime import MachineConfig
from ptoc.runtime.faults import TileAllocationFault
from ptoc.runtime.state import MachineState
from ptoc.runtime.tiles import Layout, Tile

MASKS = [0b1000, 0b0100, 0b1100, 0b1110, 0b1111, 0b0001]
CAPACITIES = [128, 512, 1024, 4096]


def _tile(mask: int, capacity: int) -> Tile:
    payload = np.zeros((4, 1, 32), np.float32)
    return Tile(DataType.FP32, 1, 32, 1, 32, Layout.ROW_MAJOR, mask, capacity, payload)


@given(
    depth=st.integers(1, 4),
    pushes=st.lists(
        st.tuples(st.integers(0, 2), st.sampled_from(MASKS), st.sampled_from(CAPACITIES)),
        min_size=1,
        max_size=40,
    ),
)
def test_push_one_is_the_commits_push(depth: int, pushes: list[tuple[int, int, int]]) -> None:
    cfg = MachineConfig(depth=depth, hands=3, capacity=8192, gm_size=1 << 12)
    fused, commit = MachineState(cfg), MachineState(cfg)
    for hand, mask, capacity in pushes:
        tile = _tile(mask, capacity)
        try:
            plan = commit.check_push(((hand, mask, capacity),))
        except TileAllocationFault:
            plan = None
        if plan is not None:
            commit.apply_push(plan, ((hand, tile),))
        assert fused.push_one(hand, tile) == (plan is not None)
        assert fused.used == commit.used
        assert [[id(t) for t in q] for q in fused.queues] == [
            [id(t) for t in q] for q in commit.queues
        ]
