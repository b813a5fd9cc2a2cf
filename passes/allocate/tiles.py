"""Hand and capacity planning: a forward simulation of the queues over the schedule.

For every bundle, in schedule order:

1. sources that were spilled are reloaded (TLOAD from the GM scratch area);
2. the destinations are placed by trial: each goes to the feasible hand with the lowest
   score, where a hand is feasible when the entry a push would evict is dead and the
   capacity after the push (minus that entry) fits;
3. when a trial fails, one *remedy* is inserted before the bundle and the trial repeats:
   an in-place refresh (TMOV ``h#depth`` -> ``h``: copies a live tail to ``h#1``, evicting
   the old copy, capacity-neutral), a filler (a 128-byte TEXPANDS that advances a queue so
   a dead tile falls off), or a spill (TSTORE of the live value used farthest in the future,
   whose entry then counts as dead);
4. source references are read off the queue state before the destinations commit.

The score prefers hands whose entries will not outlive their depth: pushing ``v`` into a
hand that receives ``r`` pushes per bundle costs the refreshes ``v`` is expected to need
over its remaining life, plus the slack it takes from the live entries already there.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import cache
from itertools import product

from xdsl.ir import BlockArgument, SSAValue

from ptoc.backend.isa import Access, Executor
from ptoc.backend.isa import row as optable_row
from ptoc.backend.program import TileRef
from ptoc.dialects.dtypes import element_bits, is_pred
from ptoc.dialects.pto import PtoOp
from ptoc.dialects.pto_types import PtoTileType

from ..diagnostics import CAPACITY_HINT, CompileError, fail, value_name
from .state import REFS, Entry, Liveness, Queues

FILLER_BYTES = 128
#: the hand that takes the short-lived results
HOT = 0
#: score added to every hand but a value's preferred one (see TileAllocator.prefer)
PREFER_PENALTY = 1.0
#: exponential decay of the per-hand push-rate estimate
RATE_DECAY = 0.85
#: the weight of a bundle's pushes in the estimate
_NEW_RATE = 1 - RATE_DECAY


@dataclass(frozen=True)
class Action:
    """A bundle inserted before a scheduled bundle.

    ``refresh``: TMOV ``src`` -> ``hand`` (a fresh copy of ``value``); ``spill``: TSTORE
    ``src`` to scratch ``slot``; ``reload``: TLOAD scratch ``slot`` -> ``hand``;
    ``filler``: a dead 128-byte TEXPANDS -> ``hand``.
    """

    kind: str
    value: SSAValue | None
    hand: int | None = None
    src: TileRef | None = None
    slot: int | None = None
    #: a filler's bytes (the loop-entry construction matches the sizes of a state)
    size: int = FILLER_BYTES


@dataclass
class BundlePlan:
    """Allocation of one scheduled bundle: actions before it, its refs and hands."""

    actions: list[Action] = field(default_factory=list)
    refs: list[TileRef] = field(default_factory=list)
    hands: list[int] = field(default_factory=list)


def _immovable(v: SSAValue) -> bool:
    """A tile no bundle can copy or spill: a predicate (TMOV and TSTORE take numeric
    tiles) or a CUBE tile (no TMOV converts a CUBE layout, no vector op reads one, and
    TSTORE reads it only through its store conversion): it stays where it was pushed
    until its last reader, which the lowering places right after it."""
    t = v.type
    return is_pred(t.dtype) or (type(t) is PtoTileType and t.cube is not None)  # type: ignore[attr-defined]


def _is_pred(e: Entry | None) -> bool:
    return e is not None and e.value is not None and _immovable(e.value)


def tile_bytes(v: SSAValue) -> int:
    t = v.type
    assert type(t) is PtoTileType  # (no class derives from it; isinstance is slow)
    return t.nbytes


def spill_bytes(v: SSAValue) -> int:
    """GM bytes a spilled tile takes: its valid rows at a dense valid-column stride."""
    t = v.type
    assert type(t) is PtoTileType
    return t.valid[0] * t.valid[1] * element_bits(t.dtype) // 8


def _accumulator_hand(op: PtoOp, qs: Queues) -> int | None:
    """The hand an ACC matrix bundle's D must not go to: C's encoded 6-bit selector must
    differ from D's zero-extended DstTile hand code
    (``BundleMatrixAccumulatorDestinationIndicesDistinct``), so C at ``T#k`` excludes the
    hand whose code is ``k - 1``."""
    if not _accumulates(op.MNEMONIC):
        return None
    ref = qs.ref(op.srcs[0])
    return None if ref is None or ref.code >= qs.hands else ref.code


@cache
def _accumulates(mnemonic: str | None) -> bool:
    """An ACC matrix operation (its first source, C, is read and written); None: a
    loop's back edge (``passes.allocate.loops``)."""
    if mnemonic is None:
        return False
    row = optable_row(mnemonic)
    if row.executor is not Executor.MATMUL or not row.sources:
        return False
    return row.sources[0].access is Access.READ_WRITE


