"""Tile allocation across run-time loops (DECISIONS D12).

Relative tile names are resolved at run time against the queue state, so every path into a
loop's body must arrive with the same queue state: the state ``E`` at the loop entry and
the state the body leaves at its back edge are equal, entry by entry (bytes, and the value
of every entry a later bundle reads; a carried tile's entry holds its current value).

The kernel is flattened into a timeline of events: its bundles in schedule order, and per
loop an ``enter`` event before its body and a ``back`` event after it. ``back`` reads
every *state value* of the loop -- the values defined before the loop that its body or
the code after it reads, and the carried tiles' new values -- so the allocator keeps them
resident through the body. ``E`` is found by simulation: the body is allocated from the
entry state again and again until the state at its back edge is the state it started
from (a fixed point: each hand the body pushes into is then full, holding what the body's
last pushes into it hold); when the states cycle instead, fillers at the back edge close
the cycle (:func:`_fixups`). The *construction* before the loop then rebuilds each hand the
body pushes into so that the queues hold ``E``: fillers of the right sizes for entries no
bundle reads, and the state values, copied from a hand the body does not touch or
reloaded from the spill area. That costs at most ``depth`` bundles per hand, once per
entry into the loop; an iteration itself costs only what the body's own allocation needs.

When the carried tiles do not fit beside the body's own tiles, the largest of them live in
the spill area across the back edge instead (one more at a time until the loop allocates):
each has a slot of its own for the whole loop, written with the initial value before the
loop (or the initial value's own slot, when that value is spilled and dead after the
entry), read by the body's reloads and written with the new value at the back edge.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field

from xdsl.dialects import scf
from xdsl.ir import Operation, SSAValue

from ptoc.backend.program import TileRef
from ptoc.dialects.pto import PtoOp

from ..diagnostics import CompileError, fail, value_name
from .state import Entry
from .tiles import Action, BundlePlan, TileAllocator, _immovable, spill_bytes, tile_bytes

#: simulated iterations of a body before its entry state must have been found
MAX_ROUNDS = 40


@dataclass(eq=False)
class Loop:
    """One run-time loop of the kernel: its op and, once flattened, its state values."""

    op: scf.ForOp
    body: list[Item]
    #: the body's block arguments carried from iteration to iteration (tiles only)
    carried: list[SSAValue] = field(default_factory=list)
    #: the values the loop entry renames: init -> carried block argument
    inits: list[SSAValue] = field(default_factory=list)
    #: the carried values' new values at the back edge
    yields: list[SSAValue] = field(default_factory=list)
    #: every value resident through the body (read at the back edge)
    state: list[SSAValue] = field(default_factory=list)
    #: the state values that are not the carried tiles' new values
    through: list[SSAValue] = field(default_factory=list)
    #: carried tiles that live in the spill area across the back edge, and their slots:
    #: the body reloads the tile from there, and the back edge stores its new value there
    spilled: dict[SSAValue, int] = field(default_factory=dict)
    #: whether the body places the carried tiles' new values where their arguments sit
    #: at the entry (the allocation tries both)
    prefer: bool = True
    enter: int = -1
    back: int = -1
    #: the entry state the body starts from and returns to (set by the allocation)
    entry: list[list[Entry]] | None = None

    def _stored_only(self) -> set[SSAValue]:
        """New values of spilled carried tiles that the back edge needs nowhere else."""
        kept = set(self.through) | {
            y for a, y in zip(self.carried, self.yields, strict=True) if a not in self.spilled
        }
        return {self.yields[self.carried.index(a)] for a in self.spilled} - kept

    def keep(self) -> set[SSAValue]:
        """The values whose queue entries the entry state fixes."""
        return (set(self.state) | set(self.carried)) - set(self.spilled) - self._stored_only()

    def resident(self) -> list[SSAValue]:
        """The state values the back edge reads from the queues."""
        stored = self._stored_only()
        return [v for v in self.state if v not in stored]


Item = PtoOp | Loop


@dataclass(eq=False)
class Event:
    """A position of the timeline: a bundle, or a loop's entry or back edge."""

    kind: str  # "op", "enter", "back"
    op: PtoOp | None = None
    loop: Loop | None = None

    @property
    def srcs(self) -> Sequence[SSAValue]:
        if self.kind == "op":
            assert self.op is not None
            return list(self.op.srcs)
        assert self.loop is not None
        if self.kind == "back":
            return self.loop.state
        # the entry reads the carried tiles' initial values: they stay resident or
        # spilled until the construction before the body
        return self.loop.inits

    @property
    def dsts(self) -> Sequence[SSAValue]:
        if self.kind == "op":
            assert self.op is not None
            return list(self.op.dsts)
        return []


