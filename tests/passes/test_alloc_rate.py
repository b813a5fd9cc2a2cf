"""The allocator's push-rate estimate (``TileAllocator.rate``, read when a remedy weighs
a spill against a refresh) is brought up to date lazily: whenever it is read, it equals
the moving average of every planned bundle's pushes taken bundle by bundle."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ptoc.dialects.pto import PtoOp
from ptoc.passes.allocate.schedule import build_dataflow, live_ops, schedule
from ptoc.passes.allocate.tiles import _NEW_RATE, RATE_DECAY, TileAllocator
from ptoc.passes.legalize import legalize_func
from ptoc.testing import KernelSpec, random_kernel


def _scheduled(seed: int) -> list[PtoOp]:
    module, _ = random_kernel(seed, KernelSpec(60, shapes=((4, 32), (8, 16), (1, 64))))
    f = next(iter(module.ops))
    legalize_func(f)
    bundles = [op for op in f.body.block.ops if isinstance(op, PtoOp)]
    df = build_dataflow(bundles)
    return [bundles[i] for i in schedule(df, live_ops(df))]


@settings(max_examples=12)
@given(st.integers(0, 10_000), st.lists(st.booleans(), min_size=1, max_size=64))
def test_the_rate_read_at_any_bundle_is_the_average_of_every_push_so_far(
    seed: int, reads: list[bool]
) -> None:
    """Reads at arbitrary bundles (a queue depth of 4 makes spills, reloads, refreshes
    and fillers common: their pushes count too) give bit-identical averages; a rate set
    from outside (a loop's state restored) replaces everything before it."""
    ops = _scheduled(seed)
    alloc = TileAllocator(4, 4, 16384)
    want = [0.0] * 4
    for t, plan in enumerate(alloc.plans(ops)):
        pushes = [0] * 4
        for a in plan.actions:
            if a.hand is not None:
                pushes[a.hand] += 1
        for h in plan.hands:
            pushes[h] += 1
        want = [RATE_DECAY * r + _NEW_RATE * p for r, p in zip(want, pushes, strict=True)]
        if reads[t % len(reads)]:
            assert alloc.rate == want
        if t == len(ops) // 2:
            alloc.rate = want = [0.5, 0.25, 0.125, 0.0]
    assert alloc.rate == want