#: :meth:`TileAllocator._steps_to_free`'s facts (bytes, live for the push, live for the
#: remedies, immovable) of a filler and of the missing tail of a queue that is not full
_FILLER_FACTS = (FILLER_BYTES, False, False, False)
_NO_TAIL = (0, False, False, False)


class TileAllocator:
    """Plans hands, refreshes, fillers and spills for a schedule (see module docstring).

    An entry is *live* while a later bundle reads it: it holds a value with a read at
    ``t`` or later (``strict``: after ``t``, for the bundle's own commit) and is not dead.
    During the preparation of bundle ``t`` the entries its sources resolve to are
    *pinned*: nothing inserted before the bundle may evict them, even when they were
    spilled meanwhile (a spill then only saves the value for a later reload).
    """

    def __init__(self, hands: int, depth: int, capacity: int) -> None:
        self.qs = Queues(hands, depth, capacity)
        self.live = Liveness()
        self._rate = [0.0] * hands
        #: per bundle planned since :attr:`rate` was last brought up to date: the hands
        #: it and its inserted bundles pushed into
        self._pushes: list[tuple[int, ...]] = []
        #: values with a copy in the GM scratch area, and its offset
        self.home: dict[SSAValue, int] = {}
        #: values that are not resident (reload before the next read)
        self.out: set[SSAValue] = set()
        self.pinned: set[int] = set()
        #: a hand the destination being placed must not take (see _accumulator_hand)
        self.exclude: int | None = None
        #: the hand each of some values should go to when it is feasible (a loop's new
        #: values of carried tiles: the hand their argument occupies at the loop entry)
        self.prefer: dict[SSAValue, int] = {}
        self.scratch_top = 0
        self._free_slots: dict[int, list[int]] = {}
        #: slots that stay allocated whatever their values' liveness says (a loop's
        #: spilled carried tiles: every iteration writes its new value there)
        self.reserved: set[int] = set()
        self.counts = {"refresh": 0, "spill": 0, "reload": 0, "filler": 0}
        #: the bundle being planned (diagnostics name its kernel line)
        self.op: PtoOp | None = None
        #: :func:`_immovable` of the values met, by ``id`` (the IR keeps them alive)
        self._fixed: dict[int, bool] = {}
        #: a spill marked an entry dead while the bundle was being planned
        self._marked = False

    @property
    def rate(self) -> list[float]:
        """The per-hand push-rate estimate: an exponential moving average of each
        bundle's pushes per hand (the same arithmetic, bundle by bundle, whenever it
        is read)."""
        pending = self._pushes
        if pending:
            rate = self._rate
            n = len(rate)
            for hands in pending:
                pushes = [0] * n
                for h in hands:
                    pushes[h] += 1
                rate = [
                    RATE_DECAY * r + _NEW_RATE * p for r, p in zip(rate, pushes, strict=True)
                ]
            self._rate = rate
            pending.clear()
        return self._rate

    @rate.setter
    def rate(self, value: list[float]) -> None:
        self._rate = value
        self._pushes.clear()

    # ------------------------------------------------------------------ liveness

    def _live(self, e: Entry | None, t: int, strict: bool) -> bool:
        if e is None or e.value is None:
            return False
        if not strict and id(e) in self.pinned:
            return True
        if e.dead:
            return False
        # a read at or after t (strict: after t) exists when the last read is that late
        return self.live.last.get(id(e.value), -1) >= (t + 1 if strict else t)

    # ------------------------------------------------------------------ placing

    def _score(self, qs: Queues, h: int, v: SSAValue | None, size: int, t: int) -> float:
        """Expected refreshes this push causes: for ``v`` itself (pushes into ``h`` before
        its last read beyond the depth) and for the live entries it moves down; short-lived
        values prefer the hot hand and long-lived ones the others; plus capacity pressure."""
        return self._score_of(qs, h, self._value_facts(v), size, t)

    def _value_facts(self, v: SSAValue | None) -> tuple[int, bool, int | None] | None:
        """What :meth:`_score` asks of the value pushed, whatever the hand: its last read,
        whether it is short-lived and its preferred hand (None: no value)."""
        if v is None:
            return None
        prefer = self.prefer.get(v) if self.prefer else None  # (mostly none)
        return (self.live.last.get(id(v), -1), id(v) in self.short, prefer)

    def _score_of(
        self, qs: Queues, h: int, facts: tuple[int, bool, int | None] | None, size: int, t: int
    ) -> float:
        """:meth:`_score` of the value with :meth:`_value_facts` ``facts`` (asked once for
        all the hands a placement scores)."""
        d = qs.depth
        hands = qs.hands
        s = 0.0
        # ``p``: the expected pushes into ``h`` after ``t`` up to a read at ``last`` (the
        # hot hand takes the short-lived results, the others share the long-lived ones),
        # from the prefix counts of results; asked for every live entry of the hand
        all_, short_ = self.defs_all, self.defs_short
        a0, s0 = all_[t + 1], short_[t + 1]
        if facts is not None:
            last = facts[0]
            if last > t:
                if hands == 1:
                    p: float = all_[last] - a0
                elif h == HOT:
                    p = short_[last] - s0
                else:
                    p = (all_[last] - a0 - (short_[last] - s0)) / (hands - 1)
                s += max(0.0, 1 + p - d) / d + (
                    0.3 if (h == HOT) != facts[1] and hands > 1 else 0.0
                )
        last_of = self.live.last.get
        for k, e in enumerate(qs.q[h]):
            if e.value is None or e.dead:
                continue
            last = last_of(id(e.value), -1)
            if last > t:
                if hands == 1:
                    p = all_[last] - a0
                elif h == HOT:
                    p = short_[last] - s0
                else:
                    p = (all_[last] - a0 - (short_[last] - s0)) / (hands - 1)
                if (k + 2) + p > d:
                    s += 1.0 / d
        tail = qs.tail(h)
        after = qs.used + size - (tail.size if tail else 0)
        s += max(0.0, after - 0.5 * qs.capacity) / qs.capacity
        if facts is not None and facts[2] is not None and facts[2] != h:
            s += PREFER_PENALTY
        return s + 1e-3 * h

    def _feasible(self, qs: Queues, h: int, size: int, t: int, strict: bool) -> bool:
        tail = qs.tail(h)
        if self._live(tail, t, strict):
            return False
        return qs.used + size - (tail.size if tail else 0) <= qs.capacity

    @staticmethod
    def _flows_after(qs: Queues, h: int, lens: Sequence[int], used: int, size: int) -> bool:
        """After a push of ``size`` bytes into ``h`` (queue lengths ``lens`` and ``used``
        bytes before it), can the queues still release capacity? Only a full hand
        evicts, so some hand must be full, or fillable with 128-byte fillers while leaving
        room for one more tile of this size. Without that, dead tiles would hold the
        capacity with no way left to release it."""
        for g in range(qs.hands):
            n = min(qs.depth, lens[g] + (g == h))
            if n == qs.depth or used + (qs.depth - n) * FILLER_BYTES + size <= qs.capacity:
                return True
        return False

    def _place(
        self,
        qs: Queues,
        entry: Entry,
        t: int,
        strict: bool,
        need_flow: bool = True,
        push: bool = True,
    ) -> int | None:
        """Push ``entry`` into the lowest-scoring feasible hand (that keeps the queues
        flowing, when ``need_flow``; only choose it unless ``push``); None when there is
        none."""
        q_of = qs.q
        lens = list(map(len, q_of))
        best, best_s = None, 0.0
        size, depth, hands, capacity = entry.size, qs.depth, qs.hands, qs.capacity
        last_of, pinned = self.live.last.get, self.pinned
        need = t + 1 if strict else t
        # _score_of, inlined for every hand: what does not depend on the hand (the pushed
        # value's term for the hot hand and for the others, the prefix counts at ``t``)
        # asked once, each hand's sum built in the same order as _score_of's
        all_, short_ = self.defs_all, self.defs_short
        a0, s0 = all_[t + 1], short_[t + 1]
        own_hot = own_cold = None
        prefer = None
        v = entry.value
        if v is not None:
            # _value_facts, inlined
            prefer = self.prefer.get(v) if self.prefer else None  # (mostly none)
            last, short = last_of(id(v), -1), id(v) in self.short
            if last > t:
                if hands == 1:
                    p: float = all_[last] - a0
                    own_hot = own_cold = max(0.0, 1 + p - depth) / depth + 0.0
                else:
                    p = short_[last] - s0
                    own_hot = max(0.0, 1 + p - depth) / depth + (0.0 if short else 0.3)
                    p = (all_[last] - a0 - (short_[last] - s0)) / (hands - 1)
                    own_cold = max(0.0, 1 + p - depth) / depth + (0.3 if short else 0.0)
        half = 0.5 * capacity
        step, cold = 1.0 / depth, hands - 1
        base = qs.used
        # the prefix counts a hand's live entries are scored by: the hot hand's (or the
        # one hand's) in whole pushes, the others' shared by the cold hands
        counts, c0 = (all_, a0) if hands == 1 else (short_, s0)
        cold_c0 = a0 - s0
        for h in range(hands):
            if h == self.exclude:
                continue
            # _feasible, inlined: the tail a push evicts must be dead, the bytes must fit
            q = q_of[h]
            if len(q) >= depth:
                tail = q[depth - 1]
                if tail.value is not None and (
                    (not strict and id(tail) in pinned)
                    or (not tail.dead and last_of(id(tail.value), -1) >= need)
                ):
                    continue
                used = base + size - tail.size
            else:
                used = base + size
            if used > capacity:
                continue
            # _flows_after, inlined; with room for a whole queue of fillers besides, any
            # hand's check passes (the common case: tiles far below the capacity)
            if need_flow and used + depth * FILLER_BYTES + size > capacity:
                for g in range(hands):
                    n = lens[g] + (g == h)
                    if n >= depth or used + (depth - n) * FILLER_BYTES + size <= capacity:
                        break
                else:
                    continue
            own = own_hot if h == HOT else own_cold
            s = 0.0 if own is None else own  # (0.0 + own: own is not negative)
            # the live entries the push moves down, each by its last read (the loops of
            # _score_of's cases apart: the case is the hand's); an entry's last read is
            # asked once and kept on it (the liveness is complete before any placement)
            if hands == 1 or h == HOT:
                for k, e in enumerate(q):
                    last = e.last
                    if last is None:
                        v = e.value
                        last = e.last = -1 if v is None else last_of(id(v), -1)
                    if last > t and not e.dead and (k + 2) + (counts[last] - c0) > depth:
                        s += step
            else:
                for k, e in enumerate(q):
                    last = e.last
                    if last is None:
                        v = e.value
                        last = e.last = -1 if v is None else last_of(id(v), -1)
                    if (
                        last > t
                        and not e.dead
                        and (k + 2) + (all_[last] - short_[last] - cold_c0) / cold > depth
                    ):
                        s += step
            s += max(0.0, used - half) / capacity
            if prefer is not None and prefer != h:
                s += PREFER_PENALTY
            s += 1e-3 * h
            if best is None or s < best_s:
                best, best_s = h, s
        if best is not None and push:
            qs.push(best, entry)
        return best

    # ------------------------------------------------------------------ remedies

    def _steps_to_free(
        self, h: int, size: int, t: int, strict: bool, limit: int | None = None
    ) -> tuple[int, str] | None:
        """How many remedies make a flowing push of ``size`` into ``h`` feasible, and the
        first one (``refresh`` a live tail, or ``filler``); None also when that takes
        ``limit`` remedies or more.

        Remedies run before the bundle, so a tail read by the bundle is live for them;
        the final push may evict it when ``strict`` (it commits with the bundle).
        """
        qs = self.qs
        depth, capacity = qs.depth, qs.capacity
        lens = [len(x) for x in qs.q]
        used = qs.used
        first = "none"
        # the simulation rotates the same few entries: each one's bytes, liveness for the
        # final push and for the remedies, and whether it is immovable, asked once, when
        # it becomes the tail (nothing they depend on changes during the simulation);
        # None is a filler the simulation pushed (dead). A remedy pushes as ``h#1`` and
        # drops the tail of a full queue: a refresh moves the tail to the front.
        q: deque[Entry | None] = deque(qs.q[h], depth)
        known: dict[int, tuple[int, bool, bool, bool]] = {}
        refreshes = 0  # consecutive refreshes: ``depth`` of them restore the queue
        for steps in range(2 * depth + 2 if limit is None else min(limit, 2 * depth + 2)):
            n = len(q)
            if n < depth:
                tail = _NO_TAIL
            else:
                e = q[-1]
                if e is None:
                    tail = _FILLER_FACTS
                else:
                    tail = known.get(id(e))  # type: ignore[assignment]
                    if tail is None:
                        tail = known[id(e)] = self._facts(e, t, strict)
            tsize = tail[0]
            lens[h] = n
            after = used + size - tsize
            if (not tail[1] and after <= capacity
                    and self._flows_after(qs, h, lens, after, size)):  # fmt: skip
                return (steps, first)
            if tail[2]:
                if tail[3]:
                    return None  # TMOV copies numeric tiles only: a live predicate stays put
                step = "refresh"
                q.rotate(1)
                refreshes += 1
                if refreshes == depth + 1:
                    # back at a state already checked: the rest replays checks that failed
                    return None
            else:
                refreshes = 0
                if used + FILLER_BYTES - tsize > capacity:
                    return None
                step = "filler"
                used += FILLER_BYTES - tsize
                q.appendleft(None)
            if first == "none":
                first = step
        return None

    def _facts(self, e: Entry, t: int, strict: bool) -> tuple[int, bool, bool, bool]:
        """``(bytes, self._live(e, t, strict), self._live(e, t, False), _is_pred(e))``."""
        v = e.value
        if v is None:
            return (e.size, False, False, False)
        fixed = self._fixed.get(id(v))
        if fixed is None:
            fixed = self._fixed[id(v)] = _immovable(v)
        pinned = id(e) in self.pinned
        if e.dead:
            return (e.size, not strict and pinned, pinned, fixed)
        # the last read, kept on the entry as :meth:`_place` keeps it
        last = e.last
        if last is None:
            last = e.last = self.live.last.get(id(v), -1)
        before = pinned or last >= t  # read by the bundle or later
        return (e.size, last > t if strict else before, before, fixed)

    def _remedy(self, size: int, t: int, plan: BundlePlan, strict: bool) -> bool:
        """Insert one remedy toward a flowing push of ``size``; False when none helps."""
        qs = self.qs
        if size > qs.capacity:
            raise self._fail(f"a {size}-byte tile exceeds the {qs.capacity}-byte capacity")
        # the hand needing the fewest remedies, the first of them on a tie: a later hand's
        # simulation stops where it could only tie
        best: tuple[int, int, str] | None = None
        for h in range(qs.hands):
            r = self._steps_to_free(h, size, t, strict, None if best is None else best[0])
            if r is not None and r[1] != "none":
                best = (r[0], h, r[1])
        if best is None:
            return False
        _, h, step = best
        if step == "refresh":
            tail = qs.tail(h)
            assert tail is not None and tail.value is not None
            if self._should_spill(tail, h, t):
                self._spill(tail.value, plan)
            else:
                self._refresh(h, plan)
        else:
            self._filler(h, plan)
        return True

    def _evict_dead_tail(self, t: int, plan: BundlePlan) -> bool:
        """Push a filler into the hand where fillers release the most bytes: evicting
        its ``k`` oldest entries, all of them dead, frees their bytes minus ``k`` fillers'.
        False when no hand gains. The remedies aim at one push, so a bundle with two
        destinations (TSORT) can still lack the bytes for both while each single push is
        feasible: dead entries -- spilled values among them -- hold their capacity until
        pushes evict them (DECISIONS D2)."""
        qs = self.qs
        best, best_gain = None, 0
        for h in range(qs.hands):
            q = qs.q[h]
            if len(q) < qs.depth:
                continue
            freed = 0
            for k in range(1, qs.depth + 1):
                e = q[qs.depth - k]
                if self._live(e, t, False):
                    break
                freed += e.size
                gain = freed - k * FILLER_BYTES
                if gain > best_gain and qs.used + FILLER_BYTES - q[-1].size <= qs.capacity:
                    best, best_gain = h, gain
        if best is None:
            return False
        self._filler(best, plan)
        return True

    def _fillers_for_all(self, op: PtoOp, sizes: list[int], t: int, plan: BundlePlan) -> bool:
        """For a bundle with several destinations: the fewest fillers into one hand after
        which some assignment of hands fits them all -- fillers fill a short queue so
        that the destinations' own pushes evict the dead tiles behind them. Pushes them
        and returns True, or False when no such plan exists."""
        qs = self.qs
        for k in range(1, qs.depth + 1):
            for h in range(qs.hands):
                base = qs.copy()
                if not all(self._filler_fits(base, h, t) for _ in range(k)):
                    continue
                for combo in product(range(qs.hands), repeat=len(sizes)):
                    if self._assignment_score(op, sizes, list(combo), t, False, base) is None:
                        continue
                    for _ in range(k):
                        self._filler(h, plan)
                    return True
        return False

    def _filler_fits(self, qs: Queues, h: int, t: int) -> bool:
        """Push a filler into ``h`` of ``qs`` if it evicts nothing live and fits."""
        tail = qs.tail(h)
        if (
            self._live(tail, t, False)
            or qs.used + FILLER_BYTES - (tail.size if tail else 0) > qs.capacity
        ):
            return False
        qs.push(h, Entry(None, FILLER_BYTES))
        return True

    def _should_spill(self, e: Entry, h: int, t: int) -> bool:
        """Spill instead of refreshing when the value idles long enough to need more than
        two refreshes (a spill costs a store now and a reload at the next read)."""
        v = e.value
        if v is None or id(e) in self.pinned or _immovable(v):
            return False
        nu = self.live.next_use(v, t)
        if nu is None:
            return False
        if v in self.home:
            return True  # its GM copy is still valid: spilling again is free
        return (nu - t) * (self.rate[h] + 0.05) > 2 * self.qs.depth

    def _refresh(self, h: int, plan: BundlePlan) -> None:
        qs = self.qs
        tail = qs.tail(h)
        assert tail is not None
        src = TileRef.from_code(h * 16 + qs.depth - 1)
        copy = Entry(tail.value, tail.size)
        qs.push(h, copy)  # evicts the old copy (the TMOV source)
        if id(tail) in self.pinned:
            self.pinned.discard(id(tail))
            self.pinned.add(id(copy))
        plan.actions.append(Action("refresh", tail.value, h, src))
        self.counts["refresh"] += 1

    def _filler(self, h: int, plan: BundlePlan) -> None:
        self.qs.push(h, Entry(None, FILLER_BYTES))
        plan.actions.append(Action("filler", None, h))
        self.counts["filler"] += 1

    def _spill(self, v: SSAValue, plan: BundlePlan) -> None:
        e = self.qs.entry(v)
        ref = self.qs.ref(v)
        assert e is not None and ref is not None
        if v not in self.home:
            slot = self.take_slot(spill_bytes(v))
            self.home[v] = slot
            plan.actions.append(Action("spill", v, None, ref, slot))
            self.counts["spill"] += 1
        e.dead = True  # the entry stays until evicted (still readable if pinned)
        self._marked = True
        self.out.add(v)

    def take_slot(self, nbytes: int) -> int:
        """A free scratch slot of ``nbytes`` (64-byte aligned)."""
        slots = self._free_slots.get(nbytes)
        if slots:
            return slots.pop()
        slot = self.scratch_top
        self.scratch_top += (nbytes + 63) // 64 * 64
        return slot

    def _spill_farthest(self, t: int, plan: BundlePlan) -> None:
        """Spill the resident value read furthest in the future (Belady); a value the
        bundle itself reads qualifies only when it is read again later."""
        best, best_nu = None, -1
        for _, _, e in self.qs.entries():
            v = e.value
            if v is None or e.dead or _immovable(v):
                continue
            nu = self.live.next_use(v, t + 1 if id(e) in self.pinned else t)
            if nu is not None and nu > best_nu:
                best, best_nu = v, nu
        if best is None:
            preds = [
                e.value
                for _, _, e in self.qs.entries()
                if _is_pred(e) and self._live(e, t, False)
            ]
            why = (
                f"; {value_name(preds[0])} cannot be copied or spilled (TMOV and TSTORE "
                "take numeric row-major tiles: predicates and CUBE tiles stay put)"
                if preds
                else ""
            )
            raise self._fail(
                f"the tiles live when it runs (bundle {t} of the schedule) need more than the "
                f"{self.qs.capacity}-byte capacity and {self.qs.hands}x{self.qs.depth} queue "
                "entries of this machine" + why
            )
        self._spill(best, plan)

    def _reload(self, v: SSAValue, t: int, plan: BundlePlan) -> None:
        size = tile_bytes(v)
        for _ in range(8 * self.qs.hands * self.qs.depth + 8):
            entry = Entry(v, size)
            h = self._place(self.qs, entry, t, strict=False)
            if h is None and not self._remedy(size, t, plan, strict=False):
                h = self._place(self.qs, entry, t, strict=False, need_flow=False)
                # fillers in several hands may free what no single hand's remedies can
                if h is None and not self._evict_dead_tail(t, plan):
                    self._spill_farthest(t, plan)
            if h is not None:
                self.out.discard(v)
                self.pinned.add(id(entry))
                plan.actions.append(Action("reload", v, h, None, self.home[v]))
                self.counts["reload"] += 1
                return
        raise self._fail(f"cannot reload {value_name(v)} (bundle {t} of the schedule)")

    # ------------------------------------------------------------------ driver

    def run(self, ops: Sequence[PtoOp]) -> list[BundlePlan]:
        """Plan every bundle of ``ops`` (already in schedule order)."""
        return list(self.plans(ops))

    def plans(
        self,
        ops: Sequence[PtoOp],
        reads: Sequence[Sequence[SSAValue]] | None = None,
        results: Sequence[Sequence[SSAValue]] | None = None,
    ) -> Iterator[BundlePlan]:
        """:meth:`run`'s plans one by one (the caller need not keep them all).
        ``reads`` and ``results``, when given, are each op's ``srcs`` and ``dsts`` (read
        off the ops before, so that the liveness does not visit every op again)."""
        # every read (Liveness.add, inlined: a kernel has one per source)
        by_id, last = self.live.by_id, self.live.last
        for t, srcs in enumerate(reads if reads is not None else [op.srcs for op in ops]):
            for v in srcs:
                k = id(v)
                u = by_id.get(k)
                if u is None:
                    by_id[k] = [t]
                else:
                    u.append(t)
                last[k] = t
        self._classify(results if results is not None else [op.dsts for op in ops])
        for t, op in enumerate(ops):
            yield self._bundle(t, op)

    def _classify(self, dsts: Sequence[Sequence[SSAValue]]) -> None:
        """Short-lived results (read for the last time before ``depth - 1`` further results
        exist) and prefix counts of results, for :meth:`_score_of` (``dsts``: each
        bundle's results, in schedule order)."""
        n = len(dsts)
        defs_all = self.defs_all = [0] * (n + 2)
        born = []
        for t, ds in enumerate(dsts):
            defs_all[t + 1] = defs_all[t] + len(ds)
            if ds:
                born.extend((t, d) for d in ds)
        defs_all[n + 1] = defs_all[n]
        # by id (a value hashes through a Python method; the IR keeps the values alive)
        last = self.live.last
        near = self.qs.depth - 1
        self.short = short = {
            id(d)
            for t, d in born
            if defs_all[max(t + 1, last.get(id(d), -1))] - defs_all[t + 1] < near
        }
        defs_short = self.defs_short = [0] * (n + 2)
        for t, ds in enumerate(dsts):
            defs_short[t + 1] = defs_short[t] + (sum(id(d) in short for d in ds) if ds else 0)
        self.defs_short[n + 1] = self.defs_short[n]

    def _trial(
        self, op: PtoOp, dsts: Sequence[SSAValue], sizes: list[int], t: int, need_flow: bool
    ) -> list[int]:
        """Hands for the bundle's destinations ``dsts`` on a copy of the queues (as many
        as fit): each to its best hand in turn, and for several destinations, when that
        fails, the cheapest assignment that fits (the second push may need the first to
        go where it evicts less, or where the second then evicts the bundle's own
        source). One destination is placed on the queues themselves, without the push."""
        one = len(sizes) == 1
        trial = self.qs if one else self.qs.copy()
        hands = []
        self.exclude = _accumulator_hand(op, self.qs)
        for d, size in zip(dsts, sizes, strict=True):
            h = self._place(
                trial, Entry(d, size), t, strict=True, need_flow=need_flow, push=not one
            )
            self.exclude = None
            if h is None:
                break
            hands.append(h)
        if len(hands) == len(sizes) or len(sizes) == 1:
            return hands
        best, best_s = hands, 0.0
        for combo in product(range(self.qs.hands), repeat=len(sizes)):
            s = self._assignment_score(op, sizes, list(combo), t, need_flow)
            if s is not None and (len(best) < len(sizes) or s < best_s):
                best, best_s = list(combo), s
        return best

    def _assignment_score(
        self,
        op: PtoOp,
        sizes: list[int],
        combo: list[int],
        t: int,
        need_flow: bool,
        base: Queues | None = None,
    ) -> float | None:
        """The summed score of pushing the destinations into ``combo``'s hands in order
        (on ``base``, default the current queues), or None when one push is not feasible."""
        qs = (base or self.qs).copy()
        total = 0.0
        for d, size, h in zip(op.dsts, sizes, combo, strict=True):
            if not self._feasible(qs, h, size, t, strict=True):
                return None
            tail = qs.tail(h)
            used = qs.used + size - (tail.size if tail else 0)
            lens = [len(q) for q in qs.q]
            if need_flow and not self._flows_after(qs, h, lens, used, size):
                return None
            total += self._score(qs, h, d, size, t)
            qs.push(h, Entry(d, size))
        return total

    def _fail(self, rule: str) -> CompileError:
        """The error for ``rule``, at the kernel line of the bundle being planned."""
        if self.op is None:
            return CompileError(rule, hint=CAPACITY_HINT)
        return fail(self.op, rule, CAPACITY_HINT)

    def _bundle(self, t: int, op: PtoOp) -> BundlePlan:
        self.op = op
        plan = BundlePlan([], [], [])  # (without the default factories)
        self.pinned = set()
        # the operands, read once (each read slices the op's operand tuple)
        srcs, dsts = tuple(op.srcs), tuple(op.dsts)
        # each source once, in order (by id: a value hashes through a Python method)
        distinct = {id(v): v for v in srcs}.values() if len(srcs) > 1 else srcs
        out = self.out
        # where each source was found: its reference when nothing moves the queues
        # before the bundle (no inserted bundle, no spill marking an entry dead)
        found: list[tuple[int, int] | None] = []
        self._marked = False
        for v in distinct:
            if out and v in out:
                self._reload(v, t, plan)
            else:
                hk = self.qs.find(v)
                found.append(hk)
                e = None if hk is None else self.qs.q[hk[0]][hk[1]]
                if e is None and _immovable(v):
                    raise fail(
                        op,
                        f"{value_name(v)} left its queue before this bundle reads it: "
                        "predicates and CUBE tiles can be neither copied nor spilled, and the "
                        "bundles between its producer and this reader push it out",
                        "read it closer to where it is computed (in a loop: compute fewer "
                        "tiles in the body, or make the CUBE results smaller), or compile "
                        "for a machine with deeper queues",
                    )
                if e is None and isinstance(v, BlockArgument):
                    raise fail(
                        op,
                        f"the allocation could not keep {value_name(v)}, a tile the loop "
                        "carries, resident or spilled from the loop's entry to this read",
                        "carry fewer or smaller tiles through the loop (for example, loop "
                        "over blocks of the result and carry one block's accumulator)",
                    )
                assert e is not None, f"{value_name(v)} is not resident at bundle {t}"
                self.pinned.add(id(e))
        sizes = [tile_bytes(d) for d in dsts]
        hands: list[int] = []
        for _ in range(8 * self.qs.hands * self.qs.depth + 8):
            hands = self._trial(op, dsts, sizes, t, need_flow=True)
            if len(hands) == len(sizes):
                break
            if self._remedy(sum(sizes[len(hands) :]), t, plan, strict=True):
                continue
            hands = self._trial(op, dsts, sizes, t, need_flow=False)
            if len(hands) == len(sizes):
                break
            if self._evict_dead_tail(t, plan):
                continue
            if len(sizes) > 1 and self._fillers_for_all(op, sizes, t, plan):
                continue
            self._spill_farthest(t, plan)
        else:
            raise fail(
                op, f"allocation found no room for the results at bundle {t}", CAPACITY_HINT
            )
        if not plan.actions and not self._marked and len(srcs) == len(found):
            # (every source distinct and found: the positions found are still theirs)
            plan.refs.extend([REFS[h][k] for h, k in found])  # type: ignore[misc]
        else:
            for v in srcs:
                ref = self.qs.ref(v)
                assert ref is not None, f"{value_name(v)} is not resident at bundle {t}"
                plan.refs.append(ref)
        for d, size, h in zip(dsts, sizes, hands, strict=True):
            self.qs.push(h, Entry(d, size))
        plan.hands = hands
        self.pinned = set()
        home, last = self.home, self.live.last
        for v in distinct if home else ():  # in order: the free slots' order is the program's
            if last.get(id(v), -1) == t and v in home and home[v] not in self.reserved:
                self._free_slots.setdefault(spill_bytes(v), []).append(home.pop(v))
        # the hands this bundle and its inserted bundles push into, for the push rates
        # (brought up to date only when read: most kernels never need them)
        self._pushes.append(
            (*[a.hand for a in plan.actions if a.hand is not None], *hands)
            if plan.actions
            else tuple(hands)
        )
        return plan