class _Pseudo:
    """A loop's entry or back edge as a bundle the allocator plans: it reads ``srcs``
    (by default the loop's state values; reloading a spilled one) and produces nothing."""

    def __init__(self, loop: Loop, srcs: Sequence[SSAValue] | None = None) -> None:
        self.srcs = list(loop.resident() if srcs is None else srcs)
        self.dsts: list[SSAValue] = []
        self.location = loop.op.location
        self.name = loop.op.name  # diagnostics name the loop
        self.MNEMONIC = None


def flatten(items: Sequence[Item], out: list[Event]) -> None:
    """Append the timeline of ``items`` to ``out`` (setting each loop's positions)."""
    for it in items:
        if isinstance(it, Loop):
            it.enter = len(out)
            out.append(Event("enter", loop=it))
            flatten(it.body, out)
            it.back = len(out)
            out.append(Event("back", loop=it))
        else:
            out.append(Event("op", op=it))


def _defined_in(v: SSAValue, loop: Loop, events: Sequence[Event]) -> bool:
    """Whether ``v`` is produced inside ``loop``'s body (or is one of its arguments)."""
    owner = v.owner
    op = owner if isinstance(owner, Operation) else owner.parent_op()
    while op is not None:
        if op is loop.op:
            return True
        op = op.parent_op()
    return False


def state_values(events: Sequence[Event], loops: Sequence[Loop]) -> None:
    """Each loop's state values: values defined before it and read in its body or after
    it (live through the loop), plus its carried values' new values."""
    reads: dict[SSAValue, list[int]] = {}
    made: dict[SSAValue, int] = {}  # where each value is produced (block arguments: never)
    for t, e in enumerate(events):
        if e.kind == "op":
            for v in e.srcs:
                reads.setdefault(v, []).append(t)
            for v in e.dsts:
                made[v] = t
        elif e.kind == "back":
            assert e.loop is not None
            for r in _tile_results(e.loop):
                made[r] = t
    for loop in sorted(loops, key=lambda lp: -lp.enter):  # inner loops first
        state: dict[SSAValue, None] = {}
        for v, ts in reads.items():
            if v in loop.carried or _defined_in(v, loop, events):
                continue
            if made.get(v, -1) < loop.enter and any(t > loop.enter for t in ts):
                state[v] = None
        loop.through = list(state)
        state.update(dict.fromkeys(loop.yields))
        loop.state = list(state)
        for v in loop.state:  # the back edge reads them (so enclosing loops see it too)
            reads.setdefault(v, []).append(loop.back)


@dataclass
class _Snapshot:
    q: list[list[Entry]]
    used: int
    peak: int
    rate: list[float]
    home: dict[SSAValue, int]
    out: set[SSAValue]
    scratch_top: int
    free: dict[int, list[int]]
    counts: dict[str, int]
    reserved: set[int]


def _copy_queues(q: list[list[Entry]]) -> list[list[Entry]]:
    return [[Entry(e.value, e.size, e.dead) for e in h] for h in q]


def snapshot(a: TileAllocator) -> _Snapshot:
    return _Snapshot(
        _copy_queues(a.qs.q),
        a.qs.used,
        a.qs.peak,
        list(a.rate),
        dict(a.home),
        set(a.out),
        a.scratch_top,
        {k: list(v) for k, v in a._free_slots.items()},
        dict(a.counts),
        set(a.reserved),
    )


