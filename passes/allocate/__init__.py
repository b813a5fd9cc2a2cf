"""``ptoc-allocate``: schedule the bundles and decide where every value lives.

The scheduler (``schedule``: the dataflow graph, dead-bundle removal, a
low-pressure topological order) orders the ``pto`` bundles; the tile allocator (``tiles``,
over the queue model of ``state``) gives every result a hand and every source a relative
reference, inserting refresh copies, fillers and spills only where needed; ``gprs`` assigns
the ABI registers and a GPR to every other scalar. ``assign`` is the pass that drives them
and records the kernel ABI on the function.
"""

from .assign import (
    MACHINE_ATTR,
    SCRATCH_ATTR,
    TABLE_ATTR,
    AllocatePass,
    AllocStats,
    allocate_func,
)

__all__ = [
    "MACHINE_ATTR",
    "SCRATCH_ATTR",
    "TABLE_ATTR",
    "AllocStats",
    "AllocatePass",
    "allocate_func",
]
