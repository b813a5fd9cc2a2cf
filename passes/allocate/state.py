"""The allocator's model of the Local tile queues (DECISIONS D1/D2), with liveness.

``Queues`` mirrors the machine: per hand a list of entries, index 0 = ``hand#1``; a push
that makes a queue longer than ``depth`` drops the last entry and returns its bytes.
Capacity is per PE and every tile of a kernel uses the same PE mask, so one byte count
stands for every participating PE.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass, field

from xdsl.ir import SSAValue

from ptoc.backend.isa.fields import Hand
from ptoc.backend.program import TileRef

#: ``TileRef`` of every (hand, index - 1), shared (references are immutable)
REFS = [[TileRef(h, k + 1) for k in range(16)] for h in Hand]


@dataclass(eq=False, slots=True)
class Entry:
    """One queue entry: the value it holds (None: a filler). ``dead`` marks a copy no
    later bundle reads (its value was spilled and will be reloaded)."""

    value: SSAValue | None
    size: int
    dead: bool = False
    #: the value's last read (-1: a filler), once a placement asked for it: the
    #: placement scores every entry of every hand, and the liveness is complete before
    #: the first placement
    last: int | None = field(default=None, repr=False)


@dataclass
class Liveness:
    """Read positions (schedule indices) of every tile value, by the value's ``id`` (an
    SSAValue hashes by ``id`` too, but through a Python method; the IR keeps the values
    alive)."""

    #: the last read of every value: read for every queue entry of every placement
    last: dict[int, int] = field(default_factory=dict)

    #: every value's reads, in order: the placement asks for every queue entry
    by_id: dict[int, list[int]] = field(default_factory=dict)

    def add(self, v: SSAValue, t: int) -> None:
        """Record a read of ``v`` at ``t`` (reads are added in schedule order)."""
        u = self.by_id.get(id(v))
        if u is None:
            u = self.by_id[id(v)] = []
        u.append(t)
        self.last[id(v)] = t

    def next_use(self, v: SSAValue | None, t: int) -> int | None:
        """The first read at or after position ``t`` (None: dead from ``t`` on)."""
        if v is None:
            return None
        u = self.by_id.get(id(v))
        if not u:
            return None
        if u[-1] < t:  # the common answer for a dead entry, without the search
            return None
        return u[bisect_left(u, t)]

    def last_use(self, v: SSAValue) -> int:
        return self.last.get(id(v), -1)


@dataclass
class Queues:
    """Hand queues, their byte total, and where each value's current copy lives."""

    hands: int
    depth: int
    capacity: int
    q: list[list[Entry]] = field(default_factory=list)
    used: int = 0
    peak: int = 0

    def __post_init__(self) -> None:
        if not self.q:
            self.q = [[] for _ in range(self.hands)]

    def copy(self) -> Queues:
        return Queues(
            self.hands,
            self.depth,
            self.capacity,
            [list(h) for h in self.q],
            self.used,
            self.peak,
        )

    def tail(self, h: int) -> Entry | None:
        """The entry the next push into ``h`` evicts (None while ``h`` is not full)."""
        q = self.q[h]
        return q[self.depth - 1] if len(q) >= self.depth else None

    def push(self, h: int, entry: Entry) -> Entry | None:
        """Push ``entry`` as ``h#1``; returns the evicted entry."""
        q = self.q[h]
        q.insert(0, entry)
        self.used += entry.size
        evicted = None
        if len(q) > self.depth:
            evicted = q.pop()
            self.used -= evicted.size
        self.peak = max(self.peak, self.used)
        return evicted

    def find(self, value: SSAValue) -> tuple[int, int] | None:
        """(hand, index) of ``value``'s resident copy, preferring one that is not dead."""
        fallback = None
        for h, q in enumerate(self.q):
            for k, e in enumerate(q):
                if e.value is value:
                    if not e.dead:
                        return (h, k)
                    fallback = fallback or (h, k)
        return fallback

    def ref(self, value: SSAValue) -> TileRef | None:
        """The relative name of ``value``'s resident copy (see :meth:`find`)."""
        hk = self.find(value)
        return None if hk is None else REFS[hk[0]][hk[1]]

    def entry(self, value: SSAValue) -> Entry | None:
        hk = self.find(value)
        return None if hk is None else self.q[hk[0]][hk[1]]

    def entries(self) -> Sequence[tuple[int, int, Entry]]:
        return [(h, k, e) for h, q in enumerate(self.q) for k, e in enumerate(q)]