def restore(a: TileAllocator, s: _Snapshot) -> None:
    a.qs.q = _copy_queues(s.q)
    a.qs.used, a.qs.peak = s.used, s.peak
    a.rate = list(s.rate)
    a.home, a.out = dict(s.home), set(s.out)
    a.scratch_top = s.scratch_top
    a._free_slots = {k: list(v) for k, v in s.free.items()}
    a.counts = dict(s.counts)
    a.reserved = set(s.reserved)


def shape(q: list[list[Entry]], keep: set[SSAValue]) -> tuple[tuple[tuple[int, int], ...], ...]:
    """The queues as (bytes, value id or -1) per entry; only ``keep`` values count."""
    return tuple(
        tuple((e.size, id(e.value) if e.value in keep and not e.dead else -1) for e in h)
        for h in q
    )


def normalize(q: list[list[Entry]], keep: set[SSAValue]) -> list[list[Entry]]:
    """The queues with every entry that holds no ``keep`` value made a dead filler."""
    return [
        [e if e.value in keep and not e.dead else Entry(None, e.size) for e in h] for h in q
    ]


def relabel(q: list[list[Entry]], names: dict[SSAValue, SSAValue]) -> None:
    for h in q:
        for k, e in enumerate(h):
            if e.value in names:
                h[k] = Entry(names[e.value], e.size, e.dead)


