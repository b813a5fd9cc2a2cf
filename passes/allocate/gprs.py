"""GPR assignment for the scalars bundles read through B.IOR.

A scalar is a :class:`Scalar` key: a 64-bit constant, or a GM address ``base + offset``
where ``base`` is an ABI binding (a tensor parameter, optionally stepped per PE, or the
spill scratch area). The kernel ABI passes each binding's per-PE base in ``a0..a7``
(DECISIONS D7). Constant 0 is the ``zero`` register and an address at offset 0 is its
binding register; everything else is materialized into a free GPR with scalar
instructions. When all distinct scalars fit the free GPRs they are materialized once,
up front; otherwise registers are reused by furthest next use (Belady) and each bundle
that misses a scalar gets a scalar block just before it.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, field
from heapq import heapify, heappop, heappush
from typing import NamedTuple

from ..diagnostics import CompileError

#: ABI argument registers, in binding order
ABI_REGS = ("a0", "a1", "a2", "a3", "a4", "a5", "a6", "a7")
#: with more bindings than ABI registers, the last one holds the address of the argument
#: table: 8-byte slots in GM with the bindings from the eighth on (loaded at the start)
TABLE_REG = ABI_REGS[-1]
#: what to do when a kernel needs more base addresses than ``ABI_REGS``
ABI_HINT = (
    "the ABI passes one base address per tensor (one per distinct pt.pe() step of its "
    "windows, plus one for a spill area) and one register per scalar argument, from the "
    "eighth on through an argument table loaded into free registers: use fewer tensors, "
    "or the same PE step for every window of a tensor"
)
#: registers the allocator may overwrite (never zero or sp, nor x2/x3: the grid ABI's
#: core index and core count, ``ptoc.backend.isa.fields.GRID_GPRS``)
SCRATCH_REGS = (
    "s0",
    "s1",
    "s2",
    "s3",
    "s4",
    "s5",
    "s6",
    "s7",
    "s8",
    "x0",
    "x1",
    "ra",
)


class Binding(NamedTuple):
    """An ABI base: tensor parameter ``tensor`` (index; -1 = scratch) stepped ``pe_step``
    bytes per PE; with ``scalar``, the value of run-time scalar parameter ``tensor``.

    (A named tuple, like :class:`Scalar`: the allocator, the emitter and the validator
    hash and compare these keys tens of thousands of times per kernel, and a tuple does
    both in C.)"""

    tensor: int
    pe_step: int
    scalar: bool = False


class Scalar(NamedTuple):
    """A value a bundle reads from a GPR: ``base + value + sum(coeff * var)`` (``base``
    None: no address base; ``terms``: run-time integers -- loop indices and scalar
    parameters, by name -- with their coefficients)."""

    value: int
    base: Binding | None = None
    terms: tuple[tuple[str, int], ...] = ()


@dataclass
class GprPlan:
    """Result: ABI registers, the register of every scalar use, materializations."""

    abi: dict[Binding, str]
    #: per bundle: register name per scalar operand (in operand order)
    regs: list[list[str]]
    #: per bundle: (register, scalar) writes to perform just before it
    writes: list[list[tuple[str, Scalar]]] = field(default_factory=list)
    #: registers kept for run-time integers (``reserve``)
    reserved: list[str] = field(default_factory=list)
    #: the bindings passed in the argument table (:data:`TABLE_REG`), in slot order,
    #: with the register each is loaded into
    table: list[tuple[Binding, str]] = field(default_factory=list)
    #: per bundle: (register, scalar) writes right before it, for the scalars ``hoist``
    #: found no register of their own for (:func:`_hoist_most_used`)
    per_use: list[list[tuple[str, Scalar]]] = field(default_factory=list)

    @property
    def blocks(self) -> int:
        """Scalar blocks the plan needs (one per bundle that has writes)."""
        return sum(1 for w in self.writes if w)


def plan_gprs(
    needs: Sequence[Sequence[Scalar]],
    extra: Sequence[Binding] = (),
    reserve: int = 0,
    hoist: bool = False,
) -> GprPlan:
    """Assign registers for ``needs[i]``, the scalars bundle ``i`` reads in slot order.

    ``extra``: ABI bindings no bundle reads directly (run-time scalar parameters);
    ``reserve``: registers kept out of the pool (for run-time integers, taken from its
    end: :attr:`GprPlan.reserved`); ``hoist``: every scalar gets a register of its own,
    written before the first bundle (a kernel with run-time loops, whose bundles run
    again and again), or a CompileError when they do not fit."""
    # tensor parameters in argument order, the scratch area (tensor -1) last
    bindings = sorted(
        {s.base for ss in needs for s in ss if s.base is not None} | set(extra),
        key=lambda b: (b.tensor < 0, b.tensor, b.pe_step),
    )
    abi = dict(zip(bindings, ABI_REGS, strict=False))
    pool = [*SCRATCH_REGS, *ABI_REGS[len(bindings) :]]
    table: list[tuple[Binding, str]] = []
    if len(bindings) > len(ABI_REGS):
        # a0..a6 direct, a7 the table; the rest is loaded into registers of their own
        direct = len(ABI_REGS) - 1
        abi = dict(zip(bindings[:direct], ABI_REGS, strict=False))
        rest = bindings[direct:]
        if len(rest) > len(pool) - reserve:
            extra = rest[len(pool) - reserve].tensor
            raise CompileError(
                f"the kernel needs {len(bindings)} base addresses and scalar arguments; "
                f"{direct} fit the ABI registers and {len(pool) - reserve} more the "
                "registers the argument table loads them into",
                hint=ABI_HINT,
                argument=extra if extra >= 0 else None,
            )
        for b in rest:
            reg = pool.pop(0)
            abi[b] = reg
            table.append((b, reg))
    reserved = pool[len(pool) - reserve :] if reserve else []
    pool = pool[: len(pool) - reserve]

    params = {f"param{b.tensor}": reg for b, reg in abi.items() if b.scalar}

    def fixed(s: Scalar) -> str | None:
        if s.base is None and s.value == 0 and len(s.terms) == 1 and s.terms[0][1] == 1:
            return params.get(s.terms[0][0])  # a scalar parameter: its ABI register
        if s.base is None and s.value == 0:
            return "zero"
        if s.base is not None and s.value == 0:
            return abi[s.base]
        return None

    uses: dict[Scalar, list[int]] = {}
    for i, ss in enumerate(needs):
        for s in ss:
            if fixed(s) is None:
                uses.setdefault(s, []).append(i)
    plan = GprPlan(abi, [], [[] for _ in needs], reserved=reserved, table=table)
    if hoist and len(uses) > len(pool):
        _hoist_most_used(needs, uses, pool, fixed, plan)
        return plan
    if len(uses) <= len(pool):
        reg_of = dict(zip(uses, pool, strict=False))
        if needs:
            plan.writes[0] = [(reg_of[s], s) for s in uses]
        plan.regs = [[fixed(s) or reg_of[s] for s in ss] for ss in needs]
        return plan
    _belady(needs, uses, pool, fixed, plan)
    return plan


#: registers a bundle's non-hoisted scalars are written into right before it (a bundle
#: reads at most three)
PER_USE = 3


def _hoist_most_used(needs, uses, pool, fixed, plan: GprPlan) -> None:  # type: ignore[no-untyped-def]
    """Hoisting when not every scalar fits: the most-read ones get registers of their own,
    written before the first bundle; every other one is written right before each bundle
    that reads it, into one of :data:`PER_USE` registers -- no register is assumed to
    keep such a value from one bundle to the next, which holds on every path, loops
    included."""
    if len(pool) <= PER_USE:
        raise CompileError(
            f"the kernel needs {len(uses)} distinct constants and addresses and has "
            f"{len(pool)} free registers",
            hint="use fewer tensors or fewer distinct window strides",
        )
    keep = len(pool) - PER_USE
    plan.per_use = [[] for _ in needs]
    ranked = sorted(uses, key=lambda s: (-len(uses[s]), uses[s][0]))
    reg_of = dict(zip(ranked[:keep], pool, strict=False))
    spare = pool[keep:]
    if needs:
        plan.writes[0] = [(reg_of[s], s) for s in ranked[:keep]]
    for i, ss in enumerate(needs):
        regs: list[str] = []
        free = list(spare)
        given: dict[Scalar, str] = {}
        for s in ss:
            r = fixed(s) or reg_of.get(s) or given.get(s)
            if r is None:
                r = given[s] = free.pop(0)
                plan.per_use[i].append((r, s))
            regs.append(r)
        plan.regs.append(regs)


def _belady(needs, uses, pool, fixed, plan: GprPlan) -> None:  # type: ignore[no-untyped-def]
    """Furthest-next-use register reuse. A bundle that misses gets one scalar block, which
    also prefetches upcoming scalars into registers whose holders are needed later than
    them (that never adds a miss and saves later blocks)."""
    # the scalars as small ints, in first-read order: the registers' bookkeeping hashes
    # them at every step, and a Scalar hashes its nested tuples every time
    scalars = list(uses)
    ids = {s: k for k, s in enumerate(scalars)}
    reads = [uses[s] for s in scalars]  # by id: the bundles reading it
    holder: dict[str, int | None] = dict.fromkeys(pool)
    where: dict[int, str] = {}
    order = [ids[s] for ss in needs for s in ss if fixed(s) is None]  # reads in program order
    pos = 0  # index into ``order`` of the first read at or after the current bundle

    def next_use(k: int, i: int) -> int:
        u = reads[k]
        j = bisect_right(u, i - 1)
        return u[j] if j < len(u) else 1 << 60

    def write(i: int, k: int, reg: str) -> None:
        old = holder[reg]
        if old is not None:
            del where[old]
        holder[reg] = k
        where[k] = reg
        plan.writes[i].append((reg, scalars[k]))

    regs = plan.regs
    for i, ss in enumerate(needs):
        if not ss:  # (most bundles read no scalar)
            regs.append([])
            continue
        # per slot: (its fixed register, None) or (None, the scalar's id)
        row = [(r, None) if (r := fixed(s)) is not None else (None, ids[s]) for s in ss]
        wanted = {k for r, k in row if r is None}
        for r, k in row:
            if r is None and k not in where:
                write(i, k, _victim(holder, wanted, reads, i))
        if plan.writes[i]:
            _prefetch(
                i, order, pos + len(wanted), holder, where, wanted, next_use, write, len(pool)
            )
        pos += sum(1 for r, _ in row if r is None)
        plan.regs.append([r or where[k] for r, k in row])


def _prefetch(i, order, start, holder, where, wanted, next_use, write, limit) -> None:  # type: ignore[no-untyped-def]
    """Write upcoming scalars (``order[start:]``, a window of ``4 * limit`` reads) into
    registers after bundle ``i``'s: each into the first free register, else into the
    register whose scalar is next read the latest (the first in register order among
    equals) when that is later than the upcoming scalar's own next read; the first
    scalar for which there is none ends the prefetch. Registers holding one of the
    bundle's ``wanted`` scalars are never taken."""
    seen: set[int] = set()
    free = [reg for reg, h in holder.items() if h is None]
    # the other registers by their scalar's next use after bundle i, latest first (a
    # max-heap: only the register a write takes changes its key, so each register is
    # on it once)
    taken = [
        (-next_use(h, i + 1), k, reg)
        for k, (reg, h) in enumerate(holder.items())
        if h is not None and h not in wanted
    ]
    heapify(taken)
    position = {reg: k for k, reg in enumerate(holder)}
    n_free = 0
    for s in order[start : start + 4 * limit]:
        if s in where or s in seen:
            continue
        seen.add(s)
        ns = next_use(s, i + 1)
        if n_free < len(free):
            best = free[n_free]
            n_free += 1
        elif taken and -taken[0][0] > ns:
            best = heappop(taken)[2]
        else:
            break
        write(i, s, best)
        heappush(taken, (-ns, position[best], best))


def _victim(holder, wanted, uses, i) -> str:  # type: ignore[no-untyped-def]
    """A free register, else the one whose scalar is read furthest in the future
    (``uses[s]``: the bundles reading scalar ``s``)."""
    best, best_next = None, -1
    for reg, s in holder.items():
        if s is None:
            return reg
        if s in wanted:
            continue
        u = uses[s]
        j = bisect_right(u, i)
        nxt = u[j] if j < len(u) else 1 << 60
        if nxt > best_next:
            best, best_next = reg, nxt
    assert best is not None, "a bundle reads at most three scalars"
    return best
