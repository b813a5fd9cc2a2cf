"""The allocation validator: replay a Program symbolically and prove that every source
reference names the value the IR meant.

It shares no code with the allocator. It walks the emitted commands with its own model of
the machine state that allocation is about (DECISIONS D1-D3):

* hand queues of *value ids* with the SizeCode bytes of every entry, pushed in binding
  order at commit, evicting past ``depth``, and the per-PE byte total after eviction;
* the GPRs as symbolic values (a constant, or an ABI base plus a constant), updated by
  the scalar instructions;
* the contents of the spill scratch area (value id per byte range).

Every command must first meet every constraint of its catalog form
(:func:`~ptoc.backend.encoding.field_violation`). For every tile bundle it checks, against
the bundle's :class:`~ptoc.passes.emit.Intent`:
each ``T#k``-style source resolves to a non-empty entry within depth holding the value id
the IR reads; each B.IOR slot holds the intended constant or address; a reload brings
back the value that was spilled to that scratch range; and no commit exceeds the capacity.
Refresh copies and reloads carry their source's identity, so a wrong copy shows up at the
next bundle that reads the value.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ptoc.backend.encoding import field_violation
from ptoc.backend.isa.catalog import SCALAR_AGU
from ptoc.backend.isa.fields import CORE_COUNT_GPR, CORE_INDEX_GPR, GPR_NAMES, size_bytes
from ptoc.backend.program import (
    Block,
    BlockGraph,
    Ior,
    Iot,
    Scalar,
    ScalarStart,
    TileRef,
    TileStart,
)
from ptoc.backend.target import MachineConfig

from .allocate.gprs import TABLE_REG, Binding
from .allocate.gprs import Scalar as Sym
from .emit import Emitted, Intent, IntentTable
from .emit.intents import Row
from .emit.program import CheckIntent, IfIntent, LoadIntent, LoopIntent

MASK64 = (1 << 64) - 1
#: the symbolic content of the argument table's register
TABLE = Sym(0, Binding(-2, 0))
#: resolution of the scratch-contents map (spill slots are 64-byte aligned)
GRANULE = 64


class ValidationError(Exception):
    """The program does not do what the IR means (bundle index and reason)."""


@dataclass
class Report:
    """What the replay saw."""

    bundles: int = 0
    scalar_blocks: int = 0
    peak_bytes: int = 0
    kinds: dict[str, int] = field(default_factory=dict)

    @property
    def overhead(self) -> int:
        """Bundles that are not kernel operations (refresh, spill, reload, filler, scalar)."""
        return self.scalar_blocks + sum(n for k, n in self.kinds.items() if k != "op")


class _Replay:
    def __init__(self, em: Emitted, hands: int, depth: int, capacity: int) -> None:
        self.em, self.hands, self.depth, self.capacity = em, hands, depth, capacity
        self.queues: list[list[tuple[int, int]]] = [[] for _ in range(hands)]
        self.used = 0
        self.gpr: dict[int, Sym | None] = dict.fromkeys(range(len(GPR_NAMES)))
        self.gpr[0] = Sym(0)
        for b, reg in em.abi.items():
            # a scalar parameter's register holds the parameter (a polynomial variable)
            value = Sym(0, None, ((f"param{b.tensor}", 1),)) if b.scalar else Sym(0, b)
            self.gpr[GPR_NAMES.index(reg)] = value
        # the grid ABI (D13): the core's index and the core count
        self.gpr[GPR_NAMES.index(CORE_INDEX_GPR)] = Sym(0, None, (("core", 1),))
        self.gpr[GPR_NAMES.index(CORE_COUNT_GPR)] = Sym(0, None, (("cores", 1),))
        #: the argument table's bindings by byte offset (its register holds TABLE)
        self.table = {8 * k: b for k, b in enumerate(em.table)}
        for b in em.table:
            self.gpr[GPR_NAMES.index(em.abi[b])] = None  # until loaded from the table
        if em.table:
            self.gpr[GPR_NAMES.index(TABLE_REG)] = TABLE
        #: scratch contents per 64-byte granule: (offset, bytes, value id) of the spill
        #: that last wrote it
        self.scratch: dict[int, tuple[int, int, int]] = {}
        self.report = Report()
        #: :func:`_step` of every scalar instruction met, by ``id``
        self.steps: dict[int, tuple[str, int, Any, Any]] = {}
        #: the intents' rows (the emitter's table reads them without an :class:`Intent`
        #: object each), and the position of the row after the last one read
        intents = em.intents
        self.rows = intents if type(intents) is IntentTable else _IntentRows(intents)
        self.next_row = 0

    def fail(self, i: int, why: str) -> ValidationError:
        return ValidationError(f"bundle at command {i}: {why}")

    def state(self) -> _State:
        return _State([list(q) for q in self.queues], self.used, dict(self.gpr),
                      dict(self.scratch))  # fmt: skip

    def set_state(self, s: _State) -> None:
        self.queues = [list(q) for q in s.queues]
        self.used = s.used
        self.gpr = dict(s.gpr)
        self.scratch = dict(s.scratch)

    # ------------------------------------------------------------------ scalar

    def scalar(self, c: Scalar) -> None:
        # what the instruction does, decoded once per command object (the emitter shares
        # equal commands; the program keeps them alive, so their ids stay theirs)
        step = self.steps.get(id(c))
        if step is None:
            step = self.steps[id(c)] = _step(c)
        how, rd, a, b = step
        gpr = self.gpr
        val: Sym | None
        if how is _SET:
            val = a
        elif how is _ADD_IMM:
            x = gpr.get(a)
            if x is not None and not x.terms:  # (the common case: a constant or address)
                val = Sym((x.value + b.value) & MASK64, x.base)
            else:
                val = _add(x, b)
        elif how is _ADD_REG or how is _SUB_REG:
            kind, shamt = b[1], b[2]
            right = _right(gpr.get(b[0]), kind, shamt)
            if how is _SUB_REG:
                right = _times(right, Sym(MASK64))  # times -1
            val = _add(gpr.get(a), right)
        elif how is _MUL_IMM:
            val = _times(gpr.get(a), b)
        elif how is _MUL_REG:
            val = _times(gpr.get(a), gpr.get(b))
        elif how is _LOAD and gpr.get(a) == TABLE and _ldi(b) in self.table:
            t = self.table[_ldi(b)]
            val = Sym(0, None, ((f"param{t.tensor}", 1),)) if t.scalar else Sym(0, t)
        else:
            val = None
        if rd != 0:
            gpr[rd] = val

    # ------------------------------------------------------------------ tile

    def bundle(self, i: int, start: TileStart, cmds: Iterable[object]) -> None:
        # the bundle's intent (from the emitter's table, the row after the last one read
        # is tried first: a replay reads in program order but for loop bodies)
        row = self.rows.read(i, self.next_row)
        if row is None:
            raise self.fail(i, "a tile bundle with no recorded meaning")
        k, kind, op, want_srcs, want_dsts, scalars = row
        self.next_row = k + 1
        # the first B.IOR, and the B.IOT records' sources and destinations (one pass)
        ior: Ior | None = None
        refs: list[TileRef] = []
        dsts: list[Iot] = []
        for c in cmds:
            if isinstance(c, Iot):
                refs.extend(c.srcs)
                if c.dst is not None:
                    dsts.append(c)
            elif ior is None and isinstance(c, Ior):
                ior = c
        if ior is not None or scalars:
            self._check_scalars(i, op, scalars, ior)
        if len(refs) != len(want_srcs) or len(dsts) != len(want_dsts):
            raise self.fail(
                i,
                f"{op} binds {len(refs)} sources / {len(dsts)} "
                f"destinations, the IR means {len(want_srcs)} / {len(want_dsts)}",
            )
        # every reference resolved first (:meth:`_resolve`, inlined; it raises when one
        # is out of range), then the values compared (a hand indexes and compares as the
        # int it is)
        queues, hands, depth = self.queues, self.hands, self.depth
        got = []
        for ref in refs:
            hand, n = ref.hand, ref.index
            if hand >= hands or n > depth or n > len(queues[hand]):
                self._resolve(i, ref)
            got.append(queues[hand][n - 1][0])
        if tuple(got) != want_srcs:
            for n, (g, want) in enumerate(zip(got, want_srcs, strict=True)):
                if g != want:
                    raise self.fail(
                        i,
                        f"{op} source {n} ({refs[n]}) holds value {g}, the IR "
                        f"reads value {want}",
                    )
        contents: Sequence[int] = want_dsts
        if kind == "spill" or kind == "reload":
            restores, gm_bytes = self.rows.restore(k)
            if kind == "spill":
                self._spill(scalars[0].value, gm_bytes, got[0])
            else:
                contents = [self._reloaded(i, scalars[0].value, gm_bytes, restores)]
        used = self.used
        # (the destinations were counted against the IR's above; a reload's one restored
        # value was not)
        pushes = zip(dsts, contents, strict=True) if kind == "reload" else zip(dsts, contents)
        for iot, vid in pushes:
            hand = iot.dst
            if hand >= hands:
                raise self.fail(i, f"destination hand {hand.name} does not exist")
            q = queues[hand]
            n = size_bytes(iot.size)
            q.insert(0, (vid, n))
            used += n
            if len(q) > depth:
                used -= q.pop()[1]
        self.used = used
        if used > self.capacity:
            raise self.fail(
                i,
                f"{op} commit leaves {used} bytes per PE allocated, "
                f"above the capacity {self.capacity}",
            )
        report = self.report
        if used > report.peak_bytes:
            report.peak_bytes = used
        report.bundles += 1
        report.kinds[kind] = report.kinds.get(kind, 0) + 1

    def _resolve(self, i: int, ref: object) -> int:
        hand, k = int(ref.hand), ref.index  # type: ignore[attr-defined]
        if hand >= self.hands or k > self.depth:
            raise self.fail(i, f"{ref} is outside the {self.hands}x{self.depth} queues")
        q = self.queues[hand]
        if k > len(q):
            raise self.fail(i, f"{ref} selects an empty queue position")
        return q[k - 1][0]

    def _check_scalars(
        self, i: int, op: str, scalars: tuple[Sym, ...], ior: Ior | None
    ) -> None:
        if ior is None:
            if scalars:
                raise self.fail(i, f"{op} has no B.IOR but reads {len(scalars)} scalars")
            return
        regs = ior.sources
        for k, want in enumerate(scalars):
            have = self.gpr.get(regs[k])
            if have != want:
                raise self.fail(
                    i,
                    f"{op} B.IOR slot {k} ({GPR_NAMES[regs[k]]}) holds "
                    f"{have}, the IR means {want}",
                )
        if any(regs[len(scalars) :]) or ior.dst:
            raise self.fail(i, f"{op} B.IOR binds slots the operation does not read")

    @staticmethod
    def _granules(off: int, n: int) -> range:
        return range(off // GRANULE, (off + max(n, 1) + GRANULE - 1) // GRANULE)

    def _spill(self, off: int, n: int, vid: int) -> None:
        """A spill of value ``vid`` to scratch bytes ``off .. off + n``."""
        spill = (off, n, vid)  # (one tuple for every granule it covers)
        self.scratch.update(dict.fromkeys(self._granules(off, n), spill))

    def _reloaded(self, i: int, off: int, n: int, restores: int) -> int:
        """The value a reload of scratch bytes ``off .. off + n`` reads: every granule it
        covers must still hold the one spill of exactly this range of value ``restores``
        (a later overlapping spill would have replaced some)."""
        held = set(map(self.scratch.get, self._granules(off, n)))
        want = (off, n, restores)
        if held != {want}:
            raise self.fail(
                i,
                f"reload of value {restores} reads scratch offset {off} "
                f"holding {sorted(map(str, held))}",
            )
        return restores


#: how a scalar instruction changes its destination register (:func:`_step`)
_SET, _ADD_IMM, _ADD_REG, _SUB_REG = "set", "add-imm", "add-reg", "sub-reg"
_MUL_IMM, _MUL_REG, _LOAD = "mul-imm", "mul-reg", "load"


def _step(c: Scalar) -> tuple[str, int, Any, Any]:
    """``(how, rd, a, b)``: what scalar instruction ``c`` writes into register ``rd``
    (none when 0), its fields read once: ``_SET`` the constant ``a`` (None: a value the
    replay does not know); ``_ADD_IMM`` register ``a`` plus the constant ``b``;
    ``_ADD_REG`` / ``_SUB_REG`` register ``a`` plus / minus ``b`` = (register, SrcRType,
    shamt); ``_MUL_IMM`` register ``a`` times the constant ``b``; ``_MUL_REG`` register
    ``a`` times register ``b``; ``_LOAD`` an LDI from register ``a`` with fields ``b``
    (the argument table's slot when ``a`` holds the table)."""
    f = dict(c.fields)
    rd = f.get("RegDst", 0)
    m = c.mnemonic
    if m == "C.MOVI":
        return _SET, rd, Sym(f["simm5"] & MASK64), None
    if m == "LUI":
        imm = f["imm20"] - (1 << 20) if f["imm20"] >> 19 else f["imm20"]
        return _SET, rd, Sym((imm << 12) & MASK64), None
    if m == "ADDI":
        return _ADD_IMM, rd, f["SrcL"], Sym(f["uimm12"])
    if m in ("ADD", "SUB"):
        right = (f["SrcR"], f.get("SrcRType", 0), f.get("shamt", 0))
        return (_ADD_REG if m == "ADD" else _SUB_REG), rd, f["SrcL"], right
    if m == "SLLI":
        return _MUL_IMM, rd, f["SrcL"], Sym((1 << f["shamt"]) & MASK64)
    if m == "MUL":
        return _MUL_REG, rd, f["SrcL"], f["SrcR"]
    if m == "LDI":
        return _LOAD, rd, f["SrcL"], f
    return _SET, rd, None, None


def _right(r: Sym | None, kind: int, shamt: int) -> Sym | None:
    """The ADD right operand after its modifier (ASL ``DecodeScalarBinaryRightModifier``:
    0 sign-extended word, 1 zero-extended word, 2 negated, 3 as is) and shift."""
    if r is None:
        return None
    if r.base is not None or r.terms:
        return r if kind == 3 and shamt == 0 else None
    v = r.value
    if kind == 0:
        v = (v & 0xFFFFFFFF) - ((v & 0x80000000) << 1)
    elif kind == 1:
        v &= 0xFFFFFFFF
    elif kind == 2:
        v = -v
    return Sym((v << shamt) & MASK64, r.base)


def _add(a: Sym | None, b: Sym | None) -> Sym | None:
    if a is None or b is None or (a.base is not None and b.base is not None):
        return None
    if not a.terms and not b.terms:  # (the common case: constants and addresses)
        return Sym((a.value + b.value) & MASK64, a.base or b.base)
    terms = dict(a.terms)
    for k, c in b.terms:
        terms[k] = (terms.get(k, 0) + c) & MASK64
    return Sym((a.value + b.value) & MASK64, a.base or b.base, _poly(terms))


def _ldi(f: dict[str, int]) -> int:
    """The byte offset of an LDI: its simm12 scaled by the catalog's AGU offset scale."""
    return f["simm12"] << SCALAR_AGU["LDI"].offset_scale


def _poly(terms: dict[str, int]) -> tuple[tuple[str, int], ...]:
    return tuple(sorted((k, c & MASK64) for k, c in terms.items() if c & MASK64))


def _times(a: Sym | None, b: Sym | None) -> Sym | None:
    """The product of two polynomials (None when an address base would be scaled)."""
    if a is None or b is None or a.base is not None or b.base is not None:
        return None
    if not a.terms and not b.terms:  # (the common case: constants)
        return Sym((a.value * b.value) & MASK64)
    out: dict[str, int] = {}

    def put(k: str, c: int) -> None:
        out[k] = (out.get(k, 0) + c) & MASK64

    for k, c in b.terms:
        put(k, a.value * c)
    for k, c in a.terms:
        put(k, b.value * c)
    for ka, ca in a.terms:
        for kb, cb in b.terms:
            put("*".join(sorted(ka.split("*") + kb.split("*"))), ca * cb)
    return Sym((a.value * b.value) & MASK64, None, _poly(out))


def validate(em: Emitted, target: MachineConfig) -> Report:
    """Replay ``em.program`` on ``target``'s hands, depth and capacity; raises
    :class:`ValidationError` at the first bundle that does not mean what the IR means,
    else returns what it saw. A run-time loop is replayed from its header with the queue
    state and registers every path arrives with (see :class:`_Loops`)."""
    cmds = em.program.commands
    # each command object once, in the order of its first index (by id: the emitter
    # shares equal commands; a dictionary keeps the first insertion's place); the index
    # is looked for only when a command is reported
    distinct = dict(zip(map(id, cmds), cmds))
    branch = None  # the first branch block (the replay without loops refuses it)
    for c in distinct.values():
        if branch is None and isinstance(c, ScalarStart) and c.kind != "FALL":
            branch = _first_index(cmds, c)
        # every constraint of the catalog form (c.movi never writes ra, no reserved
        # DataType or SizeCode, ...): the assembler would refuse the printed text and the
        # executor would fault on the words
        rule = field_violation(c)
        if rule is not None:
            i = _first_index(cmds, c)
            raise ValidationError(f"command {i} breaks its catalog form: {rule}")
    del distinct  # (the replay's peak is the compile's)
    r = _Replay(em, target.hands, target.depth, target.capacity)
    if em.loops or em.ifs or em.checks:
        blocks = em.program.blocks()
        _Loops(em, r, blocks).span(0, len(blocks))
    else:
        blocks = _straight(em, r, branch)
    if blocks is not None:
        missing = set(em.intents) - {b.index for b in blocks}
        if missing:
            raise ValidationError(f"bundles {sorted(missing)} of the IR were not emitted")
    return r.report


def _first_index(cmds: Sequence[object], c: object) -> int:
    """The index of the first occurrence of the object ``c`` in ``cmds``."""
    return next(i for i, x in enumerate(cmds) if x is c)


def _straight(em: Emitted, r: _Replay, branch: int | None) -> list | None:  # type: ignore[type-arg]
    """The replay of a program without loops, conditionals and checks (what ``_Loops``
    does with it), its blocks one by one rather than all at once; ``branch``: the command
    index of its first branch block, which no loop explains (as ``_Loops`` finds it).
    Returns None when every bundle of the IR was met, else the blocks, for the error."""
    if branch is not None:
        c = em.program.commands[branch]
        assert isinstance(c, ScalarStart)
        raise ValidationError(
            f"block at command {branch} is a {c.kind} branch that no loop of the IR explains"
        )
    replay = _Loops(em, r, [])
    met = 0  # (each tile bundle replayed has an intent: ``bundle`` refuses one without)
    # the blocks as plain tuples (a tile bundle's needs no Block object)
    for start, cmds, stop, index in em.program.spans():
        if type(start) is TileStart:  # (what replay.block does with one, counting)
            r.bundle(index, start, cmds)
            met += 1
        else:
            replay.block(Block(start, cmds, stop, index))
    return None if met == len(em.intents) else em.program.blocks()


class _IntentRows:
    """:meth:`IntentTable.read` and :meth:`IntentTable.restore` of a plain mapping of
    intents (a test's edited copy): a bundle's position is its command index."""

    def __init__(self, intents: Mapping[int, Intent]) -> None:
        self.intents = intents

    def read(self, index: int, hint: int = 0) -> Row | None:
        it = self.intents.get(index)
        return None if it is None else (index, it.kind, it.op, it.srcs, it.dsts, it.scalars)

    def restore(self, k: int) -> tuple[int, int]:
        it = self.intents[k]
        return it.restores, it.gm_bytes


class _Loops:
    """The structured replay: blocks in program order, each run-time loop from its
    header state.

    At a loop's guard the index register must hold ``lb`` and the guard must skip to the
    exit when ``iv >= ub``. The *header state* is the state on entry with the carried
    tiles renamed to the body's arguments and every queue entry no later bundle reads made
    dead; the body is replayed from it with the index register holding the loop's index.
    At the back edge the latch must add the step and branch back while ``iv < ub``, and
    the state, renamed the same way, must equal the header state entry for entry (bytes and
    value); a register that differs is unknown at the header, and the body is replayed
    again so that no bundle relies on it. By induction every iteration, and the exit
    reached from the guard or the latch, then sees the header state."""

    def __init__(self, em: Emitted, r: _Replay, blocks: list) -> None:  # type: ignore[type-arg]
        self.em, self.r, self.blocks = em, r, blocks
        self.by_cmd = {b.index: i for i, b in enumerate(blocks)}
        self.loops = {lp.guard: lp for lp in em.loops}
        self._graph: BlockGraph | None = None
        explained = {lp.guard for lp in em.loops} | {lp.latch for lp in em.loops}
        explained |= set(em.checks) | set(em.ifs)
        for b in blocks:
            branch = isinstance(b.start, ScalarStart) and b.start.kind != "FALL"
            if branch and b.index not in explained:
                raise ValidationError(
                    f"block at command {b.index} is a {b.start.kind} branch that no loop "
                    "of the IR explains"
                )
        self._reads: list[tuple[int, tuple[int, ...]]] | None = None
        self.counting = True
        #: the ids live at the headers of the loops being replayed (read again in a later
        #: iteration, so live anywhere inside them)
        self.enclosing: list[set[int]] = []

    @property
    def reads(self) -> list[tuple[int, tuple[int, ...]]]:
        """``(command, value ids read)`` of every bundle, in program order (a reload
        reads the value it restores)."""
        if self._reads is None:
            self._reads = sorted(
                (i, (*it.srcs, it.restores)) for i, it in self.em.intents.items()
            )
        return self._reads

    @property
    def graph(self) -> BlockGraph:
        """The program's block graph (its branch targets need every command's length:
        built when a loop, conditional or check asks)."""
        if self._graph is None:
            self._graph = BlockGraph.of(self.em.program, self.blocks)
        return self._graph

    def span(self, start: int, stop: int) -> None:
        i = start
        while i < stop:
            b = self.blocks[i]
            if b.index in self.loops:
                i = self.loop(self.loops[b.index])
                continue
            if b.index in self.em.ifs:
                i = self.conditional(self.em.ifs[b.index])
                continue
            self.block(b)
            i += 1

    def block(self, b) -> None:  # type: ignore[no-untyped-def]
        r = self.r
        if isinstance(b.start, ScalarStart):
            if self.counting:
                r.report.scalar_blocks += 1
            check = self.em.checks.get(b.index)
            if check is None and not self.em.loads:  # (the common block: only writes)
                for c in b.commands:
                    if isinstance(c, Scalar):
                        r.scalar(c)
                return
            if check is not None:
                self._trap(b, check)
            for k, c in enumerate(b.commands):
                if isinstance(c, Scalar):
                    if check is not None and c.mnemonic.startswith("SETC"):
                        self._check(b, c, check)
                    load = self.em.loads.get(b.index + 1 + k)
                    if load is not None:
                        self._load(b.index + 1 + k, c, load)
                    r.scalar(c)
                    if load is not None:  # what it read: a value the IR names
                        r.gpr[load.reg] = Sym(0, None, ((load.name, 1),))
        elif isinstance(b.start, TileStart):
            if self.counting:
                r.bundle(b.index, b.start, b.commands)
            else:
                saved = (r.report.bundles, dict(r.report.kinds), r.report.peak_bytes)
                r.bundle(b.index, b.start, b.commands)
                r.report.bundles, r.report.kinds, r.report.peak_bytes = saved
        else:
            raise ValidationError(f"commands outside any block at command {b.index}")

    # ------------------------------------------------------------------ one loop

    def live(self, lp: LoopIntent) -> set[int]:
        """Value ids a bundle may read at the header before they are produced again: read
        at or after it, and not produced by the body (a body's own tiles are new in every
        iteration; a copy or a reload of a value brings back the same value)."""
        made = {
            d
            for i, it in self.em.intents.items()
            if lp.header <= i < lp.latch and it.kind not in ("refresh", "reload")
            for d in it.dsts
        }
        for inner in self.em.loops:  # a nested loop's entry and exit rename into new ids
            if lp.header <= inner.guard < lp.latch:
                made |= {d for _, d in (*inner.enter, *inner.leave)}
        read = {v for i, ids in self.reads if i >= lp.header for v in ids if v >= 0}
        return (read - made).union(*self.enclosing)

    def loop(self, lp: LoopIntent) -> int:
        r = self.r
        guard, header = self.by_cmd[lp.guard], self.by_cmd[lp.header]
        latch, exit_ = self.by_cmd[lp.latch], self.by_cmd.get(lp.exit, len(self.blocks))
        where = f"the loop at command {lp.guard}"
        if self.graph.target[guard] != (exit_ if exit_ < len(self.blocks) else -1):
            raise ValidationError(f"{where}: its guard does not branch to the loop's exit")
        if self.graph.target[latch] != header:
            raise ValidationError(f"{where}: its latch does not branch back to the body")
        if r.gpr.get(lp.iv) != lp.lb:
            raise ValidationError(
                f"{where}: the index register {GPR_NAMES[lp.iv]} holds {r.gpr.get(lp.iv)} on "
                f"entry, the loop starts at {lp.lb}"
            )
        self._compare(self.blocks[guard], "SETC.GE", lp, where)
        if self.counting:
            r.report.scalar_blocks += 1
        live = self.live(lp)
        self.enclosing.append(live)
        head = _rename(r.state(), dict(lp.enter), live)
        index = Sym(0, None, ((lp.name, 1),))
        head.gpr[lp.iv] = index
        unknown: set[int] = set()
        # registers and scratch granules whose contents differ at the back edge become
        # unknown at the header, and the body is replayed again (each round forgets at
        # least one fact, so this settles)
        for attempt in itertools.count():
            r.set_state(head)
            counting = self.counting
            self.counting = counting and attempt == 0
            self.span(header, latch)
            self.block(self.blocks[latch])
            self.counting = counting
            want = Sym(lp.step & MASK64, None, ((lp.name, 1),))
            if r.gpr.get(lp.iv) != want:
                raise ValidationError(
                    f"{where}: the latch leaves {r.gpr.get(lp.iv)} in the index register, "
                    f"not the next index {want}"
                )
            self._compare(self.blocks[latch], "SETC.LT", lp, where)
            back = _rename(r.state(), dict(lp.back), live, stale=True)
            if not _returns_to(back.queues, head.queues) or back.used != head.used:
                raise ValidationError(
                    f"{where}: the back edge leaves the queues "
                    f"{_show(back.queues)}, the body starts from {_show(head.queues)}"
                )
            # a spilled value the back edge does not leave where the header has it is
            # not known there (a reload of it in the body or after the loop then fails)
            lost = {g for g, held in head.scratch.items() if back.scratch.get(g) != held}
            differ = {
                g for g in head.gpr if g != lp.iv and head.gpr[g] != back.gpr.get(g)
            } - unknown
            if not differ and not lost:
                break
            if attempt > len(GPR_NAMES) + len(head.scratch):
                raise ValidationError(f"{where}: its registers do not settle")
            unknown |= differ
            for g in differ:
                head.gpr[g] = None
            for g in lost:
                del head.scratch[g]
        self.enclosing.pop()
        out = _rename(head, dict(lp.leave), None)
        out.gpr[lp.iv] = None
        r.set_state(out)
        return exit_

    def conditional(self, c: IfIntent) -> int:
        """A conditional: the body from the state before it must come back to that state
        (the path past the body sees it unchanged); registers that differ are unknown."""
        r = self.r
        guard = self.by_cmd[c.guard]
        exit_ = self.by_cmd.get(c.exit, len(self.blocks))
        where = f"the conditional at command {c.guard}"
        if self.graph.target[guard] != (exit_ if exit_ < len(self.blocks) else -1):
            raise ValidationError(f"{where}: its guard does not branch past its body")
        setc = [c2 for c2 in self.blocks[guard].commands if isinstance(c2, Scalar)]
        f = dict(setc[-1].fields) if setc else {}
        if not (
            len(setc) == 1
            and setc[0].mnemonic == c.setter
            and f.get("SrcRType", 0) == 3
            and r.gpr.get(f["SrcL"]) == c.left
            and r.gpr.get(f["SrcR"]) == c.right
        ):
            raise ValidationError(
                f"{where}: its guard must skip the body by {c.setter.lower()} of {c.left} and "
                f"{c.right}"
            )
        if self.counting:
            r.report.scalar_blocks += 1
        live = {v for i, ids in self.reads if i >= c.exit for v in ids if v >= 0}
        live = live.union(*self.enclosing)
        before = _rename(r.state(), {}, live)
        self.span(guard + 1, exit_)
        after = _rename(r.state(), {}, live)
        if after.queues != before.queues or after.used != before.used:
            raise ValidationError(
                f"{where}: its body leaves the queues {_show(after.queues)}, the path past it "
                f"{_show(before.queues)}"
            )
        if after.scratch != before.scratch:
            raise ValidationError(f"{where}: its body leaves other spilled values")
        for g in before.gpr:
            if before.gpr[g] != after.gpr.get(g):
                before.gpr[g] = None
        r.set_state(before)
        return exit_

    def _trap(self, b, check: CheckIntent) -> None:  # type: ignore[no-untyped-def]
        i = self.by_cmd[b.index]
        if b.start.kind != "COND" or self.graph.target[i] is not None:
            raise ValidationError(
                f"bounds check at command {b.index}: its branch must lead to no block (the "
                "fault that stops a window outside its tensor)"
            )
        setc = [
            c for c in b.commands if isinstance(c, Scalar) and c.mnemonic.startswith("SETC")
        ]
        if len(setc) != 1:
            raise ValidationError(f"bounds check at command {b.index}: one condition setter")

    def _check(self, b, c: Scalar, check: CheckIntent) -> None:  # type: ignore[no-untyped-def]
        """The check's setter compares ``index - low`` with ``high - low + 1`` unsigned."""
        f = dict(c.fields)
        want = _add(check.value, Sym((-check.low) & MASK64))
        size = max(check.high - check.low + 1, 0)
        ok = (
            c.mnemonic == "SETC.GEU"
            and f.get("SrcRType", 0) == 3
            and self.r.gpr.get(f["SrcL"]) == want
            and self.r.gpr.get(f["SrcR"]) == Sym(size)
        )
        if not ok:
            raise ValidationError(
                f"bounds check at command {b.index} does not test that {check.value} lies in "
                f"{check.low}..{check.high}"
            )

    def _load(self, at: int, c: Scalar, load: LoadIntent) -> None:
        f = dict(c.fields)
        ok = (
            c.mnemonic.startswith("L")
            and f.get("RegDst") == load.reg
            and f.get("simm12", 0) == 0
            and self.r.gpr.get(f.get("SrcL", -1)) == load.address
        )
        if not ok:
            raise ValidationError(
                f"scalar load at command {at} does not read {load.address} into "
                f"{GPR_NAMES[load.reg]}"
            )

    def _compare(self, b, mnemonic: str, lp: LoopIntent, where: str) -> None:  # type: ignore[no-untyped-def]
        setc = [
            c for c in b.commands if isinstance(c, Scalar) and c.mnemonic.startswith("SETC")
        ]
        ok = len(setc) == 1 and setc[0].mnemonic == mnemonic
        if ok:
            f = dict(setc[0].fields)
            ok = (
                f["SrcL"] == lp.iv
                and f.get("SrcRType", 0) == 3
                and self.r.gpr.get(f["SrcR"]) == lp.ub
            )
        if not ok:
            raise ValidationError(
                f"{where}: block at command {b.index} must compare the index with {lp.ub} by "
                f"{mnemonic.lower()}"
            )


@dataclass
class _State:
    queues: list[list[tuple[int, int]]]
    used: int
    gpr: dict[int, Sym | None]
    scratch: dict[int, tuple[int, int, int]]


def _rename(
    s: _State, names: dict[int, int], live: set[int] | None, stale: bool = False
) -> _State:
    """``s`` with value ids renamed; with ``live``, every other id is dead (-1); with
    ``stale``, an entry that already holds a rename's target is dead (at the back edge:
    the finished iteration's copy of a carried tile)."""
    targets = set(names.values())

    def name(v: int) -> int:
        if v in names:
            return names[v]
        if stale and v in targets:
            return -1
        return v if live is None or v in live or v in targets else -1

    return _State(
        [[(name(v), n) for v, n in q] for q in s.queues],
        s.used,
        dict(s.gpr),
        # a spill slot is named like a queue entry: a carried tile's initial value
        # spilled before the loop is the carried argument at the header
        {g: (o, n, name(v)) for g, (o, n, v) in s.scratch.items() if name(v) != -1},
    )


def _returns_to(back: list[list[tuple[int, int]]], head: list[list[tuple[int, int]]]) -> bool:
    """Whether the queues at a back edge return to the header's: the same entries (bytes)
    in every hand, holding the same value wherever the header's entry is live. A dead
    header entry is never read by the body (its replay would have failed), so what the
    back edge leaves there -- a stale copy of a value, say -- does not matter."""
    return len(back) == len(head) and all(
        len(b) == len(h)
        and all(bn == hn and (hv < 0 or bv == hv) for (bv, bn), (hv, hn) in zip(b, h))
        for b, h in zip(back, head)
    )


def _show(queues: list[list[tuple[int, int]]]) -> str:
    return "; ".join(
        "[" + ", ".join(f"{'dead' if v < 0 else v}:{n}B" for v, n in q) + "]" for q in queues
    )


__all__ = ["Binding", "Report", "ValidationError", "validate"]