class LoopAllocator:
    """Runs the tile allocator over a timeline with loops (see the module docstring)."""

    def __init__(self, alloc: TileAllocator, events: list[Event]) -> None:
        self.a = alloc
        self.events = events
        #: the plan of every event (the last simulation of it wins: the real run)
        self.plans: dict[int, BundlePlan] = {}

    def run(self) -> None:
        self._span(0, len(self.events))

    def _span(self, start: int, stop: int) -> None:
        t = start
        while t < stop:
            e = self.events[t]
            if e.kind == "op":
                assert e.op is not None
                self.plans[t] = self.a._bundle(t, e.op)
                t += 1
            else:
                assert e.kind == "enter" and e.loop is not None
                self._loop(e.loop)
                t = e.loop.back + 1

    # ------------------------------------------------------------------ one loop

    def _loop(self, loop: Loop) -> None:
        """Allocate ``loop``, its carried tiles' new values placed where their arguments
        sit at the entry (which usually lets the back edge return to the entry state by
        itself) or, when that costs more bundles per iteration, where the scores say."""
        a = self.a
        before = snapshot(a)
        best: tuple[int, _Snapshot, dict[int, BundlePlan]] | None = None
        first: CompileError | None = None
        for prefer in (True, False):
            restore(a, before)
            loop.prefer = prefer
            try:
                self._spilling(loop)
            except CompileError as err:
                first = first or err
                continue
            span = range(loop.enter, loop.back + 1)
            cost = sum(len(self.plans[t].actions) for t in span[1:] if t in self.plans)
            if best is None or cost < best[0]:
                best = (cost, snapshot(a), {t: self.plans[t] for t in span if t in self.plans})
            if cost == 0:
                break
        if best is None:
            assert first is not None
            raise first
        restore(a, best[1])
        self.plans.update(best[2])

    def _spilling(self, loop: Loop) -> None:
        """Allocate ``loop`` with its carried tiles resident; when that fails, with the
        largest ones living in the spill area across the back edge, one more at a time."""
        a = self.a
        before = snapshot(a)
        movable = sorted(
            (v for v in loop.carried if not _immovable(v)), key=lambda v: -tile_bytes(v)
        )
        first: CompileError | None = None
        for n in range(len(movable) + 1):
            restore(a, before)
            loop.spilled = {}
            self._spill_carried(loop, movable[:n])
            try:
                self._allocate(loop)
            except CompileError as err:
                first = first or err
                continue
            # after the loop a spilled carried tile's result is in its slot
            for arg, slot in loop.spilled.items():
                r = _tile_results(loop)[loop.carried.index(arg)]
                a.home[r], a.reserved = slot, a.reserved - {slot}
                a.out.add(r)
            return
        assert first is not None
        raise first

    def _spill_carried(self, loop: Loop, args: Sequence[SSAValue]) -> None:
        """Give each of ``args`` a slot of its own for the loop: its initial value's slot
        when that value is spilled already and dead after the loop's entry."""
        a = self.a
        for arg in args:
            init = loop.inits[loop.carried.index(arg)]
            if (
                init in a.out
                and init in a.home
                and a.live.next_use(init, loop.enter + 1) is None
                and a.home[init] not in a.reserved
            ):
                slot = a.home[init]
            else:
                slot = a.take_slot(spill_bytes(arg))
            loop.spilled[arg] = slot
            a.reserved.add(slot)

    def _allocate(self, loop: Loop) -> None:
        a = self.a
        keep = loop.keep()
        start = snapshot(a)
        # the entry renames each carried tile's initial value to the body's argument
        entry = self._entry_view(loop, keep)
        restore(a, start)
        #: (entry, end) of each simulated round, and the round each entry shape began
        rounds: list[tuple[list[list[Entry]], list[list[Entry]]]] = []
        began: dict[tuple, int] = {}  # type: ignore[type-arg]
        fixups: list[Fixup] = []
        for _ in range(MAX_ROUNDS):
            end = self._iteration(loop, entry, BundlePlan())
            restore(a, start)
            if shape(end, keep) == shape(entry, keep):
                break
            began[shape(entry, keep)] = len(rounds)
            rounds.append((entry, end))
            first = began.get(shape(end, keep))
            if first is not None:  # the states cycle: close it at the cheapest of them
                best = self._close(rounds[first:], keep)
                if best is not None:
                    entry, fixups = best
                    break
            entry = end
        else:
            raise fail(
                loop.op,
                "the allocation found no queue state that this loop's body returns to at its "
                f"back edge (after {MAX_ROUNDS} simulated iterations)",
                "simplify the loop body, or split it into two loops",
            )
        # the real allocation repeats the last simulation: construction, then the body
        plan = BundlePlan()
        end = self._iteration(loop, entry, plan, fixups)
        self.plans[loop.enter] = plan
        if shape(end, keep) != shape(entry, keep):
            raise fail(loop.op, "internal: the loop body does not return to its entry state")
        loop.entry = _copy_queues(entry)
        # after the loop: the carried values are the loop's results
        names = dict(zip(loop.carried, _tile_results(loop), strict=True))
        q = normalize(a.qs.q, keep)
        relabel(q, names)
        self._set_queues(q)

    def _close(
        self, cycle: Sequence[tuple[list[list[Entry]], list[list[Entry]]]], keep: set[SSAValue]
    ) -> tuple[list[list[Entry]], list[Fixup]] | None:
        """The entry of a cycle of states whose back-edge actions (:func:`_fixups`) are
        fewest, with those actions; None when no state of the cycle can be closed."""
        best = None
        for entry, end in cycle:
            found = _fixups(entry, end, keep, self.a.qs.depth)
            if found is not None and (best is None or len(found) < len(best[1])):
                best = (entry, found)
        return best

    def _iteration(
        self,
        loop: Loop,
        entry: list[list[Entry]],
        plan: BundlePlan,
        fixups: Sequence[Fixup] = (),
    ) -> list[list[Entry]]:
        """From the loop's entry: the construction of ``entry`` (into ``plan``) and one
        iteration of the body; the (normalized) state at the back edge."""
        a = self.a
        keep = loop.keep()
        self._rename_home(loop)
        self._store_inits(loop, plan)
        self._construct(loop, entry, plan)
        self._set_queues(entry)
        resident = {e.value for h in entry for e in h if e.value is not None}
        for v in loop.carried:
            if v in loop.spilled:
                a.home[v] = loop.spilled[v]
                a.out.add(v)
            elif v in resident or v not in a.home:
                a.out.discard(v)
                a.home.pop(v, None)
        for h in entry:
            for e in h:
                if e.value is not None:
                    a.out.discard(e.value)
        # each new value of a carried tile goes where its argument sits, if it can: then
        # the back edge tends to leave the entry state without fixups
        hand_of = {e.value: h for h, q in enumerate(entry) for e in q if e.value is not None}
        saved = dict(a.prefer)
        for arg, y in zip(loop.carried, loop.yields, strict=True):
            if arg in hand_of and loop.prefer:
                a.prefer[y] = hand_of[arg]
        try:
            self._body(loop, fixups)
        finally:
            a.prefer = saved
        return normalize(a.qs.q, keep)

    def _store_inits(self, loop: Loop, plan: BundlePlan) -> None:
        """Store the initial values of the spilled carried tiles into their slots (those
        not there already), reloading a spilled one first."""
        a = self.a
        todo = [
            (loop.inits[loop.carried.index(arg)], slot)
            for arg, slot in loop.spilled.items()
            if a.home.get(loop.inits[loop.carried.index(arg)]) != slot
        ]
        if not todo:
            return
        read = a._bundle(loop.enter, _Pseudo(loop, [v for v, _ in todo]))  # type: ignore[arg-type]
        plan.actions.extend(read.actions)
        for v, slot in todo:
            ref = a.qs.ref(v)
            assert ref is not None
            plan.actions.append(Action("spill", v, None, ref, slot))
            a.counts["spill"] += 1

    def _rename_home(self, loop: Loop) -> None:
        """In a trial from the entry, a carried tile whose initial value was spilled is
        reloaded from its initial value's copy."""
        for init, arg in zip(loop.inits, loop.carried, strict=True):
            if init in self.a.out and init in self.a.home:
                self.a.home[arg] = self.a.home[init]
                self.a.out.add(arg)

    def _entry_view(self, loop: Loop, keep: set[SSAValue]) -> list[list[Entry]]:
        q = _copy_queues(self.a.qs.q)
        relabel(q, dict(zip(loop.inits, loop.carried, strict=True)))
        return normalize(q, keep)

    def _set_queues(self, q: list[list[Entry]]) -> None:
        qs = self.a.qs
        qs.q = _copy_queues(q)
        qs.used = sum(e.size for h in q for e in h)
        qs.peak = max(qs.peak, qs.used)

    def _body(self, loop: Loop, fixups: Sequence[Fixup] = ()) -> None:
        a = self.a
        self._span(loop.enter + 1, loop.back)
        back = BundlePlan()
        # the spilled carried tiles' new values go to their slots, one at a time
        for arg, slot in loop.spilled.items():
            y = loop.yields[loop.carried.index(arg)]
            back.actions.extend(a._bundle(loop.back, _Pseudo(loop, [y])).actions)  # type: ignore[arg-type]
            ref, e = a.qs.ref(y), a.qs.entry(y)
            assert ref is not None and e is not None
            back.actions.append(Action("spill", y, None, ref, slot))
            a.counts["spill"] += 1
            if y in loop._stored_only():
                e.dead = True
        reads = a._bundle(loop.back, _Pseudo(loop))  # type: ignore[arg-type]
        back.actions.extend(reads.actions)
        back.refs = reads.refs
        self.plans[loop.back] = back
        # the carried arguments' entries hold the finished iteration's values: stale now
        stale = set(loop.carried)
        for h in self.a.qs.q:
            for k, e in enumerate(h):
                if e.value in stale:
                    h[k] = Entry(None, e.size)
        self._fixup(loop, fixups)
        relabel(self.a.qs.q, dict(zip(loop.yields, loop.carried, strict=True)))
        for y, arg in zip(loop.yields, loop.carried, strict=True):
            self.a.out.discard(y)
            self.a.home.pop(y, None)
            self.a.out.discard(arg)

    def _fixup(self, loop: Loop, fixups: Sequence[Fixup]) -> None:
        """The back edge's actions (before the carried values' renaming: a carried
        argument's new value is still its yield here)."""
        a, back = self.a, self.plans[loop.back]
        new = dict(zip(loop.carried, loop.yields, strict=True))
        for f in fixups:
            v = None if f.value is None else new.get(f.value, f.value)
            if f.kind == "filler":
                a.qs.push(f.hand, Entry(None, f.size))
                back.actions.append(Action("filler", None, f.hand, size=f.size))
            elif f.kind == "spill":
                assert v is not None
                a._spill(v, back)
                continue
            elif f.kind == "reload":
                assert v is not None
                a.qs.push(f.hand, Entry(v, f.size))
                back.actions.append(Action("reload", v, f.hand, None, a.home[v]))
            else:
                assert v is not None
                hk = a.qs.find(v)
                assert hk is not None, "the fixup search found the copy resident"
                old = a.qs.q[hk[0]][hk[1]]
                a.qs.q[hk[0]][hk[1]] = Entry(old.value, old.size, dead=True)
                a.qs.push(f.hand, Entry(v, f.size))
                ref = TileRef.from_code(hk[0] * 16 + hk[1])
                back.actions.append(Action("refresh", v, f.hand, ref))
            a.counts[f.kind] += 1
            if a.qs.used > a.qs.capacity:
                raise fail(
                    loop.op,
                    f"the copies and fillers that close this loop's back edge exceed the "
                    f"{a.qs.capacity}-byte capacity",
                    "use smaller tiles in the loop body",
                )

    # ------------------------------------------------------------------ construction

    def _construct(self, loop: Loop, entry: list[list[Entry]], plan: BundlePlan) -> None:
        """Actions before the loop that turn the current queues into ``entry``."""
        a, qs = self.a, self.a.qs
        current = _copy_queues(qs.q)
        names = dict(zip(loop.inits, loop.carried, strict=True))
        view = _copy_queues(current)
        relabel(view, names)
        keep = loop.keep()
        rebuild = [
            h
            for h in range(qs.hands)
            if shape(normalize(view, keep)[h : h + 1], keep) != shape(entry[h : h + 1], keep)
        ]
        back = {v: k for k, v in names.items()}
        wanted = dict.fromkeys(
            e.value for h in rebuild for e in entry[h] if e.value is not None
        )
        # state values whose only copies live in rebuilt hands go to the spill area first
        for v in wanted:
            src = back.get(v, v)
            if _immovable(src):
                raise fail(
                    loop.op,
                    f"{value_name(src)} cannot live across this loop: predicates and CUBE "
                    "tiles can be neither copied nor spilled",
                    "compute it inside the loop body",
                )
            hk = qs.find(src)
            if src in a.out and src in a.home:
                continue
            if hk is not None and hk[0] not in rebuild and not qs.q[hk[0]][hk[1]].dead:
                continue
            if hk is None:
                raise fail(
                    loop.op, f"internal: {value_name(src)} is neither resident nor spilled"
                )
            a._spill(src, plan)  # a value's spill slot stays valid: it never changes (SSA)
        for h in rebuild:
            for e in reversed(entry[h]):
                if e.value is None:
                    a.qs.push(h, Entry(None, e.size))
                    plan.actions.append(Action("filler", None, h, size=e.size))
                    a.counts["filler"] += 1
                    continue
                src = back.get(e.value, e.value)
                hk = qs.find(src)
                if hk is not None and hk[0] not in rebuild and not qs.q[hk[0]][hk[1]].dead:
                    ref = TileRef.from_code(hk[0] * 16 + hk[1])
                    qs.push(h, Entry(src, e.size))
                    plan.actions.append(Action("refresh", src, h, ref))
                    a.counts["refresh"] += 1
                else:
                    qs.push(h, Entry(src, e.size))
                    plan.actions.append(Action("reload", src, h, None, a.home[src]))
                    a.counts["reload"] += 1
                if qs.used > qs.capacity:
                    raise fail(
                        loop.op,
                        f"the queue state this loop's body needs at its entry does not fit "
                        f"the {qs.capacity}-byte capacity while it is set up",
                        "use smaller tiles in the loop body, or fewer tiles live across it",
                    )


