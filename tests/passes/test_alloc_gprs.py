"""GPR assignment: fixed registers, the up-front block, and Belady reuse."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from ptoc.passes.allocate.gprs import ABI_REGS, SCRATCH_REGS, Binding, Scalar, plan_gprs


def test_zero_and_bases_need_no_register() -> None:
    x = Binding(0, 0)
    plan = plan_gprs([[Scalar(0, x), Scalar(0)], [Scalar(64, x), Scalar(7)]])
    assert plan.abi == {x: "a0"}
    assert plan.regs[0] == ["a0", "zero"]
    assert plan.regs[1][0] in SCRATCH_REGS
    assert plan.blocks == 1 and len(plan.writes[0]) == 2


@given(st.lists(st.lists(st.integers(1, 40), min_size=1, max_size=3), min_size=1, max_size=120))
def test_registers_hold_what_each_bundle_reads(needs_values: list[list[int]]) -> None:
    needs = [[Scalar(v) for v in ss] for ss in needs_values]
    plan = plan_gprs(needs)
    held: dict[str, Scalar] = {}
    for i, ss in enumerate(needs):
        for reg, s in plan.writes[i]:
            assert reg not in ("zero", "sp") and reg not in ABI_REGS[:0]
            held[reg] = s
        for reg, s in zip(plan.regs[i], ss, strict=True):
            assert held[reg] == s


def test_belady_groups_writes_into_few_blocks() -> None:
    needs = [[Scalar(i)] for i in range(1, 60)]
    plan = plan_gprs(needs)
    assert plan.blocks <= 5


def _prefetch_by_scan(i, order, start, holder, where, wanted, next_use, write, limit):  # type: ignore[no-untyped-def]
    """The prefetch rule read literally, register by register for every upcoming scalar:
    the first free register, else the first register whose scalar (not one the bundle
    wants) is next read the latest, when later than the upcoming scalar's next read."""
    seen: set[int] = set()
    for s in order[start : start + 4 * limit]:
        if s in where or s in seen:
            continue
        seen.add(s)
        ns = next_use(s, i + 1)
        best, best_next = None, ns
        for reg, h in holder.items():
            if h is None:
                best = reg
                break
            if h in wanted:
                continue
            nh = next_use(h, i + 1)
            if nh > best_next:
                best, best_next = reg, nh
        if best is None:
            break
        write(i, s, best)


@given(st.lists(st.lists(st.integers(1, 70), min_size=1, max_size=3), min_size=1, max_size=200))
def test_prefetch_takes_the_registers_the_rule_names(needs_values: list[list[int]]) -> None:
    """More distinct scalars than registers (Belady reuse with prefetching): the plan is
    the one the rule read literally gives, write for write."""
    import ptoc.passes.allocate.gprs as gprs

    needs = [[Scalar(v) for v in ss] for ss in needs_values]
    plan = plan_gprs(needs)
    fast = gprs._prefetch
    try:
        gprs._prefetch = _prefetch_by_scan
        want = plan_gprs(needs)
    finally:
        gprs._prefetch = fast
    assert plan.writes == want.writes
    assert plan.regs == want.regs
    assert plan.blocks == want.blocks