def _fixups(
    entry: list[list[Entry]], end: list[list[Entry]], keep: set[SSAValue], depth: int
) -> list[Fixup] | None:
    """Pushes at the back edge that turn the state ``end`` into ``entry``: per differing
    hand the fewest pushes ``k`` such that the rest of ``entry``'s hand is what ``end``
    holds after ``k`` pushes; each pushed entry is a filler of the entry's bytes or, for a
    state value, a refresh copy of its resident copy (which goes dead). None when some
    hand has no such pushes (a value to copy is gone, or cannot be copied)."""
    by_id = {id(v): v for v in keep}
    want_all = shape(entry, keep)
    have = shape(end, keep)
    differ = [h for h in range(len(want_all)) if want_all[h] != have[h]]
    best: list[Fixup] | None = None
    # a hand rebuilt first may evict a copy another hand needs: try every order
    for order in itertools.permutations(differ):
        q = [list(h) for h in have]
        out: list[Fixup] = []
        for h in order:
            for k in range(1, len(want_all[h]) + 1):
                trial = [list(x) for x in q]
                pushes = _pushes(trial, h, want_all[h][:k], depth, by_id)
                if pushes is not None and tuple(trial[h]) == want_all[h]:
                    q = trial
                    out.extend(pushes)
                    break
            else:
                break
        else:
            if tuple(map(tuple, q)) == want_all and (best is None or len(out) < len(best)):
                best = out
    return best if best is not None else _rebuild(want_all, have, differ, depth, by_id)


def _rebuild(
    want: tuple[tuple[tuple[int, int], ...], ...],
    have: tuple[tuple[tuple[int, int], ...], ...],
    differ: Sequence[int],
    depth: int,
    by_id: dict[int, SSAValue],
) -> list[Fixup] | None:
    """The back edge rebuilds every differing hand whole (``depth`` pushes each, as the
    construction before the loop does): fillers, copies of values resident in a hand it
    keeps, and values whose copies all sit in rebuilt hands spilled first and reloaded.
    None when a hand is not full (pushes cannot shorten it) or a value cannot move."""
    if any(len(want[h]) != depth for h in differ):
        return None
    kept = [h for h in range(len(want)) if h not in differ]
    spills: list[Fixup] = []
    pushes: list[Fixup] = []
    for h in differ:
        for size, key in reversed(want[h]):
            if key == -1:
                pushes.append(Fixup("filler", h, size))
                continue
            value = by_id[key]
            if _immovable(value) or not any(e[1] == key for row in have for e in row):
                return None
            if any(e[1] == key for k in kept for e in have[k]):
                pushes.append(Fixup("refresh", h, size, value))
            else:
                spills.append(Fixup("spill", h, size, value))
                pushes.append(Fixup("reload", h, size, value))
    return spills + pushes


@dataclass(frozen=True)
class Fixup:
    """One action at a loop's back edge: ``filler`` (a dead push of ``size`` bytes into
    ``hand``), ``refresh`` (a TMOV copy of ``value``'s resident copy into ``hand``, the
    old copy going dead), ``spill`` (``value`` to its scratch slot) or ``reload`` (from
    there into ``hand``)."""

    kind: str
    hand: int
    size: int
    value: SSAValue | None = None


def _pushes(
    q: list[list[tuple[int, int]]],
    h: int,
    head: Sequence[tuple[int, int]],
    depth: int,
    by_id: dict[int, SSAValue],
) -> list[Fixup] | None:
    """Push ``head`` (oldest last) into hand ``h`` of the shape ``q`` in place; the
    pushes, or None when a value it copies is not resident or cannot be copied."""
    pushes = []
    for size, key in reversed(head):
        value = None
        if key != -1:
            value = by_id[key]
            at = next(
                ((hh, k) for hh, row in enumerate(q) for k, e in enumerate(row) if e[1] == key),
                None,
            )
            if at is None or _immovable(value):
                return None
            q[at[0]][at[1]] = (q[at[0]][at[1]][0], -1)  # the old copy goes dead
        q[h].insert(0, (size, key))
        del q[h][depth:]
        pushes.append(Fixup("filler" if value is None else "refresh", h, size, value))
    return pushes


def _tile_results(loop: Loop) -> list[SSAValue]:
    """The loop's results of its carried tiles (in carried order)."""
    if not loop.carried:
        return []
    body = loop.op.body.block
    out = []
    for arg in loop.carried:
        k = list(body.args).index(arg) - 1  # type: ignore[arg-type]
        out.append(loop.op.results[k])
    return out


__all__ = ["Event", "Loop", "LoopAllocator", "flatten", "state_values"]
